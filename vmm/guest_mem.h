/*
 * Guest physical memory: one anonymous mapping, split into RAM regions around
 * the 32-bit MMIO hole. gm_ptr() is the one checked accessor: device code
 * never does its own guest-address arithmetic.
 */
#ifndef MVM_GUEST_MEM_H
#define MVM_GUEST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GM_PAGE_SIZE     4096ULL
#define GM_HUGE_SIZE     (2ULL << 20)
#define GM_MMIO_HOLE     0xc0000000ULL	/* RAM below 4 GiB ends here */
#define GM_4G            0x100000000ULL
#define GM_MIN_SIZE      (64ULL << 20)
#define GM_MAX_SIZE      (16ULL << 30)
#define GM_MAX_REGIONS   2

struct gm_region {
	uint64_t gpa;
	uint64_t size;
	uint8_t *host;
};

struct guest_mem {
	struct gm_region regions[GM_MAX_REGIONS];
	int nr_regions;
	uint64_t ram_size;	/* bytes of RAM (sum of regions) */
	uint8_t *map;		/* NULL when regions wrap caller memory */
	size_t map_size;
	/* Pages the VMM wrote on the guest's behalf (NULL: not tracking). */
	uint64_t *dirty;
	/* RAM is a private mapping of a snapshot's memory file (gm_init_file):
	 * pages not yet touched hold the file's data, not zeroes. */
	bool file_backed;
};

/* Map @ram_size bytes (MAP_NORESERVE) and lay them out around the hole. */
int gm_init(struct guest_mem *m, uint64_t ram_size);
/* As gm_init, but RAM maps @fd (a snapshot's memory file of @ram_size
 * bytes) MAP_PRIVATE: pages load lazily, forks share the page cache, and
 * the guest's writes never reach the file. */
int gm_init_file(struct guest_mem *m, uint64_t ram_size, int fd);
/* Wrap caller-owned memory as one region at @gpa (tests, fuzzers). */
void gm_wrap(struct guest_mem *m, void *host, uint64_t gpa, uint64_t size);
void gm_free(struct guest_mem *m);

/*
 * Host pointer for guest range [gpa, gpa+len), or NULL when any byte of it
 * lies outside RAM or the range wraps. len == 0 is valid inside RAM.
 */
void *gm_ptr(const struct guest_mem *m, uint64_t gpa, uint64_t len);
/* As gm_ptr, and records the range as written by the VMM. */
void *gm_ptr_w(struct guest_mem *m, uint64_t gpa, uint64_t len);

/* Copy in/out with the same checks; 0 or -EFAULT. */
int gm_read(const struct guest_mem *m, void *dst, uint64_t gpa, uint64_t len);
int gm_write(struct guest_mem *m, uint64_t gpa, const void *src, uint64_t len);

/* Highest RAM address + 1 below 4 GiB. */
uint64_t gm_low_end(const struct guest_mem *m);

#endif
