/*
 * `mvm browser` and `mvm screenshot` (issue 17): the display stack and
 * Chromium in the guest are started by the image's own programs
 * (mvm-browser-start, mvm-screenshot, run through the agent like `mvm
 * exec`); the host reaches CDP and noVNC through the relay (relay.h).
 * Everything that comes back is guest-controlled and checked here.
 */
#ifndef MVM_BROWSER_H
#define MVM_BROWSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BROWSER_CDP_PORT 9222		/* the image's defaults (the start line names them) */
#define BROWSER_VNC_PORT 6080
#define BROWSER_ID_MAX   64		/* a browser target id: [A-Za-z0-9-], at most this long */
#define SHOT_MAX         (32u << 20)	/* bytes of PNG `mvm screenshot` takes from the guest */
#define SHOT_DIM_MAX     16384		/* widest and tallest display accepted */

struct browser_start {
	uint16_t cdp_port;
	uint16_t vnc_port;		/* 0: none (headless) */
	bool headless;
};

struct browser_endpoint {
	char cdp[64];			/* http://127.0.0.1:PORT */
	char ws[160];			/* ws://127.0.0.1:PORT/devtools/browser/ID */
	char vnc[64];			/* http://127.0.0.1:PORT2/vnc.html, "" when headless */
};

/* mvm-browser-start's JSON line (the last non-empty line of @text):
 * cdp_port 1..65535, vnc_port 1..65535 or null. 0 or -EPROTO. Pure. */
int browser_parse_start(const char *text, struct browser_start *bs);

/* The browser id of a webSocketDebuggerUrl
 * "ws://HOST/devtools/browser/ID": ID of 1..BROWSER_ID_MAX characters of
 * [A-Za-z0-9-] and nothing after it. 0 or -EPROTO. Pure. */
int browser_ws_id(const char *url, char id[BROWSER_ID_MAX + 1]);

/* Whether the HTTP response in @b (@n bytes) is complete: its headers and
 * as many body bytes as its Content-Length says (Chromium keeps the
 * connection open whatever the request asks). 1 complete, 0 not yet,
 * -EPROTO headers without a usable Content-Length. Pure. */
int browser_http_complete(const char *b, size_t n);

/* A PNG's signature and its first chunk, IHDR (13 bytes, CRC checked):
 * width and height 1..SHOT_DIM_MAX, a valid bit depth / colour type pair,
 * compression, filter and interlace methods PNG defines. @n: bytes in @b.
 * 0 with *w, *h set, or -EPROTO. Pure. */
int browser_png_check(const uint8_t *b, size_t n, uint32_t *w, uint32_t *h);

/*
 * Start the browser in NAME (idempotent in the guest), make sure the relay
 * forwards its ports, and check that CDP answers GET /json/version through
 * the relay. Fills @ep. 0, or -errno with @err set.
 */
int browser_up(const char *name, bool headless, struct browser_endpoint *ep,
	       char *err, size_t errlen);

/* The display as a PNG at @path: checked, written to a temporary file
 * beside it and renamed; no file at @path on failure. 0 or -errno, @err set. */
int browser_screenshot(const char *name, const char *path, uint32_t *w, uint32_t *h,
		       char *err, size_t errlen);

#endif
