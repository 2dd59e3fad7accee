/* Clock readings (common/mono_time.h). */
#include <time.h>

#include "common/mono_time.h"

static double secs(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

double mono_now_s(void)
{
	return secs(CLOCK_MONOTONIC);
}

double wall_now_s(void)
{
	return secs(CLOCK_REALTIME);
}

int64_t mono_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

uint64_t mono_now_ms(void)
{
	return (uint64_t)mono_now_ns() / 1000000;
}
