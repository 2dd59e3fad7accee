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

/*
 * Build for another architecture than the one running the generator:
 * @name as libseccomp names it ("aarch64"). libseccomp translates each
 * rule's system call by name to that architecture's number and leaves out
 * the calls it lacks (open, poll, ... on aarch64). The tables' ioctl
 * numbers are compiled on this host: only tables whose ioctls encode the
 * same on both (the asm-generic _IOC layout, x86 and arm64 alike) may be
 * built so. 0, or -EINVAL for a name libseccomp does not know.
 */
int sc_build_set_arch(const char *name);

/* The target arch's name of system call @nr (malloc'd), or NULL. */
char *sc_build_syscall_name(int nr);

/* Check @t against this arch's syscall table: -EINVAL and the offending
 * name in @bad if a name is unknown. */
int confine_seccomp_check(const struct sc_table *t, const char **bad);

#endif
