/*
 * What the event-loop (main) thread may do once the VM runs: the devices'
 * back-ends (disks, vsock to Unix sockets in the state directory, the
 * network's policy engine, talking to its helper process mvm-net over a
 * socketpair: no IPv4/IPv6 socket here), the control API (accept on api.sock), checkpoints (files in the
 * state directory: openat stays, Landlock and the mount namespace say
 * where), the VM state ioctls of checkpoint/rollback/snapshot. Never: exec,
 * new processes or threads, ptrace, mounts, namespaces, BPF, io_uring,
 * signals to other processes, executable memory. Derived from the code and
 * checked under `strace -f` (docs/security.md).
 */
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>

#include "vmm/confine/seccomp_table.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct sc_rule rules[] = {
	{ "ioctl", SC_IOCTL }, { "socket", SC_SOCKET },
	/* Files: disks, checkpoints, snapshots, console.log, events.jsonl. */
	{ "read", SC_ANY }, { "write", SC_ANY }, { "readv", SC_ANY }, { "writev", SC_ANY },
	{ "pread64", SC_ANY }, { "pwrite64", SC_ANY }, { "preadv", SC_ANY },
	{ "pwritev", SC_ANY }, { "lseek", SC_ANY }, { "fsync", SC_ANY },
	{ "fdatasync", SC_ANY }, { "fallocate", SC_ANY }, { "ftruncate", SC_ANY },
	{ "openat", SC_ANY }, { "close", SC_ANY }, { "fstat", SC_ANY },
	{ "newfstatat", SC_ANY }, { "statx", SC_ANY }, { "fstatfs", SC_ANY },
	{ "getdents64", SC_ANY }, { "unlink", SC_ANY }, { "unlinkat", SC_ANY },
	{ "rename", SC_ANY }, { "renameat", SC_ANY }, { "renameat2", SC_ANY },
	{ "mkdir", SC_ANY }, { "mkdirat", SC_ANY }, { "rmdir", SC_ANY },
	{ "readlink", SC_ANY }, { "readlinkat", SC_ANY }, { "access", SC_ANY },
	{ "faccessat", SC_ANY }, { "faccessat2", SC_ANY },
	/* fchmod on what it could open, to modes without a write bit: a
	 * template's layers are hard-linked into the state directory, 0444,
	 * and must stay so under every sibling. No chmod by path (Landlock
	 * ABI <= 3 does not govern it). */
	{ "fchmod", SC_NO_WRITE_MODE }, { "flock", SC_ANY }, { "fcntl", SC_ANY },
	{ "dup", SC_ANY }, { "dup2", SC_ANY }, { "dup3", SC_ANY }, { "getcwd", SC_ANY },
	{ "copy_file_range", SC_ANY }, { "sendfile", SC_ANY },
	/* The event loop and its timers. */
	{ "epoll_wait", SC_ANY }, { "epoll_pwait", SC_ANY }, { "epoll_ctl", SC_ANY },
	{ "epoll_create1", SC_ANY }, { "eventfd2", SC_ANY }, { "timerfd_create", SC_ANY },
	{ "timerfd_settime", SC_ANY }, { "timerfd_gettime", SC_ANY }, { "poll", SC_ANY },
	{ "ppoll", SC_ANY },
	/* Sockets: the API, vsock, the network helper's socketpair. */
	{ "connect", SC_ANY }, { "accept", SC_ANY }, { "accept4", SC_ANY },
	{ "bind", SC_ANY }, { "listen", SC_ANY }, { "getsockname", SC_ANY },
	{ "getpeername", SC_ANY }, { "setsockopt", SC_ANY }, { "getsockopt", SC_ANY },
	{ "sendto", SC_ANY }, { "recvfrom", SC_ANY }, { "sendmsg", SC_ANY },
	{ "recvmsg", SC_ANY }, { "sendmmsg", SC_ANY }, { "recvmmsg", SC_ANY },
	{ "shutdown", SC_ANY },
	/* Threads it already has, memory, time, identity queries (sysinfo: glibc's
	 * qsort asks for the RAM size), the end. */
	{ "futex", SC_ANY }, { "tgkill", SC_SELF }, { "rt_sigreturn", SC_ANY },
	{ "restart_syscall", SC_ANY },	/* a sleep resumed after a stop (SIGSTOP, a tracer) */
	{ "rt_sigprocmask", SC_ANY }, { "mmap", SC_NO_EXEC }, { "mprotect", SC_NO_EXEC },
	{ "munmap", SC_ANY }, { "mremap", SC_ANY }, { "madvise", SC_ANY }, { "brk", SC_ANY },
	{ "mincore", SC_ANY }, { "getrusage", SC_ANY }, { "clock_gettime", SC_ANY }, { "clock_nanosleep", SC_ANY },
	{ "nanosleep", SC_ANY }, { "gettimeofday", SC_ANY }, { "time", SC_ANY },
	{ "getpid", SC_ANY }, { "gettid", SC_ANY }, { "getuid", SC_ANY },
	{ "geteuid", SC_ANY }, { "getgid", SC_ANY }, { "getegid", SC_ANY },
	{ "uname", SC_ANY }, { "sysinfo", SC_ANY }, { "getppid", SC_ANY },
	{ "wait4", SC_ANY } /* reaping its network helper */, { "sched_getaffinity", SC_ANY }, { "fadvise64", SC_ANY }, { "statfs", SC_ANY }, { "sched_yield", SC_ANY }, { "getrandom", SC_ANY },
	{ "clone3", SC_ENOSYS }, { "exit", SC_ANY }, { "exit_group", SC_ANY },
};

static const unsigned long ioctls[] = {
	/* Interrupts; dirty logging for checkpoints. */
	KVM_IRQ_LINE, KVM_IRQ_LINE_STATUS, KVM_GET_DIRTY_LOG, KVM_SET_USER_MEMORY_REGION,
	KVM_CHECK_EXTENSION,
	/* Bytes waiting, non-blocking mode, isatty. */
	FIONREAD, FIONBIO, TCGETS,
	/* The VM and vCPU state ioctls of checkpoint, rollback and snapshot
	 * are the architecture's: sc_main_arch_ioctls. */
};

/* Unix only: the network (libslirp, upstream DNS) is the helper's
 * (vmm/confine/seccomp_nethelper.c). */
static const int families[] = { AF_UNIX };

const struct sc_table sc_table_main = {
	.thread = "main",
	.rules = rules, .nr_rules = N(rules),
	.ioctls = ioctls, .nr_ioctls = N(ioctls),
	.arch_ioctls = &sc_main_arch_ioctls,
	.families = families, .nr_families = N(families),
};
