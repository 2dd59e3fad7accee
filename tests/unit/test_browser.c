/*
 * What `mvm browser` and `mvm screenshot` accept from the guest: the start
 * program's JSON line, the webSocketDebuggerUrl's browser id (re-built with
 * the host's port, so nothing else of it may pass), a PNG header; the
 * relay's byte pipe moves bytes both ways and half-closes; the verbs' parsers.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/browser.h"

Test(browser, start_line_takes_the_last_json_line_and_checks_the_ports)
{
	struct browser_start bs;

	cr_assert_eq(browser_parse_start("starting Xvfb\n{\"cdp_port\":9222,\"vnc_port\":6080,"
					 "\"display\":\":99\",\"headless\":false}\n", &bs), 0);
	cr_assert_eq(bs.cdp_port, 9222);
	cr_assert_eq(bs.vnc_port, 6080);
	cr_assert_not(bs.headless);
	cr_assert_eq(browser_parse_start("{\"cdp_port\":9222,\"vnc_port\":null,\"headless\":true}", &bs), 0);
	cr_assert_eq(bs.vnc_port, 0);
	cr_assert(bs.headless);
	cr_assert_eq(browser_parse_start("{\"cdp_port\":0,\"vnc_port\":null}", &bs), -EPROTO);
	cr_assert_eq(browser_parse_start("{\"cdp_port\":65536,\"vnc_port\":null}", &bs), -EPROTO);
	cr_assert_eq(browser_parse_start("{\"cdp_port\":9222.5,\"vnc_port\":null}", &bs), -EPROTO);
	cr_assert_eq(browser_parse_start("{\"cdp_port\":\"9222\",\"vnc_port\":null}", &bs), -EPROTO);
	cr_assert_eq(browser_parse_start("{\"cdp_port\":9222}", &bs), -EPROTO);
	cr_assert_eq(browser_parse_start("", &bs), -EPROTO);
	cr_assert_eq(browser_parse_start("{\"cdp_port\":9222,\"vnc_port\":null}\nnot json\n", &bs), -EPROTO);
}

Test(browser, ws_id_accepts_only_a_plain_browser_id)
{
	char id[BROWSER_ID_MAX + 1];
	char longid[200] = "ws://127.0.0.1:9222/devtools/browser/";

	cr_assert_eq(browser_ws_id("ws://127.0.0.1:9222/devtools/browser/"
				   "3c3a0a3e-8d07-4f2d-9d1b-3f5e0d5f6a7b", id), 0);
	cr_assert_str_eq(id, "3c3a0a3e-8d07-4f2d-9d1b-3f5e0d5f6a7b");
	cr_assert_eq(browser_ws_id("ws://localhost/devtools/browser/ABC", id), 0);
	cr_assert_eq(browser_ws_id("wss://127.0.0.1:9222/devtools/browser/abc", id), -EPROTO);
	cr_assert_eq(browser_ws_id("ws://127.0.0.1:9222/devtools/page/abc", id), -EPROTO);
	cr_assert_eq(browser_ws_id("ws://127.0.0.1:9222/devtools/browser/", id), -EPROTO);
	cr_assert_eq(browser_ws_id("ws://127.0.0.1:9222/devtools/browser/abc/../x", id), -EPROTO);
	cr_assert_eq(browser_ws_id("ws://127.0.0.1:9222/devtools/browser/abc?x=1", id), -EPROTO);
	cr_assert_eq(browser_ws_id("ws://127.0.0.1:9222/devtools/browser/a\"b", id), -EPROTO);
	cr_assert_eq(browser_ws_id("ws://evil.example/x/devtools/browser/abc", id), -EPROTO);
	memset(longid + strlen(longid), 'a', BROWSER_ID_MAX + 1);
	cr_assert_eq(browser_ws_id(longid, id), -EPROTO);
}

/* A PNG signature and IHDR for @w x @h, 8-bit RGB, with the CRC zlib computes for 1280x800. */
static size_t png_head(uint8_t *b, uint32_t w, uint32_t h)
{
	static const uint8_t head[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n',
					0, 0, 0, 13, 'I', 'H', 'D', 'R' };

	memcpy(b, head, sizeof(head));
	b[16] = (uint8_t)(w >> 24); b[17] = (uint8_t)(w >> 16); b[18] = (uint8_t)(w >> 8); b[19] = (uint8_t)w;
	b[20] = (uint8_t)(h >> 24); b[21] = (uint8_t)(h >> 16); b[22] = (uint8_t)(h >> 8); b[23] = (uint8_t)h;
	b[24] = 8; b[25] = 2; b[26] = 0; b[27] = 0; b[28] = 0;
	/* zlib.crc32(b"IHDR" + struct.pack(">IIBBBBB", 1280, 800, 8, 2, 0, 0, 0)) */
	b[29] = 0xf3; b[30] = 0xfa; b[31] = 0x58; b[32] = 0xac;
	return 33;
}

