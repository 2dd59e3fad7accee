/*
 * mvm-wget: the guest's `wget` for http:// URLs. Debian 12's busybox-static
 * is built without FEATURE_WGET_TIMEOUT yet still parses -T, writing the
 * number through a NULL pointer, so `wget -T SECS` segfaults. This client
 * does HTTP/1.1 itself with the options scripts use (-O FILE, -O -, -q,
 * -T SECS, -t N, --header, -S, -U, -P, --spider, --post-data) and hands
 * anything else (https, ftp, -c, proxies, user:pass@) to busybox wget with
 * -T/-t taken out (a -T then bounds nothing there). The guest's busybox
 * calls that applet "wgbb" so that its sh runs this one for `wget`
 * (tools/stage-userland.sh).
 */
#ifndef MVM_GUEST_WGET_H
#define MVM_GUEST_WGET_H

#include <stdbool.h>
#include <stddef.h>

#define WGET_MAX_HEADERS 32

struct wget_opts {
	const char *out;		/* -O: NULL = from the URL, "-" = stdout */
	const char *dir;		/* -P */
	const char *agent;		/* -U */
	const char *post_data;		/* --post-data: POST instead of GET */
	const char *headers[WGET_MAX_HEADERS];
	int nheaders;
	bool quiet, spider, show_headers;
	int timeout_s;			/* -T: each connect and read; 0 = none */
	int tries;			/* -t: attempts on network errors (default 1) */
	bool out_opened;		/* -O FILE: opened once, later URLs append */
	int out_fd;
};

/* One URL, redirects followed; prints busybox-style messages. 0 or 1 (the exit status). */
int wget_http(struct wget_opts *o, const char *url);

/* "wget: " + message on stderr. */
void wget_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
