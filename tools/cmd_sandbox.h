/* The sandbox verbs (one file each: tools/cmd_NAME.c). */
#ifndef MVM_CMD_SANDBOX_H
#define MVM_CMD_SANDBOX_H

int cmd_create(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_cp(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_net(int argc, char **argv);
int cmd_vmm(int argc, char **argv);	/* internal: the daemon */

/* Boot timeout for create/start: MVM_START_TIMEOUT seconds (default 120). */
int sb_start_timeout(void);
/* This binary, for re-executing as the daemon. */
const char *sb_self_exe(void);

#endif
