/* Installing the per-thread seccomp filters of confine/seccomp_table.h. */
#ifndef MVM_CONFINE_SECCOMP_FILTER_H
#define MVM_CONFINE_SECCOMP_FILTER_H

#include <stdbool.h>

#include "vmm/confine/seccomp_table.h"

/* The exit status of a VMM that a filter stopped: 128 + SIGSYS. */
#define CONFINE_SECCOMP_EXIT 159

/*
 * Where a forbidden system call is reported (console.log); also stderr when
 * that is another file. Default: stderr only.
 */
void confine_seccomp_report_to(int fd);

/* Who the report names (a static string): default "mvm vmm: seccomp: the
 * VMM"; the network helper says it is the helper. */
void confine_seccomp_report_as(const char *who);

/*
 * Confine the calling thread (and threads it creates later) to @t. A call
 * outside @t raises SIGSYS (SECCOMP_RET_TRAP): its handler writes
 * "mvm vmm: seccomp: ... forbidden system call NAME (NR) on the THREAD
 * thread" to the report file and ends the whole process with
 * CONFINE_SECCOMP_EXIT. With MVM_SECCOMP=log in the environment the call is
 * allowed and the kernel logs it (audit/dmesg) instead: for diagnosis only.
 * The program was compiled at build time (confine/seccomp_prog.h): -ENOENT
 * for a table the generator does not list. Requires no_new_privs
 * (confine/hygiene.h). 0 or -errno.
 */
int confine_seccomp_thread(const struct sc_table *t);

/* Whether MVM_SECCOMP=log is in force (for reports). */
bool confine_seccomp_log_mode(void);

#endif
