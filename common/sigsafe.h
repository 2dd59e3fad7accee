/*
 * Async-signal-safe message building for signal handlers (the seccomp
 * trap's report, the fatal-signal report): no stdio, no allocation.
 * Each appends to @buf (capacity @cap, kept NUL-free) at @at and returns
 * the new length; what does not fit is dropped.
 */
#ifndef MVM_COMMON_SIGSAFE_H
#define MVM_COMMON_SIGSAFE_H

#include <stddef.h>
#include <stdint.h>

static inline size_t sigsafe_put(char *buf, size_t at, size_t cap, const char *s)
{
	while (*s && at + 1 < cap)
		buf[at++] = *s++;
	return at;
}

static inline size_t sigsafe_put_num(char *buf, size_t at, size_t cap, long v)
{
	char d[24];
	int n = 0;
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;

	if (v < 0)
		at = sigsafe_put(buf, at, cap, "-");
	do
		d[n++] = (char)('0' + u % 10);
	while ((u /= 10) && n < (int)sizeof(d));
	while (n && at + 1 < cap)
		buf[at++] = d[--n];
	return at;
}

static inline size_t sigsafe_put_hex(char *buf, size_t at, size_t cap, uintptr_t v)
{
	char d[2 * sizeof(v)];
	int n = 0;

	at = sigsafe_put(buf, at, cap, "0x");
	do
		d[n++] = "0123456789abcdef"[v & 15];
	while ((v >>= 4) && n < (int)sizeof(d));
	while (n && at + 1 < cap)
		buf[at++] = d[--n];
	return at;
}

#endif
