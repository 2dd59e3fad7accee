/* Kernel image parsing: synthetic bzImages and PVH vmlinux ELFs, valid and hostile. */
#include <asm/bootparam.h>
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/guest_mem.h"
#include "vmm/kernel_image.h"

#define MiB (1ULL << 20)
#define RAM (256 * MiB)

/* ---- bzImage ---- */

#define BZ_SECTS 4
#define BZ_SETUP ((BZ_SECTS + 1) * 512)
#define BZ_PAYLOAD 4096

struct bz {
	uint8_t *buf;
	size_t len;
	struct setup_header h;
};

static void bz_init(struct bz *b)
{
	memset(&b->h, 0, sizeof(b->h));
	b->h.setup_sects = BZ_SECTS;
	b->h.boot_flag = 0xAA55;
	b->h.header = 0x53726448;	/* "HdrS" */
	b->h.version = 0x020c;
	b->h.loadflags = LOADED_HIGH;
	b->h.xloadflags = XLF_KERNEL_64;
	b->h.syssize = BZ_PAYLOAD / 16;
	b->h.init_size = 0x400000;
	b->h.cmdline_size = 2047;
	b->h.initrd_addr_max = 0x7fffffff;
	b->len = BZ_SETUP + BZ_PAYLOAD;
}

/* Serialise b->h into a fresh b->buf of b->len bytes. */
static void bz_build(struct bz *b)
{
	size_t full = BZ_SETUP + BZ_PAYLOAD;

	b->buf = calloc(1, full > b->len ? full : b->len);
	memcpy(b->buf + 0x1f1, &b->h, sizeof(b->h));
	b->buf[0x200] = 0xeb;
	b->buf[0x201] = (uint8_t)(0x1f1 + sizeof(b->h) - 0x202);
	for (size_t i = BZ_SETUP; i < full; i++)
		b->buf[i] = (uint8_t)(i ^ 0x5a);
}

static int bz_parse(struct bz *b, uint64_t ram_end, struct kernel_image *k, char *err)
{
	int ret;

	bz_build(b);
	ret = kimg_parse(b->buf, b->len, ram_end, k, err, 256);
	return ret;
}

Test(vmm_kernel_image, bzimage_valid)
{
	struct bz b;
	struct kernel_image k;
	char err[256] = "";

	bz_init(&b);
	cr_assert_eq(bz_parse(&b, RAM, &k, err), 0, "%s", err);
	cr_assert_eq(k.kind, KIMG_BZIMAGE);
	/* 64-bit entry: startup_64 is 0x200 past the protected-mode load address. */
	cr_assert_eq(k.entry, 0x1000000 + 0x200);
	cr_assert_eq(k.nr_segments, 1);
	cr_assert_eq(k.seg[0].file_off, BZ_SETUP);
	cr_assert_eq(k.seg[0].filesz, BZ_PAYLOAD);
	cr_assert_eq(k.seg[0].paddr, 0x1000000);
	cr_assert(k.seg[0].memsz >= k.seg[0].filesz);
	cr_assert_eq(k.setup_size, BZ_SETUP);
	cr_assert_eq(k.init_size, 0x400000);
	cr_assert_eq(k.initrd_addr_max, 0x7fffffff);
	cr_assert_eq(k.cmdline_size, 2047);
	cr_assert_eq(0x1f1 + k.hdr_len, 0x1f1 + sizeof(struct setup_header));

	/* kimg_load puts the protected-mode payload at 16 MiB. */
	struct guest_mem m;
	cr_assert_eq(gm_init(&m, 64 * MiB), 0);
	cr_assert_eq(kimg_load(&k, b.buf, b.len, &m), 0);
	cr_assert_eq(memcmp(gm_ptr(&m, 0x1000000, BZ_PAYLOAD), b.buf + BZ_SETUP, BZ_PAYLOAD), 0);
	gm_free(&m);
	free(b.buf);
}

Test(vmm_kernel_image, bzimage_setup_sects_zero_means_four)
{
	struct bz b;
	struct kernel_image k;
	char err[256] = "";

	bz_init(&b);
	b.h.setup_sects = 0;
	cr_assert_eq(bz_parse(&b, RAM, &k, err), 0, "%s", err);
	cr_assert_eq(k.setup_size, 5 * 512);
	free(b.buf);
}

