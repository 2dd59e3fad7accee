/*
 * What the network helper (mvm-net, tools/nethelper/) may do once it runs:
 * libslirp and glib on its one event loop (IPv4/IPv6 sockets for the
 * guest's allowed connections and --publish listeners, slirp's timers),
 * the upstream DNS queries the VMM asks for, and the batches on its
 * socketpair to the VMM. It holds no guest memory and no KVM descriptor.
 * Never: exec, new processes or threads, ptrace, Unix or netlink or raw
 * sockets, mounts, namespaces, BPF, io_uring, signals to others, executable
 * memory, any ioctl but FIONREAD/FIONBIO/TCGETS. File system: openat stays
 * for libslirp's /etc/resolv.conf (DNS over TCP to the virtual resolver);
 * Landlock allows that one file and nothing else (docs/security.md).
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>

#include "vmm/confine/seccomp_table.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct sc_rule rules[] = {
	{ "ioctl", SC_IOCTL }, { "socket", SC_SOCKET },
	/* Sockets: the guest's connections, --publish listeners, DNS, the VMM. */
	{ "connect", SC_ANY }, { "accept", SC_ANY }, { "accept4", SC_ANY },
	{ "bind", SC_ANY }, { "listen", SC_ANY }, { "getsockname", SC_ANY },
	{ "getpeername", SC_ANY }, { "setsockopt", SC_ANY }, { "getsockopt", SC_ANY },
	{ "sendto", SC_ANY }, { "recvfrom", SC_ANY }, { "sendmsg", SC_ANY },
	{ "recvmsg", SC_ANY }, { "shutdown", SC_ANY },
	{ "read", SC_ANY }, { "write", SC_ANY }, { "readv", SC_ANY }, { "writev", SC_ANY },
	{ "close", SC_ANY }, { "fcntl", SC_ANY }, { "dup", SC_ANY },
	/* /etc/resolv.conf (Landlock: that file only), glib's checks on stderr. */
	{ "openat", SC_ANY }, { "fstat", SC_ANY }, { "newfstatat", SC_ANY }, { "statx", SC_ANY },
	{ "lseek", SC_ANY },
	/* The event loop, slirp's timers. */
	{ "epoll_wait", SC_ANY }, { "epoll_pwait", SC_ANY }, { "epoll_ctl", SC_ANY },
	{ "epoll_create1", SC_ANY }, { "timerfd_create", SC_ANY }, { "timerfd_settime", SC_ANY },
	{ "timerfd_gettime", SC_ANY }, { "eventfd2", SC_ANY }, { "poll", SC_ANY },
	{ "ppoll", SC_ANY },
	/* Memory, time, identity, entropy (DNS ids), the end. */
	{ "futex", SC_ANY }, { "rt_sigreturn", SC_ANY }, { "rt_sigprocmask", SC_ANY },
	{ "restart_syscall", SC_ANY },	/* a sleep resumed after a stop (SIGSTOP, a tracer) */
	{ "mmap", SC_NO_EXEC }, { "mprotect", SC_NO_EXEC }, { "munmap", SC_ANY },
	{ "mremap", SC_ANY }, { "madvise", SC_ANY }, { "brk", SC_ANY },
	{ "clock_gettime", SC_ANY }, { "clock_nanosleep", SC_ANY }, { "nanosleep", SC_ANY },
	{ "gettimeofday", SC_ANY }, { "time", SC_ANY }, { "getpid", SC_ANY },
	{ "gettid", SC_ANY }, { "getppid", SC_ANY }, { "getuid", SC_ANY },
	{ "geteuid", SC_ANY }, { "getgid", SC_ANY }, { "getegid", SC_ANY },
	{ "uname", SC_ANY }, { "sysinfo", SC_ANY }, { "sched_yield", SC_ANY },
	{ "getrandom", SC_ANY }, { "clone3", SC_ENOSYS }, { "exit", SC_ANY },
	{ "exit_group", SC_ANY },
};

/* libslirp: bytes waiting on a UDP socket, non-blocking mode; isatty. */
static const unsigned long ioctls[] = { FIONREAD, FIONBIO, TCGETS };

/* No AF_UNIX (the VMM's socketpair exists already), no AF_NETLINK, AF_PACKET. */
static const int families[] = { AF_INET, AF_INET6 };

const struct sc_table sc_table_nethelper = {
	.thread = "main",
	.rules = rules, .nr_rules = N(rules),
	.ioctls = ioctls, .nr_ioctls = N(ioctls),
	.families = families, .nr_families = N(families),
};
