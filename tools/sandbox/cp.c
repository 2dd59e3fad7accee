/*
 * Copies into and out of a sandbox through its guest agent (`mvm cp`,
 * `mvm create --copy`, `mvm run --copy`, baselines). Out of the guest,
 * everything the guest sends is hostile: the receiver
 * (guest/agent/tree_recv.c) writes only beneath the chosen host directory,
 * refuses special files and skips symlinks that leave the tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "guest/agent/tree.h"
#include "tools/sandbox/agent_client.h"
#include "common/cli_util.h"
#include "common/dir_publish.h"
#include "common/fs_util.h"
#include "tools/sandbox/cp.h"
#include "tools/sandbox/fetch.h"
#include "tools/sandbox/path_sanitize.h"
#include "tools/sandbox/sandbox.h"

static void print_warn(void *opaque, const char *msg)
{
	char e[1024];

	ps_escape(msg, e, sizeof(e));	/* guest text */
	fprintf(stderr, "mvm cp: %s\n", e);
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
		if (ret == -EAGAIN) {
			snprintf(msg, cap, "the guest agent did not answer for %d s", FETCH_IDLE_S);
			return -ETIMEDOUT;
		}
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
		ps_escape(h.type == AP_ERROR ? (char *)buf : "unexpected reply", msg, cap);
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
	const struct timeval idle = { .tv_sec = FETCH_IDLE_S };
	char bn[PATH_MAX], msg[1024] = "";
	int fd = agent_connect(name, agent_wait_ms()), ret;

	if (where && cap)
		where[0] = 0;
	if (fd < 0) {
		cli_err("cp", "cannot reach the agent of %s: %s (is it running?)", name, strerror(-fd));
		return fd;
	}
	/* An agent that stops reading or answering fails the copy instead of hanging it. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &idle, sizeof(idle));
	ap_put_str(&w, dst[0] ? dst : ".");
	ap_put_str(&w, base_name(src, bn, sizeof(bn)));
	ret = w.err ? -ENAMETOOLONG : ap_write_frame(fd, AP_PUT, req, w.len);
	if (!ret)
		ret = expect_ok(fd, msg, sizeof(msg), where, cap);
	if (!ret) {
		ret = tree_send(fd, src, &o);
		if (ret == -EAGAIN || ret == -EWOULDBLOCK) {
			/* The send timeout: no verdict to wait for either. */
			snprintf(msg, sizeof(msg), "the guest agent stopped reading for %d s",
				 FETCH_IDLE_S);
			ret = -ETIMEDOUT;
		} else if (ret) {
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

/* Where `cp SRC DST` puts SRC's copy: DST/base if DST is a directory, else DST. 0 or -errno. */
static int out_target(const char *dst, const char *base, char *target, size_t cap)
{
	struct stat st;
	size_t n = strlen(dst);

	if (!stat(dst, &st) && S_ISDIR(st.st_mode))
		n = (size_t)snprintf(target, cap, "%s%s%s", dst, dst[n - 1] == '/' ? "" : "/", base);
	else if (n && dst[n - 1] == '/')
		return -ENOENT;		/* "dir/" that does not exist */
	else
		n = (size_t)snprintf(target, cap, "%s", dst);
	return n >= cap ? -ENAMETOOLONG : 0;
}

/* --merge: into the existing directory @target itself, with every fetch filter. */
static int get_merge(const char *name, const char *src, const char *target, struct fetch_opts *fo)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct stat st;
	int pfd, ret;

	if (lstat(target, &st) || !S_ISDIR(st.st_mode)) {
		cli_err("cp", "--merge: %s is not a directory (nor a symlink to follow)", target);
		return -ENOTDIR;
	}
	snprintf(a, sizeof(a), "%s", target);
	snprintf(b, sizeof(b), "%s", target);
	pfd = open(dirname(a), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	ret = fetch_tree(name, src, pfd, basename(b), fo);
	close(pfd);
	return ret;
}

/* A new @target: received in a staging directory beside it, renamed into place when complete. */
static int get_new(const char *name, const char *src, const char *target, struct fetch_opts *fo)
{
	char stage[PATH_MAX], t[PATH_MAX + 8];
	int ret = fetch_staging(target, stage, sizeof(stage)), dfd;

	if (ret == -EEXIST) {
		cli_err("cp", "%s exists: a copy out writes a new file or directory "
			"(--merge copies into an existing directory)", target);
		return ret;
	}
	if (ret) {
		cli_err("cp", "cannot create a staging directory beside %s: %s", target, strerror(-ret));
		return ret;
	}
	dfd = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = dfd < 0 ? -errno : fetch_tree(name, src, dfd, "t", fo);
	if (dfd >= 0)
		close(dfd);
	snprintf(t, sizeof(t), "%s/t", stage);
	/* Whatever appeared at @target meanwhile is never replaced, also where
	 * the file system lacks RENAME_NOREPLACE (a 9p or NFS home). */
	if (!ret) {
		char why[PATH_MAX + 160];

		ret = dir_publish(t, target, why, sizeof(why));
		if (ret)
			snprintf(fo->err, sizeof(fo->err), "cannot move the copy to %s: %s", target, why);
	}
	rm_tree(stage);
	return ret;
}

int cp_get(const char *name, const char *src, const char *dst, const struct cp_out *o)
{
	/* A hostile guest could also flood the host with empty files: cap the count. */
	struct fetch_opts fo = { .max_file = o->max, .max_total = o->max, .max_entries = CP_MAX_ENTRIES,
				 .refused = o->skipped, .keep_hardlinks = true };
	char bn[PATH_MAX], target[PATH_MAX];
	const char *b = base_name(src, bn, sizeof(bn));
	int ret;

	if (!strcmp(b, "/") || !strcmp(b, ".") || !strcmp(b, "..")) {
		cli_err("cp", "name the guest file or directory to copy (not '%s')", src);
		return -EINVAL;
	}
	ret = out_target(dst, b, target, sizeof(target));
	if (ret) {
		cli_err("cp", "%s: %s", dst, strerror(-ret));
		return ret;
	}
	if (ps_is_git_meta(target)) {
		cli_err("cp", "%s: git metadata is never written by a copy out", target);
		return -EPERM;
	}
	ret = o->merge ? get_merge(name, src, target, &fo) : get_new(name, src, target, &fo);
	if (ret && fo.err[0])
		cli_err("cp", "%s", fo.err);
	return ret;
}
