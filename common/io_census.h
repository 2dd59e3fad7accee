/*
 * Test-hooks build only (-DMVM_TEST_HOOKS): which kind of thread issues the
 * disk I/O system calls, so a test can check "the event loop never waits for
 * the disk" by structure rather than by timing
 * (tests/integration/blk-nonblocking.sh).
 *
 * Counted: pread, pwrite, preadv, pwritev (and their 64/v2 names), fsync,
 * fdatasync, fallocate, sync_file_range issued by mvm's own code on a
 * descriptor marked as a disk (the raw and qcow2 back-ends mark theirs at
 * open, unmark at close). The linker's --wrap routes every such call of the
 * test-hooks mvm through common/io_census_wrap.c (Makefile, CENSUS_WRAP);
 * no call site can bypass it. Each thread says what it is once; a thread
 * that never did counts as "other" (the main thread before its event loop:
 * opening images, reading headers). Checkpoints and rollbacks do disk I/O
 * on the event loop by design, with the VM paused: a test expecting 0 from
 * the event loop takes none. In every other build these are empty inlines
 * and the wrappers are not linked.
 */
#ifndef MVM_IO_CENSUS_H
#define MVM_IO_CENSUS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum io_kind { IO_KIND_OTHER, IO_KIND_EVENT_LOOP, IO_KIND_BLK, IO_KIND_VCPU, IO_KINDS };

struct io_census {
	uint64_t calls[IO_KINDS];	/* disk system calls issued */
	uint64_t read[IO_KINDS];	/* bytes they read */
	uint64_t written[IO_KINDS];	/* bytes they wrote */
};

#ifdef MVM_TEST_HOOKS
/* The calling thread is of kind @k from now on. */
void io_census_thread(enum io_kind k);
/* @fd is (@disk) or no longer is a disk's descriptor. */
void io_census_disk_fd(int fd, bool disk);
/* A copy of the counts so far. */
void io_census_get(struct io_census *out);
enum io_dir { IO_SYNC, IO_READ, IO_WRITE };
/* For the wrappers: one call on @fd that returned @ret (bytes moved in
 * direction @dir, or <0). */
void io_census_note(int fd, ssize_t ret, enum io_dir dir);
/* "event_loop" ... for @k (the control API's field names). */
const char *io_census_kind_name(enum io_kind k);
#else
static inline void io_census_thread(enum io_kind k) { (void)k; }
static inline void io_census_disk_fd(int fd, bool disk) { (void)fd; (void)disk; }
#endif

#endif
