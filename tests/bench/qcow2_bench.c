/*
 * qcow2_bench: drive mvm's qcow2 layer with the same request stream as
 * `qemu-img bench` (same flags: -c count, -s size, -S step, -o offset, -w,
 * --flush-interval), one request at a time. Offsets advance by the step and
 * wrap at the image size, exactly like qemu-img bench, so a large odd step
 * scatters requests over the disk. Prints "Run completed in N seconds."
 * like qemu-img. Like qemu-img bench, the final flush (on close) is not
 * timed; it is reported on a separate line.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "images/qcow2.h"

struct cfg {
	uint64_t count, size, step, offset, flush_every;
	int write;
	const char *path;
};

static int parse(int argc, char **argv, struct cfg *c)
{
	static const struct option lo[] = {
		{ "flush-interval", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	*c = (struct cfg){ .count = 75000, .size = 4096 };
	while ((o = getopt_long(argc, argv, "c:s:S:o:w", lo, NULL)) != -1) {
		switch (o) {
		case 'c': c->count = strtoull(optarg, NULL, 0); break;
		case 's': c->size = strtoull(optarg, NULL, 0); break;
		case 'S': c->step = strtoull(optarg, NULL, 0); break;
		case 'o': c->offset = strtoull(optarg, NULL, 0); break;
		case 'w': c->write = 1; break;
		case 'F': c->flush_every = strtoull(optarg, NULL, 0); break;
		default: return -1;
		}
	}
	if (optind != argc - 1 || !c->size)
		return -1;
	c->path = argv[optind];
	if (!c->step)
		c->step = c->size;
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(struct blk_backend *b, const struct cfg *c, uint8_t *buf)
{
	uint64_t off = c->offset % b->size;
	int err = 0;

	for (uint64_t i = 0; i < c->count && !err; i++) {
		size_t n = b->size - off < c->size ? (size_t)(b->size - off) : c->size;

		err = c->write ? b->ops->write(b, buf, off, n) : b->ops->read(b, buf, off, n);
		if (!err && c->flush_every && (i + 1) % c->flush_every == 0)
			err = b->ops->flush(b);
		off = (off + c->step) % b->size;
	}
	return err;
}

int main(int argc, char **argv)
{
	struct blk_backend *b;
	struct cfg c;
	uint8_t *buf;
	double t0;
	int err;

	if (parse(argc, argv, &c)) {
		fprintf(stderr, "usage: qcow2_bench [-c count] [-s size] [-S step] [-o offset] "
				"[-w] [--flush-interval=N] IMAGE\n");
		return 2;
	}
	buf = aligned_alloc(4096, (c.size + 4095) & ~4095ULL);
	if (!buf || blk_open_qcow2(c.path, !c.write, NULL, &b))
		return 1;
	memset(buf, 0xa5, c.size);	/* qemu-img bench's default pattern */
	t0 = now();
	err = run(b, &c, buf);
	printf("Run completed in %.3f seconds.\n", now() - t0);
	t0 = now();
	if (!err)
		err = b->ops->flush(b);
	printf("Final flush took %.3f seconds.\n", now() - t0);
	blk_close(b);
	free(buf);
	return err ? 1 : 0;
}
