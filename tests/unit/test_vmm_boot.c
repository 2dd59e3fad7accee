/* Boot data: e820 map, command line cap, initrd placement, zero page, PVH start info, MP tables. */
#include <asm/bootparam.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/boot_layout.h"
#include "vmm/boot_setup.h"
#include "vmm/cmdline.h"
#include "vmm/e820.h"
#include "vmm/guest_mem.h"
#include "vmm/kernel_image.h"
#include "vmm/mptable.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

/* ---- e820 ---- */

static void check_e820_shape(const struct guest_mem *m)
{
	struct e820_entry e[E820_MAX];
	int n = e820_build(m, e);
	uint64_t ram = 0, low_ram_end = 0;
	bool high_seen = false;

	cr_assert(n > 0 && n <= E820_MAX);
	for (int i = 0; i < n; i++) {
		cr_assert(e[i].size > 0, "entry %d empty", i);
		cr_assert(e[i].type == E820_RAM || e[i].type == E820_RESERVED);
		cr_assert(e[i].addr + e[i].size > e[i].addr);
		if (i)
			cr_assert(e[i].addr >= e[i - 1].addr + e[i - 1].size,
				  "entry %d overlaps or is out of order", i);
		if (e[i].type != E820_RAM)
			continue;
		ram += e[i].size;
		/* Every RAM byte the map claims is really backed. */
		cr_assert_not_null(gm_ptr(m, e[i].addr, e[i].size), "RAM entry %d not backed", i);
		if (e[i].addr < GM_4G) {
			cr_assert(e[i].addr + e[i].size <= GM_MMIO_HOLE);
			low_ram_end = e[i].addr + e[i].size;
		} else {
			cr_assert_eq(e[i].addr, GM_4G);
			high_seen = true;
		}
	}
	/* Low RAM reaches the end of the low region (the hole, or the RAM size). */
	cr_assert_eq(low_ram_end, gm_low_end(m));
	cr_assert_eq(high_seen, m->nr_regions == 2);
	cr_assert(ram <= m->ram_size);
	/* Nothing but the legacy areas is held back from the guest. */
	cr_assert(ram >= m->ram_size - HIMEM_START);

	/* The MP floating pointer and config table area is reserved, never RAM. */
	bool covered = false;
	for (int i = 0; i < n; i++) {
		uint64_t s = e[i].addr, end = e[i].addr + e[i].size;

		if (e[i].type == E820_RAM)
			cr_assert(end <= BIOS_START || s >= BIOS_START + 0x1000,
				  "RAM entry %d overlaps the MP table", i);
		else if (s <= BIOS_START && end >= BIOS_START + 0x1000)
			covered = true;
	}
	cr_assert(covered, "MP table area not reserved");
	/* The EBDA is not RAM either (Linux looks for the MP table there too). */
	for (int i = 0; i < n; i++)
		if (e[i].type == E820_RAM)
			cr_assert(e[i].addr + e[i].size <= EBDA_START || e[i].addr >= 0xa0000);
}

Test(vmm_boot, e820_small_guest)
{
	struct guest_mem m;

	cr_assert_eq(gm_init(&m, 256 * MiB), 0);
	check_e820_shape(&m);
	gm_free(&m);
}

Test(vmm_boot, e820_4g_guest)
{
	struct guest_mem m;
	struct e820_entry e[E820_MAX];

	cr_assert_eq(gm_init(&m, 4 * GiB), 0);
	check_e820_shape(&m);
	int n = e820_build(&m, e);
	cr_assert_eq(e[n - 1].type, E820_RAM);
	cr_assert_eq(e[n - 1].addr, GM_4G);
	cr_assert_eq(e[n - 1].size, 1 * GiB);
	gm_free(&m);
}

Test(vmm_boot, e820_minimum_guest)
{
	struct guest_mem m;

	cr_assert_eq(gm_init(&m, GM_MIN_SIZE), 0);
	check_e820_shape(&m);
	gm_free(&m);
}

/* ---- command line ---- */

