/* virtio-rng (virtio 1.2 §5.4): host entropy for the guest's RNG. */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include "devices/virtio_devices.h"
#include "devices/virtio_mmio.h"
#include "vmm/vm.h"

#define RNG_MAX_PER_BUF 65536	/* a greedy guest cannot make us loop forever */

static void rng_notify(struct virtio_dev *d, uint16_t q)
{
	struct vq_chain *c = malloc(sizeof(*c));
	int n = 0;

	if (!c)
		return;
	while (vq_pop(&d->vq[q], c) == 1) {
		uint32_t written = 0;

		for (int i = 0; i < c->nr; i++) {
			struct vq_buf *b = &c->buf[i];
			uint32_t want = b->len < RNG_MAX_PER_BUF ? b->len : RNG_MAX_PER_BUF;
			ssize_t got;

			if (!b->writable || written >= RNG_MAX_PER_BUF)
				continue;
			got = getrandom(b->host, want, 0);
			if (got > 0)
				written += (uint32_t)got;
		}
		vq_push(&d->vq[q], c->head, written);
		n++;
	}
	if (n)
		virtio_notify_used(d, q);
	free(c);
}

static const struct virtio_dev_ops rng_ops = {
	.name = "virtio-rng",
	.device_id = VIRTIO_ID_RNG,
	.num_queues = 1,
	.queue_max = 64,
	.notify = rng_notify,
};

int virtio_rng_create(struct vm *vm)
{
	struct virtio_dev *d;

	return virtio_mmio_create(vm, &rng_ops, NULL, &d);
}
