/* Build-time seccomp programs made ready for this process (confine/seccomp_prog.h). */
#include <errno.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/confine/seccomp_prog.h"

int sc_prog_for(const struct sc_table *t, bool log, pid_t self, struct sock_fprog *out)
{
	const struct sc_prog *p = NULL;
	struct sock_filter *f;

	for (size_t i = 0; i < sc_nr_progs && !p; i++)
		if (sc_progs[i].table == t)
			p = &sc_progs[i];
	if (!p)
		return -ENOENT;
	f = malloc(p->len * sizeof(*f));
	if (!f)
		return -ENOMEM;
	memcpy(f, p->insns, p->len * sizeof(*f));
	for (unsigned i = 0; i < p->nr_self; i++)
		f[p->self_at[i]].k = (__u32)self;
	for (unsigned i = 0; log && i < p->len; i++)
		if (f[i].code == (BPF_RET | BPF_K) && f[i].k == SECCOMP_RET_TRAP)
			f[i].k = SECCOMP_RET_LOG;
	out->filter = f;
	out->len = p->len;
	return 0;
}
