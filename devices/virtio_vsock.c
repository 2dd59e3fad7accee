/*
 * virtio-vsock (virtio 1.2 §5.10): queues rx, tx, event; config = guest CID.
 * The back-end is vsock_mux (host Unix sockets, hybrid-vsock style); this
 * file moves packets between it and the virtqueues and puts its sockets on
 * the VMM's event loop. Back-pressure: when the guest posts no rx buffers we
 * stop reading host sockets until it kicks the rx queue again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio_devices.h"
#include "devices/virtio_mmio.h"
#include "devices/vsock_mux.h"
#include "common/snap_buf.h"
#include "vmm/vm.h"

#define VSOCK_RX    0
#define VSOCK_TX    1
#define VSOCK_EVENT 2
#define RESET_WAIT_S 3.0

struct vvsock;

struct vs_watch {
	struct vvsock *v;
	struct vsock_conn *c;	/* NULL: the listening socket */
};

struct vvsock {
	struct virtio_dev *d;
	struct vm *vm;
	struct vsock_mux mux;
	bool active, kicked;
	/* A transport reset is on its way to the guest: hold packets for it
	 * until the driver hands the event buffer back (it kicks the event
	 * queue), or the reset would also kill connections made after it. */
	bool reset_wait;
	uint16_t reset_avail;	/* the event queue's avail index when it was sent */
	double reset_at;	/* vm_elapsed() then: after RESET_WAIT_S we stop waiting */
	struct vs_watch w[VSOCK_MAX_CONNS + 1];
	struct vq_chain ch;
	uint8_t buf[VSOCK_MAX_PKT];
};

static uint16_t event_avail(struct vvsock *v)
{
	const struct virtqueue *vq = &v->d->vq[VSOCK_EVENT];
	const uint8_t *a = vq->ready ? gm_ptr(vq->mem, vq->avail_gpa, 4) : NULL;
	uint16_t idx = 0;

	if (a)
		memcpy(&idx, a + 2, 2);
	return idx;
}

/* Hand the guest every packet the mux owes it, while rx buffers last. */
static void fill_rx(struct vvsock *v)
{
	struct virtqueue *vq = &v->d->vq[VSOCK_RX];
	uint8_t hb[VSOCK_HDR_SIZE];
	struct vsock_hdr h;
	int n = 0;

	v->kicked = false;
	/* A driver that never takes the event must not cut the guest off for good. */
	if (v->reset_wait && vm_elapsed(v->vm) - v->reset_at < RESET_WAIT_S)
		return;
	v->reset_wait = false;
	while (v->active && vsock_mux_pending(&v->mux) && vq_pop(vq, &v->ch) == 1) {
		uint64_t room = v->ch.writable;

		if (room < VSOCK_HDR_SIZE) {
			vq_push(vq, v->ch.head, 0);	/* unusable buffer: hand it back */
			n++;
			continue;
		}
		room -= VSOCK_HDR_SIZE;
		if (!vsock_mux_next_pkt(&v->mux, &h, v->buf, room < sizeof(v->buf) ? room : sizeof(v->buf))) {
			/* Nothing after all: un-pop the chain; vq_pop changed nothing else. */
			vq->last_avail--;
			break;
		}
		vsock_hdr_encode(&h, hb);
		vq_chain_write(&v->ch, 0, hb, sizeof(hb));
		vq_chain_write(&v->ch, VSOCK_HDR_SIZE, v->buf, h.len);
		vq_push(vq, v->ch.head, VSOCK_HDR_SIZE + h.len);
		n++;
	}
	if (n)
		virtio_notify_used(v->d, VSOCK_RX);
}

static void drain_tx(struct vvsock *v)
{
	struct virtqueue *vq = &v->d->vq[VSOCK_TX];
	uint8_t hb[VSOCK_HDR_SIZE];
	struct vsock_hdr h;
	int n = 0;

	while (vq_pop(vq, &v->ch) == 1) {
		/* The header and its length field are the guest's: check both. */
		if (vq_chain_read(&v->ch, 0, hb, sizeof(hb)) == sizeof(hb)) {
			vsock_hdr_decode(hb, &h);
			if (h.len <= VSOCK_MAX_PKT && h.len <= v->ch.readable - VSOCK_HDR_SIZE &&
			    vq_chain_read(&v->ch, VSOCK_HDR_SIZE, v->buf, h.len) == h.len)
				vsock_mux_guest_pkt(&v->mux, &h, v->buf);
		}
		vq_push(vq, v->ch.head, 0);
		n++;
	}
	if (n)
		virtio_notify_used(v->d, VSOCK_TX);
}

static void vsock_notify(struct virtio_dev *d, uint16_t q)
{
	struct vvsock *v = d->priv;

	/* Our own re-notify after a load changes nothing; the driver's refill does. */
	if (q == VSOCK_EVENT && v->reset_wait && event_avail(v) != v->reset_avail)
		v->reset_wait = false;
	if (q == VSOCK_TX)
		drain_tx(v);
	/* An rx kick means new buffers: resume what back-pressure held. */
	fill_rx(v);
}

