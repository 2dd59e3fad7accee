/* `mvm run`'s direct path and the pieces its sandbox path shares (run_sandbox.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "common/log.h"
#include "vmm/confine/caps.h"
#include "vmm/confine/hygiene.h"
#include "images/image_overlay.h"
#include "tools/sandbox/run_sandbox.h"
#include "tools/sandbox/vm_devices.h"
#include "vmm/initrd.h"
#include "vmm/vm.h"

int run_add_disk(struct vm_config *cfg, char *arg, bool root)
{
	struct vm_disk *d;

	if (cfg->nr_disks == VM_MAX_DISKS) {
		cli_err("run", "at most %d disks", VM_MAX_DISKS);
		return -1;
	}
	d = &cfg->disks[cfg->nr_disks++];
	/* Trailing flags, any order: PATH[:ro][:raw|:qcow2]. */
	for (char *c = strrchr(arg, ':'); c; c = strrchr(arg, ':')) {
		if (!strcmp(c, ":ro"))
			d->read_only = true;
		else if (!strcmp(c, ":raw") || !strcmp(c, ":qcow2"))
			d->format = c + 1;
		else
			break;
		*c = 0;
	}
	d->path = arg;
	if (root) {
		/* The root disk must be vda: move it to the front. */
		struct vm_disk r = *d;

		memmove(&cfg->disks[1], &cfg->disks[0], sizeof(*d) * (size_t)(cfg->nr_disks - 1));
		cfg->disks[0] = r;
		cfg->root_on_disk = true;
	}
	return 0;
}

/*
 * --image: the base through a qcow2 overlay (images/image_overlay.c, shared
 * with `mvm create --image`), made in @dir, or in a private temp dir that
 * drop_overlay() removes when @dir is NULL.
 */
int run_attach_image(struct run_opts *o, const char *dir)
{
	const char *tmp = getenv("TMPDIR");
	char err[PATH_MAX + 128];

	if (image_base_resolve(o->image, &o->base, err, sizeof(err))) {
		cli_err("run", "--image: %s", err);
		return -1;
	}
	if (!dir) {
		snprintf(o->overlay_dir, sizeof(o->overlay_dir), "%s/mvm-run.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(o->overlay_dir)) {
			cli_err("run", "--image: temp dir %s: %s", o->overlay_dir, strerror(errno));
			o->overlay_dir[0] = 0;
			return -1;
		}
	}
	snprintf(o->overlay_arg, sizeof(o->overlay_arg), "%s/root.qcow2", dir ? dir : o->overlay_dir);
	if (image_overlay_create(o->overlay_arg, &o->base, err, sizeof(err))) {
		cli_err("run", "--image: %s", err);
		return -1;
	}
	strcat(o->overlay_arg, ":" IMAGE_OVERLAY_FORMAT);	/* add_disk strips the flag again */
	if (run_add_disk(&o->cfg, o->overlay_arg, true))
		return -1;
	o->cfg.disks[0].backing_root = o->base.dir;
	o->cfg.disks[0].backing_format = IMAGE_BASE_FORMAT;
	return 0;
}

/* The overlay goes as soon as the VMM holds it open (and on every exit path). */
static void drop_overlay(struct run_opts *o)
{
	char p[PATH_MAX];

	if (!o->overlay_dir[0])
		return;
	snprintf(p, sizeof(p), "%s/root.qcow2", o->overlay_dir);
	unlink(p);
	rmdir(o->overlay_dir);
	o->overlay_dir[0] = 0;
}

long run_peak_rss_kib(void)
{
	struct rusage ru;

	/* VmHWM, without opening /proc (closed to a confined VMM). */
	return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_maxrss;
}

static void print_timing(const struct vm *vm, const struct vm_result *r)
{
	long rss = run_peak_rss_kib();
	uint64_t guest = vm_guest_resident_kib(vm);

	fprintf(stderr, "mvm: timing: vmm-start 0.000s guest-init %.3fs command-exit %.3fs "
		"vmm-exit %.3fs\n", r->t_init, r->t_exit, vm_elapsed(vm));
	fprintf(stderr, "mvm: memory: peak-rss %ld KiB, guest-resident %llu KiB, "
		"vmm-overhead %lld KiB\n", rss, (unsigned long long)guest,
		(long long)rss - (long long)guest);
}

static int save_initrd(const struct run_opts *o)
{
	struct run_spec rs = { .argv = o->cfg.argv, .env = o->cfg.env,
			       .workdir = o->cfg.workdir, .root_on_disk = o->cfg.root_on_disk };
	struct buf b = { 0 };
	FILE *f;
	int ret = initrd_build(o->cfg.initrd_path, &rs, &b);

	f = ret ? NULL : fopen(o->save_initrd, "wb");
	if (!f || fwrite(b.data, 1, b.len, f) != b.len || fclose(f)) {
		cli_err("run", "cannot write initrd to %s", o->save_initrd);
		ret = -1;
	}
	buf_free(&b);
	return ret ? MVM_EXIT_ERROR : 0;
}

int run_exit_status(const struct vm_result *r)
{
	switch (r->outcome) {
	case VM_EXITED:
		return r->code;
	case VM_SIGNALED:
		return 128 + r->code;
	default:
		cli_err("run", "%s", r->message);
		return MVM_EXIT_ERROR;
	}
}

int run_direct(struct run_opts *o)
{
	struct vm_result res;
	struct vm *vm = NULL;
	int ret = MVM_EXIT_ERROR;

	/* This process becomes the VMM: nothing it inherited stays open. */
	ret = confine_hygiene(NULL, 0);
	if (ret)
		cli_err("run", "process hygiene: %s", strerror(-ret));
	ret = MVM_EXIT_ERROR;
	if (o->image && run_attach_image(o, NULL))
		goto out;
	if (o->save_initrd) {
		ret = save_initrd(o);
		goto out;
	}
	vm = calloc(1, sizeof(*vm));
	if (!vm)
		goto out;
	o->cfg.add_devices = vm_devices_create;
	if (vm_create(vm, &o->cfg, &res)) {
		cli_err("run", "%s", res.message);
		goto out_vm;
	}
	drop_overlay(o);
	/* Set up: /dev/kvm, memory and disks are open. No capability is
	 * needed from here on, and the guest must not meet a VMM holding one
	 * (root's, say): dropped while single-threaded, before vm_run's
	 * threads, which inherit none. */
	ret = confine_caps_drop();
	if (ret)
		log_info("capabilities: %s: some are kept", strerror(-ret));
	ret = MVM_EXIT_ERROR;
	vm_run(vm, &res);
	if (o->timing)
		print_timing(vm, &res);
	ret = run_exit_status(&res);
out_vm:
	vm_destroy(vm);
out:
	drop_overlay(o);
	free(vm);
	return ret;
}