Test(vmm_boot, cmdline_joins_tokens_with_spaces)
{
	struct cmdline c;

	cmdline_init(&c, 2048);
	cmdline_add(&c, "console=%s", "ttyS0");
	cmdline_add(&c, "quiet");
	cmdline_add(&c, "virtio_mmio.device=4K@0x%llx:%u", 0xd0000000ULL, 5u);
	cr_assert_str_eq(c.buf, "console=ttyS0 quiet virtio_mmio.device=4K@0xd0000000:5");
	cr_assert_eq(c.len, strlen(c.buf));
	cr_assert_eq(cmdline_check(&c), 0);
}

Test(vmm_boot, cmdline_exact_fit_and_one_too_long)
{
	struct cmdline c;

	/* cap 16 counts the NUL: 15 characters fit. */
	cmdline_init(&c, 16);
	cmdline_add(&c, "aaaa");
	cmdline_add(&c, "bbbbbbbbbb");	/* "aaaa bbbbbbbbbb" = 15 */
	cr_assert_str_eq(c.buf, "aaaa bbbbbbbbbb");
	cr_assert_eq(c.len, 15);
	cr_assert_eq(cmdline_check(&c), 0);
	cmdline_add(&c, "c");
	cr_assert_str_eq(c.buf, "aaaa bbbbbbbbbb", "a token that does not fit must not be appended");
	cr_assert_eq(cmdline_check(&c), -E2BIG);

	cmdline_init(&c, 16);
	cmdline_add(&c, "%s", "123456789012345");
	cr_assert_eq(cmdline_check(&c), 0);
	cr_assert_eq(c.len, 15);

	cmdline_init(&c, 16);
	cmdline_add(&c, "%s", "1234567890123456");
	cr_assert_eq(cmdline_check(&c), -E2BIG);
	cr_assert_eq(c.len, 0);
	cr_assert_str_eq(c.buf, "");
}

Test(vmm_boot, cmdline_overflow_is_sticky)
{
	struct cmdline c;

	cmdline_init(&c, 8);
	cmdline_add(&c, "toolongtoken");
	cr_assert_eq(cmdline_check(&c), -E2BIG);
	cmdline_add(&c, "ok");
	cr_assert_eq(cmdline_check(&c), -E2BIG, "a later fit must not clear the overflow");
}

Test(vmm_boot, cmdline_cap_clamped_and_huge_token)
{
	struct cmdline c;
	char big[2000];

	cmdline_init(&c, 1 << 20);
	cr_assert_eq(c.cap, sizeof(c.buf));
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	cmdline_add(&c, "%s", big);	/* larger than any single token may be */
	cr_assert_eq(cmdline_check(&c), -E2BIG);
	cr_assert_eq(c.len, 0);
	/* Fill to the clamp: nothing may be written past buf. */
	cmdline_init(&c, 1 << 20);
	for (int i = 0; i < 1000; i++)
		cmdline_add(&c, "%s", "abcdefg");
	cr_assert_eq(cmdline_check(&c), -E2BIG);
	cr_assert(c.len < sizeof(c.buf));
	cr_assert_eq(strlen(c.buf), c.len);
}

/* ---- a synthetic bzImage (Documentation/arch/x86/boot.rst) ---- */

#define BZ_SETUP_SECTS 4
#define BZ_SETUP (((BZ_SETUP_SECTS) + 1) * 512)
#define BZ_PAYLOAD 8192

static uint8_t *make_bzimage(size_t *len, uint32_t init_size, uint32_t initrd_addr_max)
{
	size_t n = BZ_SETUP + BZ_PAYLOAD;
	uint8_t *b = calloc(1, n);
	struct setup_header h = { 0 };

	h.setup_sects = BZ_SETUP_SECTS;
	h.boot_flag = 0xAA55;
	h.header = 0x53726448;
	h.version = 0x020f;
	h.loadflags = LOADED_HIGH;
	h.xloadflags = XLF_KERNEL_64;
	h.syssize = BZ_PAYLOAD / 16;
	h.init_size = init_size;
	h.initrd_addr_max = initrd_addr_max;
	h.cmdline_size = 2047;
	h.kernel_alignment = 0x200000;
	h.pref_address = 0x1000000;
	memcpy(b + 0x1f1, &h, sizeof(h));
	/* The jump at 0x200 says where the header ends. */
	b[0x200] = 0xeb;
	b[0x201] = (uint8_t)(0x1f1 + sizeof(h) - 0x202);
	for (size_t i = BZ_SETUP; i < n; i++)
		b[i] = (uint8_t)(i * 7);
	*len = n;
	return b;
}

