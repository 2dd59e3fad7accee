/*
 * Guest memory of checkpoints: each checkpoint keeps the pages that changed
 * since its parent (the first one: every page), as a delta file with two
 * bitmaps: "covered" (pages this delta decides) and "data" (covered pages
 * that are not all zero, stored in page order after the bitmaps). A page's
 * content at checkpoint C is in the nearest delta, walking from C towards
 * the root, that covers it. Bitmaps count RAM pages in host-mapping order
 * (the MMIO hole excluded), as guest_mem's dirty bitmap and KVM's dirty log.
 */
#ifndef MVM_MEM_DELTA_H
#define MVM_MEM_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEM_DELTA_MAGIC "MVMMEMD\x01"
#define MEM_PAGE 4096ULL

struct mem_delta {
	uint64_t npages;
	uint64_t *covered, *data;	/* npages bits each */
	uint64_t *rank;			/* data pages before each 64-page word */
	uint64_t ndata;
	int fd;				/* -1: not open */
	uint64_t data_off;		/* file offset of the first stored page */
};

static inline uint64_t mem_words(uint64_t npages) { return (npages + 63) / 64; }
static inline bool mem_bit(const uint64_t *b, uint64_t p) { return (b[p / 64] >> (p % 64)) & 1; }
static inline void mem_set(uint64_t *b, uint64_t p) { b[p / 64] |= 1ULL << (p % 64); }

/*
 * Write the pages of @ram marked in @covered to @fd (a new file) and fill
 * @d (it takes ownership of @covered). @maybe_nonzero, if not NULL, marks
 * pages that may hold data; the others are known zero and never read.
 * 0 or -errno.
 */
int mem_delta_write(int fd, const uint8_t *ram, uint64_t npages, uint64_t *covered,
		    const uint64_t *maybe_nonzero, struct mem_delta *d);
void mem_delta_free(struct mem_delta *d);

/*
 * Make @ram hold the pages of checkpoint chain[0] for every page set in
 * @pages: chain[0] is the target, chain[i+1] the parent of chain[i], the last
 * the full root. Reads only the delta files. 0 or -errno (@ram may then be
 * partly reverted; the caller stops the VM).
 */
int mem_delta_revert(uint8_t *ram, uint64_t npages, const uint64_t *pages,
		     struct mem_delta *const *chain, int nchain);

/* Pages that are not all zero: which of @ram's pages hold data. */
bool mem_page_nonzero(const uint8_t *page);

#endif
