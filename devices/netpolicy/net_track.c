/* Connection and flow tables (see net_track.h). Open addressing with a
 * short probe window; the hash is keyed at random so a guest cannot pick
 * ports that land in one window. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "devices/netpolicy/net_track.h"

#define PROBE 8 /* slots probed per lookup */

int net_track_init(struct net_policy *p)
{
	p->conns = calloc(NET_CONNS_MAX, sizeof(*p->conns));
	p->flows = calloc(NET_FLOWS_MAX, sizeof(*p->flows));
	if (!p->conns || !p->flows) {
		net_track_free(p);
		return -ENOMEM;
	}
	if (getrandom(&p->hash_key, sizeof(p->hash_key), GRND_NONBLOCK) != sizeof(p->hash_key))
		p->hash_key = (uint32_t)(uintptr_t)p->conns; /* ASLR: better than nothing */
	return 0;
}

void net_track_free(struct net_policy *p)
{
	free(p->conns);
	free(p->flows);
	p->conns = NULL;
	p->flows = NULL;
}

static uint32_t fnv(uint32_t h, const void *d, size_t n)
{
	const uint8_t *b = d;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static size_t slot(const struct net_policy *p, const struct net_addr *a, const struct net_addr *b,
		   uint16_t x, uint16_t y, size_t size)
{
	uint32_t h = fnv(2166136261u ^ p->hash_key, a->b, 16);

	h = fnv(h, b->b, 16);
	h = fnv(h, &x, sizeof(x));
	h = fnv(h, &y, sizeof(y));
	return h % size;
}

/* At the limit, idle entries outside the probe window may still count:
 * walk the whole table, at most once a second (a SYN flood at the limit
 * must not make every frame cost a table walk). */
static bool sweep_due(uint64_t *last, uint64_t now)
{
	if (*last && now - *last < 1000)
		return false;
	*last = now;
	return true;
}

/* ---- TCP connections ---- */

static void conn_key(const struct net_pkt *k, bool reverse, struct net_conn *c)
{
	memset(c, 0, sizeof(*c));
	c->src = reverse ? k->dst : k->src;
	c->dst = reverse ? k->src : k->dst;
	c->sport = reverse ? k->dport : k->sport;
	c->dport = reverse ? k->sport : k->dport;
}

/* Compares in place: the per-frame lookup builds no key (hot path). */
static bool conn_is(const struct net_conn *c, const struct net_pkt *k, bool reverse)
{
	return c->used && c->sport == (reverse ? k->dport : k->sport) &&
	       c->dport == (reverse ? k->sport : k->dport) &&
	       net_addr_equal(&c->src, reverse ? &k->dst : &k->src) &&
	       net_addr_equal(&c->dst, reverse ? &k->src : &k->dst);
}

static size_t conn_slot(const struct net_policy *p, const struct net_pkt *k, bool reverse)
{
	return reverse ? slot(p, &k->dst, &k->src, k->dport, k->sport, NET_CONNS_MAX)
		       : slot(p, &k->src, &k->dst, k->sport, k->dport, NET_CONNS_MAX);
}

void net_conn_closed(struct net_policy *p, struct net_conn *c, bool forget)
{
	if (c->counted) {
		c->counted = false;
		p->n_conns--;
	}
	if (forget)
		c->used = false;
}

/* Idle connections are forgotten (RFC 5382), closed ones sooner. */
static void conn_age(struct net_policy *p, struct net_conn *c, uint64_t now)
{
	uint64_t idle = c->fin == 3 ? NET_CONN_CLOSED_MS : NET_CONN_IDLE_MS;

	if (c->used && now - c->last_ms > idle)
		net_conn_closed(p, c, true);
}

struct net_conn *net_conn_find(struct net_policy *p, const struct net_pkt *k, bool reverse,
			       uint64_t now)
{
	size_t s = conn_slot(p, k, reverse);

	for (size_t i = 0; i < PROBE; i++) {
		struct net_conn *c = &p->conns[(s + i) % NET_CONNS_MAX];
		conn_age(p, c, now);
		if (conn_is(c, k, reverse))
			return c;
	}
	return NULL;
}

struct net_conn *net_conn_add(struct net_policy *p, const struct net_pkt *k, bool inbound,
			      uint64_t now, bool *full)
{
	struct net_conn key, *c = net_conn_find(p, k, inbound, now), *old = NULL;
	size_t s;

	*full = false;
	if (c && c->fin != 3)
		return c; /* a retransmitted SYN */
	if (c) /* the tuple again after a close: a new connection, a new socket */
		net_conn_closed(p, c, true);
	if (!inbound && p->n_conns >= p->cfg.max_conns && sweep_due(&p->sweep_ms[0], now))
		for (size_t i = 0; i < NET_CONNS_MAX; i++)
			conn_age(p, &p->conns[i], now);
	if (!inbound && p->n_conns >= p->cfg.max_conns)
		return NULL;
	conn_key(k, inbound, &key);
	s = conn_slot(p, k, inbound);
	/* A free slot, else the oldest that holds no slirp socket we count. */
	for (size_t i = 0; !c && i < PROBE; i++) {
		struct net_conn *x = &p->conns[(s + i) % NET_CONNS_MAX];
		if (!x->used)
			c = x;
		else if (!x->counted && (!old || x->last_ms < old->last_ms))
			old = x;
	}
	c = c ? c : old;
	if (!c) {
		*full = true;
		return NULL;
	}
	*c = key;
	c->used = true;
	c->inbound = inbound;
	c->counted = !inbound;
	c->last_ms = now;
	c->gen = p->rules.gen;
	p->n_conns += c->counted;
	return c;
}

/* ---- UDP flows and ICMP echos ---- */

/* libslirp 4.7.0 opens a socket per ICMPv4 echo request (closed when the
 * reply comes) and none for ICMPv6 echos to outside addresses. */
static bool is_echo_flow(const struct net_pkt *k)
{
	return k->proto == IPPROTO_ICMP;
}

/* The flow of a guest datagram (@reverse: of one towards the guest). */
static void flow_key(const struct net_pkt *k, bool reverse, struct net_flow *f)
{
	memset(f, 0, sizeof(*f));
	f->proto = k->proto;
	if (is_echo_flow(k)) {
		f->dst = reverse ? k->src : k->dst;
		f->port = k->icmp_id;
		f->seq = k->icmp_seq;
	} else {
		f->src = reverse ? k->dst : k->src;
		f->port = reverse ? k->dport : k->sport;
	}
}

static bool flow_same(const struct net_flow *a, const struct net_flow *b)
{
	return a->used && a->proto == b->proto && a->port == b->port && a->seq == b->seq &&
	       net_addr_equal(&a->src, &b->src) && net_addr_equal(&a->dst, &b->dst);
}

static void flow_forget(struct net_policy *p, struct net_flow *f)
{
	f->used = false;
	p->n_flows--;
}

static void flow_age(struct net_policy *p, struct net_flow *f, uint64_t now)
{
	if (f->used && now - f->last_ms > NET_FLOW_IDLE_MS)
		flow_forget(p, f);
}

static struct net_flow *flow_find(struct net_policy *p, const struct net_flow *key, uint64_t now,
				  struct net_flow **free_slot)
{
	size_t s = slot(p, &key->src, &key->dst, key->port, (uint16_t)(key->seq ^ key->proto),
			NET_FLOWS_MAX);

	*free_slot = NULL;
	for (size_t i = 0; i < PROBE; i++) {
		struct net_flow *f = &p->flows[(s + i) % NET_FLOWS_MAX];
		flow_age(p, f, now);
		if (flow_same(f, key))
			return f;
		if (!f->used && !*free_slot)
			*free_slot = f;
	}
	return NULL;
}

int net_flow_use(struct net_policy *p, const struct net_pkt *k, uint64_t now)
{
	struct net_flow key, *f, *free_slot;

	if (k->proto == IPPROTO_ICMPV6)
		return 0;
	flow_key(k, false, &key);
	f = flow_find(p, &key, now, &free_slot);
	if (f && is_echo_flow(k))
		return -EEXIST; /* the same echo again: slirp would open a socket per copy */
	if (!f && p->n_flows >= p->cfg.max_flows && sweep_due(&p->sweep_ms[1], now))
		for (size_t i = 0; i < NET_FLOWS_MAX; i++)
			flow_age(p, &p->flows[i], now);
	if (!f) {
		if (p->n_flows >= p->cfg.max_flows || !free_slot)
			return -EDQUOT;
		f = free_slot;
		*f = key;
		f->used = true;
		p->n_flows++;
	}
	f->last_ms = now;
	return 0;
}

void net_flow_inbound(struct net_policy *p, const struct net_pkt *k, uint64_t now)
{
	struct net_flow key, *f, *free_slot;
	bool echo = is_echo_flow(k);

	if (k->proto == IPPROTO_ICMPV6 || (echo && k->icmp_type != 0))
		return;
	flow_key(k, true, &key);
	f = flow_find(p, &key, now, &free_slot);
	if (f && echo)
		flow_forget(p, f);
	else if (f)
		f->last_ms = now;
}
