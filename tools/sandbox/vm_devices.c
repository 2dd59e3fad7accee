/*
 * The VM's device assembly: which devices a sandbox's VM has, in which
 * order, from its vm_config. vmm/ knows devices only through vm_add_device();
 * this file is the one place that names them all.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/rotlog.h"

#include "devices/legacy.h"
#include "devices/serial.h"
#include "devices/virtio_devices.h"
#include "images/blk_backend.h"
#include "images/qcow2.h"
#include "tools/sandbox/vm_devices.h"
#include "vmm/arch/arch.h"

static int open_disk(const struct vm_disk *d, struct blk_backend **b, char *err, size_t errlen)
{
	/* The format is always stated, never probed: a guest may have written the file. */
	struct qcow2_open_opts opts = { .allowed_root = d->backing_root,
					.also_file = d->backing_file,
					.backing_fmt = d->backing_format };
	int ret;

	if (!d->format || !strcmp(d->format, "raw"))
		ret = blk_open_raw(d->path, d->read_only, b);
	else if (!strcmp(d->format, "qcow2"))
		ret = blk_open_qcow2(d->path, d->read_only, &opts, b);
	else
		ret = -ENOTSUP;
	if (ret)
		snprintf(err, errlen, "disk %s (%s): %s", d->path, d->format ? d->format : "raw",
			 strerror(-ret));
	return ret;
}

static void rotate_log(void *opaque, uint32_t events)
{
	struct rotlog *log = opaque;
	uint64_t n;

	(void)events;
	(void)!read(log->kick_fd, &n, sizeof(n));
	(void)rotlog_rotate_due(log);
}

/* The serial port writes console.log from vCPU threads, which may not
 * rename or open files: the event loop (this thread) rotates for them. */
static int log_rotates_on_loop(struct vm *vm, struct rotlog *log)
{
	int fd, ret;

	if (!log)
		return 0;
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	ret = ev_add(&vm->loop, fd, EPOLLIN, rotate_log, log);
	if (ret) {
		close(fd);
		return ret;
	}
	rotlog_defer_rotation(log, fd);
	return 0;
}

/* Order matters: it fixes hvc0/hvc1 and vda, vdb, ... in the guest. */
int vm_devices_create(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen)
{
	int ret;

	/* --console (an fd of its own) bypasses the capped log. */
	/* The architecture says where the console and the legacy ports are
	 * (vmm/arch/arch.h: COM1 and port I/O on x86, a UART on MMIO on arm64). */
	ret = serial_create_at(vm, arch_legacy.uart_on_mmio ? &vm->mmio : &vm->pio,
			       arch_legacy.uart_base, arch_legacy.uart_irq, cfg->console_fd,
			       cfg->console_fd >= 0 ? NULL : cfg->log, &vm->console);
	vm->console_tail = serial_tail;
	if (!ret && cfg->console_fd < 0)
		ret = log_rotates_on_loop(vm, cfg->log);
	if (!ret && arch_legacy.i8042)
		ret = i8042_create(vm);
	if (!ret && arch_legacy.guest_port)
		ret = guest_port_create(vm);
	if (!ret)
		ret = virtio_console_create(vm, cfg->stdout_fd, cfg->log);
	if (!ret)
		ret = virtio_console_create(vm, cfg->stderr_fd, cfg->log);
	for (int i = 0; !ret && i < cfg->nr_disks; i++) {
		struct blk_backend *b;
		char id[24];

		ret = open_disk(&cfg->disks[i], &b, err, errlen);
		if (ret)
			return ret;
		snprintf(id, sizeof(id), "mvm-disk%d", i);
		ret = virtio_blk_create(vm, b, id);
		if (!ret && cfg->nr_disks == 1)	/* checkpoints need exactly one */
			vm->root_disk = vm->devices[vm->nr_devices - 1].dev;
	}
	if (!ret && cfg->want_rng)
		ret = virtio_rng_create(vm);
	if (!ret && cfg->vsock_path)
		ret = virtio_vsock_create(vm, cfg->vsock_cid ? cfg->vsock_cid : 3, cfg->vsock_path);
	if (!ret && cfg->net.enabled)
		ret = virtio_net_create(vm, &cfg->net, err, errlen);
	return ret;
}