/* ---- initrd placement ---- */

static void check_initrd_addr(const struct guest_mem *m, const struct kernel_image *k,
			      uint64_t size, uint64_t top, uint64_t kend)
{
	uint64_t a = boot_initrd_addr(m, k, size);

	cr_assert_neq(a, 0, "size %#llx did not fit", (unsigned long long)size);
	cr_assert_eq(a % GM_PAGE_SIZE, 0);
	cr_assert(a + size <= top, "initrd ends past %#llx", (unsigned long long)top);
	cr_assert(a >= kend, "initrd overlaps the kernel");
	/* Highest such address: one page higher would not fit. */
	cr_assert(a + GM_PAGE_SIZE + size > top);
	cr_assert_not_null(gm_ptr(m, a, size));
}

Test(vmm_boot, initrd_addr_pvh)
{
	struct guest_mem m;
	struct kernel_image k = { .kind = KIMG_PVH, .nr_segments = 2 };

	k.seg[0] = (struct kimg_segment){ 0x1000, 0x100000, 0x1000000, 0x200000 };
	k.seg[1] = (struct kimg_segment){ 0x2000, 0x100000, 0x1200000, 0x1e00000 };	/* ends 48 MiB */
	cr_assert_eq(gm_init(&m, 256 * MiB), 0);
	check_initrd_addr(&m, &k, 1 * MiB, 256 * MiB, 48 * MiB);
	check_initrd_addr(&m, &k, 1 * MiB + 1, 256 * MiB, 48 * MiB);
	check_initrd_addr(&m, &k, 12345, 256 * MiB, 48 * MiB);
	check_initrd_addr(&m, &k, 208 * MiB, 256 * MiB, 48 * MiB);	/* exactly fills */
	cr_assert_eq(boot_initrd_addr(&m, &k, 208 * MiB + 1), 0);
	cr_assert_eq(boot_initrd_addr(&m, &k, 300 * MiB), 0);
	cr_assert_eq(boot_initrd_addr(&m, &k, UINT64_MAX), 0);
	gm_free(&m);
}

Test(vmm_boot, initrd_addr_stays_below_the_hole)
{
	struct guest_mem m;
	struct kernel_image k = { .kind = KIMG_PVH, .nr_segments = 1 };

	k.seg[0] = (struct kimg_segment){ 0, 0x100000, 0x1000000, 0x1000000 };
	cr_assert_eq(gm_init(&m, 4 * GiB), 0);
	check_initrd_addr(&m, &k, 64 * MiB, GM_MMIO_HOLE, 32 * MiB);
	gm_free(&m);
}

Test(vmm_boot, initrd_addr_bzimage_respects_initrd_addr_max)
{
	struct guest_mem m;
	struct kernel_image k;
	uint8_t *img;
	size_t len;
	char err[128];

	img = make_bzimage(&len, 0x800000, 0x7fffffff);
	cr_assert_eq(gm_init(&m, 4 * GiB), 0);
	cr_assert_eq(kimg_parse_bzimage(img, len, gm_low_end(&m), &k, err, sizeof(err)), 0, "%s", err);
	check_initrd_addr(&m, &k, 10 * MiB, 0x80000000ULL, 0x1000000 + 0x800000);
	gm_free(&m);
	free(img);
}

