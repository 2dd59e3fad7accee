/* Put the kernel, the initrd and the boot data into guest memory. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/small_thread.h"
#include "vmm/boot_setup.h"
#include "vmm/initrd.h"
#include "common/log.h"
#include "vmm/mptable.h"
#include "vmm/vm_internal.h"

int vm_parse_kernel(struct vm *vm, const char *path, char *err, size_t errlen)
{
	char why[200];
	int ret = vm_map_file(path, &vm->kernel_data, &vm->kernel_len, &vm->kernel_fd,
			      err, errlen);

	if (ret)
		return ret;
	ret = kimg_parse(vm->kernel_data, vm->kernel_len, gm_low_end(&vm->mem), &vm->kimg,
			 why, sizeof(why));
	if (ret)
		snprintf(err, errlen, "kernel %s: %s", path, why);
	/* Parsing touched only headers; the segments are pread into RAM later. */
	if (vm->kimg.kind == KIMG_PVH) {
		munmap((void *)vm->kernel_data, vm->kernel_len);
		vm->kernel_data = NULL;
	}
	return ret;
}

/*
 * The base initramfs is read straight into guest RAM and the small run-spec
 * archive copied after it: no second copy of the image on the VMM's heap.
 * The read runs on its own short-lived thread while the kernel loads: both
 * are mostly page faults and copies into fresh RAM, and the two ranges never
 * overlap (boot_initrd_addr puts the initrd above the kernel's end).
 */
struct initrd_load {
	const char *path;
	uint8_t *dst;
	uint64_t base;
	struct small_thread thread;
	bool threaded;
	int ret;
};

static void *initrd_reader(void *arg)
{
	struct initrd_load *l = arg;

	l->ret = initrd_read_base(l->path, l->dst, l->base);
	return NULL;
}

/* Place the initrd, copy the run spec behind where the base will go, and
 * start reading the base. */
static int initrd_start(struct vm *vm, const struct vm_config *cfg, struct boot_info *bi,
			struct initrd_load *l, char *err, size_t errlen)
{
	struct run_spec rs = {
		.argv = cfg->argv, .env = cfg->env, .workdir = cfg->workdir,
		.root_on_disk = cfg->root_on_disk,
	};
	struct buf spec = { 0 };
	int ret = initrd_base_size(cfg->initrd_path, &l->base);

	l->path = cfg->initrd_path;
	if (!ret)
		ret = initrd_run_spec(&spec, &rs);
	if (ret) {
		snprintf(err, errlen, "initrd %s: %s", cfg->initrd_path ? cfg->initrd_path : "",
			 ret == -E2BIG ? "command and environment too large" : strerror(-ret));
		goto out;
	}
	bi->initrd_size = l->base + spec.len;
	bi->initrd_gpa = boot_initrd_addr(&vm->mem, &vm->kimg, bi->initrd_size);
	l->dst = bi->initrd_gpa ? gm_ptr_w(&vm->mem, bi->initrd_gpa, bi->initrd_size) : NULL;
	if (!l->dst) {
		snprintf(err, errlen, "initrd (%llu bytes) does not fit in guest memory",
			 (unsigned long long)bi->initrd_size);
		ret = -ENOMEM;
		goto out;
	}
	memcpy(l->dst + l->base, spec.data, spec.len);
	/* No thread (a tight RLIMIT_NPROC, say): read it here, just slower. */
	l->threaded = l->base && !small_thread_start(&l->thread, 0, initrd_reader, l);
	if (!l->threaded)
		initrd_reader(l);
out:
	buf_free(&spec);
	return ret;
}

static int initrd_finish(struct initrd_load *l, char *err, size_t errlen)
{
	if (l->threaded)
		small_thread_join(&l->thread);
	if (l->ret)
		snprintf(err, errlen, "initrd %s: %s", l->path, strerror(-l->ret));
	return l->ret;
}

int vm_load_boot(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen)
{
	struct boot_info bi = { .cmdline = vm->cmdline.buf };
	struct initrd_load initrd = { 0 };
	bool pvh = vm->kimg.kind == KIMG_PVH;
	int ret, kret;

	if (cmdline_check(&vm->cmdline)) {
		snprintf(err, errlen, "kernel command line longer than %zu bytes", vm->cmdline.cap);
		return -E2BIG;
	}
	ret = initrd_start(vm, cfg, &bi, &initrd, err, errlen);
	if (ret)
		return ret;
	kret = kimg_load_fd(&vm->kimg, vm->kernel_fd, vm->kernel_len, &vm->mem);
	log_info("setup: kernel loaded at %.3fs", vm_elapsed(vm));
	ret = initrd_finish(&initrd, err, errlen);
	if (kret) {
		snprintf(err, errlen, "kernel does not fit in guest memory");
		return kret;
	}
	if (ret)
		return ret;
	ret = mptable_write(&vm->mem, vm->ncpus);
	if (!ret)
		ret = boot_write_gdt(&vm->mem, !pvh);
	if (!ret && !pvh)
		ret = boot_write_page_tables(&vm->mem);
	if (!ret)
		ret = pvh ? boot_write_pvh(&vm->mem, &bi) :
			    boot_write_zero_page(&vm->mem, &vm->kimg, vm->kernel_data,
						 vm->kernel_len, &bi);
	if (ret)
		snprintf(err, errlen, "writing boot data: %s", strerror(-ret));
	return ret;
}
