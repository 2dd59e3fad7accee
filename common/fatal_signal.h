/*
 * A last line for a process that crashes: on SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE or SIGABRT, write "WHO: crashed: SIGSEGV (fault address 0x...)"
 * to a file descriptor, then die of the signal as before (exit status,
 * core dump and kernel log unchanged). A daemon's crash otherwise leaves
 * its log silent and the user with "exited" and nothing else.
 */
#ifndef MVM_COMMON_FATAL_SIGNAL_H
#define MVM_COMMON_FATAL_SIGNAL_H

/* Install the handlers; @who (kept, not copied) prefixes the line written
 * to @fd. Safe to call again (the last call wins). */
void fatal_signal_report(int fd, const char *who);

#endif
