/*
 * The relay's check of the first HTTP request on a forward that only this
 * host's own loopback clients may use (relay.h, relay_http_check). A web
 * page in the user's browser can open a WebSocket to any 127.0.0.1 port
 * (its Origin then names the page) and, by DNS rebinding, send requests
 * whose Host names its own domain; neither passes here. Clients that are
 * no browser send no Origin and may pass: they are the owner's (other
 * users' connections are closed at accept, relay_peer.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tools/sandbox/relay.h"

/* Whether @v (@n bytes) is one of "PFX127.0.0.1:PORT" or "PFXlocalhost:PORT". */
static bool names_port(const char *v, size_t n, const char *pfx, uint16_t port)
{
	static const char *const hosts[] = { "127.0.0.1", "localhost" };
	char want[64];

	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		int len = snprintf(want, sizeof(want), "%s%s:%u", pfx, hosts[i], port);

		if ((size_t)len == n && !strncasecmp(v, want, n))
			return true;
	}
	return false;
}

/* A header name's characters (RFC 9110 token): anything else is refused
 * rather than read differently from the server behind the relay. */
static bool token_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* One header line [@l, @e): checks Host and Origin, counting them. 0 or -EACCES. */
static int header(const char *l, const char *e, uint16_t port, int *hosts, int *origins,
		  const char **why)
{
	const char *c = l, *v;

	while (c < e && token_char(*c))
		c++;
	if (c == l || c == e || *c != ':') {
		*why = "a malformed header line";
		return -EACCES;
	}
	for (v = c + 1; v < e && (*v == ' ' || *v == '\t'); v++)
		;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if ((size_t)(c - l) == 4 && !strncasecmp(l, "Host", 4)) {
		++*hosts;
		if (!names_port(v, (size_t)(e - v), "", port)) {
			*why = "a Host that is not this loopback port";
			return -EACCES;
		}
	} else if ((size_t)(c - l) == 6 && !strncasecmp(l, "Origin", 6)) {
		++*origins;
		if (!names_port(v, (size_t)(e - v), "http://", port)) {
			*why = "an Origin that is not this loopback port";
			return -EACCES;
		}
	}
	return 0;
}

int relay_http_check(const char *b, size_t n, uint16_t port, size_t *head_len, const char **why)
{
	const char *end = memmem(b, n, "\r\n\r\n", 4), *l, *e;
	int hosts = 0, origins = 0;

	*why = "";
	if (!end) {
		if (n < RELAY_HEAD_MAX)
			return 1;
		*why = "a request head longer than the relay takes";
		return -EACCES;
	}
	*head_len = (size_t)(end - b) + 4;
	l = memchr(b, '\n', (size_t)(end - b));	/* skip the request line */
	if (!l) {
		*why = "no Host";
		return -EACCES;
	}
	if (memchr(b, 0, *head_len)) {
		*why = "a malformed request head";
		return -EACCES;
	}
	for (l++; l < end + 2; l = e + 2) {
		e = memchr(l, '\n', (size_t)(end + 2 - l));
		if (!e || e == l || e[-1] != '\r' || memchr(l, '\r', (size_t)(e - 1 - l))) {
			*why = "a malformed header line";	/* bare LF or CR, folded line */
			return -EACCES;
		}
		e--;	/* at the CR */
		if (header(l, e, port, &hosts, &origins, why))
			return -EACCES;
	}
	if (hosts != 1 || origins > 1) {
		*why = hosts ? "more than one Host or Origin" : "no Host";
		return -EACCES;
	}
	return 0;
}

/* Whether the value [@v, @e) lists the token "websocket" (comma-separated,
 * case-insensitive). */
static bool lists_websocket(const char *v, const char *e)
{
	while (v < e) {
		const char *t = v, *end;

		while (t < e && (*t == ' ' || *t == '\t' || *t == ','))
			t++;
		for (end = t; end < e && *end != ','; end++)
			;
		v = end;
		while (end > t && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (end - t == 9 && !strncasecmp(t, "websocket", 9))
			return true;
	}
	return false;
}

bool relay_http_upgrade(const char *b, size_t n)
{
	const char *end = memmem(b, n, "\r\n\r\n", 4), *l, *e, *c;

	if (!end || !(l = memchr(b, '\n', (size_t)(end - b))))
		return false;
	for (l++; l < end + 2; l = e + 2) {
		e = memchr(l, '\r', (size_t)(end + 2 - l));
		if (!e)
			return false;
		c = memchr(l, ':', (size_t)(e - l));
		if (c && c - l == 7 && !strncasecmp(l, "Upgrade", 7) && lists_websocket(c + 1, e))
			return true;
	}
	return false;
}
