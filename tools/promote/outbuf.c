/* Capped output buffer (tools/promote/outbuf.h): a patch is written whole or refused, never cut. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/promote/outbuf.h"

void ob_put(struct outbuf *o, const void *p, size_t n)
{
	if (o->over || o->nomem)
		return;
	if (o->max && n > o->max - o->len) {
		o->over = true;
		return;
	}
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		char *q;

		while (cap < o->len + n + 1)
			cap *= 2;
		q = realloc(o->p, cap);
		if (!q) {
			o->nomem = true;
			return;
		}
		o->p = q;
		o->cap = cap;
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
	o->p[o->len] = 0;
}

void ob_printf(struct outbuf *o, const char *fmt, ...)
{
	char small[512], *big = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		ob_put(o, small, (size_t)n);
		return;
	}
	big = malloc((size_t)n + 1);
	if (!big) {
		o->nomem = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	ob_put(o, big, (size_t)n);
	free(big);
}

void ob_free(struct outbuf *o)
{
	free(o->p);
	memset(o, 0, sizeof(*o));
}
