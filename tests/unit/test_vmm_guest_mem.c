/* Guest memory layout around the 32-bit hole and the one checked accessor. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/guest_mem.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static bool dirty_bit(const struct guest_mem *m, uint64_t page)
{
	return (m->dirty[page / 64] >> (page % 64)) & 1;
}

static uint64_t dirty_count(const struct guest_mem *m, uint64_t words)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < words; i++)
		n += (uint64_t)__builtin_popcountll(m->dirty[i]);
	return n;
}

Test(vmm_guest_mem, small_guest_is_one_region_from_zero)
{
	struct guest_mem m;

	cr_assert_eq(gm_init(&m, 256 * MiB), 0);
	cr_assert_eq(m.nr_regions, 1);
	cr_assert_eq(m.regions[0].gpa, 0);
	cr_assert_eq(m.regions[0].size, 256 * MiB);
	cr_assert_eq(m.ram_size, 256 * MiB);
	cr_assert_eq(gm_low_end(&m), 256 * MiB);
	/* Fresh RAM reads as zeros and is writable end to end. */
	uint8_t *last = gm_ptr(&m, 256 * MiB - 1, 1);
	cr_assert_not_null(last);
	cr_assert_eq(*last, 0);
	*last = 0x5a;
	cr_assert_eq(*(uint8_t *)gm_ptr(&m, 256 * MiB - 1, 1), 0x5a);
	gm_free(&m);
	cr_assert_eq(m.nr_regions, 0);
	cr_assert_null(m.map);
}

Test(vmm_guest_mem, exactly_hole_sized_guest_has_no_high_region)
{
	struct guest_mem m;

	cr_assert_eq(gm_init(&m, GM_MMIO_HOLE), 0);
	cr_assert_eq(m.nr_regions, 1);
	cr_assert_eq(gm_low_end(&m), GM_MMIO_HOLE);
	cr_assert_null(gm_ptr(&m, GM_4G, 1));
	gm_free(&m);
}

Test(vmm_guest_mem, four_gib_guest_splits_around_the_hole)
{
	struct guest_mem m;

	cr_assert_eq(gm_init(&m, 4 * GiB), 0);
	cr_assert_eq(m.nr_regions, 2);
	cr_assert_eq(m.regions[0].gpa, 0);
	cr_assert_eq(m.regions[0].size, 0xc0000000ULL);
	cr_assert_eq(m.regions[1].gpa, 4 * GiB);
	/* No RAM is lost to the hole: it moves above 4 GiB. */
	cr_assert_eq(m.regions[1].size, 4 * GiB - 0xc0000000ULL);
	cr_assert_eq(m.regions[0].size + m.regions[1].size, 4 * GiB);
	cr_assert_eq(m.ram_size, 4 * GiB);
	cr_assert_eq(gm_low_end(&m), 0xc0000000ULL);

	/* Both regions are backed, by distinct host bytes. */
	uint8_t *lo = gm_ptr(&m, 0xbfffffffULL, 1), *hi = gm_ptr(&m, GM_4G, 1);
	cr_assert_not_null(lo);
	cr_assert_not_null(hi);
	*lo = 1;
	*hi = 2;
	cr_assert_eq(*lo, 1);
	cr_assert_eq(*hi, 2);
	cr_assert_not_null(gm_ptr(&m, 5 * GiB - 1, 1));
	cr_assert_null(gm_ptr(&m, 5 * GiB, 1));
	cr_assert_null(gm_ptr(&m, 5 * GiB - 1, 2));
	gm_free(&m);
}

/* KVM can back guest memory with 2 MiB nested pages only when host and
 * guest addresses agree modulo 2 MiB; otherwise every 4 KiB is its own
 * nested page fault. Holds for anonymous and file-backed RAM alike. */