Test(vmm_kernel_image, bzimage_default_cmdline_size)
{
	struct bz b;
	struct kernel_image k;
	char err[256] = "";

	bz_init(&b);
	b.h.cmdline_size = 0;	/* protocol < 2.06 meaning: 255 */
	cr_assert_eq(bz_parse(&b, RAM, &k, err), 0, "%s", err);
	cr_assert_eq(k.cmdline_size, 255);
	free(b.buf);
}

typedef void (*bz_mutator)(struct bz *b);

static void bz_truncated(struct bz *b) { b->len = 0x1f1 + 20; }
static void bz_tiny(struct bz *b) { b->len = 1; }
static void bz_bad_flag(struct bz *b) { b->h.boot_flag = 0x55AA; }
static void bz_bad_magic(struct bz *b) { b->h.header = 0x53726449; }
static void bz_old_protocol(struct bz *b) { b->h.version = 0x020b; }
static void bz_no_64bit(struct bz *b) { b->h.xloadflags = XLF_CAN_BE_LOADED_ABOVE_4G; }
static void bz_not_high(struct bz *b) { b->h.loadflags = 0; }
static void bz_setup_beyond(struct bz *b) { b->h.setup_sects = 100; }
static void bz_setup_exactly_file(struct bz *b) { b->len = BZ_SETUP; b->h.syssize = 0; }
static void bz_syssize_beyond(struct bz *b) { b->h.syssize = BZ_PAYLOAD / 16 + 1; }
static void bz_syssize_huge(struct bz *b) { b->h.syssize = 0xffffffff; }
static void bz_cut_payload(struct bz *b) { b->len = BZ_SETUP + BZ_PAYLOAD - 16; }
static void bz_init_size_beyond(struct bz *b) { b->h.init_size = (uint32_t)(RAM - 0x1000000 + 1); }
static void bz_init_size_huge(struct bz *b) { b->h.init_size = 0xffffffff; }

Test(vmm_kernel_image, bzimage_hostile_variants)
{
	static const struct {
		const char *name;
		bz_mutator f;
	} cases[] = {
		{ "truncated header", bz_truncated },
		{ "one byte", bz_tiny },
		{ "bad boot flag", bz_bad_flag },
		{ "bad HdrS", bz_bad_magic },
		{ "protocol 2.11", bz_old_protocol },
		{ "no 64-bit entry", bz_no_64bit },
		{ "not loaded high", bz_not_high },
		{ "setup_sects beyond file", bz_setup_beyond },
		{ "no payload", bz_setup_exactly_file },
		{ "syssize beyond file", bz_syssize_beyond },
		{ "syssize huge", bz_syssize_huge },
		{ "payload cut short", bz_cut_payload },
		{ "init_size beyond RAM", bz_init_size_beyond },
		{ "init_size huge", bz_init_size_huge },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bz b;
		struct kernel_image k;
		char err[256] = "";

		bz_init(&b);
		cases[i].f(&b);
		cr_assert_eq(bz_parse(&b, RAM, &k, err), -ENOEXEC, "%s: accepted", cases[i].name);
		cr_assert_neq(err[0], 0, "%s: no error text", cases[i].name);
		free(b.buf);
	}
}

Test(vmm_kernel_image, bzimage_init_size_exactly_fits)
{
	struct bz b;
	struct kernel_image k;
	char err[256] = "";

	bz_init(&b);
	b.h.init_size = (uint32_t)(RAM - 0x1000000);
	cr_assert_eq(bz_parse(&b, RAM, &k, err), 0, "%s", err);
	free(b.buf);
	/* The same kernel does not fit a guest whose RAM ends below 16 MiB + init_size. */
	bz_init(&b);
	b.h.init_size = (uint32_t)(RAM - 0x1000000);
	cr_assert_eq(bz_parse(&b, RAM - 4096, &k, err), -ENOEXEC);
	free(b.buf);
}

/* ---- PVH vmlinux ---- */

#define EL_LOAD_OFF 0x200
#define EL_FILESZ 0x100
#define EL_MEMSZ 0x300
#define EL_PADDR 0x1000000ULL
#define EL_ENTRY 0x1000123U
#define EL_SIZE (EL_LOAD_OFF + EL_FILESZ)

