/*
 * What a virtio-blk I/O thread may do (devices/blk_io.h lists why): run the
 * disk back-ends' reads, writes and flushes on descriptors opened at
 * set-up, signal the completion eventfd, lock, allocate. No open, no
 * socket, no ioctl, no process or thread. It installs this table itself,
 * before it takes its first request.
 */
#include "vmm/confine/seccomp_table.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct sc_rule rules[] = {
	/* Data and qcow2 metadata; flushes; qcow2 punching freed clusters. */
	{ "pread64", SC_ANY }, { "pwrite64", SC_ANY }, { "preadv", SC_ANY },
	{ "pwritev", SC_ANY }, { "fdatasync", SC_ANY }, { "fsync", SC_ANY },
	{ "fallocate", SC_ANY },
	/* The completion eventfd; stderr when a back-end logs (stdio may fstat it). */
	{ "write", SC_ANY }, { "fstat", SC_ANY }, { "newfstatat", SC_ANY },
	/* Locks, memory (each thread's malloc arena), time, and the thread's end. */
	{ "futex", SC_ANY }, { "mmap", SC_NO_EXEC }, { "mprotect", SC_NO_EXEC },
	{ "munmap", SC_ANY }, { "madvise", SC_ANY }, { "brk", SC_ANY },
	{ "clock_gettime", SC_ANY }, { "nanosleep", SC_ANY }, { "clock_nanosleep", SC_ANY },
	{ "gettid", SC_ANY }, { "getpid", SC_ANY },
	{ "rt_sigprocmask", SC_ANY }, { "rt_sigreturn", SC_ANY }, { "sched_yield", SC_ANY },
	{ "restart_syscall", SC_ANY },	/* a sleep resumed after a stop (SIGSTOP, a tracer) */
	{ "exit", SC_ANY }, { "exit_group", SC_ANY },
};

const struct sc_table sc_table_blk = {
	.thread = "blk",
	.rules = rules, .nr_rules = N(rules),
};