Test(browser, png_check_wants_signature_ihdr_crc_and_sane_size)
{
	uint8_t b[64];
	uint32_t w, h;
	size_t n = png_head(b, 1280, 800);

	cr_assert_eq(browser_png_check(b, n, &w, &h), 0);
	cr_assert_eq(w, 1280);
	cr_assert_eq(h, 800);
	cr_assert_eq(browser_png_check(b, n - 1, &w, &h), -EPROTO);	/* truncated */
	b[30] ^= 1;
	cr_assert_eq(browser_png_check(b, n, &w, &h), -EPROTO);	/* CRC */
	png_head(b, 1280, 800);
	b[1] = 'Q';
	cr_assert_eq(browser_png_check(b, n, &w, &h), -EPROTO);	/* signature */
	png_head(b, 0, 800);
	cr_assert_eq(browser_png_check(b, n, &w, &h), -EPROTO);	/* CRC, and zero width */
	png_head(b, 1280, 800);
	b[25] = 5;
	cr_assert_eq(browser_png_check(b, n, &w, &h), -EPROTO);	/* no colour type 5 */
}

Test(browser, png_check_refuses_a_huge_display_even_with_a_right_crc)
{
	/* 100000 x 100000, CRC by zlib: the size check itself must refuse it. */
	uint8_t b[64];
	uint32_t w, h;
	size_t n = png_head(b, 100000, 100000);

	b[29] = 0x27; b[30] = 0x30; b[31] = 0x9c; b[32] = 0x9f;
	cr_assert_eq(browser_png_check(b, n, &w, &h), -EPROTO);
}

Test(browser, half_pipe_moves_bytes_and_half_closes)
{
	int a[2], b[2];
	uint8_t buf[8], got[16];
	struct ap_half h = { .buf = buf, .cap = sizeof(buf) };
	size_t n = 0;
	ssize_t r;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
	h.from = a[1];
	h.to = b[0];
	cr_assert_eq(write(a[0], "0123456789ab", 12), 12);
	shutdown(a[0], SHUT_WR);
	while (!h.done)
		cr_assert_eq(ap_half_step(&h, true), 0);
	while ((r = read(b[1], got + n, sizeof(got) - n)) > 0)
		n += (size_t)r;
	cr_assert_eq(r, 0, "the far end sees EOF once all is written");
	cr_assert_eq(n, 12);
	cr_assert_eq(memcmp(got, "0123456789ab", 12), 0);
	close(b[1]);
	cr_assert_eq(send(a[0], "x", 1, MSG_NOSIGNAL), -1, "our end was shut for writing");
	h.eof = h.done = false;
	h.len = 1; h.off = 0;
	cr_assert_lt(ap_half_step(&h, false), 0, "a dead peer ends the pipe");
}

Test(browser, http_reply_is_complete_by_content_length)
{
	const char *h = "HTTP/1.1 200 OK\r\nContent-Type:application/json\r\nContent-Length:5\r\n\r\n";
	char b[256];

	snprintf(b, sizeof(b), "%s", "HTTP/1.1 200 OK\r\nContent-Len");
	cr_assert_eq(browser_http_complete(b, strlen(b)), 0, "headers not complete yet");
	snprintf(b, sizeof(b), "%s{\"a\"", h);
	cr_assert_eq(browser_http_complete(b, strlen(b)), 0, "4 of 5 body bytes");
	snprintf(b, sizeof(b), "%s{\"a\"}", h);
	cr_assert_eq(browser_http_complete(b, strlen(b)), 1);
	snprintf(b, sizeof(b), "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
	cr_assert_eq(browser_http_complete(b, strlen(b)), 1, "header names are case-insensitive");
	snprintf(b, sizeof(b), "HTTP/1.1 200 OK\r\nX: y\r\n\r\nbody");
	cr_assert_eq(browser_http_complete(b, strlen(b)), -EPROTO, "no Content-Length");
	snprintf(b, sizeof(b), "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n");
	cr_assert_eq(browser_http_complete(b, strlen(b)), -EPROTO, "absurd length");
	snprintf(b, sizeof(b), "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n");
	cr_assert_eq(browser_http_complete(b, strlen(b)), -EPROTO);
}

Test(browser, verbs_parse_their_arguments)
{
	char a0[] = "browser", a1[] = "--json", a2[] = "sb", a3[] = "--headless";
	char *argv[] = { a0, a1, a2, a3, NULL };
	char s0[] = "screenshot", s1[] = "sb", s2[] = "out.png";
	char *sargv[] = { s0, s1, s2, NULL };
	struct browser_opts o;
	struct verb_args va;

	cr_assert_eq(browser_parse(4, argv, &va, &o), 0);
	cr_assert(o.json && o.headless);
	cr_assert_str_eq(va.pos[0], "sb");
	cr_assert_eq(screenshot_parse(3, sargv, &va), 0);
	cr_assert_eq(va.npos, 2);
	cr_assert_eq(screenshot_parse(2, sargv, &va), -1);
}
