/* One client connection: its first frame picks the operation. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/agent/agent.h"
#include "guest/agent/tree.h"

void agent_error(int conn, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ap_write_frame(conn, AP_ERROR, msg, strlen(msg));
}

/* After an error mid-transfer: let the client finish sending, so it reads our ERROR. */
static void drain(int conn)
{
	char buf[4096];

	shutdown(conn, SHUT_WR);
	alarm(60);
	while (read(conn, buf, sizeof(buf)) > 0)
		;
}

/* OK carrying where the tree lands: the parent's real path (/proc) and the final name. */
static void ok_with_path(int conn, int pfd, const char *final)
{
	char link[64], dir[AP_PATH_MAX], out[AP_PATH_MAX + 256];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", pfd);
	n = readlink(link, dir, sizeof(dir) - 1);
	if (n <= 0) {
		ap_write_frame(conn, AP_OK, NULL, 0);
		return;
	}
	dir[n] = 0;
	snprintf(out, sizeof(out), "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", final);
	ap_write_frame(conn, AP_OK, out, strlen(out));
}

static void do_put(int conn, const uint8_t *p, size_t len)
{
	static char dest[AP_PATH_MAX], name[256], final[256];
	struct ap_rd r = { .p = p, .len = len };
	struct tree_opts o = { .max_bytes = AGENT_PUT_MAX, .links_outside = true,
			       .keep_special_bits = true };
	int pfd, ret;

	ap_get_str(&r, dest, sizeof(dest));
	ap_get_str(&r, name, sizeof(name));
	if (r.err || r.off != len || !dest[0]) {
		agent_error(conn, "malformed put request");
		return;
	}
	ret = tree_dest(dest, name, &pfd, final, sizeof(final));
	if (ret) {
		agent_error(conn, "%s: %s", dest, strerror(-ret));
		return;
	}
	/* Ready: the client streams only after this, so early errors stay simple. */
	ok_with_path(conn, pfd, final);
	ret = tree_recv(conn, pfd, final, &o);
	close(pfd);
	if (ret) {
		agent_error(conn, "%s", o.err);
		drain(conn);
		return;
	}
	ap_write_frame(conn, AP_OK, NULL, 0);
}

static void do_get(int conn, const uint8_t *p, size_t len)
{
	static char path[AP_PATH_MAX];
	struct ap_rd r = { .p = p, .len = len };
	struct tree_opts o = { 0 };
	uint32_t flags = 0;

	ap_get_str(&r, path, sizeof(path));
	/* Optional: u64 per-file limit, u32 AP_GET_* flags (mvm diff and export send them). */
	if (r.off < len)
		o.max_file = ap_get_u64(&r);
	if (r.off < len)
		flags = ap_get_u32(&r);
	o.report_skips = flags & AP_GET_REPORT;
	o.skip_hardlinks = flags & AP_GET_NO_HARDLINKS;
	o.skip_git = flags & AP_GET_NO_GIT;
	if (r.err || r.off != len || !path[0] || (flags & ~AP_GET_FLAGS)) {
		agent_error(conn, "malformed get request");
		return;
	}
	if (tree_send(conn, path, &o))
		agent_error(conn, "%s", o.err);
}

void agent_session(int conn, const struct agent_cfg *cfg)
{
	uint8_t *buf = malloc(AP_MAX_PAYLOAD + 1);
	struct ap_exec e;
	struct ap_hdr h;

	if (!buf || ap_read_frame(conn, &h, buf, AP_MAX_PAYLOAD) <= 0)
		goto out;
	switch (h.type) {
	case AP_PING:
		ap_write_frame(conn, AP_OK, NULL, 0);
		break;
	case AP_EXEC:
		if (ap_exec_decode(buf, h.len, &e)) {
			agent_error(conn, "malformed exec request");
			break;
		}
		agent_exec(conn, &e);
		ap_exec_free(&e);
		break;
	case AP_PUT:
		do_put(conn, buf, h.len);
		break;
	case AP_GET:
		do_get(conn, buf, h.len);
		break;
	case AP_SYNC:
		agent_sync(conn, buf, h.len);
		break;
	case AP_TCP:
		agent_tcp(conn, buf, h.len);
		break;
	case AP_MAC:
		agent_set_mac(conn, buf, h.len);
		break;
	case AP_IDENTITY:
		agent_identity(conn, buf, h.len);
		break;
	case AP_SHUTDOWN:
		agent_stop_guest(conn, cfg);
		break;
	default:
		agent_error(conn, "unexpected first frame (type %u)", h.type);
	}
out:
	free(buf);
}
