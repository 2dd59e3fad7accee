/*
 * The host microbenchmarks' clocks (the programs in tests/bench/): wall and CPU time in
 * milliseconds, and a comparison for qsort of the rounds. Header-only: each
 * benchmark is one program of its own.
 */
#ifndef MVM_BENCH_CLOCK_H
#define MVM_BENCH_CLOCK_H

#include <sys/resource.h>
#include <time.h>

static inline double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* This process's user + system time. */
static inline double cpu_ms(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
	       (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#endif
