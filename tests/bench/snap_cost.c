/*
 * snap_cost MODE [NONZERO_MIB] [ROUNDS] [RUN_PAGES]: what a snapshot's
 * export costs the VMM besides writing guest memory, per MiB of memory in
 * use. A 256 MiB "guest RAM" buffer with NONZERO_MIB (default 64) of
 * non-zero pages, in runs of RUN_PAGES pages (default 256: 1 MiB runs; 1:
 * single pages, the worst case for a re-read that skips holes) spread
 * evenly through it, is written to a file in /dev/shm as the VMM writes
 * the memory file (snap_mem_write), then, by MODE:
 *   write      nothing more (the baseline the others are measured against)
 *   crc        the file read again for its CRC-32C (the build before issue
 *              27: snap_file_crc after the vCPUs resumed)
 *   v2         read again for CRC-32C and SHA-256 (state FILE section v2:
 *              snap_file_digest)
 *   v3-reread  read again for the UMAC-128 tag (snap_file_tag)
 *   v3         the tag taken from the pages while they are written (what
 *              snap_export does: inside the pause, no second read)
 * ROUNDS times (default 5); prints the median CPU time (user+sys) per round
 * and per non-zero MiB. Instructions: run one round under
 * `valgrind --tool=cachegrind --cache-sim=no` per mode and subtract the
 * write mode's count (docs/benchmarks.md, "Issue 27's cost").
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tests/bench/bench_clock.h"
#include "snapshots/mem_delta.h"
#include "snapshots/snap_sum.h"

#define RAM_SIZE (256ULL << 20)

/* @mib MiB of non-zero pages in runs of @run pages, the runs evenly
 * spread, filled with xorshift bytes. */
static uint8_t *make_ram(unsigned mib, unsigned run)
{
	uint64_t npages = RAM_SIZE / MEM_PAGE, want = (uint64_t)mib * 256, x = 88172645463325252ULL;
	uint64_t runs = (want + run - 1) / run;
	uint8_t *ram = aligned_alloc(MEM_PAGE, RAM_SIZE);

	if (!ram)
		return NULL;
	memset(ram, 0, RAM_SIZE);
	for (uint64_t i = 0; i < want && i < npages; i++) {
		uint64_t at = (i / run) * npages / runs + i % run;
		uint64_t *p = (uint64_t *)(ram + at * MEM_PAGE);

		for (size_t w = 0; w < MEM_PAGE / 8; w++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			p[w] = x;
		}
	}
	return ram;
}

static int round_of(const char *mode, const uint8_t *ram, const char *path)
{
	static const uint8_t k[SNAP_KEY_LEN] = { 1, 2, 3 };
	uint8_t tag[SNAP_TAG_LEN], sha[32];
	struct snap_mac mac;
	uint64_t size;
	uint32_t crc;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), ret;
	bool inline_tag = !strcmp(mode, "v3");

	if (fd < 0)
		return -1;
	if (inline_tag)
		snap_mac_start(&mac, k, 0, RAM_SIZE);
	ret = snap_mem_write(fd, ram, RAM_SIZE, NULL, inline_tag ? &mac : NULL);
	if (inline_tag)
		snap_mac_end(&mac, tag);
	else if (!ret && !strcmp(mode, "crc"))
		ret = snap_file_crc(fd, &size, &crc);
	else if (!ret && !strcmp(mode, "v2"))
		ret = snap_file_digest(fd, &size, &crc, sha);
	else if (!ret && !strcmp(mode, "v3-reread"))
		ret = snap_file_tag(fd, k, 0, &size, tag);
	close(fd);
	unlink(path);
	return ret;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned mib = argc > 2 ? (unsigned)atoi(argv[2]) : 64;
	int rounds = argc > 3 ? atoi(argv[3]) : 5, run = argc > 4 ? atoi(argv[4]) : 256;
	char path[64];
	double *cpu;
	uint8_t *ram;

	if (strcmp(mode, "write") && strcmp(mode, "crc") && strcmp(mode, "v2") &&
	    strcmp(mode, "v3-reread") && strcmp(mode, "v3")) {
		fprintf(stderr, "usage: snap_cost write|crc|v2|v3-reread|v3 [NONZERO_MIB] [ROUNDS] "
			"[RUN_PAGES]\n");
		return 2;
	}
	if (mib < 1 || mib > 256 || rounds < 1 || run < 1 || run > 256)
		return 2;
	ram = make_ram(mib, (unsigned)run);
	cpu = calloc((size_t)rounds, sizeof(*cpu));
	if (!ram || !cpu)
		return 1;
	snprintf(path, sizeof(path), "/dev/shm/mvm-snapcost.%d", (int)getpid());
	for (int i = 0; i < rounds; i++) {
		double c0 = cpu_ms();

		if (round_of(mode, ram, path)) {
			perror("snap_cost");
			return 1;
		}
		cpu[i] = cpu_ms() - c0;
	}
	qsort(cpu, (size_t)rounds, sizeof(*cpu), cmp_double);
	printf("%s: %u MiB non-zero of 256 in runs of %d pages, %d rounds: cpu median %.2f ms "
	       "(%.2f-%.2f), %.3f ms per non-zero MiB\n", mode, mib, run, rounds, cpu[rounds / 2], cpu[0],
	       cpu[rounds - 1], cpu[rounds / 2] / mib);
	free(cpu);
	free(ram);
	return 0;
}
