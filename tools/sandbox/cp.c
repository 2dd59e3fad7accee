/*
 * Copies into and out of a sandbox through its guest agent (`mvm cp`,
 * `mvm create --copy`, `mvm run --copy`, baselines). Out of the guest,
 * everything the guest sends is hostile: the receiver
 * (guest/agent/tree_recv.c) writes only beneath the chosen host directory,
 * refuses special files and skips symlinks that leave the tree.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/agent/tree.h"
#include "tools/sandbox/agent_client.h"
#include "common/cli_util.h"
#include "tools/sandbox/cp.h"
#include "tools/sandbox/sandbox.h"

static void print_warn(void *opaque, const char *msg)
{
	fprintf(stderr, "mvm cp: %s\n", msg);
}

static const char *base_name(const char *path, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s", path);
	while (strlen(buf) > 1 && buf[strlen(buf) - 1] == '/')
		buf[strlen(buf) - 1] = 0;
	return basename(buf);
}

/* Wait for OK; its payload (if any) goes to @okmsg (@okcap bytes; NULL: dropped). */
static int expect_ok(int fd, char *msg, size_t cap, char *okmsg, size_t okcap)
{
	static uint8_t buf[AP_MAX_PAYLOAD + 1];
	struct ap_hdr h;
	int ret;

	for (;;) {
		ret = ap_read_frame(fd, &h, buf, AP_MAX_PAYLOAD);
		if (ret <= 0) {
			snprintf(msg, cap, "lost the connection to the guest agent");
			return ret ? ret : -ECONNRESET;
		}
		if (h.type == AP_OK) {
			if (okmsg && okcap)
				snprintf(okmsg, okcap, "%s", (char *)buf);
			return 0;
		}
		if (h.type == AP_WARN) {
			print_warn(NULL, (char *)buf);
			continue;
		}
		snprintf(msg, cap, "%s", h.type == AP_ERROR ? (char *)buf : "unexpected reply");
		return -EREMOTEIO;
	}
}

int cp_put(const char *name, const char *src, const char *dst)
{
	return cp_put_at(name, src, dst, NULL, 0);
}

int cp_put_at(const char *name, const char *src, const char *dst, char *where, size_t cap)
{
	struct tree_opts o = { .warn = print_warn };
	uint8_t req[2 * AP_PATH_MAX + 16];
	struct ap_wr w = { .buf = req, .cap = sizeof(req) };
	char bn[PATH_MAX], msg[1024] = "";
	int fd = agent_connect(name, 10000), ret;

	if (where && cap)
		where[0] = 0;
	if (fd < 0) {
		cli_err("cp", "cannot reach the agent of %s: %s (is it running?)", name, strerror(-fd));
		return fd;
	}
	ap_put_str(&w, dst[0] ? dst : ".");
	ap_put_str(&w, base_name(src, bn, sizeof(bn)));
	ret = w.err ? -ENAMETOOLONG : ap_write_frame(fd, AP_PUT, req, w.len);
	if (!ret)
		ret = expect_ok(fd, msg, sizeof(msg), where, cap);
	if (!ret) {
		ret = tree_send(fd, src, &o);
		if (ret) {
			/* Tell the agent why, then read its verdict (ERROR). */
			ap_write_frame(fd, AP_ERROR, o.err, strlen(o.err));
			snprintf(msg, sizeof(msg), "%s", o.err);
		}
	}
	if (!ret)
		ret = expect_ok(fd, msg, sizeof(msg), NULL, 0);
	if (ret)
		cli_err("cp", "%s", msg[0] ? msg : strerror(-ret));
	close(fd);
	return ret;
}

int cp_get(const char *name, const char *src, const char *dst, uint64_t max)
{
	/* A hostile guest could also flood the host with empty files: cap the count. */
	struct tree_opts o = { .warn = print_warn, .max_bytes = max, .max_entries = CP_MAX_ENTRIES };
	uint8_t req[AP_PATH_MAX + 8];
	struct ap_wr w = { .buf = req, .cap = sizeof(req) };
	char bn[PATH_MAX], leaf[256];
	int fd, pfd, ret;
	const char *b = base_name(src, bn, sizeof(bn));

	if (!strcmp(b, "/") || !strcmp(b, ".") || !strcmp(b, "..")) {
		cli_err("cp", "name the guest file or directory to copy (not '%s')", src);
		return -EINVAL;
	}
	ret = tree_dest(dst, b, &pfd, leaf, sizeof(leaf));
	if (ret) {
		cli_err("cp", "%s: %s", dst, strerror(-ret));
		return ret;
	}
	fd = agent_connect(name, 10000);
	if (fd < 0) {
		close(pfd);
		cli_err("cp", "cannot reach the agent of %s: %s (is it running?)", name, strerror(-fd));
		return fd;
	}
	ap_put_str(&w, src);
	ret = w.err ? -ENAMETOOLONG : ap_write_frame(fd, AP_GET, req, w.len);
	if (!ret)
		ret = tree_recv(fd, pfd, leaf, &o);
	if (ret)
		cli_err("cp", "%s", o.err[0] ? o.err : strerror(-ret));
	close(fd);
	close(pfd);
	return ret;
}

