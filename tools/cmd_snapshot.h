/* The checkpoint and snapshot verbs (tools/cmd_checkpoint.c, ...). */
#ifndef MVM_CMD_SNAPSHOT_H
#define MVM_CMD_SNAPSHOT_H

int cmd_checkpoint(int argc, char **argv);
int cmd_checkpoints(int argc, char **argv);
int cmd_rollback(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_fork(int argc, char **argv);

#endif
