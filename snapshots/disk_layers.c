/* Freeze the sandbox's disk into a read-only layer; continue on an overlay. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/virtio_devices.h"
#include "devices/virtio_mmio.h"
#include "images/qcow2.h"
#include "snapshots/disk_layers.h"
#include "vmm/vm.h"

int disk_layers_boot_top(char *file, size_t fcap, char *format, size_t fmtcap)
{
	char f[DISK_LAYER_NAME], fmt[8];
	unsigned next;
	FILE *fp = fopen(DISK_TOP_FILE, "re");
	int n;

	if (!fp)
		return -ENOENT;
	n = fscanf(fp, "%63s %7s %u", f, fmt, &next);
	fclose(fp);
	/* Only our own names: a plain file in this directory. */
	if (n != 3 || strchr(f, '/') || f[0] == '.' || (strcmp(fmt, "qcow2") && strcmp(fmt, "raw")))
		return -EINVAL;
	snprintf(file, fcap, "%s", f);
	snprintf(format, fmtcap, "%s", fmt);
	return 0;
}

void disk_layers_init(struct disk_layers *l, const char *base, const char *base_format,
		      const char *base_file)
{
	FILE *fp = fopen(DISK_TOP_FILE, "re");

	memset(l, 0, sizeof(*l));
	snprintf(l->top.file, sizeof(l->top.file), "%s", base);
	snprintf(l->top.format, sizeof(l->top.format), "%s", base_format ? base_format : "raw");
	snprintf(l->base_file, sizeof(l->base_file), "%s", base_file ? base_file : "");
	l->next = 1;
	if (!fp)
		return;
	/* "TOP FORMAT NEXT DEPTH": the chain's length is recorded, not probed
	 * (the VM already holds the top open). */
	if (fscanf(fp, "%63s %7s %u %d", l->top.file, l->top.format, &l->next, &l->depth) < 3) {
		snprintf(l->top.file, sizeof(l->top.file), "%s", base);
		snprintf(l->top.format, sizeof(l->top.format), "%s", base_format ? base_format : "raw");
		l->depth = 0;
	}
	fclose(fp);
}

static int save_top(const struct disk_layers *l)
{
	FILE *fp = fopen(DISK_TOP_FILE ".tmp", "we");

	if (!fp)
		return -errno;
	fprintf(fp, "%s %s %u %d\n", l->top.file, l->top.format, l->next, l->depth);
	if (fflush(fp) || fsync(fileno(fp))) {
		fclose(fp);
		return -EIO;
	}
	fclose(fp);
	return rename(DISK_TOP_FILE ".tmp", DISK_TOP_FILE) ? -errno : 0;
}

/* The sandbox's one disk (the device assembly sets it only when there is exactly one). */
static struct virtio_dev *blk_dev(struct vm *vm)
{
	return vm->root_disk;
}

/* @base_file: the chain's base when it is not here (in the image store). */
static int open_layer(const struct disk_layer *l, const char *base_file, struct blk_backend **b)
{
	struct qcow2_open_opts o = { .allowed_root = ".",
				     .also_file = base_file[0] ? base_file : NULL };

	return strcmp(l->format, "qcow2") ? blk_open_raw(l->file, false, b) :
					    blk_open_qcow2(l->file, false, &o, b);
}

/*
 * New overlay over @below, swapped in for the current top. A qcow2 image
 * open for writing cannot be opened again (it is locked), so the old top
 * is closed first; the VM is paused, nothing uses the device meanwhile. If
 * the new chain does not open, the old top is opened again.
 */
static int switch_to_overlay(struct vm *vm, struct disk_layers *l, const struct disk_layer *below,
			     int depth, struct disk_layer *newtop, char *err, size_t errlen)
{
	struct virtio_dev *d = blk_dev(vm);
	struct blk_backend *nb = NULL, *old;
	int ret;

	if (!d) {
		snprintf(err, errlen, "checkpoints need a VM with exactly one disk");
		return -ENOTSUP;
	}
	if (depth + 2 > QCOW2_MAX_CHAIN) {
		snprintf(err, errlen, "disk chain would exceed %d layers", QCOW2_MAX_CHAIN);
		return -E2BIG;
	}
	old = virtio_blk_backend(d);
	snprintf(newtop->file, sizeof(newtop->file), "layer-%u.qcow2", l->next);
	snprintf(newtop->format, sizeof(newtop->format), "qcow2");
	unlink(newtop->file);	/* a leftover of a crash: never referenced */
	ret = qcow2_create_overlay(newtop->file, below->file, below->format, old->size, 0);
	if (ret) {
		snprintf(err, errlen, "disk overlay %s: %s", newtop->file, strerror(-ret));
		return ret;
	}
	blk_close(old);
	ret = open_layer(newtop, l->base_file, &nb);
	if (ret) {
		snprintf(err, errlen, "disk overlay %s: %s", newtop->file, strerror(-ret));
		unlink(newtop->file);
		if (open_layer(&l->top, l->base_file, &nb)) {
			vm_request_stop(vm, VM_ERROR, 0, "the disk could not be opened again");
			return ret;
		}
	}
	if (!virtio_blk_swap_backend(d, nb)) {
		blk_close(nb);
		vm_request_stop(vm, VM_ERROR, 0, "the disk changed size");
		return -EINVAL;
	}
	if (!ret)
		l->next++;
	return ret;
}

static int flush_top(struct vm *vm, char *err, size_t errlen)
{
	struct virtio_dev *d = blk_dev(vm);
	struct blk_backend *b;
	int ret;

	if (!d) {
		snprintf(err, errlen, "checkpoints need a VM with exactly one disk");
		return -ENOTSUP;
	}
	pthread_mutex_lock(&d->lock);
	b = virtio_blk_backend(d);
	ret = b->ops->flush(b);
	pthread_mutex_unlock(&d->lock);
	if (ret)
		snprintf(err, errlen, "flushing the disk: %s", strerror(-ret));
	return ret;
}

int disk_layers_freeze(struct vm *vm, struct disk_layers *l, struct disk_layer *frozen,
		       int *depth, char *err, size_t errlen)
{
	struct disk_layer nt;
	int ret = flush_top(vm, err, errlen), fd;

	if (ret)
		return ret;
	*frozen = l->top;
	*depth = l->depth;
	ret = switch_to_overlay(vm, l, frozen, l->depth, &nt, err, errlen);
	if (ret)
		return ret;
	/* A reminder: checkpoints reference it. Through a descriptor: the
	 * confined VMM may not chmod by path (Landlock does not govern it). */
	fd = open(frozen->file, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!fchmod(fd, 0400);
		close(fd);
	}
	l->top = nt;
	l->depth++;
	return save_top(l);
}

int disk_layers_reset(struct vm *vm, struct disk_layers *l, const struct disk_layer *frozen,
		      int depth, char *err, size_t errlen)
{
	struct disk_layer old = l->top, nt;
	int ret = switch_to_overlay(vm, l, frozen, depth, &nt, err, errlen);

	if (ret)
		return ret;
	l->top = nt;
	l->depth = depth + 1;
	ret = save_top(l);
	/* The old top is referenced by no checkpoint (those are all frozen). */
	if (!ret)
		unlink(old.file);
	return ret;
}
