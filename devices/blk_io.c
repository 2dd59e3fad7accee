/* virtio-blk's worker pool: see blk_io.h for the ordering and threads. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/io_census.h"
#include "common/log.h"
#include "devices/blk_io.h"
#include "vmm/confine/seccomp_filter.h"

static void act_remove(struct blk_io *io, struct blk_req *r)
{
	if (r->act_prev)
		r->act_prev->act_next = r->act_next;
	else
		io->act_head = r->act_next;
	if (r->act_next)
		r->act_next->act_prev = r->act_prev;
	else
		io->act_tail = r->act_prev;
}

static struct blk_req *next_work(struct blk_io *io)
{
	struct blk_req *r;

	while (!io->qhead && !io->stop)
		pthread_cond_wait(&io->work_cv, &io->mu);
	r = io->qhead;
	if (!r)
		return NULL;
	io->qhead = r->next;
	if (!io->qhead)
		io->qtail = NULL;
	/* Requests leave the queue in submission order, so everything
	 * before a barrier is running or finished by now: waiting for it
	 * cannot deadlock. */
	while (r->barrier && io->act_head != r)
		pthread_cond_wait(&io->fin_cv, &io->mu);
	return r;
}

#ifdef MVM_TEST_HOOKS
static void test_hooks_init(struct blk_io *io)
{
	const char *sync = getenv("MVM_TEST_BLK_SYNC");

	io->test_sync = sync && !strcmp(sync, "1");
}
#else
static void test_hooks_init(struct blk_io *io)
{
	(void)io;
}
#endif

/* @r finished (mu held): to the done list, and wake the event loop. */
static void finished(struct blk_io *io, struct blk_req *r)
{
	uint64_t one = 1;

	r->next = io->done;
	io->done = r;
	pthread_cond_broadcast(&io->fin_cv);
	if (write(io->efd, &one, sizeof(one)) < 0)
		log_debug("virtio-blk: completion eventfd write failed");
}

static void *worker(void *arg)
{
	struct blk_io *io = arg;
	/* Before any request: from here on the calls of blk_io.h only
	 * (vmm/confine/seccomp_blk.c). */
	int err = confine_seccomp_thread(&sc_table_blk);

	io_census_thread(IO_KIND_BLK);
	pthread_mutex_lock(&io->mu);
	io->started++;
	if (err && !io->start_err)
		io->start_err = err;
	pthread_cond_broadcast(&io->fin_cv);
	if (err) {
		pthread_mutex_unlock(&io->mu);
		return NULL;
	}
	for (;;) {
		struct blk_req *r = next_work(io);

		if (!r)
			break;
		pthread_mutex_unlock(&io->mu);
		io->exec(r);
		pthread_mutex_lock(&io->mu);
		act_remove(io, r);
		finished(io, r);
	}
	pthread_mutex_unlock(&io->mu);
	return NULL;
}

int blk_io_init(struct blk_io *io, blk_exec_fn exec)
{
	memset(io, 0, sizeof(*io));
	io->exec = exec;
	io->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (io->efd < 0)
		return -errno;
	pthread_mutex_init(&io->mu, NULL);
	pthread_cond_init(&io->work_cv, NULL);
	pthread_cond_init(&io->fin_cv, NULL);
	test_hooks_init(io);
	return 0;
}

/* Raised by the faulting thread itself: blocking them cannot keep them
 * from a worker, only their handlers (seccomp_filter.c, fatal_signal.c). */
