/*
 * Receive an ENTRY/DATA.../END stream beneath a destination directory. The
 * stream is hostile: paths are re-validated, every directory on the way is
 * opened with O_NOFOLLOW, existing non-regular files are never written
 * through, and the byte, per-file, path-length and entry budgets are
 * enforced here, whatever the sender claims to have applied. Memory stays
 * bounded: on the host (no set-id bits kept) directory modes are applied
 * at once, so nothing is kept per entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "guest/agent/tree.h"

struct dirmode {
	char *path;
	uint32_t mode;
};

struct receiver {
	int fd;
	struct tree_opts *o;
	int parent_fd, root_fd;
	const char *name;
	bool root_seen, root_is_file;
	uint64_t got, entries;
	struct ap_hdr h;
	uint8_t *buf;			/* AP_MAX_PAYLOAD + 1 */
	struct ap_entry e;
	struct dirmode *dirs;
	size_t ndirs, capdirs;
};

/* Record why the transfer failed; %s in @fmt gets @path ("" = the root's name). */
static int bad(struct receiver *r, int ret, const char *fmt, const char *path)
{
	const char *p = path[0] ? path : r->name;
	const char *at = strstr(fmt, "%s");

	if (at)
		snprintf(r->o->err, sizeof(r->o->err), "%.*s%s%s", (int)(at - fmt), fmt, p, at + 2);
	else
		snprintf(r->o->err, sizeof(r->o->err), "%s", fmt);
	return ret;
}

static void warn(struct receiver *r, const char *msg)
{
	if (r->o->warn)
		r->o->warn(r->o->opaque, msg);
}

/* An entry left out: to the caller's list if it keeps one, else as a sentence. */
static void note_skip(struct receiver *r, const char *path, const char *why)
{
	char msg[2 * AP_PATH_MAX + 32];

	if (r->o->skipped) {
		r->o->skipped(r->o->opaque, path, why);
		return;
	}
	snprintf(msg, sizeof(msg), "skipped %s: %s", path, why);
	warn(r, msg);
}

static int open_parent(struct receiver *r, const char *path, const char **leaf)
{
	return tree_open_parent(r->root_fd, path, leaf);
}

int tree_open_parent(int root_fd, const char *path, const char **leaf)
{
	char comp[256];
	const char *c = path, *slash;
	int fd = dup(root_fd);

	while (fd >= 0 && (slash = strchr(c, '/'))) {
		size_t n = (size_t)(slash - c);
		int next;

		if (n >= sizeof(comp)) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, c, n);
		comp[n] = 0;
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
		c = slash + 1;
	}
	*leaf = c;
	return fd < 0 ? -errno : fd;
}

static int make_dir(struct receiver *r, int pfd, const char *leaf)
{
	bool created = !mkdirat(pfd, leaf, 0700);
	struct stat st;

	if (!created && errno != EEXIST)
		return bad(r, -errno, "cannot create directory %s", r->e.path);
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
		return bad(r, -EEXIST, "%s exists and is not a directory", r->e.path);
	if (!r->o->keep_special_bits) {
		/* The owner keeps rwx, so the mode can be set now: no list that grows per entry. */
		if (created && fchmodat(pfd, leaf, (r->e.mode & 0777) | 0700, 0))
			return bad(r, -errno, "cannot set the mode of %s", r->e.path);
		return 0;
	}
	if (r->ndirs == r->capdirs) {
		size_t cap = r->capdirs ? r->capdirs * 2 : 64;
		struct dirmode *d = realloc(r->dirs, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		r->dirs = d;
		r->capdirs = cap;
	}
	r->dirs[r->ndirs].path = strdup(r->e.path);
	r->dirs[r->ndirs++].mode = r->e.mode;
	return 0;
}

/* The DATA frames of one file, exactly e.size bytes (@fd < 0: read and drop them). */
static int recv_data(struct receiver *r, int fd)
{
	uint64_t left = r->e.size;

	while (left) {
		int ret = ap_read_frame(r->fd, &r->h, r->buf, AP_MAX_PAYLOAD);

		if (ret <= 0)
			return bad(r, ret ? ret : -EIO, "stream ended inside %s", r->e.path);
		if (r->h.type == AP_ERROR) {
			snprintf(r->o->err, sizeof(r->o->err), "%s", (char *)r->buf);
			return -EREMOTEIO;
		}
		if (r->h.type != AP_DATA || r->h.len > left)
			return bad(r, -EPROTO, "bad data frame for %s", r->e.path);
		ret = fd < 0 ? 0 : ap_write_all(fd, r->buf, r->h.len);
		if (ret)
			return bad(r, ret, "cannot write %s", r->e.path);
		left -= r->h.len;
	}
	return 0;
}

static int make_file(struct receiver *r, int pfd, const char *leaf)
{
	uint32_t mask = r->o->keep_special_bits ? 07777 : 0777;
	struct stat st;
	int fd, ret;

	if (r->o->max_bytes && r->e.size > r->o->max_bytes - r->got)
		return bad(r, -EFBIG, "size limit exceeded at %s", r->e.path);
	r->got += r->e.size;
	if (!fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode))
		return bad(r, -EEXIST, "refusing to overwrite %s: not a regular file", r->e.path);
	/* On the host, truncating a file with other links would change it elsewhere too. */
	if (!r->o->keep_special_bits && !fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) && st.st_nlink > 1)
		return bad(r, -EEXIST, "refusing to overwrite %s: it has other hard links", r->e.path);
	fd = openat(pfd, leaf, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		return bad(r, -errno, "cannot create %s", r->e.path);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		ret = bad(r, -EEXIST, "refusing to write %s: not a regular file", r->e.path);
	else
		ret = recv_data(r, fd);
	if (!ret && fchmod(fd, r->e.mode & mask))
		ret = bad(r, -errno, "cannot set the mode of %s", r->e.path);
	close(fd);
	return ret;
}

