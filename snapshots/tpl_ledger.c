/* A template's ledger of its disk layers (snapshots/tpl_ledger.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "snapshots/tpl_ledger.h"

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static int64_t coarse_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME_COARSE, &t);
	return ns_of(&t);
}

/* The ledger's first line: its format and the template.json it goes with. */
static void header(const uint8_t sha[32], char out[96])
{
	static const char hex[] = "0123456789abcdef";
	char *p = out + sizeof("mvm-ledger 1 ") - 1;

	memcpy(out, "mvm-ledger 1 ", sizeof("mvm-ledger 1 ") - 1);
	for (int i = 0; i < 32; i++) {	/* not snprintf: a start pays for each call */
		*p++ = hex[sha[i] >> 4];
		*p++ = hex[sha[i] & 15];
	}
	*p++ = '\n';
	*p = 0;
}

/* "NAME DEV INO CTIME_NS\n" of @st into @out; its length. */
static int line_of(const char *name, const struct stat *st, char *out, size_t cap)
{
	return snprintf(out, cap, "%s %llu %llu %lld\n", name, (unsigned long long)st->st_dev,
			(unsigned long long)st->st_ino, (long long)ns_of(&st->st_ctim));
}

/* The ledger at @path if it goes with the template.json of @sha: its
 * lines (NUL-terminated, malloc'd), or NULL. */
static char *load(const char *path, const uint8_t sha[32])
{
	char *text = malloc(TPL_LEDGER_MAX + 1), want[96];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n = fd < 0 || !text ? -1 : read(fd, text, TPL_LEDGER_MAX + 1);

	if (fd >= 0)
		close(fd);
	header(sha, want);
	if (n <= 0 || n > TPL_LEDGER_MAX) {
		free(text);
		return NULL;
	}
	text[n] = 0;
	if (strncmp(text, want, strlen(want))) {
		free(text);
		return NULL;
	}
	return text;
}

/* The ledger @text has exactly the line of @name as @st is now. */
static bool listed(const char *text, const char *name, const struct stat *st)
{
	char want[192];
	int len = line_of(name, st, want, sizeof(want));
	const char *p = text;

	if (len <= 0 || (size_t)len >= sizeof(want))
		return false;
	while ((p = strstr(p, want)))
		if (p == text || p[-1] == '\n')
			return true;
		else
			p++;
	return false;
}

void tpl_hold_init(struct tpl_hold *h, const char *ledger)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->ledger, sizeof(h->ledger), "%s", ledger ? ledger : "");
	for (int i = 0; i < SNAP_MAX_FILES; i++)
		h->fd[i] = -1;
}

/* @name in @dfd open under a read lease, or -1. A lease break (someone
 * opening it for writing meanwhile) signals SIGURG, ignored by default,
 * instead of SIGIO, which would end this process: the opener just waits. */
static int hold_one(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || fcntl(fd, F_SETSIG, SIGURG) ||
	    fcntl(fd, F_SETLEASE, F_RDLCK)) {
		close(fd);
		return -1;
	}
	return fd;
}

void tpl_hold_layers(const char *dir, const struct snap_dir_info *in, const uint8_t tpl_sha256[32],
		     struct tpl_hold *h)
{
	int dfd = h->ledger[0] ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	char *ledger = NULL;
	bool any = false;

	memcpy(h->tpl_sha256, tpl_sha256, 32);
	h->n = in->nfiles - 1;
	for (int i = 1; dfd >= 0 && i < in->nfiles; i++) {
		snprintf(h->name[i], sizeof(h->name[i]), "%s", in->f[i].name);
		any |= (h->fd[i] = hold_one(dfd, h->name[i])) >= 0;
	}
	if (dfd >= 0)
		close(dfd);
	/* Read only now: every line compared is of a file already held. */
	if (any)
		ledger = load(h->ledger, tpl_sha256);
	for (int i = 1; ledger && i < in->nfiles; i++) {
		struct stat st;

		h->same[i] = h->fd[i] >= 0 && !fstat(h->fd[i], &st) &&
			     listed(ledger, h->name[i], &st);
	}
	free(ledger);
}

void tpl_hold_state(const char *dir, const uint8_t tpl_sha256[32], struct tpl_hold *h)
{
	int dfd = h->ledger[0] ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	char *ledger;
	struct stat st;

	memcpy(h->tpl_sha256, tpl_sha256, 32);
	snprintf(h->name[0], sizeof(h->name[0]), "%s", SNAP_DIR_STATE);
	h->fd[0] = dfd < 0 ? -1 : hold_one(dfd, SNAP_DIR_STATE);
	if (dfd >= 0)
		close(dfd);
	ledger = h->fd[0] >= 0 ? load(h->ledger, tpl_sha256) : NULL;
	h->same[0] = ledger && !fstat(h->fd[0], &st) && listed(ledger, SNAP_DIR_STATE, &st);
	free(ledger);
}

bool tpl_hold_is(const struct tpl_hold *h, int i, const struct stat *st)
{
	struct stat held;

	return i > 0 && i <= h->n && h->fd[i] >= 0 && !fstat(h->fd[i], &held) &&
	       held.st_ino == st->st_ino && held.st_dev == st->st_dev;
}

/* The held layers' lines as they are now, into @out; its length, or -1
 * when one's change time is not yet before the coarse clock's now. */
static int lines(const struct tpl_hold *h, char *out, size_t cap)
{
	int n;

	header(h->tpl_sha256, out);
	n = (int)strlen(out);

	for (int i = 0; i <= h->n; i++) {	/* 0: the state */
		struct stat st;

		if (h->fd[i] < 0 || !h->verified[i] || fstat(h->fd[i], &st) ||
		    fcntl(h->fd[i], F_GETLEASE) != F_RDLCK)
			continue;	/* not held (any more), or not known: read next time */
		if (ns_of(&st.st_ctim) >= coarse_now_ns())
			return -1;
		n += line_of(h->name[i], &st, out + n, cap - (size_t)n);
		if ((size_t)n >= cap)
			return -1;
	}
	return n;
}

void tpl_hold_commit(struct tpl_hold *h)
{
	char text[TPL_LEDGER_MAX], tmp[PATH_MAX + 32];
	int n = -1, fd;
	bool ok;

	for (int t = 0; h->ledger[0] && t < 100 && (n = lines(h, text, sizeof(text))) < 0; t++)
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	if (n < 0)
		return;
	snprintf(tmp, sizeof(tmp), "%s.%d", h->ledger, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	/* No fsync: a ledger lost in a crash, or torn, only costs the next
	 * start a read of the layers. */
	ok = write(fd, text, (size_t)n) == n;
	if (close(fd) || !ok || rename(tmp, h->ledger))
		unlink(tmp);
}

void tpl_hold_release(struct tpl_hold *h)
{
	for (int i = 0; i < SNAP_MAX_FILES; i++)
		if (h->fd[i] >= 0) {
			close(h->fd[i]);
			h->fd[i] = -1;
		}
	h->n = 0;
}
