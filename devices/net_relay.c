/* The helper's side of the VMM <-> helper wire (net_relay.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mono_time.h"
#include "devices/dns_upstream.h"
#include "devices/net_chan.h"
#include "devices/net_relay.h"
#include "devices/net_slirp.h"
#include "devices/netpolicy/dns_msg.h"
#include "vmm/event_loop.h"

#define DNS_PENDING 64		/* queries in flight (the VMM has as many slots) */
#define DNS_TIMEOUT_MS 3000	/* the VMM gives up then too */
#define TICK_MS 250
#define READS_PER_ROUND 16	/* messages taken from the VMM before slirp runs */

struct dns_q {
	bool used;
	int fd;			/* this query's own socket: its own random source port */
	uint16_t id;		/* random */
	uint32_t seq;		/* the VMM's */
	uint64_t deadline;
};

struct net_relay {
	struct ev_loop *loop;
	int fd;
	struct net_slirp *slirp;
	struct nc_buf out;	/* the batch for the VMM */
	uint8_t *in;		/* one message from the VMM */
	int tick_fd, dns_ep;
	struct sockaddr_storage dns_addr; /* family 0: no upstream */
	socklen_t dns_addrlen;
	struct dns_q dns[DNS_PENDING];
};

/* Blocking: the VMM never blocks on its end, so this only waits for it to
 * catch up. The VMM gone: stop. */
static void out_flush(struct net_relay *r)
{
	if (!r->out.len)
		return;
	while (send(r->fd, r->out.b, r->out.len, MSG_NOSIGNAL) < 0) {
		if (errno == EINTR)
			continue;
		ev_stop(r->loop);
		break;
	}
	r->out.len = 0;
}

static void out_put(struct net_relay *r, uint32_t type, const void *a, size_t alen,
		    const void *b, size_t blen)
{
	if (nc_put(&r->out, type, a, alen, b, blen)) {
		out_flush(r);
		if (nc_put(&r->out, type, a, alen, b, blen))
			return; /* larger than a message: never from slirp (MTU 1500) */
	}
	if (r->out.len >= NC_BATCH)
		out_flush(r);
}

static void to_vmm(void *opaque, const uint8_t *frame, size_t len)
{
	out_put(opaque, NC_FRAME, NULL, 0, frame, len);
}

static void no_lock(void *opaque)
{
}

/* The end of every slirp round (net_slirp.h's unlock): send the batch. */
static void round_end(void *opaque)
{
	out_flush(opaque);
}

/* ---- upstream DNS ---- */

static void dns_reply(struct net_relay *r, uint32_t seq, int32_t err, const void *msg, size_t len)
{
	uint8_t hdr[8];

	memcpy(hdr, &seq, 4);
	memcpy(hdr + 4, &err, 4);
	out_put(r, NC_DNS_REPLY, hdr, sizeof(hdr), msg, len);
}

static void dns_end(struct dns_q *q)
{
	close(q->fd); /* leaves dns_ep with it */
	q->fd = -1;
	q->used = false;
}

/* NC_DNS_QUERY: u32 seq | u16 qtype | name. */
static void dns_query(struct net_relay *r, const uint8_t *p, size_t len)
{
	char name[NET_NAME_MAX + 1];
	struct dns_q *q = NULL;
	uint32_t seq;
	uint16_t qtype;
	int fd = -ENOSPC;

	if (len < 6 || len - 6 > NET_NAME_MAX)
		return;
	memcpy(&seq, p, 4);
	memcpy(&qtype, p + 4, 2);
	memcpy(name, p + 6, len - 6);
	name[len - 6] = 0;
	for (int i = 0; i < DNS_PENDING && !q; i++)
		if (!r->dns[i].used)
			q = &r->dns[i];
	if (!r->dns_addr.ss_family)
		fd = -ENOENT;
	else if (q && (qtype == DNS_T_A || qtype == DNS_T_AAAA))
		fd = dns_upstream_send((struct sockaddr *)&r->dns_addr, r->dns_addrlen, name, qtype,
				       &q->id);
	if (fd >= 0 &&
	    epoll_ctl(r->dns_ep, EPOLL_CTL_ADD, fd, &(struct epoll_event){EPOLLIN, {.ptr = q}})) {
		close(fd);
		fd = -ENOMEM;
	}
	if (fd < 0) {
		dns_reply(r, seq, fd, NULL, 0);
		return;
	}
	q->fd = fd;
	q->used = true;
	q->seq = seq;
	q->deadline = mono_now_ms() + DNS_TIMEOUT_MS;
}

/* A query's socket is connected: only the upstream's datagrams arrive. */
static void dns_read(struct net_relay *r, struct dns_q *q)
{
	uint8_t msg[4096];
	ssize_t len;

	while (q->used && (len = recv(q->fd, msg, sizeof(msg), MSG_DONTWAIT)) >= 0) {
		if (len < DNS_HDR_LEN || !(msg[2] & 0x80) ||
		    (uint16_t)(msg[0] << 8 | msg[1]) != q->id)
			continue;
		dns_end(q);
		dns_reply(r, q->seq, 0, msg, (size_t)len);
	}
}

