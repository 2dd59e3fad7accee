/* The seccomp programs compiled at build time (vmm/confine/seccomp_prog.h)
 * are what libseccomp builds from the same tables, with the default action
 * TRAP or LOG: the same instructions where the pid of SC_SELF is unlike
 * every other constant, and the same decisions on every system call for
 * any pid (pid 1, the VMM's in its PID namespace, equals AF_UNIX, and
 * libseccomp then shares one comparison between socket and tgkill). */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/kvm.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/confine/gen/seccomp_build.h"
#include "vmm/confine/seccomp_prog.h"

static const struct sc_table *const installed[] = { &sc_table_vcpu, &sc_table_main,
						    &sc_table_blk, &sc_table_nethelper,
						    &sc_table_relay, &sc_table_keeper };

static void expect_same(const struct sc_table *t, bool log, pid_t self)
{
	struct sock_filter *want;
	struct sock_fprog got;
	size_t len;

	cr_assert_eq(sc_build(t, log, self, &want, &len), 0, "%s: libseccomp", t->thread);
	cr_assert_eq(sc_prog_for(t, log, self, &got), 0, "%s: not generated", t->thread);
	cr_expect_eq(got.len, len, "%s: %u instructions, libseccomp %zu", t->thread, got.len, len);
	cr_expect(len == got.len && !memcmp(got.filter, want, len * sizeof(*want)),
		  "%s (log %d, pid %d): differs from libseccomp's build", t->thread, log, self);
	free(want);
	free(got.filter);
}

Test(seccomp_prog, every_table_equals_libseccomps_build)
{
	const pid_t pids[] = { 4194304, 123457 };

	cr_expect_eq(sc_nr_progs, sizeof(installed) / sizeof(installed[0]),
		     "the generator compiles %zu tables, this test knows %zu", sc_nr_progs,
		     sizeof(installed) / sizeof(installed[0]));
	for (size_t i = 0; i < sizeof(installed) / sizeof(installed[0]); i++)
		for (size_t p = 0; p < sizeof(pids) / sizeof(pids[0]); p++) {
			expect_same(installed[i], false, pids[p]);
			expect_same(installed[i], true, pids[p]);
		}
}

/* Classic BPF as the kernel runs a seccomp filter, for the instructions
 * libseccomp emits; 0xdead for anything else (a test failure). */
static uint32_t run_bpf(const struct sock_filter *f, unsigned len, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };

	for (unsigned pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t src = BPF_SRC(i->code) == BPF_X ? x : (uint32_t)i->k;

		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (i->k > sizeof(*d) - 4)
				return 0xdead;
			memcpy(&a, (const char *)d + i->k, 4);
			continue;
		case BPF_LD | BPF_IMM: a = i->k; continue;
		case BPF_LDX | BPF_IMM: x = i->k; continue;
		case BPF_ST: mem[i->k % BPF_MEMWORDS] = a; continue;
		case BPF_STX: mem[i->k % BPF_MEMWORDS] = x; continue;
		case BPF_LD | BPF_MEM: a = mem[i->k % BPF_MEMWORDS]; continue;
		case BPF_LDX | BPF_MEM: x = mem[i->k % BPF_MEMWORDS]; continue;
		case BPF_MISC | BPF_TAX: x = a; continue;
		case BPF_MISC | BPF_TXA: a = x; continue;
		case BPF_ALU | BPF_AND | BPF_K: case BPF_ALU | BPF_AND | BPF_X: a &= src; continue;
		case BPF_ALU | BPF_OR | BPF_K: case BPF_ALU | BPF_OR | BPF_X: a |= src; continue;
		case BPF_JMP | BPF_JA: pc += i->k; continue;
		case BPF_RET | BPF_K: return i->k;
		case BPF_RET | BPF_A: return a;
		}
		if (BPF_CLASS(i->code) != BPF_JMP)
			return 0xdead;
		switch (BPF_OP(i->code)) {
		case BPF_JEQ: pc += a == src ? i->jt : i->jf; break;
		case BPF_JGT: pc += a > src ? i->jt : i->jf; break;
		case BPF_JGE: pc += a >= src ? i->jt : i->jf; break;
		case BPF_JSET: pc += a & src ? i->jt : i->jf; break;
		default: return 0xdead;
		}
	}
	return 0xdead;
}

/* Arguments worth trying: each table's own constants, the pid, their
 * neighbours, the high word set, PROT_EXEC. */
static void fill_args(const struct sc_table *t, pid_t self, uint64_t *v, size_t *n)
{
	const uint64_t base[] = { 0, 1, 2, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET,
				  PROT_READ | PROT_WRITE, PROT_READ | PROT_EXEC, PROT_EXEC,
				  1ULL << 32, (1ULL << 32) | 1, 0xffffffffULL };

	*n = 0;
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		v[(*n)++] = base[i];
	for (int d = -1; d <= 1; d++)
		v[(*n)++] = (uint64_t)(self + d);
	for (size_t i = 0; i < t->nr_ioctls; i++) {
		v[(*n)++] = t->ioctls[i];
		v[(*n)++] = t->ioctls[i] | 0xffffffff00000000ULL;
		v[(*n)++] = t->ioctls[i] + 1;
	}
	for (size_t i = 0; i < t->nr_families; i++)
		v[(*n)++] = (uint64_t)t->families[i] + 1;
}

