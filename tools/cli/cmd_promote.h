/* The promotion gate's verbs (diff, export, promote) and what they share. */
#ifndef MVM_CMD_PROMOTE_H
#define MVM_CMD_PROMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "tools/sandbox/fetch.h"

int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_promote(int argc, char **argv);

/* --max-output (c 'o') and --max-size (c 's'). 0, or -1 after a message. */
int promote_parse_limits(const char *verb, int c, const char *arg, uint64_t *out, uint64_t *total);
/* NAME exists and its VMM runs. 0, or -1 after a message. */
int promote_running(const char *verb, const char *name);

#endif
