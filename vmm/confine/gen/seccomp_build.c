/* Seccomp tables compiled by libseccomp (confine/gen/seccomp_build.h). */
#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/confine/gen/seccomp_build.h"

/* SCMP_ARCH_NATIVE, or the one sc_build_set_arch chose. */
static uint32_t target_arch = SCMP_ARCH_NATIVE;

int sc_build_set_arch(const char *name)
{
	uint32_t a = seccomp_arch_resolve_name(name);

	if (!a)
		return -EINVAL;
	target_arch = a == seccomp_arch_native() ? SCMP_ARCH_NATIVE : a;
	return 0;
}

char *sc_build_syscall_name(int nr)
{
	return seccomp_syscall_resolve_num_arch(target_arch, nr);
}

int confine_seccomp_check(const struct sc_table *t, const char **bad)
{
	for (size_t i = 0; i < t->nr_rules; i++)
		if (seccomp_syscall_resolve_name(t->rules[i].name) == __NR_SCMP_ERROR) {
			*bad = t->rules[i].name;
			return -EINVAL;
		}
	return 0;
}

static int add_rule(scmp_filter_ctx ctx, const struct sc_table *t, const struct sc_rule *r,
		    pid_t self)
{
	int nr = seccomp_syscall_resolve_name(r->name), ret = 0;

	if (nr == __NR_SCMP_ERROR)
		return -EINVAL;
	switch (r->arg) {
	case SC_ANY:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	case SC_IOCTL:
		for (size_t i = 0; i < t->nr_ioctls && !ret; i++)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
						       t->ioctls[i] & 0xffffffffUL));
		for (size_t i = 0; t->arch_ioctls && i < t->arch_ioctls->n && !ret; i++)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
						       t->arch_ioctls->v[i] & 0xffffffffUL));
		return ret;
	case SC_SOCKET:
		for (size_t i = 0; i < t->nr_families && !ret; i++)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					       SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)t->families[i]));
		return ret;
	case SC_NO_EXEC:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	case SC_SELF:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
	case SC_NO_WRITE_MODE:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0222, 0));
	case SC_ENOSYS:
		return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
	}
	return -EINVAL;
}

/* The program of @ctx, exported through a memfd (libseccomp 2.5 has no
 * export to memory). 0 or -errno. */
static int export_prog(scmp_filter_ctx ctx, struct sock_filter **prog, size_t *len)
{
	int fd = memfd_create("mvm-seccomp", MFD_CLOEXEC), ret;
	off_t bytes;

	if (fd < 0)
		return -errno;
	ret = seccomp_export_bpf(ctx, fd);
	bytes = ret ? -1 : lseek(fd, 0, SEEK_END);
	if (!ret && (bytes <= 0 || bytes % sizeof(**prog) ||
		     bytes / sizeof(**prog) > BPF_MAXINSNS))
		ret = -EINVAL;
	if (!ret && !(*prog = malloc((size_t)bytes)))
		ret = -ENOMEM;
	if (!ret && pread(fd, *prog, (size_t)bytes, 0) != bytes) {
		free(*prog);
		ret = -EIO;
	}
	close(fd);
	if (!ret)
		*len = (size_t)bytes / sizeof(**prog);
	return ret;
}

int sc_build(const struct sc_table *t, bool log, pid_t self, struct sock_filter **prog,
	     size_t *len)
{
	scmp_filter_ctx ctx = seccomp_init(log ? SCMP_ACT_LOG : SCMP_ACT_TRAP);
	int ret = ctx ? 0 : -ENOMEM;

	/* Another architecture: its filter only (the arch check admits it alone). */
	if (!ret && target_arch != SCMP_ARCH_NATIVE) {
		ret = seccomp_arch_add(ctx, target_arch);
		if (!ret)
			ret = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE);
	}

	for (size_t i = 0; !ret && i < t->nr_rules; i++)
		ret = add_rule(ctx, t, &t->rules[i], self);
	if (!ret)
		ret = export_prog(ctx, prog, len);
	seccomp_release(ctx);
	return ret;
}
