/* A sandbox's logs as `mvm logs` and `mvm events` read them: each file after its rotated older part. */
#ifndef MVM_SANDBOX_LOGS_H
#define MVM_SANDBOX_LOGS_H

#include <stdbool.h>

/*
 * Copy NAME's console.log.1 then console.log to @out_fd; with @follow, keep
 * copying while the VMM runs, reopening console.log when the VMM rotates it.
 * 0 (also when there is no log yet, or when @out_fd fails: a closed pipe
 * ends the copy), or -errno for a bad NAME.
 */
int sb_logs_copy(const char *name, bool follow, int out_fd);

/*
 * The last whole lines of NAME's console.log, at most @max bytes, into @out
 * (@cap bytes, NUL-terminated), every control byte but newline and tab
 * shown as '?': guest output, printed to a terminal. Empty when there is
 * no log. For messages about a sandbox about to be removed.
 */
void sb_logs_tail(const char *name, size_t max, char *out, size_t cap);

/* Call @line for each line of NAME's events.jsonl.1 then events.jsonl
 * (lines longer than 8 KiB come in pieces). 0, or -errno for a bad NAME. */
int sb_events_each(const char *name, void (*line)(const char *text, void *ctx), void *ctx);

#endif