Test(vmm_boot, initrd_addr_bzimage_leaves_init_size_free)
{
	struct guest_mem m;
	struct kernel_image k;
	uint8_t *img;
	size_t len;
	char err[128];
	/* The kernel decompresses into init_size bytes at its load address. */
	const uint64_t init_size = 40 * MiB, kend = 0x1000000 + init_size;

	img = make_bzimage(&len, (uint32_t)init_size, 0x7fffffff);
	cr_assert_eq(gm_init(&m, 64 * MiB), 0);
	cr_assert_eq(kimg_parse_bzimage(img, len, gm_low_end(&m), &k, err, sizeof(err)), 0, "%s", err);
	check_initrd_addr(&m, &k, 64 * MiB - kend, 64 * MiB, kend);
	/* 8 KiB payload would leave room; init_size does not. */
	cr_assert_eq(boot_initrd_addr(&m, &k, 64 * MiB - kend + 1), 0);
	cr_assert_eq(boot_initrd_addr(&m, &k, 20 * MiB), 0);
	gm_free(&m);
	free(img);
}

/* ---- zero page ---- */

Test(vmm_boot, zero_page_fields)
{
	struct guest_mem m;
	struct kernel_image k;
	struct boot_info bi = { .cmdline = "console=ttyS0 panic=-1", .initrd_gpa = 0x7f00000,
				.initrd_size = 0x123456 };
	struct e820_entry e[E820_MAX];
	uint8_t *img;
	size_t len;
	char err[128];

	img = make_bzimage(&len, 0x800000, 0x7fffffff);
	cr_assert_eq(gm_init(&m, 256 * MiB), 0);
	cr_assert_eq(kimg_parse_bzimage(img, len, gm_low_end(&m), &k, err, sizeof(err)), 0, "%s", err);
	/* Garbage left in the zero page must not survive. */
	memset(gm_ptr(&m, BOOT_ZERO_PAGE_ADDR, 4096), 0xcc, 4096);
	cr_assert_eq(boot_write_zero_page(&m, &k, img, len, &bi), 0);

	const struct boot_params *bp = gm_ptr(&m, BOOT_ZERO_PAGE_ADDR, sizeof(*bp));
	const struct setup_header *src = (const struct setup_header *)(img + 0x1f1);

	cr_assert_not_null(bp);
	cr_assert_eq(bp->hdr.boot_flag, 0xAA55);
	cr_assert_eq(bp->hdr.header, 0x53726448);
	cr_assert_eq(bp->hdr.version, src->version);
	cr_assert_eq(bp->hdr.setup_sects, BZ_SETUP_SECTS);
	cr_assert_eq(bp->hdr.init_size, 0x800000);
	cr_assert_eq(bp->hdr.type_of_loader, 0xff, "undefined-loader id");
	cr_assert(bp->hdr.loadflags & LOADED_HIGH);
	cr_assert(bp->hdr.loadflags & CAN_USE_HEAP);
	cr_assert_eq(bp->hdr.cmd_line_ptr, BOOT_CMDLINE_ADDR);
	cr_assert_str_eq((const char *)gm_ptr(&m, bp->hdr.cmd_line_ptr, 1), bi.cmdline);
	cr_assert_eq(bp->hdr.ramdisk_image, 0x7f00000);
	cr_assert_eq(bp->hdr.ramdisk_size, 0x123456);
	cr_assert_eq(bp->hdr.code32_start, 0x1000000);
	cr_assert_eq(bp->ext_cmd_line_ptr, 0);
	cr_assert_eq(bp->ext_ramdisk_image, 0);

	int n = e820_build(&m, e);
	cr_assert_eq(bp->e820_entries, n);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(bp->e820_table[i].addr, e[i].addr);
		cr_assert_eq(bp->e820_table[i].size, e[i].size);
		cr_assert_eq(bp->e820_table[i].type, e[i].type);
	}
	gm_free(&m);
	free(img);
}

