/*
 * A stand-in for Criterion's <criterion/criterion.h>, for the arm64 unit
 * tests cross-built by `make test-arm64` and run under qemu-aarch64.
 * Debian 12's libcriterion is not multiarch-installable beside the host's
 * (libcriterion3:arm64 replaces libcriterion3:amd64), so the same test
 * files compile against this: Test() registers a function, the cr_assert
 * family checks and, on failure, prints file, line and message and ends
 * the test's process. Only the macros the arm64 tests use exist here; a
 * test using another one fails to build, never passes silently.
 * tests/arm64/runner.c runs each test in a child process, as Criterion does.
 */
#ifndef MVM_ARM64_CRITERION_SHIM_H
#define MVM_ARM64_CRITERION_SHIM_H

#include <stdbool.h>
#include <string.h>

struct shim_test {
	const char *suite, *name;
	void (*fn)(void);
	struct shim_test *next;
};

void shim_register(struct shim_test *t);
__attribute__((noreturn, format(printf, 4, 5)))
void shim_fail(const char *file, int line, const char *expr, const char *fmt, ...);

#define Test(suite, name)                                                        \
	static void suite##__##name(void);                                       \
	static struct shim_test shim_t_##suite##__##name = { #suite, #name,      \
							     suite##__##name, 0 }; \
	__attribute__((constructor)) static void shim_r_##suite##__##name(void)  \
	{                                                                        \
		shim_register(&shim_t_##suite##__##name);                        \
	}                                                                        \
	static void suite##__##name(void)

/* The message is optional, as in Criterion: " " keeps the format literal. */
#define cr_assert(c, ...) \
	((c) ? (void)0 : shim_fail(__FILE__, __LINE__, #c, " " __VA_ARGS__))
#define cr_assert_eq(a, b, ...)  cr_assert((a) == (b), __VA_ARGS__)
#define cr_assert_neq(a, b, ...) cr_assert((a) != (b), __VA_ARGS__)
#define cr_assert_lt(a, b, ...)  cr_assert((a) < (b), __VA_ARGS__)
#define cr_assert_leq(a, b, ...) cr_assert((a) <= (b), __VA_ARGS__)
#define cr_assert_gt(a, b, ...)  cr_assert((a) > (b), __VA_ARGS__)
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b), __VA_ARGS__)
#define cr_assert_null(p, ...)     cr_assert((p) == NULL, __VA_ARGS__)
#define cr_assert_not(c, ...)      cr_assert(!(c), __VA_ARGS__)
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL, __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) cr_assert(strcmp((a), (b)) == 0, __VA_ARGS__)
#define cr_assert_str_empty(a, ...) cr_assert((a)[0] == 0, __VA_ARGS__)

#endif
