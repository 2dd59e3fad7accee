/*
 * vsock back-end, guest side: the connection state machine driven by the
 * guest's packets (virtio 1.2 §5.10.6) and the packets we owe the guest.
 * Flow control (§5.10.6.3): we send at most the guest's advertised credit,
 * buf_alloc - (tx_cnt - fwd_cnt); the guest may send us at most
 * VSOCK_BUF_ALLOC bytes beyond what we forwarded. A guest that overruns its
 * credit or breaks the protocol gets its connection reset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/vsock_mux.h"
#include "devices/vsock_mux_int.h"

static uint32_t peer_credit(const struct vsock_conn *c)
{
	uint32_t inflight = c->tx_cnt - c->peer_fwd_cnt;

	return inflight > c->peer_buf_alloc ? 0 : c->peer_buf_alloc - inflight;
}

/* Answer a packet that has no connection with an RST (never an RST to an RST). */
static void queue_rst(struct vsock_mux *m, const struct vsock_hdr *in)
{
	struct vsock_hdr *h;

	if (in->op == VSOCK_OP_RST || m->rst_n == (int)(sizeof(m->rst_q) / sizeof(m->rst_q[0])))
		return;
	h = &m->rst_q[m->rst_n++];
	memset(h, 0, sizeof(*h));
	h->src_cid = VSOCK_HOST_CID;
	h->dst_cid = m->guest_cid;
	h->src_port = in->dst_port;
	h->dst_port = in->src_port;
	h->type = VSOCK_TYPE_STREAM;
	h->op = VSOCK_OP_RST;
	m->ops->kick(m->opaque);
}

/* A protocol error on a known connection: drop the host end, tell the guest. */
static void reset_conn(struct vsock_mux *m, struct vsock_conn *c)
{
	vs_close_fd(m, c);
	c->state = VS_CLOSING;
	c->ctl = VS_CTL_RST;
	m->ops->kick(m->opaque);
}

void vs_after_flush(struct vsock_mux *m, struct vsock_conn *c)
{
	if (!c->pend_len && c->fd >= 0) {
		if (c->rst_after_flush) {
			reset_conn(m, c);
			return;
		}
		if (c->peer_shut_send)
			shutdown(c->fd, SHUT_WR);
	}
	if (c->fwd_cnt - c->fwd_advertised >= VSOCK_BUF_ALLOC / 4) {
		c->ctl |= VS_CTL_CREDIT;
		m->ops->kick(m->opaque);
	}
	vs_rewatch(m, c);
}

/* Guest connects to host port P: the Unix socket "<path>_P". */
static void guest_connect(struct vsock_mux *m, const struct vsock_hdr *h)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct vsock_conn *c;
	int fd, n;

	n = snprintf(a.sun_path, sizeof(a.sun_path), "%s_%u", m->path, h->dst_port);
	fd = n < (int)sizeof(a.sun_path) ?
		socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) : -1;
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	c = fd >= 0 ? vs_alloc(m, fd) : NULL;
	if (!c) {
		if (fd >= 0)
			close(fd);
		queue_rst(m, h);
		return;
	}
	c->state = VS_ESTABLISHED;
	c->guest_port = h->src_port;
	c->host_port = h->dst_port;
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	c->ctl = VS_CTL_RESPONSE;
	vs_rewatch(m, c);
	m->ops->kick(m->opaque);
}

/* The guest accepted a host-initiated connection: tell the client. */
static void guest_accepted(struct vsock_mux *m, struct vsock_conn *c)
{
	char ok[32];
	int n = snprintf(ok, sizeof(ok), "OK %u\n", c->host_port);

	if (send(c->fd, ok, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) {
		reset_conn(m, c);
		return;
	}
	c->state = VS_ESTABLISHED;
	vs_rewatch(m, c);
}

static void guest_data(struct vsock_mux *m, struct vsock_conn *c, const uint8_t *p, uint32_t len)
{
	uint32_t used = c->rx_cnt - c->fwd_cnt;
	ssize_t w = 0;

	if (c->peer_shut_send || len > VSOCK_BUF_ALLOC - used) {
		reset_conn(m, c);	/* data after SHUTDOWN, or credit overrun */
		return;
	}
	c->rx_cnt += len;
	if (!c->pend_len) {
		w = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			reset_conn(m, c);
			return;
		}
		w = w < 0 ? 0 : w;
		c->fwd_cnt += (uint32_t)w;
	}
	if ((uint32_t)w < len) {
		size_t rest = len - (size_t)w;

		if (!c->pend && !(c->pend = malloc(VSOCK_BUF_ALLOC))) {
			reset_conn(m, c);
			return;
		}
		if (c->pend_off + c->pend_len + rest > VSOCK_BUF_ALLOC) {
			memmove(c->pend, c->pend + c->pend_off, c->pend_len);
			c->pend_off = 0;
		}
		/* Fits: pend_len + rest <= rx_cnt - fwd_cnt <= VSOCK_BUF_ALLOC. */
		memcpy(c->pend + c->pend_off + c->pend_len, p + w, rest);
		c->pend_len += rest;
	}
	vs_after_flush(m, c);
}

