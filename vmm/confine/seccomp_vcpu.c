/*
 * What a vCPU thread may do once it runs: KVM_RUN, and what its exits need
 * (MMIO/PIO emulation: disk reads and writes, the console, interrupts, a
 * wake-up of the event loop, malloc). Nothing that opens, connects, creates
 * processes or threads. List derived from the code and checked under
 * `strace -f` (docs/security.md, "Confinement of the VMM").
 */
#include <linux/kvm.h>

#include "vmm/confine/seccomp_table.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct sc_rule rules[] = {
	{ "ioctl", SC_IOCTL },
	/* Disk emulation (raw and qcow2 files opened at set-up). */
	{ "read", SC_ANY }, { "write", SC_ANY }, { "readv", SC_ANY }, { "writev", SC_ANY },
	{ "pread64", SC_ANY }, { "pwrite64", SC_ANY }, { "preadv", SC_ANY },
	{ "pwritev", SC_ANY }, { "lseek", SC_ANY }, { "fsync", SC_ANY },
	{ "fdatasync", SC_ANY }, { "fallocate", SC_ANY }, { "ftruncate", SC_ANY },
	{ "fstat", SC_ANY }, { "newfstatat", SC_ANY },
	/* vsock data to host sockets already connected; waking the loop. */
	{ "sendto", SC_ANY }, { "sendmsg", SC_ANY }, { "recvfrom", SC_ANY },
	{ "recvmsg", SC_ANY }, { "shutdown", SC_ANY }, { "epoll_ctl", SC_ANY },
	{ "close", SC_ANY },
	/* Locks, the kick signal, pausing, memory, time, entropy, the end. */
	{ "futex", SC_ANY }, { "rt_sigreturn", SC_ANY }, { "rt_sigprocmask", SC_ANY },
	{ "restart_syscall", SC_ANY },	/* a sleep resumed after a stop (SIGSTOP, a tracer) */
	{ "mmap", SC_NO_EXEC }, { "mprotect", SC_NO_EXEC }, { "munmap", SC_ANY },
	{ "mremap", SC_ANY }, { "madvise", SC_ANY }, { "brk", SC_ANY },
	{ "clock_gettime", SC_ANY }, { "clock_nanosleep", SC_ANY }, { "nanosleep", SC_ANY },
	{ "gettimeofday", SC_ANY }, { "getpid", SC_ANY }, { "gettid", SC_ANY },
	{ "sched_yield", SC_ANY }, { "getrandom", SC_ANY }, { "tgkill", SC_SELF },
	{ "exit", SC_ANY }, { "exit_group", SC_ANY },
};

static const unsigned long ioctls[] = {
	KVM_RUN,
	KVM_IRQ_LINE,		/* the serial port's interrupt */
	KVM_IRQ_LINE_STATUS,
};

const struct sc_table sc_table_vcpu = {
	.thread = "vcpu",
	.rules = rules, .nr_rules = N(rules),
	.ioctls = ioctls, .nr_ioctls = N(ioctls),
};
