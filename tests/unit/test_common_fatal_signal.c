/* The crash report (common/fatal_signal.h): a crashing daemon leaves one
 * line saying so, and still dies of its signal. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fatal_signal.h"

enum crash { CRASH_FAULT, CRASH_ABORT, CRASH_SENT };

/* Run a child that installs the report and crashes as @how; returns its
 * wait status, its report in @line and the faulting page in @page. */
static int crash_child(enum crash how, char *line, size_t cap, void **page)
{
	int p[2], st = 0;
	ssize_t n;
	pid_t pid;

	*page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(*page != MAP_FAILED && pipe(p) == 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		close(p[0]);
		fatal_signal_report(p[1], "test-daemon");
		if (how == CRASH_FAULT)
			*(volatile int *)*page = 1;
		else if (how == CRASH_ABORT)
			abort();
		else
			kill(getpid(), SIGBUS);
		_exit(0);	/* survived: the test fails on the status */
	}
	close(p[1]);
	n = read(p[0], line, cap - 1);
	line[n > 0 ? n : 0] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	munmap(*page, 4096);
	return st;
}

Test(fatal_signal, a_fault_is_reported_with_its_address_and_still_kills)
{
	char line[256], want[128];
	void *page;
	int st = crash_child(CRASH_FAULT, line, sizeof(line), &page);

	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "status %#x", st);
	snprintf(want, sizeof(want), "test-daemon: crashed: SIGSEGV (fault address %#lx)\n",
		 (unsigned long)(uintptr_t)page);
	cr_assert_str_eq(line, want);
}

Test(fatal_signal, an_abort_is_reported_and_still_kills)
{
	char line[256];
	void *page;
	int st = crash_child(CRASH_ABORT, line, sizeof(line), &page);

	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %#x", st);
	cr_assert_str_eq(line, "test-daemon: crashed: SIGABRT\n");
}

Test(fatal_signal, a_sent_signal_is_reported_and_still_kills)
{
	char line[256];
	void *page;
	int st = crash_child(CRASH_SENT, line, sizeof(line), &page);

	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS, "status %#x", st);
	cr_assert(strncmp(line, "test-daemon: crashed: SIGBUS", 28) == 0, "%s", line);
}
