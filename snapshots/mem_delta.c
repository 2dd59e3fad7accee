/* Checkpoint memory deltas: write the changed pages, revert from them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapshots/mem_delta.h"

#define HDR_SIZE 64
#define RUN_MAX  256		/* pages per read or write call */

bool mem_page_nonzero(const uint8_t *page)
{
	const uint64_t *w = (const uint64_t *)page;

	for (size_t i = 0; i < MEM_PAGE / 8; i++)
		if (w[i])
			return true;
	return false;
}

static int write_all(int fd, const void *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p = (const uint8_t *)p + w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;	/* a short delta file is an error */
		p = (uint8_t *)p + r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static int alloc_maps(struct mem_delta *d, uint64_t npages)
{
	uint64_t w = mem_words(npages);

	d->npages = npages;
	d->data = calloc(w + 1, 8);
	d->rank = calloc(w + 1, 8);
	return d->data && d->rank ? 0 : -ENOMEM;
}

static void build_rank(struct mem_delta *d)
{
	uint64_t n = 0, w = mem_words(d->npages);

	for (uint64_t i = 0; i < w; i++) {
		d->rank[i] = n;
		n += (uint64_t)__builtin_popcountll(d->data[i]);
	}
	d->ndata = n;
}

/* Pages go out in runs of guest-contiguous data pages: one pwrite each. */
static int write_pages(int fd, const uint8_t *ram, struct mem_delta *d)
{
	uint64_t off = d->data_off, run = 0, start = 0;

	for (uint64_t p = 0; p <= d->npages; p++) {
		bool in = p < d->npages && mem_bit(d->data, p);

		if (in && run && (p != start + run || run == RUN_MAX)) {
			int ret = write_all(fd, ram + start * MEM_PAGE, run * MEM_PAGE, off);

			if (ret)
				return ret;
			off += run * MEM_PAGE;
			run = 0;
		}
		if (in) {
			if (!run)
				start = p;
			run++;
		} else if (run) {
			int ret = write_all(fd, ram + start * MEM_PAGE, run * MEM_PAGE, off);

			if (ret)
				return ret;
			off += run * MEM_PAGE;
			run = 0;
		}
	}
	return 0;
}

int mem_delta_write(int fd, const uint8_t *ram, uint64_t npages, uint64_t *covered,
		    const uint64_t *maybe_nonzero, struct mem_delta *d)
{
	uint8_t hdr[HDR_SIZE] = { 0 };
	uint64_t w = mem_words(npages), bm = w * 8, page = MEM_PAGE;
	int ret;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	d->covered = covered;
	ret = alloc_maps(d, npages);
	if (ret)
		return ret;
	for (uint64_t p = 0; p < npages; p++)
		if (mem_bit(covered, p) && (!maybe_nonzero || mem_bit(maybe_nonzero, p)) &&
		    mem_page_nonzero(ram + p * MEM_PAGE))
			mem_set(d->data, p);
	build_rank(d);
	d->data_off = (HDR_SIZE + 2 * bm + MEM_PAGE - 1) / MEM_PAGE * MEM_PAGE;
	memcpy(hdr, MEM_DELTA_MAGIC, 8);
	memcpy(hdr + 8, &page, 8);
	memcpy(hdr + 16, &npages, 8);
	memcpy(hdr + 24, &d->ndata, 8);
	memcpy(hdr + 32, &d->data_off, 8);
	ret = write_all(fd, hdr, HDR_SIZE, 0);
	if (!ret)
		ret = write_all(fd, covered, bm, HDR_SIZE);
	if (!ret)
		ret = write_all(fd, d->data, bm, HDR_SIZE + bm);
	if (!ret)
		ret = write_pages(fd, ram, d);
	if (ret)
		return ret;
	d->fd = fd;
	return 0;
}

void mem_delta_free(struct mem_delta *d)
{
	free(d->covered);
	free(d->data);
	free(d->rank);
	if (d->fd >= 0)
		close(d->fd);
	memset(d, 0, sizeof(*d));
	d->fd = -1;
}

/* Index of page @p among the stored pages of @d (p must be a data page). */
static uint64_t slot_of(const struct mem_delta *d, uint64_t p)
{
	uint64_t below = d->data[p / 64] & ((1ULL << (p % 64)) - 1);

	return d->rank[p / 64] + (uint64_t)__builtin_popcountll(below);
}

static const struct mem_delta *owner(struct mem_delta *const *chain, int n, uint64_t p)
{
	for (int i = 0; i < n; i++)
		if (mem_bit(chain[i]->covered, p))
			return chain[i];
	return NULL;
}

int mem_delta_revert(uint8_t *ram, uint64_t npages, const uint64_t *pages,
		     struct mem_delta *const *chain, int nchain)
{
	for (uint64_t p = 0; p < npages; p++) {
		const struct mem_delta *d;
		uint64_t run = 1, slot;
		int ret;

		if (!mem_bit(pages, p))
			continue;
		d = owner(chain, nchain, p);
		if (!d || d->npages != npages)
			return -EINVAL;		/* a chain without a full root */
		if (!mem_bit(d->data, p)) {
			memset(ram + p * MEM_PAGE, 0, MEM_PAGE);
			continue;
		}
		/* Following pages stored right after this one in the same delta: one read. */
		slot = slot_of(d, p);
		while (p + run < npages && run < RUN_MAX && mem_bit(pages, p + run) &&
		       owner(chain, nchain, p + run) == d && mem_bit(d->data, p + run))
			run++;
		ret = read_all(d->fd, ram + p * MEM_PAGE, run * MEM_PAGE, d->data_off + slot * MEM_PAGE);
		if (ret)
			return ret;
		p += run - 1;
	}
	return 0;
}
