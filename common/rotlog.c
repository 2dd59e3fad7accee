/* Capped logs with one rotated file (console.log, events.jsonl). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "common/rotlog.h"

uint64_t rotlog_max_from_env(void)
{
	const char *s = getenv("MVM_LOG_MAX");
	uint64_t v;

	if (!s || !*s || cli_parse_size(s, &v))
		return ROTLOG_DEFAULT_MAX;
	return v < ROTLOG_MIN_MAX ? ROTLOG_MIN_MAX : v;
}

static int plain_mark(char *buf, size_t cap, const char *path, uint64_t dropped,
		      uint64_t rotations, uint64_t max)
{
	const char *base = strrchr(path, '/');
	int n;

	base = base ? base + 1 : path;
	n = snprintf(buf, cap,
		     "mvm: %s rotated (%llu times; older part in %s.1; cap %llu bytes for both): "
		     "%llu bytes of older output dropped\n",
		     base, (unsigned long long)rotations, base, (unsigned long long)max,
		     (unsigned long long)dropped);
	return n < 0 ? 0 : (size_t)n >= cap ? (int)cap - 1 : n;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* @l for @path, not yet open. */
static int setup(struct rotlog *l, const char *path, uint64_t max, rotlog_mark_fn mark)
{
	memset(l, 0, sizeof(*l));
	l->fd = l->mirror_fd = l->kick_fd = l->old_fd = -1;
	l->max = max;
	l->mark = mark ? mark : plain_mark;
	pthread_mutex_init(&l->lock, NULL);
	if ((size_t)snprintf(l->path, sizeof(l->path), "%s", path) >= sizeof(l->path))
		return -ENAMETOOLONG;
	return 0;
}

/* Take @fd (or its -errno) as @l's file. */
static int attach(struct rotlog *l, int fd)
{
	struct stat st;

	if (fd < 0)
		return fd;
	l->fd = fd;
	/* Only a regular file rotates (a --events /dev/stderr does not). */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		l->max = 0;
	else
		l->size = (uint64_t)st.st_size;
	return 0;
}

int rotlog_open(struct rotlog *l, const char *path, uint64_t max, rotlog_mark_fn mark)
{
	int ret = setup(l, path, max, mark);

	if (ret)
		return ret;
	ret = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	return attach(l, ret < 0 ? -errno : ret);
}

int rotlog_attach_fixed(struct rotlog *l, const char *path, int fd, int old_fd, uint64_t max)
{
	struct stat st;
	int ret = setup(l, path, max, NULL);

	if (!ret && (fstat(old_fd, &st) || !S_ISREG(st.st_mode)))
		ret = -EINVAL;
	if (!ret)
		ret = attach(l, fd);
	if (!ret)
		l->old_fd = old_fd;
	return ret;
}

/* The marker that starts a new PATH, written to @l->fd. */
static void start_new(struct rotlog *l)
{
	char mark[ROTLOG_MARK_MAX];
	int n;

	l->kicked = false;
	l->rotations++;
	n = l->mark(mark, sizeof(mark), l->path, l->dropped, l->rotations, l->max);
	l->size = 0;
	if (n > 0 && !write_all(l->fd, mark, (size_t)n))
		l->size = (uint64_t)n;
}

/* rotate() without names: PATH's bytes over PATH.1's, PATH emptied. At
 * most its newest max/2 are copied: PATH may have been made larger (or
 * sparse) by someone else than this writer. */
static int rotate_fixed(struct rotlog *l)
{
	char buf[16384];
	struct stat st;
	off_t from = 0, off = 0, half = (off_t)(l->max / 2);
	ssize_t n = 0;

	if (!fstat(l->old_fd, &st))
		l->dropped += (uint64_t)st.st_size;
	if (!fstat(l->fd, &st) && st.st_size > half) {
		from = st.st_size - half;
		l->dropped += (uint64_t)from;
	}
	if (ftruncate(l->old_fd, 0))
		return -errno;
	while (off < half) {
		size_t want = half - off < (off_t)sizeof(buf) ? (size_t)(half - off) : sizeof(buf);

		n = pread(l->fd, buf, want, from + off);
		if (n <= 0)
			break;
		if (pwrite(l->old_fd, buf, (size_t)n, off) != n)
			return -EIO;
		off += n;
	}
	if (n < 0 || ftruncate(l->fd, 0))
		return -errno;
	start_new(l);
	return 0;
}

/* PATH becomes PATH.1 (the old PATH.1 is dropped) and a new PATH starts
 * with the marker. */
