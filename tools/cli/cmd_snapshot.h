/* The checkpoint and snapshot verbs (tools/cli/cmd_checkpoint.c, ...). */
#ifndef MVM_CMD_SNAPSHOT_H
#define MVM_CMD_SNAPSHOT_H

struct cJSON;

/* One control-API call to NAME's VMM (@req is consumed): the reply when it
 * says "ok", else NULL after printing the error under @verb. */
struct cJSON *snap_cli_call(const char *verb, const char *name, struct cJSON *req);

/* After a rollback or restore: the guest's clock to the host's and fresh
 * entropy into its RNG, before anything else runs there. 0 or -errno. */
int snap_cli_sync(const char *verb, const char *name);

int cmd_checkpoint(int argc, char **argv);
int cmd_checkpoints(int argc, char **argv);
int cmd_rollback(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_fork(int argc, char **argv);
int cmd_template(int argc, char **argv);

#endif
