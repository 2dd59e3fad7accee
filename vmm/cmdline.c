/* Kernel command line assembly. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vmm/cmdline.h"

void cmdline_init(struct cmdline *c, size_t cap)
{
	memset(c, 0, sizeof(*c));
	c->cap = cap < sizeof(c->buf) ? cap : sizeof(c->buf);
}

void cmdline_add(struct cmdline *c, const char *fmt, ...)
{
	char tok[1024];
	size_t need;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tok, sizeof(tok), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tok)) {
		c->overflow = 1;
		return;
	}
	/* The cap counts the terminating NUL, as the kernel's limit does. */
	need = (c->len ? 1 : 0) + (size_t)n;
	if (c->len + need + 1 > c->cap) {
		c->overflow = 1;
		return;
	}
	if (c->len)
		c->buf[c->len++] = ' ';
	memcpy(c->buf + c->len, tok, (size_t)n + 1);
	c->len += (size_t)n;
}

int cmdline_check(const struct cmdline *c)
{
	return c->overflow ? -E2BIG : 0;
}
