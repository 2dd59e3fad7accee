/*
 * virtio-console (virtio 1.2 §5.3), single port, output only: the guest
 * command's stdout and stderr each get one (hvc0, hvc1). The driver waits
 * for every transmit buffer to come back, so output is complete when the
 * guest reports the command's exit.
 */
#include <errno.h>
#include <stdlib.h>

#include "common/rotlog.h"

#include "devices/virtio_devices.h"
#include "devices/virtio_mmio.h"
#include "vmm/vm.h"

#define CONSOLE_RX 0
#define CONSOLE_TX 1

struct vcons {
	int out_fd;
	struct rotlog *log;	/* non-NULL: instead of out_fd */
};

static void cons_notify(struct virtio_dev *d, uint16_t q)
{
	struct vcons *c = d->priv;
	struct vq_chain *ch;
	int n = 0;

	if (q != CONSOLE_TX)
		return;		/* rx buffers wait: there is no input yet */
	ch = malloc(sizeof(*ch));
	if (!ch)
		return;
	while (vq_pop(&d->vq[q], ch) == 1) {
		for (int i = 0; i < ch->nr; i++)
			if (!ch->buf[i].writable)
				rotlog_or_fd_write(c->log, c->out_fd, ch->buf[i].host,
						   ch->buf[i].len);
		vq_push(&d->vq[q], ch->head, 0);
		n++;
	}
	if (n)
		virtio_notify_used(d, q);
	free(ch);
}

static void cons_destroy(struct virtio_dev *d)
{
	free(d->priv);
}

static const struct virtio_dev_ops console_ops = {
	.name = "virtio-console",
	.device_id = VIRTIO_ID_CONSOLE,
	.num_queues = 2,
	.queue_max = 64,
	/* The driver fills its queues one kick per buffer without it. */
	.features = 1ULL << VIRTIO_F_EVENT_IDX,
	.notify = cons_notify,
	.destroy = cons_destroy,
};

int virtio_console_create(struct vm *vm, int out_fd, struct rotlog *log)
{
	struct vcons *c = calloc(1, sizeof(*c));
	struct virtio_dev *d;

	if (!c)
		return -ENOMEM;
	c->out_fd = out_fd;
	c->log = log;
	return virtio_mmio_create(vm, &console_ops, c, &d);
}
