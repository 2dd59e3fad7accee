/* Where a sandbox's start (and `stop:` steps, its stop) spends its time:
 * MVM_START_TRACE=FILE appends one line per step (CLOCK_MONOTONIC in
 * microseconds, pid, step). Off when unset. */
#ifndef MVM_START_TRACE_H
#define MVM_START_TRACE_H

/* Append "<µs> <pid> @step" to $MVM_START_TRACE, if set. Opens the file per
 * call (no descriptor kept): call it only before seccomp confinement. */
void start_trace(const char *step);

/* Keep the file open from here on (the VMM, before it confines itself). */
void start_trace_hold(void);

#endif
