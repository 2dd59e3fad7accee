/*
 * The runner of the cross-built arm64 unit tests (make test-arm64): every
 * test registered by tests/arm64/criterion/criterion.h runs in a child
 * process; a failed assertion, a crash or a non-zero exit fails it. Exit
 * status 0 only when every test passed and there was at least one.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criterion/criterion.h"

static struct shim_test *head, **tail = &head;

void shim_register(struct shim_test *t)
{
	/* Constructors run in link order; keep it. */
	*tail = t;
	tail = &t->next;
}

void shim_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[----] %s:%d: Assertion failed: %s\n[----]  ", file, line, expr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	fflush(NULL);
	_exit(1);
}

static int run(const struct shim_test *t)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0) {
		t->fn();
		fflush(NULL);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpid");
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		fprintf(stderr, "[----] %s::%s: killed by signal %d\n", t->suite, t->name,
			WTERMSIG(status));
	return -1;
}

int main(void)
{
	int total = 0, failed = 0;

	for (const struct shim_test *t = head; t; t = t->next) {
		int ok = run(t) == 0;

		total++;
		failed += !ok;
		printf("[%s] %s::%s\n", ok ? "PASS" : "FAIL", t->suite, t->name);
	}
	printf("[====] Synthesis: Tested: %d | Passing: %d | Failing: %d\n", total,
	       total - failed, failed);
	return failed || !total ? 1 : 0;
}
