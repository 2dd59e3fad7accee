/*
 * The per-thread seccomp filters (confine/seccomp_filter.h).
 *
 * Why SECCOMP_RET_TRAP and not KILL_PROCESS: a killed process leaves no
 * trace where the user looks (only an audit record, if auditing is on); the
 * SIGSYS handler names the call in console.log, which `mvm logs` shows, and
 * then ends the process just the same. A compromised VMM that replaces the
 * handler gains nothing: the call still does not run.
 *
 * The programs were compiled at build time (confine/seccomp_prog.h): no
 * libseccomp in the process, no compiler run at start.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/sigsafe.h"
#include "vmm/confine/seccomp_filter.h"
#include "vmm/confine/seccomp_prog.h"

static int report_fd = 2;
static const char *report_who = "mvm vmm: seccomp: the VMM";
static bool report_stderr_too;
static __thread const char *thread_kind;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	char msg[256];
	size_t n = 0;
	int nr = si->si_syscall;

	(void)sig;
	(void)uc;
	n = sigsafe_put(msg, n, sizeof(msg), report_who);
	n = sigsafe_put(msg, n, sizeof(msg), " made a forbidden system call ");
	n = sigsafe_put(msg, n, sizeof(msg), nr >= 0 && nr < SC_NR_NAMES && sc_syscall_names[nr] ?
			    sc_syscall_names[nr] : "?");
	n = sigsafe_put(msg, n, sizeof(msg), " (");
	n = sigsafe_put_num(msg, n, sizeof(msg), nr);
	n = sigsafe_put(msg, n, sizeof(msg), ") on its ");
	n = sigsafe_put(msg, n, sizeof(msg), thread_kind ? thread_kind : "?");
	n = sigsafe_put(msg, n, sizeof(msg), " thread; stopping it\n");
	(void)!write(report_fd, msg, n);
	if (report_stderr_too)
		(void)!write(2, msg, n);
	syscall(SYS_exit_group, CONFINE_SECCOMP_EXIT);
}

static void setup_once(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSYS, &sa, NULL);
}

void confine_seccomp_report_to(int fd)
{
	struct stat a, b;

	report_fd = fd;
	report_stderr_too = fd != 2 && !(fstat(fd, &a) == 0 && fstat(2, &b) == 0 &&
					  a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

void confine_seccomp_report_as(const char *who)
{
	report_who = who;
}

bool confine_seccomp_log_mode(void)
{
	const char *e = getenv("MVM_SECCOMP");

	return e && !strcmp(e, "log");
}

/*
 * A build without tables for its architecture (the aarch64 build, issue
 * 31: vmm/arch/arm64/seam/seccomp_none.c) refuses to confine, so the VMM
 * refuses to run, unless MVM_SECCOMP=none says to go on without a filter
 * (a test box's knob, documented in the README's arm64 line). It says so
 * on stderr for every thread that goes unfiltered. A build with tables
 * never takes this path: the knob does nothing there.
 */
static int no_tables(const struct sc_table *t)
{
	const char *e = getenv("MVM_SECCOMP");

	if (!e || strcmp(e, "none")) {
		fprintf(stderr, "mvm: seccomp: this build has no system-call tables for its "
			"architecture; refusing to run the %s thread unfiltered "
			"(MVM_SECCOMP=none allows it, for test boxes)\n", t->thread);
		return -ENOSYS;
	}
	fprintf(stderr, "mvm: seccomp: no tables for this architecture: the %s thread runs "
		"WITHOUT a system-call filter (MVM_SECCOMP=none)\n", t->thread);
	return 0;
}

int confine_seccomp_thread(const struct sc_table *t)
{
	struct sock_fprog prog;
	int ret;

	pthread_once(&once, setup_once);
	thread_kind = t->thread;
	if (sc_nr_progs == 0)
		return no_tables(t);
	ret = sc_prog_for(t, confine_seccomp_log_mode(), getpid(), &prog);
	if (ret)
		return ret;
	/* As libseccomp's seccomp_load does by default: no_new_privs, then the filter. */
	/* prctl(PR_SET_SECCOMP) where the seccomp call itself is missing: it
	 * installs the same filter (flags 0). Valgrind has no seccomp call, and
	 * bench-count runs the VMM under it (tests/bench/count.sh). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) &&
	     (errno != ENOSYS || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))))
		ret = -errno;
	free(prog.filter);
	return ret;
}
