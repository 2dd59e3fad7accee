/* The crash report (common/fatal_signal.h). */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "common/fatal_signal.h"
#include "common/sigsafe.h"

static int report_fd = 2;
static const char *report_who = "mvm";

static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGABRT: return "SIGABRT";
	default: return "a fatal signal";
	}
}

/* SA_RESETHAND has restored the default action: returning re-runs the
 * faulting instruction (abort() raises again itself), and a signal another
 * process sent is raised again, so the process dies of the signal itself. Only write(2) here, which every thread's seccomp
 * table allows (each thread writes its log or eventfd). */
static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	char msg[160];
	size_t n = 0;

	(void)uc;
	n = sigsafe_put(msg, n, sizeof(msg), report_who);
	n = sigsafe_put(msg, n, sizeof(msg), ": crashed: ");
	n = sigsafe_put(msg, n, sizeof(msg), sig_name(sig));
	if (sig != SIGABRT) {
		n = sigsafe_put(msg, n, sizeof(msg), " (fault address ");
		n = sigsafe_put_hex(msg, n, sizeof(msg), (uintptr_t)si->si_addr);
		n = sigsafe_put(msg, n, sizeof(msg), ")");
	}
	n = sigsafe_put(msg, n, sizeof(msg), "\n");
	(void)!write(report_fd, msg, n);
	if (si->si_code <= 0 && sig != SIGABRT) {
		raise(sig);	/* sent, not a fault: nothing would re-raise it */
		_exit(128 + sig);	/* pid 1 of a PID namespace ignores its own raise */
	}
}

void fatal_signal_report(int fd, const char *who)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	struct sigaction sa;

	report_fd = fd;
	report_who = who;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
