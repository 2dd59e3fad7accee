/*
 * Scan a host tree into a manifest (tools/sandbox/manifest.h), optionally keeping
 * each file's content in a blob store named by its hash. The walk mirrors
 * the agent's tree transfer: the root is followed, nothing inside is.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "guest/agent/tree.h"
#include "tools/sandbox/manifest.h"

#define SCAN_MAX_DEPTH 256

struct scan {
	struct manifest *m;
	struct mf_scan_opts *o;
	char path[AP_PATH_MAX];
	uint8_t buf[65536];
};

static int fail(struct scan *s, int ret, const char *what)
{
	snprintf(s->o->err, sizeof(s->o->err), "%s %s: %s", what, s->path[0] ? s->path : ".",
		 strerror(-ret));
	return ret;
}

/* Read @fd to the end, hashing it and (with a blob store) copying it to a temporary blob. */
static int hash_copy(struct scan *s, int fd, char sha[SHA256_HEX], uint64_t *size)
{
	char tmp[PATH_MAX], dst[PATH_MAX + SHA256_HEX];
	struct sha256_ctx h;
	int out = -1, ret = 0;
	ssize_t r;

	if (s->o->blob_dir) {
		snprintf(tmp, sizeof(tmp), "%s/.tmp-XXXXXX", s->o->blob_dir);
		out = mkstemp(tmp);
		if (out < 0)
			return fail(s, -errno, "blob store for");
	}
	sha256_init(&h);
	*size = 0;
	while ((r = read(fd, s->buf, sizeof(s->buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = fail(s, -errno, "read");
			break;
		}
		sha256_update(&h, (size_t)r, s->buf);
		*size += (uint64_t)r;
		if (out >= 0 && (ret = ap_write_all(out, s->buf, (size_t)r)))
			break;
	}
	sha256_hex(&h, sha);
	if (out < 0)
		return ret;
	close(out);
	snprintf(dst, sizeof(dst), "%s/%s", s->o->blob_dir, sha);
	if (!ret && rename(tmp, dst))
		ret = fail(s, -errno, "blob store for");
	if (ret)
		unlink(tmp);
	return ret;
}

static int add(struct scan *s, struct mf_entry *e)
{
	e->path = s->path;
	if (s->o->max_entries && s->m->n >= s->o->max_entries)
		return fail(s, -EFBIG, "too many entries at");
	return mf_add(s->m, e) ? fail(s, -ENOMEM, "scan") : 0;
}

static int scan_file(struct scan *s, int fd, const struct stat *st)
{
	struct mf_entry e = { .kind = MF_FILE, .mode = st->st_mode & 07777 };
	int ret = hash_copy(s, fd, e.sha, &e.size);

	return ret ? ret : add(s, &e);
}

static int scan_dir(struct scan *s, int dfd, int depth);

static int open_child(struct scan *s, int dfd, const char *name, const struct stat *st)
{
	int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
		    (S_ISDIR(st->st_mode) ? O_DIRECTORY : 0);
	int fd = openat(dfd, name, flags);

	/* A tree mvm wrote itself may hold a guest's chmod 000 file: we own it, read it. */
	if (fd < 0 && errno == EACCES && s->o->own_tree &&
	    !fchmodat(dfd, name, (st->st_mode & 07777) | 0500, 0))
		fd = openat(dfd, name, flags);
	return fd < 0 ? fail(s, -errno, "open") : fd;
}

static int scan_child(struct scan *s, int dfd, const char *name, int depth)
{
	struct mf_entry e = { 0 };
	char target[AP_PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd, ret;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return fail(s, -errno, "stat");
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(dfd, name, target, sizeof(target) - 1);
		if (n <= 0)
			return fail(s, n < 0 ? -errno : -EIO, "readlink");
		target[n] = 0;
		e.kind = MF_LINK;
		e.mode = 0777;
		e.target = target;
		sha256_buf_hex(target, (size_t)n, e.sha);
		return add(s, &e);
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return 0;	/* never transferred, so never part of a baseline */
	fd = open_child(s, dfd, name, &st);
	if (fd < 0)
		return fd;
	if (S_ISDIR(st.st_mode)) {
		e.kind = MF_DIR;
		e.mode = st.st_mode & 07777;
		ret = add(s, &e);
		if (!ret)
			ret = scan_dir(s, fd, depth + 1);
	} else {
		ret = scan_file(s, fd, &st);
	}
	close(fd);
	return ret;
}

struct walk {
	struct scan *s;
	int depth;
};

static int walk_child(void *ctx, int dfd, const char *name, bool fits)
{
	struct walk *w = ctx;

	if (!fits)
		return fail(w->s, -ENAMETOOLONG, "path too long under");
	return scan_child(w->s, dfd, name, w->depth);
}

static int scan_dir(struct scan *s, int dfd, int depth)
{
	struct walk w = { s, depth };
	int ret, open_err;

	if (depth > SCAN_MAX_DEPTH)
		return fail(s, -ELOOP, "too deep at");
	ret = tree_walk_dir(dfd, s->path, sizeof(s->path), walk_child, &w, &open_err);
	return open_err ? fail(s, open_err, "opendir") : ret;
}

int mf_scan(struct manifest *m, const char *root, struct mf_scan_opts *o)
{
	struct scan *s = calloc(1, sizeof(*s));
	struct mf_entry e = { .kind = MF_DIR };
	struct stat st;
	int fd, ret;

	if (!s)
		return -ENOMEM;
	s->m = m;
	s->o = o;
	fd = open(root, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		snprintf(o->err, sizeof(o->err), "%s: %s", root, strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		e.mode = st.st_mode & 07777;
		ret = add(s, &e);
		if (!ret)
			ret = scan_dir(s, fd, 0);
	} else if (S_ISREG(st.st_mode)) {
		ret = scan_file(s, fd, &st);
	} else {
		snprintf(o->err, sizeof(o->err), "%s: not a regular file or directory", root);
		ret = -EINVAL;
	}
	if (fd >= 0)
		close(fd);
	free(s);
	mf_sort(m);
	return ret;
}
