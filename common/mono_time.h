/* Clock readings: CLOCK_MONOTONIC for durations and deadlines, CLOCK_REALTIME for timestamps. */
#ifndef MVM_MONO_TIME_H
#define MVM_MONO_TIME_H

#include <stdint.h>

/* CLOCK_MONOTONIC in seconds (with the nanoseconds as a fraction). */
double mono_now_s(void);
/* CLOCK_MONOTONIC in milliseconds. */
uint64_t mono_now_ms(void);
/* CLOCK_MONOTONIC in nanoseconds. */
int64_t mono_now_ns(void);
/* CLOCK_REALTIME in seconds since the epoch (with a fraction): for records, never for deadlines. */
double wall_now_s(void);

#endif
