/* Guest physical memory layout and the one bounds-checked accessor. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "vmm/guest_mem.h"

/*
 * KVM maps a 2 MiB page of guest memory with one nested-page entry only when
 * the host address is 2 MiB-aligned like the guest address: an unaligned
 * mapping costs one nested page fault per 4 KiB the guest touches (thousands
 * during boot, each an exit). So reserve 2 MiB more and trim to alignment.
 */
static uint8_t *map_aligned(uint64_t size, int fd)
{
	size_t span = size + GM_HUGE_SIZE;
	uint8_t *p = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			  -1, 0), *a;
	int flags = MAP_PRIVATE | MAP_NORESERVE | MAP_FIXED | (fd < 0 ? MAP_ANONYMOUS : 0);

	if (p == MAP_FAILED)
		return NULL;
	a = (uint8_t *)(((uintptr_t)p + GM_HUGE_SIZE - 1) & ~(uintptr_t)(GM_HUGE_SIZE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + size < p + span)
		munmap(a + size, (size_t)(p + span - (a + size)));
	if (mmap(a, size, PROT_READ | PROT_WRITE, flags, fd, 0) == MAP_FAILED) {
		munmap(a, size);
		return NULL;
	}
	return a;
}

static int map_ram(struct guest_mem *m, uint64_t ram_size, int fd)
{
	uint64_t low;

	memset(m, 0, sizeof(*m));
	if (ram_size < GM_MIN_SIZE || ram_size > GM_MAX_SIZE || ram_size % (1 << 20))
		return -EINVAL;
	m->map = map_aligned(ram_size, fd);
	if (!m->map)
		return -ENOMEM;
	m->file_backed = fd >= 0;
	m->map_size = ram_size;
	m->ram_size = ram_size;
	/* Guest RAM is mostly untouched: let THP back it when the host allows. */
	madvise(m->map, ram_size, MADV_HUGEPAGE);
	/* A core dump of the VMM never holds guest memory (nor the secrets
	 * passed into the guest with --env). */
	madvise(m->map, ram_size, MADV_DONTDUMP);
	low = ram_size < GM_MMIO_HOLE ? ram_size : GM_MMIO_HOLE;
	m->regions[0] = (struct gm_region){ .gpa = 0, .size = low, .host = m->map };
	m->nr_regions = 1;
	if (ram_size > low) {
		m->regions[1] = (struct gm_region){
			.gpa = GM_4G, .size = ram_size - low, .host = m->map + low };
		m->nr_regions = 2;
	}
	return 0;
}

int gm_init(struct guest_mem *m, uint64_t ram_size)
{
	return map_ram(m, ram_size, -1);
}

int gm_init_file(struct guest_mem *m, uint64_t ram_size, int fd)
{
	return fd < 0 ? -EBADF : map_ram(m, ram_size, fd);
}

void gm_wrap(struct guest_mem *m, void *host, uint64_t gpa, uint64_t size)
{
	memset(m, 0, sizeof(*m));
	m->regions[0] = (struct gm_region){ .gpa = gpa, .size = size, .host = host };
	m->nr_regions = 1;
	m->ram_size = size;
}

void gm_free(struct guest_mem *m)
{
	if (m->map)
		munmap(m->map, m->map_size);
	memset(m, 0, sizeof(*m));
}

void *gm_ptr(const struct guest_mem *m, uint64_t gpa, uint64_t len)
{
	for (int i = 0; i < m->nr_regions; i++) {
		const struct gm_region *r = &m->regions[i];

		/* Written so no sum can overflow: gpa - r->gpa only when gpa >= r->gpa. */
		if (gpa < r->gpa || gpa - r->gpa > r->size)
			continue;
		if (len > r->size - (gpa - r->gpa))
			return NULL;
		return r->host + (gpa - r->gpa);
	}
	return NULL;
}

/* The bitmap counts RAM pages in host-mapping order, hole excluded. */
static void mark_dirty(struct guest_mem *m, const uint8_t *host, uint64_t len)
{
	uint64_t off, first, last;

	if (!m->dirty || !len)
		return;
	off = (uint64_t)(host - m->regions[0].host);
	first = off / GM_PAGE_SIZE;
	last = (off + len - 1) / GM_PAGE_SIZE;
	/* Atomic: vCPU threads (MMIO) and the event loop may both write. */
	for (uint64_t p = first; p <= last; p++)
		__atomic_fetch_or(&m->dirty[p / 64], 1ULL << (p % 64), __ATOMIC_RELAXED);
}

void *gm_ptr_w(struct guest_mem *m, uint64_t gpa, uint64_t len)
{
	void *p = gm_ptr(m, gpa, len);

	if (p)
		mark_dirty(m, p, len);
	return p;
}

int gm_read(const struct guest_mem *m, void *dst, uint64_t gpa, uint64_t len)
{
	const void *p = gm_ptr(m, gpa, len);

	if (!p)
		return -EFAULT;
	memcpy(dst, p, len);
	return 0;
}

int gm_write(struct guest_mem *m, uint64_t gpa, const void *src, uint64_t len)
{
	void *p = gm_ptr_w(m, gpa, len);

	if (!p)
		return -EFAULT;
	memcpy(p, src, len);
	return 0;
}

uint64_t gm_low_end(const struct guest_mem *m)
{
	return m->regions[0].size;
}