static int make_link(struct receiver *r, int pfd, const char *leaf)
{
	char msg[2 * AP_PATH_MAX + 96];

	if (!r->o->links_outside && !ap_link_inside(r->e.path, r->e.target)) {
		snprintf(msg, sizeof(msg), "symlink to %s: it points outside the copied tree", r->e.target);
		note_skip(r, r->e.path, msg);
		return 0;
	}
	if (symlinkat(r->e.target, pfd, leaf)) {
		snprintf(msg, sizeof(msg), "skipped symlink %s: %s", r->e.path, strerror(errno));
		warn(r, msg);
	}
	return 0;
}

/* Left out by the sender or refused by the caller's filter: 1 if so (data drained), 0, or -errno. */
static int left_out(struct receiver *r)
{
	const char *why;
	bool quiet = false;
	int ret;

	if (r->e.kind == AP_SKIPPED) {
		if (!r->root_seen)
			return bad(r, -EPROTO, "the sender left out the root %s", "");
		note_skip(r, r->e.path, r->e.target);
		return 1;
	}
	why = r->o->filter ? r->o->filter(r->o->opaque, &r->e, &quiet) : NULL;
	if (!why)
		return 0;
	if (!r->root_seen)
		return bad(r, -EPERM, "refusing the copied root %s", "");
	if (!quiet)
		note_skip(r, r->e.path, why);
	/* Dropped bytes still count: a refused file is no way around the budget. */
	if (r->e.kind == AP_FILE && r->o->max_bytes && r->e.size > r->o->max_bytes - r->got)
		return bad(r, -EFBIG, "size limit exceeded at %s", r->e.path);
	r->got += r->e.kind == AP_FILE ? r->e.size : 0;
	ret = r->e.kind == AP_FILE ? recv_data(r, -1) : 0;
	return ret ? ret : 1;
}

