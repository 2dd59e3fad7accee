/*
 * Guest side of tests/integration/blk-aio.sh: what fio's libaio jobs do to
 * a virtio-blk disk, small and checkable. Linux native AIO (raw syscalls,
 * no libaio) with O_DIRECT on the raw device, queue depth QD, 4 KiB
 * blocks at random places in the first SPAN MiB: the iocbs go down in
 * batches (one io_submit for every free slot, as fio refills), so the
 * guest's block layer adds many requests to the virtqueue per kick and
 * takes many completions per interrupt.
 *
 *   blk_aio DEV OPS QD SPAN_MIB STALL_S
 *
 * Phase 1 writes OPS random blocks, each stamped with (block, version); a
 * block is never written or read while a request for it is in flight, so
 * its expected contents are known. Phase 2 mixes reads (checked against
 * the stamp) and writes, OPS again. Phase 3 reads every block written,
 * QD at a time, and checks it. No completion for STALL_S seconds: prints
 * "blk_aio: stalled" with what is in flight and exits 3. Bad data: exit 2.
 * Success: "blk_aio: ok" and the counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BS 4096
#define MAXQD 256

struct slot {
	struct iocb cb;
	uint32_t block;
	int write;
	uint8_t *buf;
};

static int fd, qd;
static uint32_t nblocks;
static uint32_t *version;	/* last version written per block, 0: never */
static uint8_t *busy;
static aio_context_t ctx;
static struct slot slots[MAXQD];
static int nfree, freelist[MAXQD];
static long stall_s, inflight;
static unsigned long long done_ops, bad;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static void stamp(uint8_t *buf, uint32_t block, uint32_t ver)
{
	for (int i = 0; i < BS / 8; i++) {
		uint32_t w[2] = { block, ver * 2654435761u + (uint32_t)i };

		memcpy(buf + 8 * i, w, 8);
	}
}

static int stamped(const uint8_t *buf, uint32_t block, uint32_t ver)
{
	static uint8_t want[BS];

	if (!ver)
		return 1;	/* never written: the base's bytes, not known here */
	stamp(want, block, ver);
	return !memcmp(buf, want, BS);
}

/* Prepare a free slot for @block; the caller submits it. */
static struct iocb *prep(uint32_t block, int write)
{
	struct slot *s = &slots[freelist[--nfree]];

	s->block = block;
	s->write = write;
	busy[block] = 1;
	if (write)
		stamp(s->buf, block, ++version[block]);
	memset(&s->cb, 0, sizeof(s->cb));
	s->cb.aio_data = (uint64_t)(s - slots);
	s->cb.aio_lio_opcode = write ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD;
	s->cb.aio_fildes = (uint32_t)fd;
	s->cb.aio_buf = (uint64_t)(uintptr_t)s->buf;
	s->cb.aio_nbytes = BS;
	s->cb.aio_offset = (int64_t)block * BS;
	return &s->cb;
}

static void submit(struct iocb **cbs, int n)
{
	int off = 0;

	while (off < n) {
		long r = syscall(SYS_io_submit, ctx, n - off, cbs + off);

		if (r < 0 && errno == EAGAIN)
			continue;
		if (r <= 0) {
			perror("blk_aio: io_submit");
			exit(1);
		}
		off += (int)r;
		inflight += r;
	}
}

static void stalled(void)
{
	printf("blk_aio: stalled: no completion for %ld s, %ld in flight, %llu done; blocks:",
	       stall_s, inflight, done_ops);
	for (int i = 0; i < qd; i++) {
		int free_slot = 0;

		for (int j = 0; j < nfree; j++)
			free_slot |= freelist[j] == i;
		if (!free_slot)
			printf(" %s%u", slots[i].write ? "w" : "r", slots[i].block);
	}
	printf("\n");
	fflush(stdout);
	exit(3);
}

/* Wait for at least one completion; check reads, free the slots. */
static void reap(void)
{
	struct io_event ev[MAXQD];
	struct timespec ts = { stall_s, 0 };
	long n = syscall(SYS_io_getevents, ctx, 1, MAXQD, ev, &ts);

	if (n < 0 && errno == EINTR)
		return;
	if (n < 0) {
		perror("blk_aio: io_getevents");
		exit(1);
	}
	if (n == 0)
		stalled();
	for (long i = 0; i < n; i++) {
		struct slot *s = &slots[ev[i].data];

		if (ev[i].res != BS) {
			printf("blk_aio: %s of block %u: res %lld\n", s->write ? "write" : "read",
			       s->block, (long long)ev[i].res);
			exit(1);
		}
		if (!s->write && !stamped(s->buf, s->block, version[s->block])) {
			if (bad++ < 5)
				printf("blk_aio: block %u does not hold version %u\n", s->block,
				       version[s->block]);
		}
		busy[s->block] = 0;
		freelist[nfree++] = (int)(s - slots);
		inflight--;
		done_ops++;
	}
}

/* @ops requests, @wpct percent writes, at random free blocks. */
static void random_phase(unsigned long ops, int wpct)
{
	unsigned long issued = 0;

	while (issued < ops || inflight) {
		struct iocb *cbs[MAXQD];
		int n = 0;

		while (nfree && issued < ops) {
			uint32_t b = rnd() % nblocks;

			if (busy[b])
				continue;
			cbs[n++] = prep(b, (int)(rnd() % 100) < wpct);
			issued++;
		}
		if (n)
			submit(cbs, n);
		reap();
	}
}

/* Read back every block ever written, qd at a time. */
static void verify_phase(void)
{
	uint32_t b = 0;

	while (b < nblocks || inflight) {
		struct iocb *cbs[MAXQD];
		int n = 0;

		while (nfree && b < nblocks) {
			if (version[b])
				cbs[n++] = prep(b, 0);
			b++;
		}
		if (n)
			submit(cbs, n);
		if (inflight)
			reap();
	}
}

int main(int argc, char **argv)
{
	unsigned long ops;

	if (argc != 6) {
		fprintf(stderr, "usage: blk_aio DEV OPS QD SPAN_MIB STALL_S\n");
		return 1;
	}
	ops = strtoul(argv[2], NULL, 10);
	qd = atoi(argv[3]);
	nblocks = (uint32_t)(strtoul(argv[4], NULL, 10) * (1024 * 1024 / BS));
	stall_s = atol(argv[5]);
	if (qd < 1 || qd > MAXQD || !nblocks || stall_s < 1) {
		fprintf(stderr, "blk_aio: bad arguments\n");
		return 1;
	}
	rng ^= (uint64_t)time(NULL);
	fd = open(argv[1], O_RDWR | O_DIRECT);
	version = calloc(nblocks, sizeof(*version));
	busy = calloc(nblocks, 1);
	if (fd < 0 || !version || !busy || syscall(SYS_io_setup, qd, &ctx)) {
		perror("blk_aio: set-up");
		return 1;
	}
	for (int i = 0; i < qd; i++) {
		if (posix_memalign((void **)&slots[i].buf, BS, BS))
			return 1;
		freelist[nfree++] = i;
	}
	random_phase(ops, 100);
	printf("blk_aio: wrote %llu\n", done_ops);
	fflush(stdout);
	random_phase(ops, 50);
	printf("blk_aio: mixed %llu\n", done_ops);
	fflush(stdout);
	verify_phase();
	if (bad) {
		printf("blk_aio: %llu blocks read back wrong\n", bad);
		return 2;
	}
	printf("blk_aio: ok, %llu requests, queue depth %d\n", done_ops, qd);
	return 0;
}
