/*
 * The relay's check of a local_web forward's first request (noVNC's port of
 * `mvm browser`): what a host web page can send there (a cross-origin
 * WebSocket, a DNS-rebound request naming its own Host) is refused; the
 * user's own browser on http://127.0.0.1:PORT or http://localhost:PORT and
 * clients without Origin pass; anything parsed differently by some server
 * (folded, bare-LF, NUL, duplicated headers) is refused.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/sandbox/relay.h"

#define P 40123

static int check(const char *head)
{
	size_t len = 0;
	const char *why = NULL;
	int r = relay_http_check(head, strlen(head), P, &len, &why);

	cr_assert(why);
	if (r == 0)
		cr_assert_eq(len, strlen(head), "the head's length: %zu", len);
	return r;
}

static const char ws[] = "GET /websockify HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n";

static int ws_with(const char *headers)
{
	static char b[1024];

	snprintf(b, sizeof(b), "%s%s\r\n", ws, headers);
	return check(b);
}

Test(relay_http, the_users_own_browser_and_plain_clients_pass)
{
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\nOrigin: http://127.0.0.1:40123\r\n"), 0);
	cr_assert_eq(ws_with("Host: localhost:40123\r\nOrigin: http://localhost:40123\r\n"), 0);
	cr_assert_eq(ws_with("host:LocalHost:40123 \r\norigin:  http://LOCALHOST:40123\r\n"), 0);
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\n"), 0, "no Origin: not a browser");
	cr_assert_eq(check("GET /vnc.html HTTP/1.1\r\nHost: 127.0.0.1:40123\r\nAccept: */*\r\n\r\n"), 0);
}

Test(relay_http, a_host_web_page_is_refused)
{
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\nOrigin: http://evil.example\r\n"), -EACCES);
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\nOrigin: null\r\n"), -EACCES);
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\nOrigin: https://127.0.0.1:40123\r\n"), -EACCES);
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\nOrigin: http://127.0.0.1:40124\r\n"), -EACCES);
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\nOrigin: http://127.0.0.1:401234\r\n"), -EACCES);
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\nOrigin: http://127.0.0.1:40123.evil.example\r\n"), -EACCES);
	/* DNS rebinding: the page's own name as Host (and Origin). */
	cr_assert_eq(ws_with("Host: evil.example:40123\r\nOrigin: http://evil.example:40123\r\n"), -EACCES);
	cr_assert_eq(check("GET /vnc.html HTTP/1.1\r\nHost: evil.example:40123\r\n\r\n"), -EACCES);
	cr_assert_eq(ws_with("Host: 127.0.0.1\r\n"), -EACCES, "no port");
	cr_assert_eq(ws_with("Host: 127.0.0.1:40124\r\n"), -EACCES);
}

Test(relay_http, ambiguous_heads_are_refused)
{
	cr_assert_eq(ws_with(""), -EACCES, "no Host");
	cr_assert_eq(check("GET / HTTP/1.1\r\n\r\n"), -EACCES, "no header at all");
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\nHost: evil.example:40123\r\n"), -EACCES);
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\nOrigin: http://127.0.0.1:40123\r\n"
			     "Origin: http://127.0.0.1:40123\r\n"), -EACCES, "two Origins");
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\nX: a\r\n Origin: http://evil.example\r\n"), -EACCES,
		     "a folded line");
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\nOrigin : http://evil.example\r\n"), -EACCES);
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\nOrigin: http://evil.example\r\n"), -EACCES, "bare LF");
	cr_assert_eq(ws_with("Host: 127.0.0.1:40123\r\nX: a\rOrigin: http://evil.example\r\n"), -EACCES,
		     "bare CR");
	{
		const char head[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1:40123\r\nX: \0\r\n\r\n";
		size_t len;
		const char *why;

		cr_assert_eq(relay_http_check(head, sizeof(head) - 1, P, &len, &why), -EACCES, "a NUL");
	}
}

Test(relay_http, waits_for_the_whole_head_but_not_forever)
{
	static char big[RELAY_HEAD_MAX + 16];
	const char part[] = "GET /websockify HTTP/1.1\r\nHost: 127.0.0.1:40123\r\n";
	size_t len = 0;
	const char *why;

	cr_assert_eq(relay_http_check(part, strlen(part), P, &len, &why), 1);
	cr_assert_eq(relay_http_check(part, 3, P, &len, &why), 1);
	memset(big, 'a', sizeof(big));
	cr_assert_eq(relay_http_check(big, RELAY_HEAD_MAX - 1, P, &len, &why), 1);
	cr_assert_eq(relay_http_check(big, RELAY_HEAD_MAX, P, &len, &why), -EACCES);
	/* Bytes after the head (a body, the first frames) are not the head's. */
	{
		const char more[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1:40123\r\n\r\nRFB 003.008\n";

		cr_assert_eq(relay_http_check(more, strlen(more), P, &len, &why), 0);
		cr_assert_eq(len, strlen(more) - strlen("RFB 003.008\n"));
	}
}