static void expect_same_decisions(const struct sc_table *t, bool log, pid_t self)
{
	const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386 };
	struct sock_filter *want;
	struct sock_fprog got;
	uint64_t v[512];
	size_t len, nv, tried = 0;

	cr_assert_eq(sc_build(t, log, self, &want, &len), 0);
	cr_assert_eq(sc_prog_for(t, log, self, &got), 0);
	fill_args(t, self, v, &nv);
	for (size_t a = 0; a < 2; a++)
		for (int nr = 0; nr < SC_NR_NAMES + 2; nr++)
			for (size_t arg = 0; arg < 3; arg++)
				for (size_t k = 0; k < nv; k++) {
					struct seccomp_data d = { .nr = nr | (nr == SC_NR_NAMES + 1 ?
									    0x40000000 : 0),
								  .arch = arches[a] };
					uint32_t w, g;

					d.args[arg] = v[k];
					w = run_bpf(want, (unsigned)len, &d);
					g = run_bpf(got.filter, got.len, &d);
					cr_assert_neq(w, 0xdead, "%s: libseccomp's program", t->thread);
					cr_assert_eq(g, w, "%s (log %d, pid %d): nr %d arg%zu=%#llx: %#x, "
						     "libseccomp %#x", t->thread, log, self, nr, arg,
						     (unsigned long long)v[k], g, w);
					tried++;
				}
	cr_expect_gt(tried, 0);
	free(want);
	free(got.filter);
}

Test(seccomp_prog, every_table_decides_like_libseccomp_for_any_pid)
{
	const pid_t pids[] = { 1, 2, getpid(), 4194304 };

	for (size_t i = 0; i < sizeof(installed) / sizeof(installed[0]); i++)
		for (size_t p = 0; p < sizeof(pids) / sizeof(pids[0]); p++) {
			expect_same_decisions(installed[i], false, pids[p]);
			expect_same_decisions(installed[i], true, pids[p]);
		}
}

/* The log mode only turns the default TRAP into LOG: allowed calls and
 * clone3's ENOSYS stay. */
Test(seccomp_prog, log_mode_keeps_allow_and_errno)
{
	struct sock_fprog trap, log;
	int changed = 0;

	cr_assert_eq(sc_prog_for(&sc_table_main, false, getpid(), &trap), 0);
	cr_assert_eq(sc_prog_for(&sc_table_main, true, getpid(), &log), 0);
	for (unsigned i = 0; i < trap.len; i++)
		if (trap.filter[i].k != log.filter[i].k) {
			cr_expect_eq(trap.filter[i].k, SECCOMP_RET_TRAP);
			cr_expect_eq(log.filter[i].k, SECCOMP_RET_LOG);
			changed++;
		}
	cr_expect_gt(changed, 0);
	free(trap.filter);
	free(log.filter);
}

Test(seccomp_prog, a_table_not_compiled_is_refused)
{
	static const struct sc_rule rules[] = { { "read", SC_ANY } };
	const struct sc_table t = { .thread = "other", .rules = rules, .nr_rules = 1 };
	struct sock_fprog p;

	cr_expect_eq(sc_prog_for(&t, false, getpid(), &p), -ENOENT);
}

Test(seccomp_prog, the_report_names_system_calls)
{
	cr_expect_str_eq(sc_syscall_names[59], "execve");
	cr_expect_str_eq(sc_syscall_names[0], "read");
	cr_expect_null(sc_syscall_names[SC_NR_NAMES - 1]);
}

/* The aarch64 mvm's programs (make arm64-mvm: seccomp-gen --arch aarch64):
 * the same tables, their calls translated by name to aarch64's numbers
 * (asm-generic: read 63, ppoll 73, epoll_pwait 22, ioctl 29, execve 221),
 * under aarch64's arch check: an x86 call never matches. */
Test(seccomp_prog, a_table_builds_for_aarch64_by_name)
{
	struct seccomp_data d = { .arch = AUDIT_ARCH_AARCH64 };
	struct sock_filter *f, *v;
	size_t len, vlen;
	uint32_t r;

	cr_assert_eq(sc_build_set_arch("aarch64"), 0);
	cr_assert_eq(sc_build(&sc_table_main, false, getpid(), &f, &len), 0);
	cr_assert_eq(sc_build(&sc_table_vcpu, false, getpid(), &v, &vlen), 0);
	d.nr = 63;
	cr_expect_eq(run_bpf(f, (unsigned)len, &d), SECCOMP_RET_ALLOW, "read");
	d.nr = 73;
	cr_expect_eq(run_bpf(f, (unsigned)len, &d), SECCOMP_RET_ALLOW, "ppoll");
	d.nr = 22;
	cr_expect_eq(run_bpf(f, (unsigned)len, &d), SECCOMP_RET_ALLOW, "epoll_pwait");
	d.nr = 221;
	cr_expect_eq(run_bpf(f, (unsigned)len, &d), SECCOMP_RET_TRAP, "execve");
	/* ioctl (29): the vCPU's KVM_RUN, not another's request. */
	d.nr = 29;
	d.args[1] = KVM_RUN;
	cr_expect_eq(run_bpf(v, (unsigned)vlen, &d), SECCOMP_RET_ALLOW, "ioctl KVM_RUN");
	d.args[1] = KVM_CREATE_VCPU;
	cr_expect_eq(run_bpf(v, (unsigned)vlen, &d), SECCOMP_RET_TRAP, "ioctl KVM_CREATE_VCPU");
	/* x86_64's read (0) under x86's arch value: not this program's arch. */
	d.arch = AUDIT_ARCH_X86_64;
	d.nr = 0;
	r = run_bpf(f, (unsigned)len, &d) & SECCOMP_RET_ACTION_FULL;
	cr_expect(r == SECCOMP_RET_KILL_THREAD || r == SECCOMP_RET_KILL_PROCESS, "x86 call: 0x%x", r);
	free(f);
	free(v);
	cr_expect_str_eq(sc_build_syscall_name(221), "execve");
	cr_expect_eq(sc_build_set_arch("no-such-arch"), -EINVAL);
}
