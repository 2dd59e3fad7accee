/* A growing output buffer with a hard cap: past @max it stops and says so (over). */
#ifndef MVM_OUTBUF_H
#define MVM_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>

struct outbuf {
	char *p;
	size_t len, cap;
	size_t max;		/* 0: no cap */
	bool over;		/* a write did not fit under max: the output is incomplete */
	bool nomem;
};

void ob_put(struct outbuf *o, const void *p, size_t n);
void ob_printf(struct outbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ob_free(struct outbuf *o);

#endif
