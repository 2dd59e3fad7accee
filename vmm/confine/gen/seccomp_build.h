/*
 * A seccomp table (confine/seccomp_table.h) compiled to BPF by libseccomp.
 * Build-time only: the generator (confine/gen/seccomp_gen.c) emits the
 * programs the VMM installs, and the unit tests check them against this.
 * It is not in libmvm (hence this folder): nothing in mvm or mvm-net links
 * it, and they never map libseccomp.
 */
#ifndef MVM_CONFINE_SECCOMP_BUILD_H
#define MVM_CONFINE_SECCOMP_BUILD_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "vmm/confine/seccomp_table.h"

/*
 * @t's program as libseccomp builds it: default action SECCOMP_RET_TRAP,
 * or SECCOMP_RET_LOG when @log; @self is the pid SC_SELF rules admit.
 * *@prog is malloc'd, *@len instructions. 0 or -errno.
 */
int sc_build(const struct sc_table *t, bool log, pid_t self, struct sock_filter **prog,
	     size_t *len);

/* This arch's name of system call @nr (malloc'd), or NULL. */
char *sc_build_syscall_name(int nr);

/* Check @t against this arch's syscall table: -EINVAL and the offending
 * name in @bad if a name is unknown. */
int confine_seccomp_check(const struct sc_table *t, const char **bad);

#endif
