/*
 * Guest side of make bench-guest-io: a small fio-like block benchmark,
 * built static so the same binary runs under mvm and QEMU. Every job runs
 * for a fixed time on the raw device with O_DIRECT (no guest page cache),
 * queue depth N being N threads each with one request in flight:
 *
 *   randread-4k-qd1  randread-4k-qd32  randwrite-4k-qd1  randwrite-4k-qd32
 *   seqread-1m  seqwrite-1m  fsync-4k (4 KiB write + fdatasync, QD1)
 *
 * Prints "JOB iops=N mbps=N" per job. Usage: blkbench DEVICE SECONDS
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REGION (512ULL << 20)	/* random and sequential jobs stay in here */
#define FSYNC_AT REGION		/* the fsync job writes after it */

struct job {
	const char *name;
	size_t bs;
	int qd;
	int write, seq, fsync;
};

struct ctx {
	const struct job *j;
	int fd, id;
	double end;
	uint64_t ops;
	int err;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	struct ctx *c = arg;
	const struct job *j = c->j;
	uint64_t rs = 0x9e3779b97f4a7c15ULL * (uint64_t)(c->id + 1), blocks = REGION / j->bs;
	uint64_t pos = (uint64_t)c->id * (blocks / (uint64_t)j->qd);
	void *buf;

	if (posix_memalign(&buf, 4096, j->bs)) {
		c->err = ENOMEM;
		return NULL;
	}
	memset(buf, 0x5a + c->id, j->bs);
	while (now() < c->end) {
		uint64_t off;
		ssize_t n;

		rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
		off = j->fsync ? FSYNC_AT + (c->ops % 4096) * j->bs :
		      j->seq ? (pos++ % blocks) * j->bs : (rs % blocks) * j->bs;
		n = j->write ? pwrite(c->fd, buf, j->bs, (off_t)off) : pread(c->fd, buf, j->bs, (off_t)off);
		if (n != (ssize_t)j->bs || (j->fsync && fdatasync(c->fd))) {
			c->err = n < 0 ? errno : EIO;
			break;
		}
		c->ops++;
	}
	free(buf);
	return NULL;
}

static int run_job(const char *dev, const struct job *j, double secs)
{
	struct ctx c[32];
	pthread_t th[32];
	double t0;
	uint64_t ops = 0;
	int fd = open(dev, (j->write ? O_RDWR : O_RDONLY) | O_DIRECT);

	if (fd < 0) {
		perror(dev);
		return 1;
	}
	t0 = now();
	for (int i = 0; i < j->qd; i++) {
		c[i] = (struct ctx){ .j = j, .fd = fd, .id = i, .end = t0 + secs };
		pthread_create(&th[i], NULL, run, &c[i]);
	}
	for (int i = 0; i < j->qd; i++) {
		pthread_join(th[i], NULL);
		if (c[i].err) {
			fprintf(stderr, "%s: %s\n", j->name, strerror(c[i].err));
			return 1;
		}
		ops += c[i].ops;
	}
	t0 = now() - t0;
	close(fd);
	printf("%s iops=%.0f mbps=%.2f\n", j->name, ops / t0, ops * (double)j->bs / t0 / 1048576);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct job jobs[] = {
		{ "randread-4k-qd1", 4096, 1, 0, 0, 0 },
		{ "randread-4k-qd32", 4096, 32, 0, 0, 0 },
		{ "seqread-1m", 1 << 20, 1, 0, 1, 0 },
		{ "randwrite-4k-qd1", 4096, 1, 1, 0, 0 },
		{ "randwrite-4k-qd32", 4096, 32, 1, 0, 0 },
		{ "seqwrite-1m", 1 << 20, 1, 1, 1, 0 },
		{ "fsync-4k", 4096, 1, 1, 0, 1 },
	};
	double secs = argc > 2 ? atof(argv[2]) : 5;

	if (argc < 2) {
		fprintf(stderr, "usage: blkbench DEVICE [SECONDS]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
		if (run_job(argv[1], &jobs[i], secs))
			return 1;
	return 0;
}