struct el {
	uint8_t buf[EL_SIZE];
	size_t len;
	Elf64_Ehdr *eh;
	Elf64_Phdr *load, *note;
	Elf64_Nhdr *xen;	/* the PHYS32_ENTRY note */
};

/* ELF header, PT_LOAD + PT_NOTE, a GNU note followed by the Xen entry note. */
static void el_init(struct el *e)
{
	size_t off = sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr), note_start;
	Elf64_Nhdr nh;

	memset(e, 0, sizeof(*e));
	e->len = EL_SIZE;
	e->eh = (Elf64_Ehdr *)e->buf;
	memcpy(e->eh->e_ident, ELFMAG, SELFMAG);
	e->eh->e_ident[EI_CLASS] = ELFCLASS64;
	e->eh->e_ident[EI_DATA] = ELFDATA2LSB;
	e->eh->e_ident[EI_VERSION] = EV_CURRENT;
	e->eh->e_type = ET_EXEC;
	e->eh->e_machine = EM_X86_64;
	e->eh->e_version = EV_CURRENT;
	e->eh->e_entry = 0xffffffff81000000ULL;	/* the 64-bit virtual entry: not PVH's */
	e->eh->e_phoff = sizeof(Elf64_Ehdr);
	e->eh->e_ehsize = sizeof(Elf64_Ehdr);
	e->eh->e_phentsize = sizeof(Elf64_Phdr);
	e->eh->e_phnum = 2;
	e->load = (Elf64_Phdr *)(e->buf + sizeof(Elf64_Ehdr));
	e->note = e->load + 1;

	note_start = off;
	/* An unrelated note first: the parser must walk past it. */
	nh = (Elf64_Nhdr){ .n_namesz = 4, .n_descsz = 20, .n_type = NT_GNU_BUILD_ID };
	memcpy(e->buf + off, &nh, sizeof(nh));
	memcpy(e->buf + off + sizeof(nh), "GNU", 4);
	off += sizeof(nh) + 4 + 20;
	/* Xen's note: a pointer-sized (8 byte) descriptor; the entry is 32-bit. */
	e->xen = (Elf64_Nhdr *)(e->buf + off);
	nh = (Elf64_Nhdr){ .n_namesz = 4, .n_descsz = 8, .n_type = 18 };
	memcpy(e->buf + off, &nh, sizeof(nh));
	memcpy(e->buf + off + sizeof(nh), "Xen", 4);
	uint64_t entry = EL_ENTRY;
	memcpy(e->buf + off + sizeof(nh) + 4, &entry, 8);
	off += sizeof(nh) + 4 + 8;
	cr_assert(off <= EL_LOAD_OFF);

	*e->note = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = note_start,
				 .p_filesz = off - note_start, .p_memsz = off - note_start,
				 .p_align = 4 };
	*e->load = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
				 .p_offset = EL_LOAD_OFF, .p_vaddr = 0xffffffff81000000ULL,
				 .p_paddr = EL_PADDR, .p_filesz = EL_FILESZ, .p_memsz = EL_MEMSZ,
				 .p_align = 0x200000 };
	for (size_t i = 0; i < EL_FILESZ; i++)
		e->buf[EL_LOAD_OFF + i] = (uint8_t)(0x80 + i);
}

static int el_parse(struct el *e, struct kernel_image *k, char *err)
{
	return kimg_parse(e->buf, e->len, RAM, k, err, 256);
}

Test(vmm_kernel_image, pvh_valid)
{
	struct el e;
	struct kernel_image k;
	char err[256] = "";

	el_init(&e);
	cr_assert_eq(el_parse(&e, &k, err), 0, "%s", err);
	cr_assert_eq(k.kind, KIMG_PVH);
	cr_assert_eq(k.entry, EL_ENTRY, "must use the PVH note, not e_entry");
	cr_assert_eq(k.nr_segments, 1);
	cr_assert_eq(k.seg[0].file_off, EL_LOAD_OFF);
	cr_assert_eq(k.seg[0].filesz, EL_FILESZ);
	cr_assert_eq(k.seg[0].paddr, EL_PADDR, "load by physical, not virtual, address");
	cr_assert_eq(k.seg[0].memsz, EL_MEMSZ);
}

