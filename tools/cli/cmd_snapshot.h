/* The checkpoint and snapshot verbs (tools/cli/cmd_checkpoint.c, ...). */
#ifndef MVM_CMD_SNAPSHOT_H
#define MVM_CMD_SNAPSHOT_H

int cmd_checkpoint(int argc, char **argv);
int cmd_checkpoints(int argc, char **argv);
int cmd_rollback(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_fork(int argc, char **argv);
int cmd_template(int argc, char **argv);

/* Argument parsers (tools/cli/verb_args.h): 0, 1 for --help, -1 after a
 * usage error; they run nothing. */
struct verb_args;
int checkpoint_parse(int argc, char **argv, struct verb_args *a);	/* NAME [TAG] */
int checkpoints_parse(int argc, char **argv, struct verb_args *a);	/* --json */
int rollback_parse(int argc, char **argv, struct verb_args *a);	/* NAME TAG */
int snapshot_parse(int argc, char **argv, struct verb_args *a);	/* NAME DIR */
int restore_parse(int argc, char **argv, struct verb_args *a);	/* DIR NEWNAME */
int fork_parse(int argc, char **argv, struct verb_args *a);	/* NAME NEWNAME */

#endif
