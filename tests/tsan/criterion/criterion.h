/*
 * Just enough of Criterion's API to run a few unit tests under
 * ThreadSanitizer (`make tsan`): Criterion's own runner maps a shared
 * arena that TSan's shadow memory refuses. Every test runs in this one
 * process, in order; a failed assertion prints and aborts.
 */
#ifndef MVM_TSAN_CRITERION_SHIM_H
#define MVM_TSAN_CRITERION_SHIM_H

#include <stdio.h>
#include <stdlib.h>

struct shim_suite {
	void (*init)(void);
	void (*fini)(void);
	double timeout;
};

void shim_register(const char *name, const struct shim_suite *s, void (*fn)(void));

#define TestSuite(suite, ...) \
	const struct shim_suite shim_suite_##suite = { __VA_ARGS__ }

/* A suite without TestSuite(): the weak reference is NULL. */
#define Test(suite, name, ...)                                                   \
	extern const struct shim_suite shim_suite_##suite __attribute__((weak)); \
	static void suite##_##name(void);                                        \
	__attribute__((constructor)) static void shim_reg_##suite##_##name(void) \
	{                                                                        \
		shim_register(#suite "/" #name, &shim_suite_##suite, suite##_##name); \
	}                                                                        \
	static void suite##_##name(void)

#define cr_assert(cond, ...)                                                        \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, \
				__LINE__, #cond);                                   \
			abort();                                                    \
		}                                                                   \
	} while (0)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b))
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b))
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL)
#define cr_assert_null(p, ...) cr_assert((p) == NULL)

#endif
