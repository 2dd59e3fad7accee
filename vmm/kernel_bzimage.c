/* bzImage parsing per Documentation/x86/boot.rst (64-bit boot protocol). */
#include <asm/bootparam.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "vmm/boot_layout.h"
#include "vmm/kernel_image.h"

#define HDR_OFF        0x1f1
#define MIN_PROTOCOL   0x020c	/* 2.12: xloadflags, 64-bit entry */
#define KERNEL_LOAD    0x1000000ULL	/* LOAD_PHYSICAL_ADDR of x86_64 */

static int fail(char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "bzImage: %s", msg);
	return -ENOEXEC;
}

int kimg_parse_bzimage(const uint8_t *buf, size_t len, uint64_t ram_end,
		       struct kernel_image *k, char *err, size_t errlen)
{
	struct setup_header h;
	uint64_t setup, payload, load, need;

	memset(k, 0, sizeof(*k));
	if (len < HDR_OFF + sizeof(h))
		return fail(err, errlen, "file too short for a setup header (truncated?)");
	memcpy(&h, buf + HDR_OFF, sizeof(h));
	if (h.boot_flag != 0xAA55 || h.header != 0x53726448 /* "HdrS" */)
		return fail(err, errlen, "no Linux boot signature (not a kernel image?)");
	if (h.version < MIN_PROTOCOL)
		return fail(err, errlen, "boot protocol older than 2.12");
	if (!(h.xloadflags & XLF_KERNEL_64))
		return fail(err, errlen, "kernel has no 64-bit entry point");
	setup = ((uint64_t)(h.setup_sects ? h.setup_sects : 4) + 1) * 512;
	if (setup >= len)
		return fail(err, errlen, "setup sectors exceed the file (truncated?)");
	payload = len - setup;
	/* syssize counts 16-byte paragraphs of the protected-mode payload. */
	if ((uint64_t)h.syssize * 16 > payload)
		return fail(err, errlen, "payload shorter than syssize (truncated?)");
	load = (h.loadflags & 0x01 /* LOADED_HIGH */) ? KERNEL_LOAD : 0;
	if (!load)
		return fail(err, errlen, "zImage (not loaded high) is not supported");
	need = h.init_size > payload ? h.init_size : payload;
	if (need > ram_end || load > ram_end - need)
		return fail(err, errlen, "kernel does not fit in guest RAM");
	k->kind = KIMG_BZIMAGE;
	k->entry = load + 0x200;	/* startup_64 */
	k->setup_size = (uint32_t)setup;
	k->hdr_len = 0x202 + buf[0x201] - HDR_OFF;
	if (k->hdr_len > sizeof(h))
		k->hdr_len = sizeof(h);
	k->cmdline_size = h.cmdline_size ? h.cmdline_size : 255;
	k->initrd_addr_max = h.initrd_addr_max;
	k->init_size = h.init_size;
	k->nr_segments = 1;
	k->seg[0] = (struct kimg_segment){ setup, payload, load, payload };
	return 0;
}