static void on_dns(void *opaque, uint32_t events)
{
	struct net_relay *r = opaque;
	struct epoll_event evs[DNS_PENDING];
	int cnt = epoll_wait(r->dns_ep, evs, DNS_PENDING, 0);

	for (int i = 0; i < cnt; i++)
		dns_read(r, evs[i].data.ptr);
	out_flush(r);
}

static void on_tick(void *opaque, uint32_t events)
{
	struct net_relay *r = opaque;
	uint64_t now = mono_now_ms(), cnt;

	(void)!read(r->tick_fd, &cnt, sizeof(cnt));
	for (int i = 0; i < DNS_PENDING; i++)
		if (r->dns[i].used && now >= r->dns[i].deadline) {
			dns_end(&r->dns[i]);
			dns_reply(r, r->dns[i].seq, -ETIMEDOUT, NULL, 0);
		}
	out_flush(r);
}

/* ---- from the VMM ---- */

static void on_record(void *opaque, uint32_t type, const uint8_t *p, size_t len)
{
	struct net_relay *r = opaque;

	if (type == NC_FRAME)
		net_slirp_input(r->slirp, p, len);
	else if (type == NC_DNS_QUERY)
		dns_query(r, p, len);
}

static void on_vmm(void *opaque, uint32_t events)
{
	struct net_relay *r = opaque;

	for (int i = 0; i < READS_PER_ROUND; i++) {
		ssize_t n = recv(r->fd, r->in, NC_MSG_MAX, MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			ev_del(r->loop, r->fd);	/* the VMM closed its end, or died */
			ev_stop(r->loop);
			return;
		}
		if (n < 0)
			break;
		if (nc_parse(r->in, (size_t)n, on_record, r))
			log_warn("mvm-net: a malformed message from the VMM");
	}
	net_slirp_flush(r->slirp);
	out_flush(r);
}

int net_relay_hello(int fd, int ret, int landlock, const char *text)
{
	uint8_t buf[NC_REC_HDR + 8 + 512];
	struct nc_buf m = { buf, 0 };
	int32_t v[2] = { ret, landlock };
	size_t tl = text ? strnlen(text, 511) : 0;

	if (nc_put(&m, NC_HELLO, v, sizeof(v), text, tl) ||
	    send(fd, m.b, m.len, MSG_NOSIGNAL) != (ssize_t)m.len)
		return -errno;
	return 0;
}

static int publish_all(struct net_relay *r, const struct net_relay_cfg *cfg, char *err,
		       size_t errlen)
{
	int ret = 0;

	for (int i = 0; !ret && i < cfg->nr_publish; i++) {
		struct net_publish p;

		ret = net_publish_parse(cfg->publish[i], &p, err, errlen);
		if (!ret)
			ret = net_slirp_publish(r->slirp, &p, err, errlen);
	}
	if (!ret && cfg->dns_server &&
	    net_dns_server_parse(cfg->dns_server, &r->dns_addr, &r->dns_addrlen)) {
		snprintf(err, errlen, "--dns-server %s: not an address", cfg->dns_server);
		ret = -EINVAL;
	}
	return ret;
}

int net_relay_create(struct ev_loop *loop, int fd, const struct net_relay_cfg *cfg,
		     struct net_relay **out, char *err, size_t errlen)
{
	struct net_slirp_cb cb = { to_vmm, no_lock, round_end, NULL };
	struct net_relay *r = calloc(1, sizeof(*r));
	int ret = -ENOMEM;

	if (!r)
		goto fail;
	r->loop = loop;
	r->fd = fd;
	r->tick_fd = r->dns_ep = -1;
	r->out.b = malloc(NC_MSG_MAX);
	r->in = malloc(NC_MSG_MAX);
	if (!r->out.b || !r->in)
		goto fail;
	cb.opaque = r;
	ret = net_slirp_create(loop, cfg->host_loopback, &cb, &r->slirp, err, errlen);
	if (ret)
		goto out;
	ret = publish_all(r, cfg, err, errlen);
	if (ret)
		goto out;
	r->dns_ep = epoll_create1(EPOLL_CLOEXEC);
	ret = r->dns_ep < 0 ? -errno : ev_add(loop, r->dns_ep, EPOLLIN, on_dns, r);
	if (!ret) {
		r->tick_fd = ev_timer(loop, TICK_MS, TICK_MS, on_tick, r);
		ret = r->tick_fd < 0 ? r->tick_fd : 0;
	}
	if (!ret)
		ret = ev_add(loop, fd, EPOLLIN, on_vmm, r);
	if (ret)
		goto fail;
	*out = r;
	return 0;
fail:
	snprintf(err, errlen, "network helper: %s", strerror(-ret));
out:
	net_relay_destroy(r);
	return ret;
}

void net_relay_destroy(struct net_relay *r)
{
	if (!r)
		return;
	for (int i = 0; i < DNS_PENDING; i++)
		if (r->dns[i].used)
			dns_end(&r->dns[i]);
	if (r->dns_ep >= 0)
		close(r->dns_ep);
	if (r->tick_fd >= 0)
		close(r->tick_fd);
	net_slirp_destroy(r->slirp);
	free(r->out.b);
	free(r->in);
	free(r);
}