Test(vmm_kernel_image, pvh_note_before_load)
{
	struct el e;
	struct kernel_image k;
	char err[256] = "";
	Elf64_Phdr tmp;

	el_init(&e);
	tmp = *e.load;
	*e.load = *e.note;
	*e.note = tmp;
	cr_assert_eq(el_parse(&e, &k, err), 0, "%s", err);
	cr_assert_eq(k.entry, EL_ENTRY);
}

typedef void (*el_mutator)(struct el *e);

static void el_truncated(struct el *e) { e->len = 40; }
static void el_cut_phdrs(struct el *e) { e->len = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) + 10; }
static void el_phoff_beyond(struct el *e) { e->eh->e_phoff = EL_SIZE + 8; }
static void el_phoff_huge(struct el *e) { e->eh->e_phoff = UINT64_MAX - 8; }
static void el_phnum_huge(struct el *e) { e->eh->e_phnum = 0xffff; }
static void el_phnum_zero(struct el *e) { e->eh->e_phnum = 0; }
static void el_phentsize(struct el *e) { e->eh->e_phentsize = 32; }
static void el_phentsize_big(struct el *e) { e->eh->e_phentsize = 64; }
static void el_seg_beyond(struct el *e) { e->load->p_filesz = EL_FILESZ + 1; e->load->p_memsz = 0x1000; }
static void el_seg_off_beyond(struct el *e) { e->load->p_offset = EL_SIZE + 1; }
static void el_seg_off_wrap(struct el *e) { e->load->p_offset = UINT64_MAX - 0x10; }
static void el_filesz_gt_memsz(struct el *e) { e->load->p_memsz = EL_FILESZ - 1; }
static void el_paddr_wrap(struct el *e) { e->load->p_paddr = UINT64_MAX - 0x100; }
static void el_memsz_huge(struct el *e) { e->load->p_memsz = UINT64_MAX; }
static void el_beyond_ram(struct el *e) { e->load->p_paddr = RAM - 0x200; }
static void el_at_zero(struct el *e) { e->load->p_paddr = 0x7000; /* over the zero page */ }
static void el_namesz_huge(struct el *e) { e->xen->n_namesz = 0xffffffff; }
static void el_descsz_huge(struct el *e) { e->xen->n_descsz = 0xfffffffd; }
static void el_wrong_type(struct el *e) { e->xen->n_type = 17; }
static void el_wrong_name(struct el *e) { memcpy((uint8_t *)(e->xen + 1), "Xem", 4); }
static void el_no_note(struct el *e) { e->note->p_type = PT_NULL; }
static void el_note_beyond(struct el *e) { e->note->p_offset = EL_SIZE - 4; }
static void el_no_load(struct el *e) { e->load->p_type = PT_NULL; }
static void el_32bit(struct el *e) { e->eh->e_ident[EI_CLASS] = ELFCLASS32; }
static void el_big_endian(struct el *e) { e->eh->e_ident[EI_DATA] = ELFDATA2MSB; }
static void el_arm64(struct el *e) { e->eh->e_machine = EM_AARCH64; }

