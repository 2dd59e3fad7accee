/* Unmapping start-up code pages once a VMM is set up (text_trim.h). */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/text_trim.h"

/* DT_TEXTREL or DF_TEXTREL: the loader wrote into this object's text. */
static int has_textrel(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const ElfW(Dyn) *d;

		if (ph->p_type != PT_DYNAMIC)
			continue;
		for (d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr); d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL)))
				return 1;
	}
	return 0;
}

static int trim_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a, b;

	/* The vDSO is the kernel's, not a file's. */
	if (has_textrel(info) || strstr(info->dlpi_name, "vdso"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || (ph->p_flags & PF_W))
			continue;
		/* Whole pages inside the segment only: a page shared with data stays. */
		a = (info->dlpi_addr + ph->p_vaddr + pg - 1) & ~(pg - 1);
		b = (info->dlpi_addr + ph->p_vaddr + ph->p_filesz) & ~(pg - 1);
		if (b > a)
			madvise((void *)a, b - a, MADV_DONTNEED);
	}
	return 0;
}

void text_trim(void)
{
	dl_iterate_phdr(trim_object, NULL);
}
