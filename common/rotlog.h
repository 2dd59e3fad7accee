/*
 * Capped logs with one rotated file: console.log and events.jsonl must not
 * fill the host's disk whatever the guest writes. A log PATH and PATH.1
 * together never exceed the cap; when PATH would grow past half of it,
 * PATH becomes PATH.1 (the old PATH.1 is dropped and counted) and a new
 * PATH starts with a marker line that says so.
 */
#ifndef MVM_ROTLOG_H
#define MVM_ROTLOG_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Default cap of PATH plus PATH.1, and the smallest one accepted. */
#define ROTLOG_DEFAULT_MAX (8ull << 20)
#define ROTLOG_MIN_MAX (64ull << 10)	/* halves hold the longest event */
#define ROTLOG_MARK_MAX 256

/*
 * Writes the marker line (with its newline) that starts a new PATH into
 * @buf; @dropped is the bytes dropped so far by this writer, @rotations
 * how often it rotated. Returns its length (< @cap).
 */
typedef int (*rotlog_mark_fn)(char *buf, size_t cap, const char *path, uint64_t dropped,
			      uint64_t rotations, uint64_t max);

struct rotlog {
	char path[PATH_MAX];
	int fd;
	int mirror_fd;		/* -1, or an fd dup2()ed to each new PATH (the VMM's stderr) */
	int old_fd;		/* -1, or PATH.1 kept open (rotlog_attach_fixed) */
	uint64_t max;		/* cap of PATH plus PATH.1 */
	uint64_t size;		/* bytes in PATH */
	uint64_t dropped;	/* bytes discarded: rotated-away PATH.1s, heads of huge writes */
	uint64_t rotations;
	rotlog_mark_fn mark;
	pthread_mutex_t lock;	/* devices write from several vCPU threads */
	/* Deferred rotation (rotlog_defer_rotation): only @rotator renames and
	 * opens files; other threads write 1 to @kick_fd when one is due. */
	bool deferred;
	bool kicked;		/* a kick is outstanding */
	pthread_t rotator;
	int kick_fd;
};

/* The cap from MVM_LOG_MAX ("16M", "512K", plain numbers are MiB), else
 * ROTLOG_DEFAULT_MAX; values below ROTLOG_MIN_MAX are raised to it. */
uint64_t rotlog_max_from_env(void);

/* Open (append, create 0600) @path capped at @max; @mark may be NULL (a
 * plain text marker). 0 or -errno. */
int rotlog_open(struct rotlog *l, const char *path, uint64_t max, rotlog_mark_fn mark);

/*
 * For a process that may not rename or open files (the relay, under its
 * seccomp table and Landlock): @fd is PATH opened O_RDWR | O_APPEND, @old_fd
 * PATH.1 opened O_RDWR, both before confinement; they stay the same files,
 * and a rotation copies PATH over PATH.1, then truncates PATH. @l owns
 * both once this returns 0 (a non-regular PATH never rotates). 0 or -errno
 * (neither taken then).
 */
int rotlog_attach_fixed(struct rotlog *l, const char *path, int fd, int old_fd, uint64_t max);

/*
 * Append @len bytes, rotating first when PATH would pass max/2. A write
 * larger than what fits keeps only its newest bytes. Returns @len (the
 * bytes accounted for, written or dropped) or -errno.
 */
ssize_t rotlog_write(struct rotlog *l, const void *buf, size_t len);

/*
 * From now on only the calling thread rotates @l: a confined vCPU thread
 * may not rename or open files (seccomp), so when one of its writes finds
 * a rotation due, it writes an 8-byte 1 to @kick_fd (an eventfd the caller
 * watches, calling rotlog_rotate_due() on it), keeps writing until PATH
 * holds max/2 and drops (and counts) the rest until the rotation. The kick
 * comes early, at 3/4 of max/2, so output at a console's pace is not lost.
 * @l owns @kick_fd from here on.
 */
void rotlog_defer_rotation(struct rotlog *l, int kick_fd);

/* On the rotator thread, after a kick: rotate if one is due. 0 or -errno. */
int rotlog_rotate_due(struct rotlog *l);

/* Write to @l if non-NULL, else to @fd if >= 0; best effort (the console). */
void rotlog_or_fd_write(struct rotlog *l, int fd, const void *buf, size_t len);

void rotlog_close(struct rotlog *l);

/*
 * One whole line appended to @path by one of several processes (events):
 * open, lock, rotate if needed, write, close. Each call is its own writer,
 * so the marker's count is that rotation's. 0 or -errno.
 */
int rotlog_append_line(const char *path, uint64_t max, rotlog_mark_fn mark, const char *line,
		       size_t len);

#endif
