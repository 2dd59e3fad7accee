/*
 * verify_file FILE [ROUNDS] [crc|digest]: the check a restore makes of a
 * snapshot file (snapshots/snapshot_dir.c, check_file): its CRC-32C alone
 * (snap_file_crc, the builds before keyed seals) or CRC-32C and SHA-256 in
 * the same read (snap_file_digest), ROUNDS times (default 20) on a warm page
 * cache; prints each round's wall and CPU milliseconds (user+sys of this
 * process: preemption by a loaded machine's other work left out) and the
 * medians. Built against two
 * checkouts' libmvm.a (a build before snap_file_digest: crc only) to compare
 * what a restore pays per MiB of non-zero memory (docs/benchmarks.md).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/bench_clock.h"
#include "snapshots/snapshot_dir.h"

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 20, fd, ret = 0;
	const char *mode = argc > 3 ? argv[3] : "crc";
	double *ms, *cpu;
	struct stat st;

	if (argc < 2 || rounds < 1 || (strcmp(mode, "crc") && strcmp(mode, "digest"))) {
		fprintf(stderr, "usage: verify_file FILE [ROUNDS] [crc|digest]\n");
		return 2;
	}
#ifndef HAVE_DIGEST
	if (!strcmp(mode, "digest")) {
		fprintf(stderr, "verify_file: this build has no snap_file_digest\n");
		return 2;
	}
#endif
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		perror(argv[1]);
		return 1;
	}
	ms = calloc((size_t)rounds, sizeof(*ms));
	cpu = calloc((size_t)rounds, sizeof(*cpu));
	for (int i = 0; !ret && i < rounds; i++) {
		uint64_t size;
		uint32_t crc;
		double t0 = now_ms(), c0 = cpu_ms();
#ifdef HAVE_DIGEST
		uint8_t sha[32];

		ret = !strcmp(mode, "digest") ? snap_file_digest(fd, &size, &crc, sha) :
			snap_file_crc(fd, &size, &crc);
#else
		ret = snap_file_crc(fd, &size, &crc);
#endif
		ms[i] = now_ms() - t0;
		cpu[i] = cpu_ms() - c0;
		printf("round %d: %.3f ms wall %.3f ms cpu (crc %08x)\n", i + 1, ms[i], cpu[i], crc);
	}
	if (ret) {
		fprintf(stderr, "verify_file: %s\n", strerror(-ret));
		return 1;
	}
	qsort(ms, (size_t)rounds, sizeof(*ms), cmp_double);
	qsort(cpu, (size_t)rounds, sizeof(*cpu), cmp_double);
	printf("%s: %s, %.1f MiB allocated, %d rounds: wall median %.3f ms (%.3f-%.3f), "
	       "cpu median %.3f ms (%.3f-%.3f)\n", mode, argv[1], (double)st.st_blocks * 512 / 1048576,
	       rounds, ms[rounds / 2], ms[0], ms[rounds - 1], cpu[rounds / 2], cpu[0], cpu[rounds - 1]);
	free(ms);
	free(cpu);
	close(fd);
	return 0;
}
