/*
 * vsock back-end, host side: the Unix sockets, connection slots, reading and
 * writing the host end of each stream. The guest-facing state machine is in
 * vsock_guest.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/vsock_mux.h"
#include "devices/vsock_mux_int.h"

void vsock_hdr_decode(const uint8_t b[VSOCK_HDR_SIZE], struct vsock_hdr *h)
{
	/* The wire layout is packed little-endian; x86 hosts only (as the VMM). */
	memcpy(&h->src_cid, b, 8);
	memcpy(&h->dst_cid, b + 8, 8);
	memcpy(&h->src_port, b + 16, 4);
	memcpy(&h->dst_port, b + 20, 4);
	memcpy(&h->len, b + 24, 4);
	memcpy(&h->type, b + 28, 2);
	memcpy(&h->op, b + 30, 2);
	memcpy(&h->flags, b + 32, 4);
	memcpy(&h->buf_alloc, b + 36, 4);
	memcpy(&h->fwd_cnt, b + 40, 4);
}

void vsock_hdr_encode(const struct vsock_hdr *h, uint8_t b[VSOCK_HDR_SIZE])
{
	memcpy(b, &h->src_cid, 8);
	memcpy(b + 8, &h->dst_cid, 8);
	memcpy(b + 16, &h->src_port, 4);
	memcpy(b + 20, &h->dst_port, 4);
	memcpy(b + 24, &h->len, 4);
	memcpy(b + 28, &h->type, 2);
	memcpy(b + 30, &h->op, 2);
	memcpy(b + 32, &h->flags, 4);
	memcpy(b + 36, &h->buf_alloc, 4);
	memcpy(b + 40, &h->fwd_cnt, 4);
}

/* Keep the owner's poll mask equal to what @c wants now. */
void vs_rewatch(struct vsock_mux *m, struct vsock_conn *c)
{
	uint32_t ev = 0;

	if (c->fd < 0)
		return;
	if (c->state == VS_HANDSHAKE)
		ev = EPOLLIN;
	else if (c->state == VS_ESTABLISHED) {
		if (!c->readable && !c->host_eof && !c->peer_shut_rcv)
			ev |= EPOLLIN;
		if (c->pend_len)
			ev |= EPOLLOUT;
	}
	/* HUP is reported whatever the mask: after it, poll nothing. */
	if (c->host_hup)
		ev = 0;
	if (ev == c->watched)
		return;
	if (m->ops->watch(m->opaque, c->fd, ev, c, c->watched == 0 && ev) == 0 || !ev)
		c->watched = ev;
}

void vs_close_fd(struct vsock_mux *m, struct vsock_conn *c)
{
	if (c->fd < 0)
		return;
	if (c->watched)
		m->ops->watch(m->opaque, c->fd, 0, c, false);
	close(c->fd);
	c->fd = -1;
	c->watched = 0;
}

void vs_free(struct vsock_mux *m, struct vsock_conn *c)
{
	vs_close_fd(m, c);
	free(c->pend);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->state = VS_FREE;
}

struct vsock_conn *vs_alloc(struct vsock_mux *m, int fd)
{
	struct vsock_conn *closing = NULL;

	for (int i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &m->conns[i];

		if (c->state == VS_FREE) {
			memset(c, 0, sizeof(*c));
			c->fd = fd;
			return c;
		}
		if (c->state == VS_CLOSING && !closing)
			closing = c;
	}
	/* Full: a connection only waiting for the guest's RST can go. */
	if (!closing)
		return NULL;
	vs_free(m, closing);
	closing->fd = fd;
	return closing;
}

struct vsock_conn *vs_find(struct vsock_mux *m, uint32_t guest_port, uint32_t host_port)
{
	for (int i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &m->conns[i];

		if (c->state != VS_FREE && c->guest_port == guest_port && c->host_port == host_port)
			return c;
	}
	return NULL;
}

static int make_listener(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64)) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

int vsock_mux_init(struct vsock_mux *m, uint64_t guest_cid, const char *path,
		   const struct vsock_host_ops *ops, void *opaque)
{
	int ret;

	memset(m, 0, sizeof(*m));
	for (int i = 0; i < VSOCK_MAX_CONNS; i++)
		m->conns[i].fd = -1;
	if (guest_cid < 3 || guest_cid > 0xffffffffu)
		return -EINVAL;
	m->guest_cid = guest_cid;
	m->ops = ops;
	m->opaque = opaque;
	/* Host-side ports for host-initiated connections, as Firecracker: high and unlikely to clash. */
	m->next_port = 1u << 30;
	snprintf(m->path, sizeof(m->path), "%s", path);
	m->listen_fd = make_listener(path);
	if (m->listen_fd < 0)
		return m->listen_fd;
	ret = ops->watch(opaque, m->listen_fd, EPOLLIN, NULL, true);
	if (ret) {
		close(m->listen_fd);
		m->listen_fd = -1;
	}
	return ret;
}