static int one_entry(struct receiver *r)
{
	const char *leaf = r->name;
	int pfd, ret;

	if (ap_entry_decode(r->buf, r->h.len, &r->e))
		return bad(r, -EPROTO, "malformed or unsafe entry after %s", r->e.path);
	if (r->o->max_entries && ++r->entries > r->o->max_entries)
		return bad(r, -EFBIG, "too many files and directories (limit reached at %s)", r->e.path);
	if (strlen(r->e.path) > (r->o->max_path ? r->o->max_path : AP_PATH_MAX - 1))
		return bad(r, -ENAMETOOLONG, "path too long after %s", "");
	/* Checked here, not trusted to the sender: even a refused file would be drained. */
	if (r->e.kind == AP_FILE && r->o->max_file && r->e.size > r->o->max_file)
		return bad(r, -EFBIG, "%s is larger than the per-file limit", r->e.path);
	ret = left_out(r);
	if (ret)
		return ret < 0 ? ret : 0;
	if (!r->root_seen != !r->e.path[0] || r->root_is_file)
		return bad(r, -EPROTO, "unexpected entry %s", r->e.path);
	if (!r->root_seen) {
		r->root_seen = true;
		r->root_is_file = r->e.kind == AP_FILE;
		if (r->e.kind == AP_SYMLINK)
			return bad(r, -EPROTO, "the copied root %s is a symlink", "");
		pfd = dup(r->parent_fd);
	} else {
		pfd = open_parent(r, r->e.path, &leaf);
	}
	if (pfd < 0)
		return bad(r, pfd, "cannot open the directory of %s (symlink on the way?)", r->e.path);
	if (r->e.kind == AP_DIR)
		ret = make_dir(r, pfd, leaf);
	else if (r->e.kind == AP_FILE)
		ret = make_file(r, pfd, leaf);
	else
		ret = make_link(r, pfd, leaf);
	if (!ret && r->root_fd < 0 && r->e.kind == AP_DIR) {
		r->root_fd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (r->root_fd < 0)
			ret = bad(r, -errno, "cannot open %s", "");
	}
	close(pfd);
	return ret;
}

/* Directory modes last, deepest first, so a read-only directory can still be filled. */
static void apply_dir_modes(struct receiver *r)
{
	uint32_t mask = r->o->keep_special_bits ? 07777 : 0777;

	for (size_t i = r->ndirs; i-- > 0;) {
		const char *leaf = r->name;
		int pfd = r->dirs[i].path[0] ? open_parent(r, r->dirs[i].path, &leaf) : dup(r->parent_fd);
		int fd = pfd >= 0 ? openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		uint32_t mode = r->dirs[i].mode & mask;

		if (fd >= 0)
			fchmod(fd, r->o->keep_special_bits ? mode : mode | 0700);
		if (fd >= 0)
			close(fd);
		if (pfd >= 0)
			close(pfd);
	}
}

static int recv_loop(struct receiver *r)
{
	for (;;) {
		int ret = ap_read_frame(r->fd, &r->h, r->buf, AP_MAX_PAYLOAD);

		if (ret <= 0)
			return bad(r, ret ? ret : -EIO, "stream ended early (%s)", ret ? strerror(-ret) : "EOF");
		switch (r->h.type) {
		case AP_WARN:
			warn(r, (char *)r->buf);
			break;
		case AP_ERROR:
			snprintf(r->o->err, sizeof(r->o->err), "%s", (char *)r->buf);
			return -EREMOTEIO;
		case AP_END:
			if (!r->root_seen)
				return bad(r, -EPROTO, "empty transfer", "");
			apply_dir_modes(r);
			return 0;
		case AP_ENTRY:
			ret = one_entry(r);
			if (ret)
				return ret;
			break;
		default:
			return bad(r, -EPROTO, "unexpected frame in a transfer", "");
		}
	}
}

int tree_recv(int fd, int parent_fd, const char *name, struct tree_opts *o)
{
	struct receiver *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	r->buf = malloc(AP_MAX_PAYLOAD + 1);
	r->fd = fd;
	r->o = o;
	r->parent_fd = parent_fd;
	r->root_fd = -1;
	r->name = name;
	ret = r->buf ? recv_loop(r) : -ENOMEM;
	for (size_t i = 0; i < r->ndirs; i++)
		free(r->dirs[i].path);
	free(r->dirs);
	if (r->root_fd >= 0)
		close(r->root_fd);
	free(r->buf);
	free(r);
	return ret;
}

int tree_dest(const char *dest, const char *src_name, int *parent_fd, char *name, size_t cap)
{
	char dir[AP_PATH_MAX];
	const char *slash;
	struct stat st;

	if (!stat(dest, &st) && S_ISDIR(st.st_mode)) {
		*parent_fd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		snprintf(name, cap, "%s", src_name);
	} else {
		slash = strrchr(dest, '/');
		if (slash && !slash[1])
			return -ENOENT;		/* "dir/" that does not exist */
		if (!slash)
			snprintf(dir, sizeof(dir), ".");
		else if (slash == dest)
			snprintf(dir, sizeof(dir), "/");
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - dest), dest);
		*parent_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		snprintf(name, cap, "%s", slash ? slash + 1 : dest);
	}
	if (*parent_fd < 0)
		return -errno;
	if (!name[0] || !strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/')) {
		close(*parent_fd);
		return -EINVAL;
	}
	return 0;
}
