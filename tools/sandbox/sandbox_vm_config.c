/* The VM configuration of a sandbox, from its config.json (`mvm vmm`, `mvm run`). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/arch/arch.h"
#include "common/cli_util.h"
#include "images/image_overlay.h"
#include "snapshots/checkpoint.h"
#include "snapshots/disk_layers.h"
#include "snapshots/snapshot_dir.h"
#include "tools/sandbox/sandbox_policy.h"
#include "tools/sandbox/sandbox_vm_config.h"

/* Boot files: config.json's, else make guest's. */
static int boot_files(const struct sb_config *c, struct sb_vm_bufs *b, struct vm_config *vc,
		      char *err, size_t errlen)
{
	const char *dir = cli_guest_dir();

	if (c->kernel[0])
		snprintf(b->kernel, PATH_MAX, "%s", c->kernel);
	else if (dir)
		snprintf(b->kernel, PATH_MAX, "%s/%s", dir, arch_kernel_name);
	else {
		snprintf(err, errlen, "no guest kernel (run 'make guest' or pass --kernel to create)");
		return -ENOENT;
	}
	if (c->initrd[0])
		snprintf(b->initrd, PATH_MAX, "%s", c->initrd);
	else if (dir)
		snprintf(b->initrd, PATH_MAX, "%s/initramfs.cpio", dir);
	else {
		snprintf(err, errlen, "no guest initramfs (run 'make guest')");
		return -ENOENT;
	}
	vc->kernel_path = b->kernel;
	vc->initrd_path = b->initrd;
	vc->extra_cmdline = c->cmdline;
	return 0;
}

/* `mvm run`'s disks after the sandbox's own; the one marked data is /data. */
static int more_disks(const struct sb_config *c, struct vm_config *vc, int *data)
{
	for (int i = 0; i < c->ndisks; i++) {
		struct vm_disk *d = &vc->disks[vc->nr_disks];

		if (vc->nr_disks == VM_MAX_DISKS)
			return -E2BIG;
		d->path = c->disks[i].path;
		d->format = c->disks[i].format[0] ? c->disks[i].format : NULL;
		d->read_only = c->disks[i].read_only;
		if (c->disks[i].data)
			*data = vc->nr_disks;
		vc->nr_disks++;
	}
	return 0;
}

/* The agent is the guest's command; it mounts the data disk (vdX) at /data. */
static void agent_argv(struct sb_vm_bufs *b, struct vm_config *vc, int data)
{
	b->argv[0] = "mvm-agent";
	b->argv[1] = NULL;
	if (data >= 0) {
		snprintf(b->mount, sizeof(b->mount), "/dev/vd%c:/data", 'a' + data);
		b->argv[1] = "--mount";
		b->argv[2] = b->mount;
		b->argv[3] = NULL;
	}
	vc->argv = b->argv;
}

/* --lifetime: what is left of it is the VM's stop time; none left, no start. */
static int lifetime_left(const struct sb_config *c, struct vm_config *vc, char *err, size_t errlen)
{
	struct timespec now;
	double left;

	if (!c->expires)
		return 0;
	clock_gettime(CLOCK_REALTIME, &now);
	left = c->expires - (double)now.tv_sec;
	if (left < 1) {
		snprintf(err, errlen, "its lifetime (--lifetime) ended %.0f s ago: remove it (mvm rm)", -left);
		return -ETIME;
	}
	vc->stop_after_ms = (uint64_t)(left * 1000);
	return 0;
}

int sb_vm_config(const struct sb_config *c, struct sb_vm_bufs *b, struct vm_config *vc,
		 char *err, size_t errlen)
{
	char *base_dir = b->base_dir;
	int ret, data = -1;

	memset(vc, 0, sizeof(*vc));
	ret = lifetime_left(c, vc, err, errlen);
	if (!ret)
		ret = boot_files(c, b, vc, err, errlen);
	if (ret)
		return ret;
	if (c->disk[0]) {
		vc->disks[0].path = c->disk;
		vc->disks[0].format = c->disk_format;
		vc->nr_disks = 1;
	}
	if (c->disk[0] && !strcmp(c->disk_format, IMAGE_OVERLAY_FORMAT)) {
		/* The overlay's backing file must be the base it was made on, raw. */
		snprintf(base_dir, PATH_MAX, "%s", c->image);
		*strrchr(base_dir, '/') = 0;
		vc->disks[0].backing_root = base_dir[0] ? base_dir : "/";
		vc->disks[0].backing_format = IMAGE_BASE_FORMAT;
	}
	/* After a checkpoint (or a start from a snapshot or template) the disk
	 * is a chain of layers in the state directory (snapshots/disk_layers.h)
	 * ending in exactly the base above: no other file of its directory. */
	if (c->disk[0] &&
	    !disk_layers_boot_top(b->top_file, sizeof(b->top_file), b->top_fmt, sizeof(b->top_fmt))) {
		vc->disks[0].backing_file = c->image[0] && vc->disks[0].backing_root ? c->image : NULL;
		vc->disks[0].path = b->top_file;
		vc->disks[0].format = b->top_fmt;
		vc->disks[0].backing_root = ".";
		vc->disks[0].backing_format = NULL;
	}
	if (c->disk[0] && !c->root_on_disk)
		data = 0;
	if (more_disks(c, vc, &data)) {
		snprintf(err, errlen, "more than %d disks", VM_MAX_DISKS);
		return -E2BIG;
	}
	vc->root_on_disk = c->root_on_disk;
	vc->cpus = c->cpus;
	vc->mem_size = c->mem;
	/* The sandbox's environment is applied per exec, never to the agent. */
	agent_argv(b, vc, data);
	vc->env = NULL;
	vc->console_fd = vc->stdout_fd = vc->stderr_fd = -1;	/* the caller's vc->log */
	vc->want_rng = true;
	vc->vsock_path = "vsock.sock";
	vc->vsock_cid = c->cid;
	/* Deny by default: policy.json holds create's rules and every later
	 * `mvm net` change; without it, nothing leaves. */
	vc->net.enabled = !c->net_off;
	memcpy(vc->net.mac, c->mac, sizeof(vc->net.mac));
	vc->net.events_path = "events.jsonl";
	vc->net.runtime_rules = true;
	if (access(SB_POLICY_FILE, F_OK) == 0)
		vc->net.policy_path = SB_POLICY_FILE;
	vc->net.dns_server = c->dns_server[0] ? c->dns_server : NULL;
	for (int i = 0; i < c->npublish && i < VM_MAX_PUBLISH; i++)
		vc->net.publish[vc->net.nr_publish++] = c->publish[i];
	/* `mvm restore`/`fork`: RAM from the snapshot, state loaded by run_vmm. */
	if (!snap_restore_pending(b->restore_dir, sizeof(b->restore_dir))) {
		snprintf(b->restore_mem, sizeof(b->restore_mem), "%s/" SNAP_DIR_MEMORY, b->restore_dir);
		vc->restore_mem = b->restore_mem;
	}
	return 0;
}

