/* The arm64 guest's kernel, initrd and device tree written into its RAM. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/arch/arm64/boot.h"
#include "vmm/arch/arm64/fdt.h"

int arm64_boot_load(struct arm64_machine *m, uint8_t *ram, const uint8_t *kernel,
		    size_t kernel_len, const uint8_t *initrd, size_t initrd_len,
		    struct arm64_boot_place *out, char *err, size_t errlen)
{
	struct arm64_image img;
	uint64_t base = m->ram.base, cap;
	int ret;

	if (initrd_len && !initrd) {
		snprintf(err, errlen, "arm64: an initrd of %zu bytes without its bytes", initrd_len);
		return -EINVAL;
	}
	ret = arm64_image_parse(kernel, kernel_len, &img, err, errlen);
	if (!ret)
		ret = arm64_boot_place(&m->ram, &img, initrd_len, out, err, errlen);
	if (ret)
		return ret;
	/* arm64_boot_place() keeps all three inside RAM: the offsets below
	 * stay within @ram's m->ram.size bytes. */
	memcpy(ram + (out->kernel - base), kernel, img.copy_size);
	memset(ram + (out->kernel - base) + img.copy_size, 0, img.image_size - img.copy_size);
	if (initrd_len)
		memcpy(ram + (out->initrd - base), initrd, initrd_len);
	m->initrd_start = initrd_len ? out->initrd : 0;
	m->initrd_size = initrd_len;
	cap = base + m->ram.size - out->fdt;
	ret = arm64_fdt_build(m, ram + (out->fdt - base), cap, err, errlen);
	return ret < 0 ? ret : 0;
}
