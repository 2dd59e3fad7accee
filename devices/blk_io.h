/*
 * virtio-blk's I/O threads: requests popped on the event loop are served by
 * a small pool of worker threads and handed back through an eventfd the
 * event loop watches, so a slow disk never stalls the network, vsock or
 * console of the same VM, and the guest keeps several requests in flight.
 *
 * Ordering: a request marked "barrier" (FLUSH) starts only once every
 * request submitted before it has finished, so a flush covers every write
 * the guest saw complete before sending it (and the ones still in flight
 * when it did). Requests after it may overtake it, as on real hardware.
 *
 * Threads and their system calls (for the per-thread seccomp filters):
 * BLK_IO_WORKERS threads per disk, named "mvm-blk", created by
 * blk_io_start() when the VM starts running (vm_run, after the process is
 * confined, so they inherit Landlock and the namespaces); each installs
 * its own seccomp filter (vmm/confine/seccomp_blk.c) before any request. They run only
 * the back-end ops read/write/flush (images/raw.c, images/qcow2*.c,
 * common/file_io.c) and this file: pread64, pwrite64 (data, qcow2
 * metadata), fdatasync (flush), fallocate (qcow2 punching freed clusters
 * during a flush), write (the completion eventfd; stderr when a back-end
 * logs an error, through stdio, which may also fstat it once), futex
 * (locks, condition variables), mmap/munmap/mprotect/madvise/brk (malloc:
 * qcow2 bounce clusters, L2 and refcount tables; glibc gives each thread
 * its own arena); at start and exit what glibc's thread start-up does
 * (rseq, set_robust_list, rt_sigprocmask, madvise, munmap, exit). No
 * open, no socket, no ioctl. Workers block every signal but
 * those their own faults raise (SIGSYS, SIGSEGV...), whose handlers report them.
 */
#ifndef MVM_BLK_IO_H
#define MVM_BLK_IO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/small_thread.h"
#include "devices/virtqueue.h"

struct blk_backend;

struct blk_req {
	struct blk_req *next;		/* in the work queue or the done list */
	struct blk_req *act_prev, *act_next;	/* submitted, unfinished: seq order */
	bool barrier;			/* start only after all earlier ones finished */
	uint16_t q;
	struct blk_backend *backend;	/* taken at submission */
	uint32_t type;
	uint64_t sector;
	uint8_t status;			/* set by the worker */
	uint32_t written;		/* bytes written into the chain's buffers */
	struct vq_chain c;
};

typedef void (*blk_exec_fn)(struct blk_req *r);

#define BLK_IO_WORKERS 4

struct blk_io {
	pthread_mutex_t mu;
	pthread_cond_t work_cv;		/* the work queue got a request / stop */
	pthread_cond_t fin_cv;		/* a request finished */
	struct blk_req *qhead, *qtail;	/* waiting for a worker, FIFO */
	struct blk_req *act_head, *act_tail;
	struct blk_req *done;		/* finished, not yet collected */
	struct blk_req *spare;		/* freed requests for reuse */
	unsigned pending;		/* submitted, not yet collected */
	bool stop;
	int efd;			/* eventfd: some request finished */
	blk_exec_fn exec;
	int nthreads, started;		/* created; confined (or failed) */
	int start_err;
	struct small_thread th[BLK_IO_WORKERS];
	/* Test-hooks build only (else false): the synchronous design, so
	 * tests/integration/blk-nonblocking.sh proves it can see an event
	 * loop that issues disk calls (common/io_census.h). */
	bool test_sync;			/* MVM_TEST_BLK_SYNC=1: served on submit */
};

/* Set up the pool; @exec serves one request on a worker thread. Requests
 * submitted before blk_io_start() wait for it. 0 or -errno. */
int blk_io_init(struct blk_io *io, blk_exec_fn exec);
/* Create the workers (once) and wait until each has installed its seccomp
 * filter. 0 or -errno (then no request is served: the VM must not run). */
int blk_io_start(struct blk_io *io);
/* Stop and join the workers after they finished every queued request;
 * frees everything. */
void blk_io_fini(struct blk_io *io);
/* A request to fill (vq_pop into ->c) and submit, or NULL (out of memory). */
struct blk_req *blk_io_alloc(struct blk_io *io);
/* Give back a request that was not submitted, or one collected. */
void blk_io_free(struct blk_io *io, struct blk_req *r);
/* Hand @r to the workers. */
void blk_io_submit(struct blk_io *io, struct blk_req *r);
/* Take every finished request (a list through ->next; NULL: none) and
 * clear the eventfd. The caller pushes them and frees them. */
struct blk_req *blk_io_collect(struct blk_io *io);
/* Wait until no submitted request is unfinished (collect afterwards). */
void blk_io_wait_idle(struct blk_io *io);
/* Requests submitted and not yet collected. */
unsigned blk_io_pending(struct blk_io *io);

#endif