void vsock_mux_reset(struct vsock_mux *m)
{
	for (int i = 0; i < VSOCK_MAX_CONNS; i++)
		if (m->conns[i].state != VS_FREE)
			vs_free(m, &m->conns[i]);
	m->rst_n = 0;
}

void vsock_mux_fini(struct vsock_mux *m)
{
	vsock_mux_reset(m);
	if (m->listen_fd >= 0) {
		m->ops->watch(m->opaque, m->listen_fd, 0, NULL, false);
		close(m->listen_fd);
		unlink(m->path);
		m->listen_fd = -1;
	}
}

static void accept_one(struct vsock_mux *m)
{
	int fd = accept4(m->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct vsock_conn *c;

	if (fd < 0)
		return;
	c = vs_alloc(m, fd);
	if (!c) {
		close(fd);	/* too many connections: the client sees EOF */
		return;
	}
	c->state = VS_HANDSHAKE;
	vs_rewatch(m, c);
}

static uint32_t new_host_port(struct vsock_mux *m, uint32_t guest_port)
{
	for (;;) {
		uint32_t p = m->next_port++;

		if (m->next_port == 0xffffffffu)
			m->next_port = 1u << 30;
		if (!vs_find(m, guest_port, p))
			return p;
	}
}

/* "CONNECT <port>\n", one byte at a time so no stream byte is consumed early. */
static void handshake_read(struct vsock_mux *m, struct vsock_conn *c)
{
	unsigned long port;
	char *end;
	ssize_t r;

	while ((r = read(c->fd, c->line + c->line_len, 1)) == 1) {
		if (c->line[c->line_len] == '\n')
			break;
		if (++c->line_len == sizeof(c->line) - 1)
			goto bad;
	}
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0)
		goto bad;
	c->line[c->line_len] = 0;
	if (strncmp(c->line, "CONNECT ", 8) || c->line[8] < '0' || c->line[8] > '9')
		goto bad;
	errno = 0;
	port = strtoul(c->line + 8, &end, 10);
	if (errno || *end || port > 0xffffffffu)
		goto bad;
	c->guest_port = (uint32_t)port;
	c->host_port = new_host_port(m, c->guest_port);
	c->state = VS_CONNECTING;
	c->ctl |= VS_CTL_REQUEST;
	vs_rewatch(m, c);
	m->ops->kick(m->opaque);
	return;
bad:
	vs_free(m, c);
}

/* Write what the guest sent and we still hold; account it as forwarded. */
void vs_flush_pend(struct vsock_mux *m, struct vsock_conn *c)
{
	while (c->pend_len && c->fd >= 0) {
		ssize_t w = send(c->fd, c->pend + c->pend_off, c->pend_len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			break;
		if (w <= 0) {
			/* The host end is gone: the guest's stream is reset. */
			c->pend_len = 0;
			vs_close_fd(m, c);
			c->ctl |= VS_CTL_RST;
			m->ops->kick(m->opaque);
			return;
		}
		c->pend_off += (size_t)w;
		c->pend_len -= (size_t)w;
		c->fwd_cnt += (uint32_t)w;
	}
	if (!c->pend_len)
		c->pend_off = 0;
	vs_after_flush(m, c);
}

void vsock_mux_fd_event(struct vsock_mux *m, struct vsock_conn *c, uint32_t events)
{
	if (!c) {
		accept_one(m);
		return;
	}
	if (c->fd < 0)
		return;
	if (c->state == VS_HANDSHAKE) {
		handshake_read(m, c);
		return;
	}
	if (events & (EPOLLHUP | EPOLLERR)) {
		c->host_hup = true;
		c->readable = c->state == VS_ESTABLISHED && !c->host_eof;
	}
	if (c->state != VS_ESTABLISHED) {
		/* Client left before the guest answered: forget it; a late
		 * RESPONSE gets an RST. */
		if (c->host_hup) {
			vs_close_fd(m, c);
			c->state = VS_CLOSING;
			c->ctl = VS_CTL_RST;
			m->ops->kick(m->opaque);
		}
		return;
	}
	if (events & EPOLLOUT)
		vs_flush_pend(m, c);
	if (c->fd >= 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
		c->readable = true;
		m->ops->kick(m->opaque);
	}
	vs_rewatch(m, c);
}