static int rotate(struct rotlog *l)
{
	char old[PATH_MAX + 2];
	struct stat st;
	int fd;

	if (l->old_fd >= 0)
		return rotate_fixed(l);
	snprintf(old, sizeof(old), "%s.1", l->path);
	if (!stat(old, &st))
		l->dropped += (uint64_t)st.st_size;
	if (rename(l->path, old))
		return -errno;
	fd = open(l->path, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(l->fd);
	l->fd = fd;
	if (l->mirror_fd >= 0)
		dup2(fd, l->mirror_fd);
	start_new(l);
	return 0;
}

/* Ask the rotator for a rotation, once until it happens. */
static void kick(struct rotlog *l)
{
	uint64_t one = 1;

	if (l->kicked)
		return;
	l->kicked = write(l->kick_fd, &one, sizeof(one)) == sizeof(one);
}

/* A write on a thread that may not rotate: what fits below max/2 now. */
static size_t fit_deferred(struct rotlog *l, size_t len)
{
	uint64_t half = l->max / 2;
	size_t keep = len;

	if (l->size + len > half - half / 4)
		kick(l);
	if (l->size + len > half) {
		keep = half > l->size ? (size_t)(half - l->size) : 0;
		l->dropped += len - keep;
	}
	return keep;
}

static bool may_rotate(const struct rotlog *l)
{
	return !l->deferred || pthread_equal(pthread_self(), l->rotator);
}

static ssize_t write_locked(struct rotlog *l, const void *buf, size_t len)
{
	const char *p = buf;
	uint64_t half = l->max / 2;
	size_t keep = len;
	int ret;

	if (l->fd < 0)
		return -EBADF;
	if (l->max && !may_rotate(l)) {
		keep = fit_deferred(l, len);
	} else if (l->max && l->size + len > half) {
		ret = rotate(l);
		if (ret)
			return ret;
		/* Newest bytes win: a write larger than the room keeps its tail. */
		if (l->size + len > half) {
			keep = half > l->size ? (size_t)(half - l->size) : 0;
			l->dropped += len - keep;
			p += len - keep;
		}
	}
	ret = write_all(l->fd, p, keep);
	if (ret)
		return ret;
	l->size += keep;
	return (ssize_t)len;
}

ssize_t rotlog_write(struct rotlog *l, const void *buf, size_t len)
{
	ssize_t n;

	pthread_mutex_lock(&l->lock);
	n = write_locked(l, buf, len);
	pthread_mutex_unlock(&l->lock);
	return n;
}

void rotlog_defer_rotation(struct rotlog *l, int kick_fd)
{
	pthread_mutex_lock(&l->lock);
	if (l->kick_fd >= 0)
		close(l->kick_fd);	/* a VM before this one (rollback) */
	l->rotator = pthread_self();
	l->deferred = true;
	l->kicked = false;
	l->kick_fd = kick_fd;
	pthread_mutex_unlock(&l->lock);
}

int rotlog_rotate_due(struct rotlog *l)
{
	uint64_t half = l->max / 2;
	int ret = 0;

	pthread_mutex_lock(&l->lock);
	if (l->fd >= 0 && l->max && l->size > half - half / 4 && may_rotate(l))
		ret = rotate(l);
	pthread_mutex_unlock(&l->lock);
	return ret;
}

void rotlog_or_fd_write(struct rotlog *l, int fd, const void *buf, size_t len)
{
	if (l)
		(void)rotlog_write(l, buf, len);
	else if (fd >= 0)
		(void)write_all(fd, buf, len);
}

void rotlog_close(struct rotlog *l)
{
	if (l->fd >= 0)
		close(l->fd);
	if (l->kick_fd >= 0)
		close(l->kick_fd);
	if (l->old_fd >= 0)
		close(l->old_fd);
	l->fd = l->kick_fd = l->old_fd = -1;
	pthread_mutex_destroy(&l->lock);
}

/* Open @path and lock it, making sure it is still the file named @path
 * (another process may have rotated it while we waited). */
static int open_locked(const char *path)
{
	for (int tries = 0; tries < 8; tries++) {
		struct stat a, b;
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX) || fstat(fd, &a) || !S_ISREG(a.st_mode))
			return fd;	/* a device or no locks: write unlocked */
		if (!stat(path, &b) && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			return fd;
		close(fd);
	}
	return -EAGAIN;
}

int rotlog_append_line(const char *path, uint64_t max, rotlog_mark_fn mark, const char *line,
		       size_t len)
{
	struct rotlog l;
	ssize_t n;
	int ret = setup(&l, path, max, mark);

	if (!ret)
		ret = attach(&l, open_locked(path));
	if (ret)
		return ret;
	n = rotlog_write(&l, line, len);
	rotlog_close(&l);	/* also drops the lock */
	return n < 0 ? (int)n : 0;
}