static void on_fd(void *opaque, uint32_t events)
{
	struct vs_watch *w = opaque;
	struct vvsock *v = w->v;

	pthread_mutex_lock(&v->d->lock);
	vsock_mux_fd_event(&v->mux, w->c, events);
	if (v->kicked)
		fill_rx(v);
	pthread_mutex_unlock(&v->d->lock);
}

static int host_watch(void *opaque, int fd, uint32_t events, struct vsock_conn *c, bool added)
{
	struct vvsock *v = opaque;
	struct vs_watch *w = &v->w[c ? (c - v->mux.conns) + 1 : 0];

	if (!events)
		return ev_del(&v->vm->loop, fd);
	if (!added)
		return ev_mod(&v->vm->loop, fd, events);
	w->v = v;
	w->c = c;
	return ev_add(&v->vm->loop, fd, events, on_fd, w);
}

static void host_kick(void *opaque)
{
	struct vvsock *v = opaque;

	v->kicked = true;	/* filled by the caller once the mux call returns */
}

static const struct vsock_host_ops host_ops = {
	.watch = host_watch,
	.kick = host_kick,
};

static void vsock_read_config(struct virtio_dev *d, uint32_t off, uint8_t *data, uint32_t len)
{
	struct vvsock *v = d->priv;
	uint8_t cfg[8];

	memcpy(cfg, &v->mux.guest_cid, sizeof(cfg));	/* le64 guest_cid */
	memcpy(data, cfg + off, len);
}

static int vsock_activate(struct virtio_dev *d)
{
	struct vvsock *v = d->priv;

	v->active = true;
	fill_rx(v);
	return 0;
}

static void vsock_reset(struct virtio_dev *d)
{
	struct vvsock *v = d->priv;

	v->active = false;
	vsock_mux_reset(&v->mux);
}

static void vsock_destroy(struct virtio_dev *d)
{
	struct vvsock *v = d->priv;

	vsock_mux_fini(&v->mux);
	free(v);
}

/* virtio 1.2 §5.10.6.6: tell the driver every connection is gone. */
#define VSOCK_EVENT_TRANSPORT_RESET 0

static void send_transport_reset(struct vvsock *v)
{
	struct virtqueue *vq = &v->d->vq[VSOCK_EVENT];
	uint32_t id = VSOCK_EVENT_TRANSPORT_RESET;

	if (vq_pop(vq, &v->ch) != 1)
		return;		/* no event buffer: the driver set none up */
	vq_push(vq, v->ch.head, (uint32_t)vq_chain_write(&v->ch, 0, &id, sizeof(id)));
	v->reset_wait = true;
	v->reset_avail = event_avail(v);
	v->reset_at = vm_elapsed(v->vm);
	virtio_notify_used(v->d, VSOCK_EVENT);
}

static int vsock_save(struct virtio_dev *d, struct snap_w *w)
{
	struct vvsock *v = d->priv;

	snap_w_u64(w, v->mux.guest_cid);
	snap_w_u8(w, v->active);
	return 0;
}

/*
 * Host connections do not survive a snapshot: after loading, the mux drops
 * them all and the guest hears a transport reset, so its sockets fail and
 * the agent's listener takes new connections.
 */
static int vsock_load(struct virtio_dev *d, struct snap_r *r, bool apply)
{
	struct vvsock *v = d->priv;
	uint64_t cid = snap_r_u64(r);
	uint8_t active = snap_r_u8(r);

	if (r->err || cid != v->mux.guest_cid || active > 1)
		return -EBADMSG;
	if (!apply)
		return 0;
	vsock_mux_reset(&v->mux);
	v->active = active;
	if (active)
		send_transport_reset(v);
	return 0;
}

static const struct virtio_dev_ops vsock_ops = {
	.name = "virtio-vsock",
	.device_id = VIRTIO_ID_VSOCK,
	.num_queues = 3,
	.queue_max = 256,
	.config_size = 8,
	.read_config = vsock_read_config,
	.activate = vsock_activate,
	.notify = vsock_notify,
	.reset = vsock_reset,
	.destroy = vsock_destroy,
	.save = vsock_save,
	.load = vsock_load,
};

int virtio_vsock_create(struct vm *vm, uint64_t guest_cid, const char *uds_path)
{
	struct vvsock *v = calloc(1, sizeof(*v));
	int ret;

	if (!v)
		return -ENOMEM;
	v->vm = vm;
	ret = vsock_mux_init(&v->mux, guest_cid, uds_path, &host_ops, v);
	if (ret) {
		free(v);
		return ret;
	}
	/* On failure the transport calls vsock_destroy(), which frees v. */
	return virtio_mmio_create(vm, &vsock_ops, v, &v->d);
}
