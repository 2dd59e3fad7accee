/*
 * `mvm cp SRC DST`: files and trees in and out of a sandbox, exactly one side
 * NAME:PATH. Out of the guest, everything the guest sends is hostile: the
 * receiver (guest/agent/tree_recv.c) writes only beneath the chosen host
 * directory, refuses special files and skips symlinks that leave the tree.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/agent/tree.h"
#include "tools/agent_client.h"
#include "tools/cli.h"
#include "tools/cmd_sandbox.h"
#include "tools/cp.h"
#include "tools/sandbox.h"

static const char cp_usage[] =
	"usage: mvm cp [OPTIONS] SRC DST\n"
	"Copy a file or directory tree into or out of a sandbox. Exactly one of SRC\n"
	"and DST is NAME:PATH (a guest path); the other is a host path. Like cp -r:\n"
	"into an existing directory DST the copy keeps SRC's name. Modes are kept\n"
	"(set-id bits are dropped on the host).\n"
	"\n"
	"Out of a sandbox, symlinks that point outside the copied tree, device\n"
	"nodes, FIFOs and sockets are skipped with a message; nothing is written\n"
	"outside DST.\n"
	"\n"
	"  --max-size SIZE   refuse copies out of a sandbox above SIZE (default 16G)\n"
	"  -h, --help        this text\n";

static void print_warn(void *opaque, const char *msg)
{
	fprintf(stderr, "mvm cp: %s\n", msg);
}

/* NAME:PATH with a valid sandbox name before the colon. */
static bool split_remote(const char *arg, char *name, size_t cap, const char **path)
{
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : 0;

	if (!colon || n == 0 || n >= cap || memchr(arg, '/', n))
		return false;
	memcpy(name, arg, n);
	name[n] = 0;
	*path = colon + 1;
	return sb_name_ok(name);
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

int cmd_cp(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "max-size", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t max = CP_DEFAULT_MAX;
	char sname[SB_NAME_MAX + 1], dname[SB_NAME_MAX + 1];
	const char *spath, *dpath;
	bool sr, dr;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(cp_usage, stdout);
			return 0;
		}
		if (c != 'm' || cli_parse_size(optarg, &max)) {
			cli_err("cp", "bad option '%s' (see mvm cp --help)", argv[optind - 1]);
			return MVM_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		cli_err("cp", "expected SRC and DST (see mvm cp --help)");
		return MVM_EXIT_USAGE;
	}
	sr = split_remote(argv[optind], sname, sizeof(sname), &spath);
	dr = split_remote(argv[optind + 1], dname, sizeof(dname), &dpath);
	if (sr == dr) {
		cli_err("cp", "exactly one of SRC and DST must be NAME:PATH");
		return MVM_EXIT_USAGE;
	}
	if ((sr && !sb_exists(sname)) || (dr && !sb_exists(dname))) {
		cli_err("cp", "no sandbox named %s", sr ? sname : dname);
		return MVM_EXIT_ERROR;
	}
	if (sb_vmm_pid(sr ? sname : dname) <= 0) {
		cli_err("cp", "sandbox %s is not running", sr ? sname : dname);
		return MVM_EXIT_ERROR;
	}
	if (sr)
		return cp_get(sname, spath, argv[optind + 1], max) ? MVM_EXIT_ERROR : 0;
	return cp_put(dname, argv[optind], dpath) ? MVM_EXIT_ERROR : 0;
}
