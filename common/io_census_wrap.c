/*
 * The disk system calls of the test-hooks mvm, counted (io_census.h). The
 * linker's --wrap=NAME (Makefile, CENSUS_WRAP: keep both lists equal) sends
 * every call of NAME in mvm's own objects here, and __real_NAME is glibc's.
 * Linked only into build/testhooks/mvm: nothing references these elsewhere.
 */
#ifdef MVM_TEST_HOOKS
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/io_census.h"

#define WRAP_RW(name, buf_t, off_t_, dir)                                                  \
	ssize_t __real_##name(int fd, buf_t buf, size_t n, off_t_ off);               \
	ssize_t __wrap_##name(int fd, buf_t buf, size_t n, off_t_ off);               \
	ssize_t __wrap_##name(int fd, buf_t buf, size_t n, off_t_ off)                \
	{                                                                             \
		ssize_t r = __real_##name(fd, buf, n, off);                            \
		io_census_note(fd, r, dir);                                                \
		return r;                                                             \
	}

#define WRAP_V(name, off_t_, dir)                                                          \
	ssize_t __real_##name(int fd, const struct iovec *v, int n, off_t_ off);      \
	ssize_t __wrap_##name(int fd, const struct iovec *v, int n, off_t_ off);      \
	ssize_t __wrap_##name(int fd, const struct iovec *v, int n, off_t_ off)       \
	{                                                                             \
		ssize_t r = __real_##name(fd, v, n, off);                              \
		io_census_note(fd, r, dir);                                                \
		return r;                                                             \
	}

#define WRAP_V2(name, off_t_, dir)                                                                 \
	ssize_t __real_##name(int fd, const struct iovec *v, int n, off_t_ off, int fl);      \
	ssize_t __wrap_##name(int fd, const struct iovec *v, int n, off_t_ off, int fl);      \
	ssize_t __wrap_##name(int fd, const struct iovec *v, int n, off_t_ off, int fl)       \
	{                                                                                     \
		ssize_t r = __real_##name(fd, v, n, off, fl);                                  \
		io_census_note(fd, r, dir);                                                        \
		return r;                                                                     \
	}

#define WRAP_SYNC(name)                                 \
	int __real_##name(int fd);                      \
	int __wrap_##name(int fd);                      \
	int __wrap_##name(int fd)                       \
	{                                               \
		int r = __real_##name(fd);              \
		io_census_note(fd, 0, IO_SYNC);                  \
		return r;                               \
	}

#define WRAP_FALLOC(name, off_t_)                                                  \
	int __real_##name(int fd, int mode, off_t_ off, off_t_ len);               \
	int __wrap_##name(int fd, int mode, off_t_ off, off_t_ len);               \
	int __wrap_##name(int fd, int mode, off_t_ off, off_t_ len)                \
	{                                                                          \
		int r = __real_##name(fd, mode, off, len);                          \
		io_census_note(fd, 0, IO_SYNC);                                             \
		return r;                                                          \
	}

WRAP_RW(pread, void *, off_t, IO_READ)
WRAP_RW(pread64, void *, off64_t, IO_READ)
WRAP_RW(pwrite, const void *, off_t, IO_WRITE)
WRAP_RW(pwrite64, const void *, off64_t, IO_WRITE)
WRAP_V(preadv, off_t, IO_READ)
WRAP_V(preadv64, off64_t, IO_READ)
WRAP_V(pwritev, off_t, IO_WRITE)
WRAP_V(pwritev64, off64_t, IO_WRITE)
WRAP_V2(preadv2, off_t, IO_READ)
WRAP_V2(pwritev2, off_t, IO_WRITE)
WRAP_SYNC(fsync)
WRAP_SYNC(fdatasync)
WRAP_FALLOC(fallocate, off_t)
WRAP_FALLOC(fallocate64, off64_t)

int __real_sync_file_range(int fd, off64_t off, off64_t n, unsigned int fl);
int __wrap_sync_file_range(int fd, off64_t off, off64_t n, unsigned int fl);
int __wrap_sync_file_range(int fd, off64_t off, off64_t n, unsigned int fl)
{
	int r = __real_sync_file_range(fd, off, n, fl);

	io_census_note(fd, 0, IO_SYNC);
	return r;
}

/* _FORTIFY_SOURCE turns a pread whose buffer size the compiler knows into
 * glibc's __pread_chk (the hardened build, Makefile): wrapped the same way. */
#define WRAP_CHK(name, off_t_)                                                          \
	ssize_t __real_##name(int fd, void *buf, size_t n, off_t_ off, size_t cap);     \
	ssize_t __wrap_##name(int fd, void *buf, size_t n, off_t_ off, size_t cap);     \
	ssize_t __wrap_##name(int fd, void *buf, size_t n, off_t_ off, size_t cap)      \
	{                                                                               \
		ssize_t r = __real_##name(fd, buf, n, off, cap);                         \
		io_census_note(fd, r, IO_READ);                                          \
		return r;                                                               \
	}

WRAP_CHK(__pread_chk, off_t)
WRAP_CHK(__pread64_chk, off64_t)
#else
typedef int io_census_wrap_unused;
#endif