static void guest_shutdown(struct vsock_mux *m, struct vsock_conn *c, uint32_t flags)
{
	if (flags & VSOCK_SHUTDOWN_RCV) {
		c->peer_shut_rcv = true;
		c->readable = false;
	}
	if (flags & VSOCK_SHUTDOWN_SEND)
		c->peer_shut_send = true;
	if (c->peer_shut_rcv && c->peer_shut_send)
		c->rst_after_flush = true;	/* the guest waits for our RST (§5.10.6.5) */
	vs_after_flush(m, c);
}

/* Packets on a connection we know. */
static void conn_pkt(struct vsock_mux *m, struct vsock_conn *c, const struct vsock_hdr *h,
		     const uint8_t *payload)
{
	if (h->op == VSOCK_OP_RST) {
		vs_free(m, c);
		return;
	}
	if (c->state == VS_CLOSING) {
		if (h->op == VSOCK_OP_SHUTDOWN)
			c->ctl |= VS_CTL_RST;	/* both sides done: finish it */
		return;			/* data in flight before our reset: dropped */
	}
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	if (peer_credit(c))
		c->credit_rq_sent = false;
	switch (h->op) {
	case VSOCK_OP_RESPONSE:
		if (c->state != VS_CONNECTING || (c->ctl & VS_CTL_REQUEST))
			return reset_conn(m, c);
		return guest_accepted(m, c);
	case VSOCK_OP_RW:
		if (c->state != VS_ESTABLISHED)
			return reset_conn(m, c);
		guest_data(m, c, payload, h->len);
		break;
	case VSOCK_OP_CREDIT_UPDATE:
		break;
	case VSOCK_OP_CREDIT_REQUEST:
		c->ctl |= VS_CTL_CREDIT;
		break;
	case VSOCK_OP_SHUTDOWN:
		if (c->state != VS_ESTABLISHED)
			return reset_conn(m, c);
		guest_shutdown(m, c, h->flags);
		break;
	default:		/* REQUEST on a live connection, unknown ops */
		return reset_conn(m, c);
	}
	if (c->ctl || (c->readable && peer_credit(c)))
		m->ops->kick(m->opaque);
}

void vsock_mux_guest_pkt(struct vsock_mux *m, const struct vsock_hdr *h, const uint8_t *payload)
{
	struct vsock_conn *c;

	/* Spoofed or misaddressed packets are dropped without an answer. */
	if (h->src_cid != m->guest_cid || h->dst_cid != VSOCK_HOST_CID)
		return;
	if (h->type != VSOCK_TYPE_STREAM) {
		queue_rst(m, h);	/* e.g. SEQPACKET, which we do not offer */
		return;
	}
	c = vs_find(m, h->src_port, h->dst_port);
	if (c)
		conn_pkt(m, c, h, payload);
	else if (h->op == VSOCK_OP_REQUEST)
		guest_connect(m, h);
	else
		queue_rst(m, h);
}

static void fill(struct vsock_mux *m, struct vsock_conn *c, struct vsock_hdr *h, uint16_t op,
		 uint32_t len)
{
	memset(h, 0, sizeof(*h));
	h->src_cid = VSOCK_HOST_CID;
	h->dst_cid = m->guest_cid;
	h->src_port = c->host_port;
	h->dst_port = c->guest_port;
	h->len = len;
	h->type = VSOCK_TYPE_STREAM;
	h->op = op;
	h->buf_alloc = VSOCK_BUF_ALLOC;
	h->fwd_cnt = c->fwd_cnt;
	c->fwd_advertised = c->fwd_cnt;
}

