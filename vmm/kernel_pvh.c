/* vmlinux ELF64 parsing: PT_LOAD segments and the Xen PVH entry note. */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/boot_layout.h"
#include "vmm/kernel_image.h"

#define XEN_ELFNOTE_PHYS32_ENTRY 18
#define PVH_MAX_PHDRS 64

/* Walk one PT_NOTE segment for "Xen"/PHYS32_ENTRY; 0 if absent. */
static uint64_t find_pvh_entry(const uint8_t *note, uint64_t size)
{
	uint64_t off = 0;

	while (size - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		uint64_t name_sz, desc_sz;

		memcpy(&nh, note + off, sizeof(nh));
		off += sizeof(nh);
		name_sz = ((uint64_t)nh.n_namesz + 3) & ~3ULL;
		desc_sz = ((uint64_t)nh.n_descsz + 3) & ~3ULL;
		if (name_sz > size - off || desc_sz > size - off - name_sz)
			return 0;
		if (nh.n_namesz == 4 && !memcmp(note + off, "Xen", 4) &&
		    nh.n_type == XEN_ELFNOTE_PHYS32_ENTRY && nh.n_descsz >= 4) {
			uint32_t entry;

			memcpy(&entry, note + off + name_sz, 4);
			return entry;
		}
		off += name_sz + desc_sz;
	}
	return 0;
}

static int check_ehdr(const Elf64_Ehdr *eh, size_t len, char *err, size_t errlen)
{
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64) {
		snprintf(err, errlen, "not an x86_64 little-endian ELF64 kernel");
		return -ENOEXEC;
	}
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 ||
	    eh->e_phnum > PVH_MAX_PHDRS || eh->e_phoff > len ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > len - eh->e_phoff) {
		snprintf(err, errlen, "ELF program headers out of file bounds");
		return -ENOEXEC;
	}
	return 0;
}

static int add_load(const Elf64_Phdr *ph, size_t len, uint64_t ram_end,
		    struct kernel_image *k, char *err, size_t errlen)
{
	if (ph->p_offset > len || ph->p_filesz > len - ph->p_offset ||
	    ph->p_filesz > ph->p_memsz) {
		snprintf(err, errlen, "ELF segment exceeds the file (truncated kernel?)");
		return -ENOEXEC;
	}
	if (ph->p_paddr < HIMEM_START || ph->p_memsz > ram_end ||
	    ph->p_paddr > ram_end - ph->p_memsz) {
		snprintf(err, errlen, "ELF segment at 0x%llx+0x%llx outside guest RAM",
			 (unsigned long long)ph->p_paddr, (unsigned long long)ph->p_memsz);
		return -ENOEXEC;
	}
	if (k->nr_segments == KIMG_MAX_SEGMENTS) {
		snprintf(err, errlen, "too many ELF load segments");
		return -ENOEXEC;
	}
	k->seg[k->nr_segments++] = (struct kimg_segment){
		ph->p_offset, ph->p_filesz, ph->p_paddr, ph->p_memsz };
	return 0;
}

int kimg_parse_pvh(const uint8_t *buf, size_t len, uint64_t ram_end,
		   struct kernel_image *k, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	int ret;

	memset(k, 0, sizeof(*k));
	if (len < sizeof(eh) || memcmp(buf, ELFMAG, SELFMAG)) {
		snprintf(err, errlen, "not an ELF file");
		return -ENOEXEC;
	}
	memcpy(&eh, buf, sizeof(eh));
	ret = check_ehdr(&eh, len, err, errlen);
	if (ret)
		return ret;
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, buf + eh.e_phoff + (uint64_t)i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD) {
			ret = add_load(&ph, len, ram_end, k, err, errlen);
			if (ret)
				return ret;
		} else if (ph.p_type == PT_NOTE && !k->entry) {
			if (ph.p_offset > len || ph.p_filesz > len - ph.p_offset)
				continue;
			k->entry = find_pvh_entry(buf + ph.p_offset, ph.p_filesz);
		}
	}
	if (!k->entry) {
		snprintf(err, errlen, "ELF kernel has no PVH entry note (build with CONFIG_PVH=y)");
		return -ENOEXEC;
	}
	if (!k->nr_segments) {
		snprintf(err, errlen, "ELF kernel has no loadable segment");
		return -ENOEXEC;
	}
	k->kind = KIMG_PVH;
	return 0;
}

int kimg_load(const struct kernel_image *k, const uint8_t *buf, size_t len,
	      struct guest_mem *m)
{
	for (int i = 0; i < k->nr_segments; i++) {
		const struct kimg_segment *s = &k->seg[i];
		uint8_t *dst = gm_ptr_w(m, s->paddr, s->memsz);

		if (!dst || s->file_off > len || s->filesz > len - s->file_off)
			return -EFAULT;
		memcpy(dst, buf + s->file_off, s->filesz);
		memset(dst + s->filesz, 0, s->memsz - s->filesz);
	}
	return 0;
}

static int pread_full(int fd, uint8_t *dst, uint64_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, dst, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		dst += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

int kimg_load_fd(const struct kernel_image *k, int fd, size_t len, struct guest_mem *m)
{
	for (int i = 0; i < k->nr_segments; i++) {
		const struct kimg_segment *s = &k->seg[i];
		uint8_t *dst = gm_ptr_w(m, s->paddr, s->memsz);
		int ret;

		if (!dst || s->file_off > len || s->filesz > len - s->file_off)
			return -EFAULT;
		ret = pread_full(fd, dst, s->filesz, s->file_off);
		if (ret)
			return ret;
		memset(dst + s->filesz, 0, s->memsz - s->filesz);
	}
	return 0;
}

int kimg_parse(const uint8_t *buf, size_t len, uint64_t ram_end,
	       struct kernel_image *k, char *err, size_t errlen)
{
	if (len >= SELFMAG && !memcmp(buf, ELFMAG, SELFMAG))
		return kimg_parse_pvh(buf, len, ram_end, k, err, errlen);
	return kimg_parse_bzimage(buf, len, ram_end, k, err, errlen);
}