Test(vmm_boot, zero_page_without_initrd_and_hostile_header_length)
{
	struct guest_mem m;
	struct kernel_image k;
	struct boot_info bi = { .cmdline = "" };
	uint8_t *img;
	size_t len;
	char err[128];

	img = make_bzimage(&len, 0x800000, 0x7fffffff);
	img[0x201] = 0xff;	/* claims a header longer than struct setup_header */
	cr_assert_eq(gm_init(&m, 256 * MiB), 0);
	cr_assert_eq(kimg_parse_bzimage(img, len, gm_low_end(&m), &k, err, sizeof(err)), 0, "%s", err);
	cr_assert(k.hdr_len <= sizeof(struct setup_header));
	cr_assert_eq(boot_write_zero_page(&m, &k, img, len, &bi), 0);
	const struct boot_params *bp = gm_ptr(&m, BOOT_ZERO_PAGE_ADDR, sizeof(*bp));
	cr_assert_eq(bp->hdr.ramdisk_image, 0);
	cr_assert_eq(bp->hdr.ramdisk_size, 0);
	cr_assert_eq(*(const char *)gm_ptr(&m, BOOT_CMDLINE_ADDR, 1), 0);
	gm_free(&m);
	free(img);
}

Test(vmm_boot, zero_page_rejects_bad_input)
{
	struct guest_mem m;
	struct kernel_image k;
	struct boot_info bi = { .cmdline = "x" };
	uint8_t *img;
	size_t len;
	char err[128], *longcmd;

	img = make_bzimage(&len, 0x800000, 0x7fffffff);
	cr_assert_eq(gm_init(&m, 256 * MiB), 0);
	cr_assert_eq(kimg_parse_bzimage(img, len, gm_low_end(&m), &k, err, sizeof(err)), 0, "%s", err);
	/* A kernel buffer shorter than the header it claims. */
	cr_assert_eq(boot_write_zero_page(&m, &k, img, 0x1f1 + k.hdr_len - 1, &bi), -EINVAL);
	/* Not a bzImage. */
	struct kernel_image pvh = k;
	pvh.kind = KIMG_PVH;
	cr_assert_eq(boot_write_zero_page(&m, &pvh, img, len, &bi), -EINVAL);
	/* A command line longer than the kernel accepts. */
	longcmd = malloc(BOOT_CMDLINE_MAX + 1);
	memset(longcmd, 'a', BOOT_CMDLINE_MAX);
	longcmd[BOOT_CMDLINE_MAX] = 0;
	bi.cmdline = longcmd;
	cr_assert_eq(boot_write_zero_page(&m, &k, img, len, &bi), -E2BIG);
	longcmd[BOOT_CMDLINE_MAX - 1] = 0;	/* 2047 + NUL fits */
	cr_assert_eq(boot_write_zero_page(&m, &k, img, len, &bi), 0);
	free(longcmd);
	gm_free(&m);
	free(img);
}

Test(vmm_boot, cmdline_cap_follows_the_kernel)
{
	struct kernel_image k = { .kind = KIMG_BZIMAGE, .cmdline_size = 255 };

	cr_assert_eq(boot_cmdline_cap(&k), 256);
	k.cmdline_size = 100000;
	cr_assert_eq(boot_cmdline_cap(&k), BOOT_CMDLINE_MAX);
	k.kind = KIMG_PVH;
	k.cmdline_size = 255;
	cr_assert_eq(boot_cmdline_cap(&k), BOOT_CMDLINE_MAX);
}

/* ---- PVH start info (xen/include/public/arch-x86/hvm/start_info.h) ---- */

static uint32_t rd32(const struct guest_mem *m, uint64_t gpa)
{
	uint32_t v;

	cr_assert_eq(gm_read(m, &v, gpa, 4), 0);
	return v;
}

static uint64_t rd64(const struct guest_mem *m, uint64_t gpa)
{
	uint64_t v;

	cr_assert_eq(gm_read(m, &v, gpa, 8), 0);
	return v;
}

