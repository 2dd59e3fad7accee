/*
 * What the relay process may do (tools/sandbox/relay_confine.c): accept on
 * its loopback listener, ask its netlink socket (opened before) who owns a
 * client, connect to the sandbox's vsock socket, copy bytes, keep its log.
 * Derived from relay.c and checked under `strace -f`.
 */
#include <sys/socket.h>

#include "vmm/confine/seccomp_table.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct sc_rule rules[] = {
	{ "epoll_wait", SC_ANY }, { "epoll_pwait", SC_ANY }, { "epoll_ctl", SC_ANY },
	{ "accept4", SC_ANY }, { "socket", SC_SOCKET }, { "connect", SC_ANY },
	{ "sendto", SC_ANY }, { "recvfrom", SC_ANY }, { "shutdown", SC_ANY },
	{ "read", SC_ANY }, { "write", SC_ANY }, { "close", SC_ANY }, { "fcntl", SC_ANY },
	{ "mmap", SC_NO_EXEC }, { "munmap", SC_ANY }, { "mremap", SC_ANY }, { "brk", SC_ANY },
	{ "madvise", SC_ANY }, { "futex", SC_ANY }, { "clock_gettime", SC_ANY },
	{ "gettimeofday", SC_ANY }, { "getpid", SC_ANY }, { "gettid", SC_ANY },
	{ "tgkill", SC_SELF }, { "rt_sigreturn", SC_ANY }, { "rt_sigprocmask", SC_ANY },
	{ "restart_syscall", SC_ANY },	/* a sleep resumed after a stop (SIGSTOP, a tracer) */
	{ "exit", SC_ANY }, { "exit_group", SC_ANY }, { "newfstatat", SC_ANY }, { "fstat", SC_ANY },
	/* relay.log's rotation on its two open files (rotlog_attach_fixed) */
	{ "pread64", SC_ANY }, { "pwrite64", SC_ANY }, { "ftruncate", SC_ANY },
};

static const int families[] = { AF_UNIX };

const struct sc_table sc_table_relay = {
	.thread = "relay",
	.rules = rules, .nr_rules = N(rules),
	.families = families, .nr_families = N(families),
};
