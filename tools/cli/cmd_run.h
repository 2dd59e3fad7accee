/* `mvm run` option parsing, shared with its unit tests. */
#ifndef MVM_CMD_RUN_H
#define MVM_CMD_RUN_H

#include "tools/sandbox/run_sandbox.h"

/* Parse argv into @o: 0 ok, 1 for --help, -1 after printing a usage error. */
int run_parse_args(struct run_opts *o, int argc, char **argv);
int cmd_run(int argc, char **argv);

#endif