static void check_pvh(uint64_t ram, const struct boot_info *bi)
{
	struct guest_mem m;
	struct e820_entry e[E820_MAX];
	const uint64_t si = BOOT_PVH_INFO_ADDR;

	cr_assert_eq(gm_init(&m, ram), 0);
	cr_assert_eq(boot_write_pvh(&m, bi), 0);
	cr_assert_eq(rd32(&m, si + 0), 0x336ec578, "XEN_HVM_START_MAGIC_VALUE");
	cr_assert(rd32(&m, si + 4) >= 1, "version");
	uint64_t cmd = rd64(&m, si + 24);
	cr_assert_str_eq((const char *)gm_ptr(&m, cmd, strlen(bi->cmdline) + 1), bi->cmdline);

	uint32_t nr_mod = rd32(&m, si + 12);
	if (bi->initrd_size) {
		uint64_t mods = rd64(&m, si + 16);

		cr_assert_eq(nr_mod, 1);
		cr_assert_eq(rd64(&m, mods + 0), bi->initrd_gpa);
		cr_assert_eq(rd64(&m, mods + 8), bi->initrd_size);
	} else {
		cr_assert_eq(nr_mod, 0);
	}

	int n = e820_build(&m, e);
	uint64_t mm = rd64(&m, si + 40);
	cr_assert_eq(rd32(&m, si + 48), (uint32_t)n);
	for (int i = 0; i < n; i++) {
		uint64_t ent = mm + 24ULL * i;	/* hvm_memmap_table_entry */

		cr_assert_eq(rd64(&m, ent + 0), e[i].addr);
		cr_assert_eq(rd64(&m, ent + 8), e[i].size);
		cr_assert_eq(rd32(&m, ent + 16), e[i].type);
	}
	/* The start info, module list and memory map must not overlap each other. */
	cr_assert(mm >= si + 56);
	if (bi->initrd_size)
		cr_assert(rd64(&m, si + 16) >= si + 56 && rd64(&m, si + 16) + 32 <= mm);
	/* ... nor the command line or the zero page / page tables. */
	cr_assert(mm + 24ULL * n <= BOOT_ZERO_PAGE_ADDR);
	gm_free(&m);
}

Test(vmm_boot, pvh_start_info_with_initrd)
{
	struct boot_info bi = { .cmdline = "console=hvc0 init=/init", .initrd_gpa = 0xf000000,
				.initrd_size = 0x654321 };

	check_pvh(256 * MiB, &bi);
}

Test(vmm_boot, pvh_start_info_4g_without_initrd)
{
	struct boot_info bi = { .cmdline = "quiet" };

	check_pvh(4 * GiB, &bi);
}

/* ---- MP tables (Intel MP spec 1.4, chapter 4) ---- */

static uint8_t sum8(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return s;
}

static void check_mptable(int ncpus)
{
	struct guest_mem m;
	const uint8_t *f, *t;

	cr_assert_eq(gm_init(&m, 256 * MiB), 0);
	cr_assert_eq(mptable_write(&m, ncpus), 0);

	/* Linux scans 0xf0000-0xfffff on 16-byte boundaries for "_MP_". */
	f = gm_ptr(&m, BIOS_START, 16);
	cr_assert_eq(BIOS_START % 16, 0);
	cr_assert_eq(memcmp(f, "_MP_", 4), 0);
	cr_assert_eq(f[8], 1, "length in 16-byte units");
	cr_assert(f[9] == 1 || f[9] == 4, "spec revision");
	cr_assert_eq(sum8(f, 16), 0, "floating pointer checksum");
	cr_assert_eq(f[11], 0, "feature byte 1 = 0: a config table follows");

	uint32_t phys;
	memcpy(&phys, f + 4, 4);
	cr_assert(phys >= BIOS_START && phys < HIMEM_START);
	uint16_t tlen, count;
	t = gm_ptr(&m, phys, 44);
	cr_assert_eq(memcmp(t, "PCMP", 4), 0);
	memcpy(&tlen, t + 4, 2);
	memcpy(&count, t + 34, 2);
	cr_assert(phys + tlen <= HIMEM_START, "table runs past the reserved BIOS area");
	t = gm_ptr(&m, phys, tlen);
	cr_assert_eq(sum8(t, tlen), 0, "config table checksum");
	uint32_t lapic;
	memcpy(&lapic, t + 36, 4);
	cr_assert_eq(lapic, LAPIC_ADDR);

	/* Walk the entries: sizes by type, count and length must agree. */
	size_t off = 44;
	int cpus = 0, bsps = 0, entries = 0, ioapics = 0;
	bool apic_seen[256] = { false };
	uint8_t ioapic_id = 0;
	while (off < tlen) {
		uint8_t type = t[off];

		entries++;
		if (type == 0) {
			uint8_t id = t[off + 1], flags = t[off + 3];

			cr_assert(flags & 1, "CPU %d disabled", cpus);
			cr_assert_not(apic_seen[id], "duplicate APIC id %u", id);
			apic_seen[id] = true;
			cr_assert_eq(id, cpus, "vCPU index and APIC id differ");
			if (flags & 2) {
				bsps++;
				cr_assert_eq(cpus, 0, "BSP flag on CPU %d", cpus);
			}
			cpus++;
			off += 20;
		} else if (type == 2) {
			ioapics++;
			ioapic_id = t[off + 1];
			uint32_t addr;
			memcpy(&addr, t + off + 4, 4);
			cr_assert_eq(addr, IOAPIC_ADDR);
			cr_assert(t[off + 3] & 1, "IOAPIC disabled");
			off += 8;
		} else {
			cr_assert(type <= 4, "bad entry type %u", type);
			off += 8;
		}
	}
	cr_assert_eq(off, tlen);
	cr_assert_eq(entries, count);
	cr_assert_eq(cpus, ncpus);
	cr_assert_eq(bsps, 1);
	cr_assert_eq(ioapics, 1);
	cr_assert_not(apic_seen[ioapic_id], "IOAPIC id collides with a CPU");
	gm_free(&m);
}

