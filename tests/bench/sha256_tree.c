/*
 * sha256_tree DIR [ROUNDS]: SHA-256 of every regular file under DIR through
 * common/sha256.h's sha256_fd_hex (what `mvm create --copy` does per file),
 * ROUNDS times (default 5); prints each round's MiB/s and the median.
 * Build it against two checkouts' libmvm.a to compare their hashing
 * (`make bench-hash` builds and runs this checkout's; README, Benchmarks).
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common/sha256.h"

static unsigned long long bytes;
static int errors;

static int one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	char hex[SHA256_HEX];
	int fd;

	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || sha256_fd_hex(fd, hex))
		errors++;
	else
		bytes += (unsigned long long)st->st_size;
	if (fd >= 0)
		close(fd);
	return 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	double mibs[64];

	if (argc < 2 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: sha256_tree DIR [ROUNDS (1-64)]\n");
		return 2;
	}
	for (int i = 0; i < rounds; i++) {
		double t0 = now_s(), dt;

		bytes = 0;
		if (nftw(argv[1], one, 32, FTW_PHYS) || errors) {
			fprintf(stderr, "sha256_tree: cannot read %s\n", argv[1]);
			return 1;
		}
		dt = now_s() - t0;
		mibs[i] = (double)bytes / (1 << 20) / dt;
		printf("round %d: %.1f MiB in %.3f s, %.0f MiB/s\n", i + 1, (double)bytes / (1 << 20), dt, mibs[i]);
	}
	qsort(mibs, (size_t)rounds, sizeof(mibs[0]), cmp);
	printf("median %.0f MiB/s\n", mibs[rounds / 2]);
	return 0;
}
