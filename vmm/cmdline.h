/* Kernel command line assembly with a hard size cap. */
#ifndef MVM_CMDLINE_H
#define MVM_CMDLINE_H

#include <stddef.h>

struct cmdline {
	char buf[4096];
	size_t len;
	size_t cap;		/* the kernel's limit, <= sizeof(buf) */
	int overflow;		/* sticky: an append did not fit */
};

void cmdline_init(struct cmdline *c, size_t cap);
/* Append one space-separated token; never truncates silently (sets overflow). */
void cmdline_add(struct cmdline *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* 0, or -E2BIG when anything did not fit. */
int cmdline_check(const struct cmdline *c);

#endif