Test(vmm_boot, mptable_one_cpu) { check_mptable(1); }
Test(vmm_boot, mptable_two_cpus) { check_mptable(2); }
Test(vmm_boot, mptable_max_cpus) { check_mptable(MPTABLE_MAX_CPUS); }

Test(vmm_boot, mptable_rejects_bad_cpu_counts)
{
	struct guest_mem m;

	cr_assert_eq(gm_init(&m, 256 * MiB), 0);
	cr_assert_eq(mptable_write(&m, 0), -EINVAL);
	cr_assert_eq(mptable_write(&m, -1), -EINVAL);
	cr_assert_eq(mptable_write(&m, MPTABLE_MAX_CPUS + 1), -EINVAL);
	cr_assert_eq(mptable_write(&m, 1000), -EINVAL);
	/* Nothing was written on failure. */
	cr_assert_neq(memcmp(gm_ptr(&m, BIOS_START, 4), "_MP_", 4), 0);
	gm_free(&m);
}

/* ---- page tables and GDT ---- */

Test(vmm_boot, identity_page_tables_cover_4g)
{
	struct guest_mem m;

	cr_assert_eq(gm_init(&m, 64 * MiB), 0);
	cr_assert_eq(boot_write_page_tables(&m), 0);
	/* Translate a few addresses by walking the tables like the MMU would. */
	static const uint64_t va[] = { 0, 0x1000000, 0x3fffffff, 0x40000000, 0xfee00000, 0xffffffff };
	for (size_t i = 0; i < sizeof(va) / sizeof(va[0]); i++) {
		uint64_t pml4e = rd64(&m, BOOT_PML4_ADDR + 8 * ((va[i] >> 39) & 511));
		cr_assert(pml4e & 1);
		uint64_t pdpte = rd64(&m, (pml4e & ~0xfffULL) + 8 * ((va[i] >> 30) & 511));
		cr_assert(pdpte & 1);
		uint64_t pde = rd64(&m, (pdpte & ~0xfffULL) + 8 * ((va[i] >> 21) & 511));
		cr_assert(pde & 1);
		cr_assert(pde & 0x80, "2 MiB page");
		uint64_t pa = (pde & ~0x1fffffULL) | (va[i] & 0x1fffff);
		cr_assert_eq(pa, va[i], "va %#llx maps to %#llx", (unsigned long long)va[i],
			     (unsigned long long)pa);
	}
	gm_free(&m);
}