Test(vmm_guest_mem, every_region_is_2mib_aligned_like_its_guest_address)
{
	char path[] = "/tmp/mvm-gm-XXXXXX";
	int fd = mkstemp(path);
	struct guest_mem m;

	cr_assert_geq(fd, 0);
	unlink(path);
	cr_assert_eq(ftruncate(fd, (off_t)(64 * MiB)), 0);
	for (int round = 0; round < 8; round++) {
		/* Knock the next free address off alignment. */
		void *pad = mmap(NULL, 4096 * (size_t)(round + 1), PROT_READ,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		cr_assert_eq(round % 2 ? gm_init_file(&m, 64 * MiB, fd) : gm_init(&m, 3 * GiB + 512 * MiB), 0);
		for (int i = 0; i < m.nr_regions; i++)
			cr_assert_eq(((uintptr_t)m.regions[i].host - m.regions[i].gpa) % (2 * MiB), 0,
				     "region %d host %p", i, (void *)m.regions[i].host);
		gm_free(&m);
		munmap(pad, 4096 * (size_t)(round + 1));
	}
	close(fd);
}

Test(vmm_guest_mem, bad_sizes_rejected)
{
	static const uint64_t bad[] = {
		0, 1, 63 * MiB, 64 * MiB - 4096, 16 * GiB + MiB, 32 * GiB, UINT64_MAX,
		256 * MiB + 1, 256 * MiB + 4096, 256 * MiB + MiB / 2,
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct guest_mem m;

		cr_assert_eq(gm_init(&m, bad[i]), -EINVAL, "size %#llx accepted",
			     (unsigned long long)bad[i]);
		cr_assert_null(m.map);
		cr_assert_eq(m.nr_regions, 0);
		gm_free(&m);	/* safe after a failed init */
	}
}

Test(vmm_guest_mem, boundary_sizes_accepted)
{
	struct guest_mem m;

	cr_assert_eq(gm_init(&m, 64 * MiB), 0);
	cr_assert_eq(m.ram_size, 64 * MiB);
	gm_free(&m);
	cr_assert_eq(gm_init(&m, 65 * MiB), 0);
	gm_free(&m);
}

Test(vmm_guest_mem, ptr_bounds_at_the_end_of_ram)
{
	struct guest_mem m;
	const uint64_t sz = 64 * MiB;

	cr_assert_eq(gm_init(&m, sz), 0);
	uint8_t *base = gm_ptr(&m, 0, 1);

	cr_assert_not_null(base);
	cr_assert_eq(gm_ptr(&m, sz - 1, 1), base + sz - 1);
	cr_assert_eq(gm_ptr(&m, 0, sz), base);
	cr_assert_null(gm_ptr(&m, 0, sz + 1));
	cr_assert_null(gm_ptr(&m, sz, 1));
	cr_assert_null(gm_ptr(&m, sz - 4, 5));
	/* An empty range at the very end is inside RAM; past it is not. */
	cr_assert_eq(gm_ptr(&m, sz, 0), base + sz);
	cr_assert_null(gm_ptr(&m, sz + 1, 0));
	cr_assert_not_null(gm_ptr(&m, 0, 0));
	gm_free(&m);
}

Test(vmm_guest_mem, ranges_wrapping_2_64_fail)
{
	struct guest_mem m;

	cr_assert_eq(gm_init(&m, 64 * MiB), 0);
	cr_assert_null(gm_ptr(&m, UINT64_MAX, 1));
	cr_assert_null(gm_ptr(&m, UINT64_MAX, 2));
	cr_assert_null(gm_ptr(&m, 0x1000, UINT64_MAX));
	cr_assert_null(gm_ptr(&m, 0x1000, UINT64_MAX - 0xfff));	/* sum is exactly 2^64 */
	cr_assert_null(gm_ptr(&m, 0x1000, UINT64_MAX - 0x800));
	cr_assert_null(gm_ptr(&m, UINT64_MAX - 0xf, 0x20));	/* wraps to 0x10 */
	gm_free(&m);
}

Test(vmm_guest_mem, wrapped_region_at_top_of_address_space)
{
	/* A region whose end is exactly 2^64: no end computation may overflow. */
	static uint8_t buf[4096];
	struct guest_mem m;
	const uint64_t gpa = 0xfffffffffffff000ULL;

	gm_wrap(&m, buf, gpa, sizeof(buf));
	cr_assert_eq(gm_ptr(&m, gpa, sizeof(buf)), buf);
	cr_assert_eq(gm_ptr(&m, UINT64_MAX, 1), buf + 4095);
	cr_assert_null(gm_ptr(&m, UINT64_MAX, 2));
	cr_assert_null(gm_ptr(&m, gpa, sizeof(buf) + 1));
	cr_assert_null(gm_ptr(&m, gpa - 1, 1));
	cr_assert_null(gm_ptr(&m, 0, 1));
	cr_assert_null(m.map);
	gm_free(&m);	/* does not free caller memory */
}

Test(vmm_guest_mem, ranges_touching_the_hole_fail)
{
	struct guest_mem m;

	cr_assert_eq(gm_init(&m, 4 * GiB), 0);
	cr_assert_not_null(gm_ptr(&m, 0xbffff000ULL, 0x1000));
	cr_assert_null(gm_ptr(&m, 0xbffff000ULL, 0x1001));
	cr_assert_null(gm_ptr(&m, 0xbffff000ULL, 0x2000));
	/* Even though host memory is contiguous, a range across the hole is not RAM. */
	cr_assert_null(gm_ptr(&m, 0xbfffffffULL, GM_4G - 0xbfffffffULL + 1));
	cr_assert_null(gm_ptr(&m, 0xc0000000ULL, 1));
	cr_assert_null(gm_ptr(&m, 0xd0000000ULL, 4));
	cr_assert_null(gm_ptr(&m, 0xfee00000ULL, 4));
	cr_assert_null(gm_ptr(&m, GM_4G - 1, 1));
	cr_assert_null(gm_ptr(&m, GM_4G - 1, 2));
	cr_assert_not_null(gm_ptr(&m, GM_4G, 1));
	gm_free(&m);
}

Test(vmm_guest_mem, read_write_copy_and_fault)
{
	struct guest_mem m;
	char out[8] = { 0 };

	cr_assert_eq(gm_init(&m, 64 * MiB), 0);
	cr_assert_eq(gm_write(&m, 0x1234, "hello", 6), 0);
	cr_assert_eq(gm_read(&m, out, 0x1234, 6), 0);
	cr_assert_str_eq(out, "hello");
	cr_assert_str_eq((char *)gm_ptr(&m, 0x1234, 6), "hello");
	cr_assert_eq(gm_write(&m, 64 * MiB - 3, "hello", 6), -EFAULT);
	cr_assert_eq(gm_read(&m, out, 64 * MiB - 3, 6), -EFAULT);
	cr_assert_eq(gm_read(&m, out, UINT64_MAX - 1, 6), -EFAULT);
	gm_free(&m);
}

Test(vmm_guest_mem, ptr_w_marks_dirty_pages_low)
{
	struct guest_mem m;
	const uint64_t pages = 64 * MiB / GM_PAGE_SIZE, words = pages / 64;

	cr_assert_eq(gm_init(&m, 64 * MiB), 0);
	m.dirty = calloc(words, sizeof(uint64_t));

	/* Plain gm_ptr never dirties. */
	cr_assert_not_null(gm_ptr(&m, 0x5000, 100));
	cr_assert_eq(dirty_count(&m, words), 0);

	/* Two bytes straddling the page 1 / page 2 boundary. */
	cr_assert_not_null(gm_ptr_w(&m, 0x1fff, 2));
	cr_assert(dirty_bit(&m, 1));
	cr_assert(dirty_bit(&m, 2));
	cr_assert_eq(dirty_count(&m, words), 2);

	/* A page-sized write exactly on a page marks one page. */
	cr_assert_not_null(gm_ptr_w(&m, 70 * GM_PAGE_SIZE, GM_PAGE_SIZE));
	cr_assert(dirty_bit(&m, 70));
	cr_assert_not(dirty_bit(&m, 71));
	cr_assert_eq(dirty_count(&m, words), 3);

	/* Empty and failed accesses mark nothing. */
	cr_assert_not_null(gm_ptr_w(&m, 90 * GM_PAGE_SIZE, 0));
	cr_assert_null(gm_ptr_w(&m, 64 * MiB - 1, 2));
	cr_assert_eq(dirty_count(&m, words), 3);

	/* The last page of RAM (bit 63 of the last word). */
	cr_assert_not_null(gm_ptr_w(&m, 64 * MiB - 1, 1));
	cr_assert(dirty_bit(&m, pages - 1));

	/* gm_write goes through the same path. */
	cr_assert_eq(gm_write(&m, 5 * GM_PAGE_SIZE + 7, "x", 1), 0);
	cr_assert(dirty_bit(&m, 5));
	cr_assert_eq(dirty_count(&m, words), 5);
	free(m.dirty);
	m.dirty = NULL;
	gm_free(&m);
}

Test(vmm_guest_mem, ptr_w_dirty_bits_count_ram_pages_without_the_hole)
{
	struct guest_mem m;
	const uint64_t pages = 4 * GiB / GM_PAGE_SIZE, words = pages / 64;
	const uint64_t low_pages = 0xc0000000ULL / GM_PAGE_SIZE;

	cr_assert_eq(gm_init(&m, 4 * GiB), 0);
	m.dirty = calloc(words, sizeof(uint64_t));
	/* Page 3 above 4 GiB is RAM page low_pages + 3 in the bitmap. */
	cr_assert_not_null(gm_ptr_w(&m, GM_4G + 3 * GM_PAGE_SIZE, 1));
	cr_assert(dirty_bit(&m, low_pages + 3));
	cr_assert_eq(dirty_count(&m, words), 1);
	/* The last low page and the last page overall. */
	cr_assert_not_null(gm_ptr_w(&m, 0xc0000000ULL - 1, 1));
	cr_assert(dirty_bit(&m, low_pages - 1));
	cr_assert_not_null(gm_ptr_w(&m, 5 * GiB - 8, 8));
	cr_assert(dirty_bit(&m, pages - 1));
	cr_assert_eq(dirty_count(&m, words), 3);
	free(m.dirty);
	m.dirty = NULL;
	gm_free(&m);
}
