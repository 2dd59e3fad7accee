/* Runner for the unit tests built against tests/tsan/criterion/criterion.h. */
#include <stdio.h>
#include <string.h>

#include "tests/tsan/criterion/criterion.h"

#define MAX_TESTS 64

static struct {
	const char *name;
	const struct shim_suite *suite;
	void (*fn)(void);
} tests[MAX_TESTS];
static int ntests;

void shim_register(const char *name, const struct shim_suite *s, void (*fn)(void))
{
	if (ntests < MAX_TESTS)
		tests[ntests].name = name, tests[ntests].suite = s, tests[ntests++].fn = fn;
}

int main(void)
{
	for (int i = 0; i < ntests; i++) {
		const struct shim_suite *s = tests[i].suite;

		fprintf(stderr, "tsan: %s\n", tests[i].name);
		if (s && s->init)
			s->init();
		tests[i].fn();
		if (s && s->fini)
			s->fini();
	}
	fprintf(stderr, "tsan: %d tests passed\n", ntests);
	return 0;
}
