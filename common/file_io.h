/* Whole-buffer file I/O shared by the disk back-ends and the state files. */
#ifndef MVM_FILE_IO_H
#define MVM_FILE_IO_H

#include <stddef.h>
#include <stdint.h>

/* Read exactly @len bytes at @off; past end of file reads as zeroes. 0 or -errno. */
int file_pread(int fd, void *buf, size_t len, uint64_t off);
/* Write exactly @len bytes at @off, retrying short writes. 0 or -errno. */
int file_pwrite(int fd, const void *buf, size_t len, uint64_t off);
/* Replace @path with @text (mode 0600) atomically: written to PATH.tmp,
 * fsynced, renamed over; a reader never sees half a file. 0 or -errno. */
int file_write_atomic(const char *path, const char *text);

/* Up to @max bytes of @path, NUL-terminated (free it); NULL if unreadable. */
char *file_read_text(const char *path, size_t max);
/* The whole of @path, which must be a regular file of at most @max bytes
 * reached without following a final symlink, NUL-terminated into *@text
 * (free it) with its size in *@len. 0, -EBADMSG (not a regular file, too
 * big) or -errno; *@text is NULL on failure. */
int file_read_regular(const char *path, size_t max, char **text, size_t *len);
/* Write @text into the existing @path in one write (a /proc or cgroup
 * control file: no creation, no truncation). 0 or -errno. */
int file_put_text(const char *path, const char *text);

#endif