static const int own_faults[] = { SIGSYS, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

int blk_io_start(struct blk_io *io)
{
	sigset_t all, old;
	int err = 0;

	if (io->nthreads)
		return 0;
	/* Signals are for the event loop and the vCPUs, never a worker; but
	 * not the ones a worker's own fault raises (seccomp's SIGSYS, a
	 * crash): the kernel delivers those anyway, and when they are blocked
	 * it first resets them to the default action, so the process died
	 * without the line that names the call or the crash. */
	sigfillset(&all);
	for (size_t i = 0; i < sizeof(own_faults) / sizeof(own_faults[0]); i++)
		sigdelset(&all, own_faults[i]);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < BLK_IO_WORKERS && !err; i++) {
		err = small_thread_start(&io->th[i], 0, worker, io);
		if (!err) {
			pthread_setname_np(io->th[i].th, "mvm-blk");
			io->nthreads++;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* Every worker confined itself (or said why not) before this returns. */
	pthread_mutex_lock(&io->mu);
	while (io->started < io->nthreads)
		pthread_cond_wait(&io->fin_cv, &io->mu);
	if (!err)
		err = io->start_err;
	pthread_mutex_unlock(&io->mu);
	return err;
}

static void free_list(struct blk_req *r)
{
	while (r) {
		struct blk_req *n = r->next;

		free(r);
		r = n;
	}
}

void blk_io_fini(struct blk_io *io)
{
	pthread_mutex_lock(&io->mu);
	io->stop = true;
	pthread_cond_broadcast(&io->work_cv);
	pthread_mutex_unlock(&io->mu);
	for (int i = 0; i < io->nthreads; i++)
		small_thread_join(&io->th[i]);
	io->nthreads = 0;
	free_list(io->done);
	free_list(io->spare);
	io->done = io->spare = NULL;
	if (io->efd >= 0)
		close(io->efd);
	io->efd = -1;
	pthread_cond_destroy(&io->fin_cv);
	pthread_cond_destroy(&io->work_cv);
	pthread_mutex_destroy(&io->mu);
}

struct blk_req *blk_io_alloc(struct blk_io *io)
{
	struct blk_req *r;

	pthread_mutex_lock(&io->mu);
	r = io->spare;
	if (r)
		io->spare = r->next;
	pthread_mutex_unlock(&io->mu);
	if (!r)
		r = malloc(sizeof(*r));
	return r;
}

void blk_io_free(struct blk_io *io, struct blk_req *r)
{
	pthread_mutex_lock(&io->mu);
	r->next = io->spare;
	io->spare = r;
	pthread_mutex_unlock(&io->mu);
}

void blk_io_submit(struct blk_io *io, struct blk_req *r)
{
	if (io->test_sync) {	/* the old design: the caller waits for the disk */
		io->exec(r);
		pthread_mutex_lock(&io->mu);
		io->pending++;
		finished(io, r);
		pthread_mutex_unlock(&io->mu);
		return;
	}
	pthread_mutex_lock(&io->mu);
	r->next = NULL;
	r->act_next = NULL;
	r->act_prev = io->act_tail;
	if (io->act_tail)
		io->act_tail->act_next = r;
	else
		io->act_head = r;
	io->act_tail = r;
	if (io->qtail)
		io->qtail->next = r;
	else
		io->qhead = r;
	io->qtail = r;
	io->pending++;
	pthread_cond_signal(&io->work_cv);
	pthread_mutex_unlock(&io->mu);
}

struct blk_req *blk_io_collect(struct blk_io *io)
{
	struct blk_req *r;
	uint64_t cnt;

	if (read(io->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
		log_debug("virtio-blk: completion eventfd read failed");
	pthread_mutex_lock(&io->mu);
	r = io->done;
	io->done = NULL;
	for (struct blk_req *p = r; p; p = p->next)
		io->pending--;
	pthread_mutex_unlock(&io->mu);
	return r;
}

void blk_io_wait_idle(struct blk_io *io)
{
	pthread_mutex_lock(&io->mu);
	while (io->act_head)
		pthread_cond_wait(&io->fin_cv, &io->mu);
	pthread_mutex_unlock(&io->mu);
}

unsigned blk_io_pending(struct blk_io *io)
{
	unsigned n;

	pthread_mutex_lock(&io->mu);
	n = io->pending;
	pthread_mutex_unlock(&io->mu);
	return n;
}