Test(vmm_kernel_image, pvh_hostile_variants)
{
	static const struct {
		const char *name;
		el_mutator f;
	} cases[] = {
		{ "truncated", el_truncated },
		{ "phdrs cut", el_cut_phdrs },
		{ "phoff beyond file", el_phoff_beyond },
		{ "phoff near 2^64", el_phoff_huge },
		{ "phnum huge", el_phnum_huge },
		{ "phnum 0", el_phnum_zero },
		{ "phentsize 32", el_phentsize },
		{ "phentsize 64", el_phentsize_big },
		{ "segment beyond file", el_seg_beyond },
		{ "segment offset beyond file", el_seg_off_beyond },
		{ "segment offset wraps", el_seg_off_wrap },
		{ "filesz > memsz", el_filesz_gt_memsz },
		{ "paddr + memsz wraps", el_paddr_wrap },
		{ "memsz huge", el_memsz_huge },
		{ "segment past RAM", el_beyond_ram },
		{ "segment over boot data", el_at_zero },
		{ "note namesz huge", el_namesz_huge },
		{ "note descsz huge", el_descsz_huge },
		{ "note wrong type", el_wrong_type },
		{ "note wrong name", el_wrong_name },
		{ "no PT_NOTE", el_no_note },
		{ "note beyond file", el_note_beyond },
		{ "no PT_LOAD", el_no_load },
		{ "ELF32", el_32bit },
		{ "big endian", el_big_endian },
		{ "aarch64", el_arm64 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct el e;
		struct kernel_image k;
		char err[256] = "";

		el_init(&e);
		cases[i].f(&e);
		cr_assert_eq(el_parse(&e, &k, err), -ENOEXEC, "%s: accepted", cases[i].name);
		cr_assert_neq(err[0], 0, "%s: no error text", cases[i].name);
	}
}

Test(vmm_kernel_image, pvh_segment_ending_exactly_at_ram_end)
{
	struct el e;
	struct kernel_image k;
	char err[256] = "";

	el_init(&e);
	e.load->p_paddr = RAM - EL_MEMSZ;
	cr_assert_eq(el_parse(&e, &k, err), 0, "%s", err);
	e.load->p_paddr++;
	cr_assert_eq(el_parse(&e, &k, err), -ENOEXEC);
}

Test(vmm_kernel_image, neither_format)
{
	uint8_t junk[8192];
	struct kernel_image k;
	char err[256] = "";

	memset(junk, 0x90, sizeof(junk));
	cr_assert_eq(kimg_parse(junk, sizeof(junk), RAM, &k, err, sizeof(err)), -ENOEXEC);
	cr_assert_neq(err[0], 0);
	cr_assert_eq(kimg_parse(junk, 0, RAM, &k, err, sizeof(err)), -ENOEXEC);
	/* "\177ELF" and nothing else. */
	memcpy(junk, ELFMAG, SELFMAG);
	cr_assert_eq(kimg_parse(junk, SELFMAG, RAM, &k, err, sizeof(err)), -ENOEXEC);
}

Test(vmm_kernel_image, load_copies_and_zero_fills_bss)
{
	struct el e;
	struct kernel_image k;
	struct guest_mem m;
	char err[256] = "";
	const uint8_t *g;

	el_init(&e);
	cr_assert_eq(el_parse(&e, &k, err), 0, "%s", err);
	cr_assert_eq(gm_init(&m, 64 * MiB), 0);
	/* Stale bytes where the segment and its bss go, and just past them. */
	memset(gm_ptr(&m, EL_PADDR - 16, EL_MEMSZ + 32), 0xee, EL_MEMSZ + 32);
	cr_assert_eq(kimg_load(&k, e.buf, e.len, &m), 0);
	g = gm_ptr(&m, EL_PADDR - 16, EL_MEMSZ + 32);
	for (int i = 0; i < 16; i++)
		cr_assert_eq(g[i], 0xee, "byte before the segment touched");
	cr_assert_eq(memcmp(g + 16, e.buf + EL_LOAD_OFF, EL_FILESZ), 0);
	for (int i = EL_FILESZ; i < EL_MEMSZ; i++)
		cr_assert_eq(g[16 + i], 0, "bss byte %#x not zeroed", i);
	for (int i = 0; i < 16; i++)
		cr_assert_eq(g[16 + EL_MEMSZ + i], 0xee, "byte after the segment touched");
	gm_free(&m);
}

Test(vmm_kernel_image, load_rejects_segments_outside_memory_or_file)
{
	struct el e;
	struct kernel_image k;
	struct guest_mem m;
	char err[256] = "";

	el_init(&e);
	cr_assert_eq(el_parse(&e, &k, err), 0, "%s", err);
	cr_assert_eq(gm_init(&m, 64 * MiB), 0);
	/* Parsed for a bigger guest than the one it is loaded into. */
	struct kernel_image k2 = k;
	k2.seg[0].paddr = 64 * MiB - 0x100;
	cr_assert_eq(kimg_load(&k2, e.buf, e.len, &m), -EFAULT);
	/* A buffer shorter than the one that was parsed. */
	cr_assert_eq(kimg_load(&k, e.buf, EL_SIZE - 1, &m), -EFAULT);
	gm_free(&m);
}
