/* Send a file or a directory tree as ENTRY/DATA.../END frames. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "guest/agent/tree.h"

#define MAX_DEPTH 128

struct sender {
	int fd;
	struct tree_opts *o;
	uint64_t sent;
	uint8_t buf[AP_CHUNK];
	char path[AP_PATH_MAX];
};

static int send_entry(struct sender *s, uint32_t kind, uint32_t mode, uint64_t size,
		      const char *target);

/* Leave s->path out: an AP_SKIPPED entry when the client asked for them, else a WARN. */
static int skip(struct sender *s, const char *why, uint64_t size)
{
	char msg[AP_PATH_MAX + 128];

	snprintf(msg, sizeof(msg), "skipped %s: %s", s->path[0] ? s->path : ".", why);
	if (s->o->warn)
		s->o->warn(s->o->opaque, msg);
	if (s->o->report_skips)
		return send_entry(s, AP_SKIPPED, 0, size, why);
	return ap_write_frame(s->fd, AP_WARN, msg, strlen(msg));
}

static const char *special_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" :
	       S_ISCHR(m) || S_ISBLK(m) ? "a device node" : "not a regular file, directory or symlink";
}

static int fail(struct sender *s, int ret, const char *what)
{
	snprintf(s->o->err, sizeof(s->o->err), "%s %s: %s", what,
		 s->path[0] ? s->path : ".", strerror(-ret));
	return ret;
}

static int send_entry(struct sender *s, uint32_t kind, uint32_t mode, uint64_t size,
		      const char *target)
{
	static struct ap_entry e;
	uint8_t buf[2 * AP_PATH_MAX + 64];
	long n;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.mode = mode & 07777;
	e.size = size;
	snprintf(e.path, sizeof(e.path), "%s", s->path);
	if (target)
		snprintf(e.target, sizeof(e.target), "%s", target);
	n = ap_entry_encode(&e, buf, sizeof(buf));
	return n < 0 ? (int)n : ap_write_frame(s->fd, AP_ENTRY, buf, (size_t)n);
}

static int send_file(struct sender *s, int fd, const struct stat *st)
{
	uint64_t left = (uint64_t)st->st_size;
	int ret;

	if (s->o->max_bytes && left > s->o->max_bytes - s->sent) {
		snprintf(s->o->err, sizeof(s->o->err), "size limit of %llu bytes exceeded at %s",
			 (unsigned long long)s->o->max_bytes, s->path[0] ? s->path : ".");
		return -EFBIG;
	}
	ret = send_entry(s, AP_FILE, st->st_mode, left, NULL);
	while (!ret && left) {
		ssize_t r = read(fd, s->buf, left < sizeof(s->buf) ? left : sizeof(s->buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return fail(s, r < 0 ? -errno : -EIO, "reading (file shrank?)");
		ret = ap_write_frame(s->fd, AP_DATA, s->buf, (size_t)r);
		left -= (uint64_t)r;
		s->sent += (uint64_t)r;
	}
	return ret;
}

static int send_dir(struct sender *s, int dfd, int depth);

/* One directory entry @name of @dfd; s->path already names it. */
static int send_child(struct sender *s, int dfd, const char *name, int depth)
{
	char target[AP_PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd, ret;

	if (s->o->skip_git && !strcasecmp(name, ".git"))
		return skip(s, "git metadata: never copied out (its hooks and config would run on the host)", 0);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return fail(s, -errno, "stat");
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(dfd, name, target, sizeof(target) - 1);
		if (n <= 0)
			return fail(s, n < 0 ? -errno : -EIO, "readlink");
		target[n] = 0;
		return send_entry(s, AP_SYMLINK, 0777, 0, target);
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return skip(s, special_kind(st.st_mode), 0);
	if (S_ISREG(st.st_mode) && s->o->skip_hardlinks && st.st_nlink > 1)
		return skip(s, "a hard link (the file has other names)", (uint64_t)st.st_size);
	if (S_ISREG(st.st_mode) && s->o->max_file && (uint64_t)st.st_size > s->o->max_file)
		return skip(s, "larger than the per-file limit", (uint64_t)st.st_size);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
		    (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
	if (fd < 0)
		return fail(s, -errno, "open");
	if (S_ISDIR(st.st_mode)) {
		ret = send_entry(s, AP_DIR, st.st_mode, 0, NULL);
		if (!ret)
			ret = send_dir(s, fd, depth + 1);
	} else {
		ret = send_file(s, fd, &st);
	}
	close(fd);
	return ret;
}

struct walk {
	struct sender *s;
	int depth;
};

static int walk_child(void *ctx, int dfd, const char *name, bool fits)
{
	struct walk *w = ctx;

	if (!fits)
		return skip(w->s, "an entry's path is too long", 0);
	return send_child(w->s, dfd, name, w->depth);
}

static int send_dir(struct sender *s, int dfd, int depth)
{
	struct walk w = { s, depth };
	int ret, open_err;

	if (depth > MAX_DEPTH)
		return fail(s, -ELOOP, "too deep");
	ret = tree_walk_dir(dfd, s->path, sizeof(s->path), walk_child, &w, &open_err);
	return open_err ? fail(s, open_err, "opendir") : ret;
}

int tree_send(int fd, const char *path, struct tree_opts *o)
{
	struct sender *s = calloc(1, sizeof(*s));
	struct stat st;
	int rfd, ret;

	if (!s)
		return -ENOMEM;
	s->fd = fd;
	s->o = o;
	rfd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (rfd < 0 || fstat(rfd, &st)) {
		ret = fail(s, -errno, "open");
		snprintf(o->err, sizeof(o->err), "%s: %s", path, strerror(-ret));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = send_entry(s, AP_DIR, st.st_mode, 0, NULL);
		if (!ret)
			ret = send_dir(s, rfd, 0);
	} else if (S_ISREG(st.st_mode) && o->max_file && (uint64_t)st.st_size > o->max_file) {
		snprintf(o->err, sizeof(o->err), "%s: larger than the per-file limit", path);
		ret = -EFBIG;
	} else if (S_ISREG(st.st_mode)) {
		ret = send_file(s, rfd, &st);
	} else {
		snprintf(o->err, sizeof(o->err), "%s: not a regular file or directory", path);
		ret = -EINVAL;
	}
	if (!ret)
		ret = ap_write_frame(fd, AP_END, NULL, 0);
out:
	if (rfd >= 0)
		close(rfd);
	free(s);
	return ret;
}