/* One owed control packet of @c into @h; false if none. */
static bool next_ctl(struct vsock_mux *m, struct vsock_conn *c, struct vsock_hdr *h)
{
	static const struct { unsigned bit; uint16_t op; } order[] = {
		{ VS_CTL_RST, VSOCK_OP_RST }, { VS_CTL_REQUEST, VSOCK_OP_REQUEST },
		{ VS_CTL_RESPONSE, VSOCK_OP_RESPONSE }, { VS_CTL_SHUTDOWN, VSOCK_OP_SHUTDOWN },
		{ VS_CTL_CREDIT, VSOCK_OP_CREDIT_UPDATE }, { VS_CTL_CREDIT_RQ, VSOCK_OP_CREDIT_REQUEST },
	};

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!(c->ctl & order[i].bit))
			continue;
		c->ctl &= ~order[i].bit;
		fill(m, c, h, order[i].op, 0);
		if (order[i].bit == VS_CTL_SHUTDOWN)
			h->flags = c->shut_flags;
		if (order[i].bit == VS_CTL_RST)
			vs_free(m, c);	/* after an RST nothing more is owed */
		return true;
	}
	return false;
}

/* The host end reached EOF: a half close, or the client is gone entirely. */
static void host_eof(struct vsock_mux *m, struct vsock_conn *c)
{
	c->host_eof = true;
	c->readable = false;
	c->shut_flags = VSOCK_SHUTDOWN_SEND;
	if (c->host_hup) {
		c->shut_flags |= VSOCK_SHUTDOWN_RCV;
		vs_close_fd(m, c);
		c->state = VS_CLOSING;	/* the guest answers with an RST */
	}
	c->ctl |= VS_CTL_SHUTDOWN;
	vs_rewatch(m, c);
}

/* Read host bytes for @c within the guest's credit. 1: packet; 0: none. */
static int next_data(struct vsock_mux *m, struct vsock_conn *c, struct vsock_hdr *h,
		     uint8_t *buf, size_t cap)
{
	uint32_t credit = peer_credit(c);
	size_t n = cap < VSOCK_MAX_PKT ? cap : VSOCK_MAX_PKT;
	ssize_t r;

	if (!credit) {
		if (c->credit_rq_sent)
			return 0;
		c->credit_rq_sent = true;
		fill(m, c, h, VSOCK_OP_CREDIT_REQUEST, 0);
		return 1;
	}
	n = n < credit ? n : credit;
	r = read(c->fd, buf, n);
	if (r > 0) {
		fill(m, c, h, VSOCK_OP_RW, (uint32_t)r);
		c->tx_cnt += (uint32_t)r;
		return 1;
	}
	if (r == 0) {
		host_eof(m, c);
	} else if (errno == EAGAIN || errno == EINTR) {
		c->readable = false;
		vs_rewatch(m, c);
	} else {
		reset_conn(m, c);
	}
	return next_ctl(m, c, h) ? 1 : 0;
}

int vsock_mux_next_pkt(struct vsock_mux *m, struct vsock_hdr *h, uint8_t *buf, size_t cap)
{
	if (m->rst_n) {
		*h = m->rst_q[--m->rst_n];
		return 1;
	}
	for (int i = 0; i < VSOCK_MAX_CONNS; i++)
		if (m->conns[i].state != VS_FREE && m->conns[i].ctl && next_ctl(m, &m->conns[i], h))
			return 1;
	for (int k = 0; k < VSOCK_MAX_CONNS; k++) {
		unsigned i = (m->rr + (unsigned)k) % VSOCK_MAX_CONNS;
		struct vsock_conn *c = &m->conns[i];

		if (c->state != VS_ESTABLISHED || !c->readable || c->fd < 0 || c->peer_shut_rcv)
			continue;
		if (next_data(m, c, h, buf, cap)) {
			m->rr = i + 1;
			return 1;
		}
	}
	return 0;
}

bool vsock_mux_pending(const struct vsock_mux *m)
{
	if (m->rst_n)
		return true;
	for (int i = 0; i < VSOCK_MAX_CONNS; i++) {
		const struct vsock_conn *c = &m->conns[i];

		if (c->state == VS_FREE)
			continue;
		if (c->ctl)
			return true;
		if (c->state == VS_ESTABLISHED && c->readable && c->fd >= 0 && !c->peer_shut_rcv &&
		    (peer_credit(c) || !c->credit_rq_sent))
			return true;
	}
	return false;
}
