/* The sandbox verbs (one file each: tools/cmd_NAME.c). */
#ifndef MVM_CMD_SANDBOX_H
#define MVM_CMD_SANDBOX_H

int cmd_create(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_cp(int argc, char **argv);
int cmd_ls(int argc, char **argv);
/* `mvm inspect NAME [--json]` (tools/cli/cmd_inspect.c). */
int cmd_inspect(int argc, char **argv);
int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_net(int argc, char **argv);
int cmd_vmm(int argc, char **argv);	/* internal: the daemon */

#endif
