/*
 * What the keeper may do (vmm/confine/pidns.c): the process left in the
 * host's PID namespace when the VMM is forked into its own. It waits for
 * the VMM and ends as it did: its exit status, or the same signal raised at
 * itself (raise: gettid, getpid, tgkill; glibc may mask signals around it).
 * write: the SIGSYS report, should this list ever lack a call. Nothing
 * else: no file, no socket, no memory, no signal handler (the dispositions
 * it mirrors are read before its filter).
 */
#include "vmm/confine/seccomp_table.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct sc_rule rules[] = {
	{ "wait4", SC_ANY }, { "getpid", SC_ANY }, { "gettid", SC_ANY }, { "tgkill", SC_SELF },
	{ "rt_sigprocmask", SC_ANY }, { "rt_sigreturn", SC_ANY },
	{ "restart_syscall", SC_ANY },	/* a sleep resumed after a stop (SIGSTOP, a tracer) */
	{ "write", SC_ANY }, { "exit", SC_ANY }, { "exit_group", SC_ANY },
};

const struct sc_table sc_table_keeper = {
	.thread = "keeper",
	.rules = rules, .nr_rules = N(rules),
};
