/*
 * The seccomp tables as BPF programs compiled at build time
 * (confine/gen/seccomp_gen.c writes $(BUILD)/gen/seccomp_progs.c from
 * libseccomp's output): the VMM installs a static program and never links
 * or runs libseccomp's compiler, which took ~0.5 MiB and milliseconds per
 * program at every start.
 */
#ifndef MVM_CONFINE_SECCOMP_PROG_H
#define MVM_CONFINE_SECCOMP_PROG_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "vmm/confine/seccomp_table.h"

/* System call numbers the SIGSYS report can name. */
#define SC_NR_NAMES 512

/*
 * One table's program, built with default action SECCOMP_RET_TRAP and a
 * placeholder pid in SC_SELF's comparisons. The generator checked that the
 * build for any pid differs only in the instructions @self_at lists, and the
 * build with SECCOMP_RET_LOG only in the returns of SECCOMP_RET_TRAP.
 */
struct sc_prog {
	const struct sc_table *table;
	const struct sock_filter *insns;
	unsigned short len;
	const unsigned short *self_at;	/* instructions whose k is the pid */
	unsigned short nr_self;
};

extern const struct sc_prog sc_progs[];
extern const size_t sc_nr_progs;
extern const char *const sc_syscall_names[SC_NR_NAMES];

/*
 * @t's program for this process: SC_SELF admits @self, and with @log the
 * default action is SECCOMP_RET_LOG. *@out is malloc'd (free out->filter).
 * -ENOENT when @t was not compiled (a table the generator does not list),
 * else 0 or -errno.
 */
int sc_prog_for(const struct sc_table *t, bool log, pid_t self, struct sock_fprog *out);

#endif
