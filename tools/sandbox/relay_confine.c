/*
 * Confinement of the relay process (relay.h). It parses nothing, but it is
 * fed by the guest, so it gets what the VMM gets where it applies: process
 * hygiene, Landlock (nothing to open: only the state directory to read),
 * and a seccomp table of its own. It stays in the host's network namespace:
 * listening on host loopback is its job. The table was derived from
 * relay.c and checked under `strace -f` (a forbidden call ends the relay
 * with SIGSYS and a line in relay.log).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "tools/sandbox/relay.h"
#include "vmm/confine/hygiene.h"
#include "vmm/confine/landlock.h"
#include "vmm/confine/seccomp_filter.h"

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
	{ "exit", SC_ANY }, { "exit_group", SC_ANY }, { "newfstatat", SC_ANY }, { "fstat", SC_ANY },
};

static const int families[] = { AF_UNIX };

static const struct sc_table sc_table_relay = {
	.thread = "relay",
	.rules = rules, .nr_rules = N(rules),
	.families = families, .nr_families = N(families),
};

int relay_confine(const int *keep, int nkeep, const char *dir)
{
	const char *ro[] = { dir, NULL }, *rw[] = { NULL };
	int ret = confine_hygiene(keep, nkeep), abi;

	if (ret)
		return ret;
	abi = confine_landlock(ro, rw);
	if (abi < 0)
		fprintf(stderr, "mvm relay: landlock: %s\n", strerror(-abi));
	return confine_seccomp_thread(&sc_table_relay);
}
