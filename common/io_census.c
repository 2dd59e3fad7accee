/* Disk system calls per thread kind, test-hooks build only (io_census.h). */
#ifdef MVM_TEST_HOOKS
#include <string.h>

#include "common/io_census.h"

/* Descriptors above this are never marked: marking one makes every call
 * on any unmarked high descriptor count too (an overcount can only fail a
 * test that expects 0, never hide a call). */
#define CENSUS_FDS 4096

static uint64_t disk_fds[CENSUS_FDS / 64];
static bool high_fd_disk;
static struct io_census census;
static __thread enum io_kind my_kind;	/* IO_KIND_OTHER until told */

static const char *const kind_names[IO_KINDS] = {
	[IO_KIND_OTHER] = "other",
	[IO_KIND_EVENT_LOOP] = "event_loop",
	[IO_KIND_BLK] = "blk_worker",
	[IO_KIND_VCPU] = "vcpu",
};

void io_census_thread(enum io_kind k)
{
	my_kind = k < IO_KINDS ? k : IO_KIND_OTHER;
}

void io_census_disk_fd(int fd, bool disk)
{
	uint64_t bit;

	if (fd < 0)
		return;
	if (fd >= CENSUS_FDS) {
		if (disk)
			__atomic_store_n(&high_fd_disk, true, __ATOMIC_RELAXED);
		return;
	}
	bit = 1ULL << (fd % 64);
	if (disk)
		__atomic_fetch_or(&disk_fds[fd / 64], bit, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&disk_fds[fd / 64], ~bit, __ATOMIC_RELAXED);
}

static bool is_disk(int fd)
{
	if (fd < 0)
		return false;
	if (fd >= CENSUS_FDS)
		return __atomic_load_n(&high_fd_disk, __ATOMIC_RELAXED);
	return __atomic_load_n(&disk_fds[fd / 64], __ATOMIC_RELAXED) >> (fd % 64) & 1;
}

/* No system call here: the wrappers run under every thread's seccomp
 * filter and must not change what the threads call. */
void io_census_note(int fd, ssize_t ret, enum io_dir dir)
{
	uint64_t *bytes = dir == IO_READ ? census.read : dir == IO_WRITE ? census.written : NULL;

	if (!is_disk(fd))
		return;
	__atomic_fetch_add(&census.calls[my_kind], 1, __ATOMIC_RELAXED);
	if (bytes && ret > 0)
		__atomic_fetch_add(&bytes[my_kind], (uint64_t)ret, __ATOMIC_RELAXED);
}

void io_census_get(struct io_census *out)
{
	for (int k = 0; k < IO_KINDS; k++) {
		out->calls[k] = __atomic_load_n(&census.calls[k], __ATOMIC_RELAXED);
		out->read[k] = __atomic_load_n(&census.read[k], __ATOMIC_RELAXED);
		out->written[k] = __atomic_load_n(&census.written[k], __ATOMIC_RELAXED);
	}
}

const char *io_census_kind_name(enum io_kind k)
{
	return k < IO_KINDS ? kind_names[k] : "?";
}
#else
/* ISO C wants something in a translation unit. */
typedef int io_census_unused;
#endif
