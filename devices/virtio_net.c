/*
 * virtio-net (virtio 1.2 §5.1) on libslirp, deny by default: every frame
 * the guest sends goes through the policy engine (devices/netpolicy/net_filter.h)
 * before slirp sees it; every frame slirp sends goes through
 * net_filter_inbound() on its way to the guest. One RX and one TX queue,
 * VIRTIO_NET_F_MAC, the 12-byte header of VERSION_1. The one offload is
 * VIRTIO_NET_F_GUEST_CSUM: every frame for the guest was built on this host
 * by slirp (or by the filter's DNS answers) and never crossed a wire, so it
 * is marked DATA_VALID and the guest does not verify its checksums again
 * (QEMU cannot do this with user networking: its slirp peer has no virtio
 * header). The guest's own frames still carry full checksums.
 *
 * libslirp runs in the network helper process (devices/net_helper.h,
 * mvm-net), never in the VMM: the frames the filter passed go there in
 * batches, slirp's frames come back. When the helper cannot take more, TX
 * waits in the guest's queue until it can.
 *
 * DNS for allowed names (NET_RESOLVE): the question goes to --dns-server (or
 * the host's first /etc/resolv.conf nameserver) through the helper (which
 * owns the host network: its own socket, random source port and id per
 * query); the raw answer goes back to net_filter_dns_response() here; no
 * answer within DNS_TIMEOUT_MS is SERVFAIL. Nothing here blocks the loop.
 * Frames for the guest wait in a bounded ring when it has posted no RX
 * buffers and are flushed on its RX kick.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "devices/net_helper.h"
#include "devices/net_publish.h"
#include "devices/netpolicy/net_filter.h"
#include "devices/virtio_devices.h"
#include "devices/virtio_mmio.h"
#include "common/log.h"
#include "vmm/vm.h"

#define VIRTIO_NET_F_GUEST_CSUM 1
#define VIRTIO_NET_F_MAC 5
#define VIRTIO_NET_HDR_F_DATA_VALID 2
#define NET_RX 0
#define NET_TX 1
#define NET_QUEUE_SIZE 256
#define NET_HDR_LEN 12		/* struct virtio_net_hdr with num_buffers (VERSION_1) */
#define TX_MAX 65550		/* header + the largest frame we accept from the guest */
#define RX_SLOTS 256		/* frames waiting for guest RX buffers */
#define RX_SLOT_LEN 1536	/* slirp's MTU 1500 + Ethernet header */
#define DNS_PENDING 64		/* resolutions in flight */
#define DNS_TIMEOUT_MS 3000
#define TICK_MS 250

/* Without a sandbox's own address (`mvm run` before config.json had one). */
static const uint8_t default_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

struct dns_slot {
	bool used;
	uint32_t seq;		/* the helper's answer names it */
	uint64_t deadline;
	struct net_dns_pending q;
};

struct vnet {
	struct virtio_dev *d;
	uint8_t mac[6];		/* config space: what the guest driver reads at probe */
	struct vm *vm;
	struct net_policy pol;
	bool pol_ok;
	struct net_helper *helper;
	bool loopback_on;	/* slirp may reach the host's 127.0.0.1 */
	struct net_filter_result res;
	struct vq_chain chain;
	uint8_t tx[TX_MAX];
	/* RX ring */
	uint8_t (*rx)[RX_SLOT_LEN];
	uint16_t rx_len[RX_SLOTS];
	unsigned rx_head, rx_count;
	uint64_t rx_dropped, tx_dropped;
	bool rx_irq;		/* used RX buffers not yet signalled (one interrupt per round) */
	/* events */
	char *events;		/* events.jsonl path (common/events.h); NULL: none */
	bool events_stderr_summary;
	uint64_t denied;
	char first_denied[NET_EVENT_JSON_MAX];
	/* resolver */
	int tick_fd;
	uint32_t dns_seq;
	struct sockaddr_storage dns_addr; /* family 0: no upstream */
	socklen_t dns_addrlen;
	char dns_name[160];
	bool dns_warned;
	struct dns_slot dns[DNS_PENDING];
};

/* ---- RX: frames for the guest ---- */

/* One frame into the guest's next RX buffer; false when it has posted none. */
static bool rx_put(struct vnet *n, const uint8_t *frame, size_t len)
{
	struct virtqueue *vq = &n->d->vq[NET_RX];
	uint8_t hdr[NET_HDR_LEN] = { 0 };

	if (!vq->ready || vq->broken || vq_pop(vq, &n->chain) != 1)
		return false;
	if (n->chain.writable >= NET_HDR_LEN + len) {
		if (n->d->driver_features & 1ULL << VIRTIO_NET_F_GUEST_CSUM)
			hdr[0] = VIRTIO_NET_HDR_F_DATA_VALID;
		hdr[10] = 1; /* num_buffers, little-endian */
		vq_chain_write(&n->chain, 0, hdr, NET_HDR_LEN);
		vq_chain_write(&n->chain, NET_HDR_LEN, frame, len);
		vq_push(vq, n->chain.head, (uint32_t)(NET_HDR_LEN + len));
	} else {
		n->rx_dropped++; /* buffer too small: the guest's loss */
		vq_push(vq, n->chain.head, 0);
	}
	n->rx_irq = true;
	return true;
}

static void rx_flush(struct vnet *n)
{
	while (n->rx_count && rx_put(n, n->rx[n->rx_head], n->rx_len[n->rx_head])) {
		n->rx_head = (n->rx_head + 1) % RX_SLOTS;
		n->rx_count--;
	}
	/* Empty: the next burst starts at slot 0, so the ring's pages the VMM
	 * ever touched are those of its largest burst, not all 384 KiB. */
	if (!n->rx_count)
		n->rx_head = 0;
}

/* End of a round (a kick, a slirp poll, a DNS reply): one interrupt. */
static void rx_signal(struct vnet *n)
{
	if (n->rx_irq) {
		n->rx_irq = false;
		virtio_notify_used(n->d, NET_RX);
	}
}

static void rx_deliver(struct vnet *n, const uint8_t *frame, size_t len)
{
	unsigned slot;

	if (len > RX_SLOT_LEN || !n->d->vq[NET_RX].ready) {
		n->rx_dropped++;
		return;
	}
	if (n->rx_count)
		rx_flush(n);
	/* Straight into a guest buffer when nothing waits: one copy, not two. */
	if (!n->rx_count && rx_put(n, frame, len))
		return;
	if (n->rx_count == RX_SLOTS) {
		n->rx_dropped++;
		return;
	}
	slot = (n->rx_head + n->rx_count) % RX_SLOTS;
	memcpy(n->rx[slot], frame, len);
	n->rx_len[slot] = (uint16_t)len;
	n->rx_count++;
}

static void from_helper(void *opaque, const uint8_t *frame, size_t len)
{
	struct vnet *n = opaque;

	net_filter_inbound(&n->pol, frame, len);
	rx_deliver(n, frame, len);
}

static void dev_lock(void *opaque)
{
	struct vnet *n = opaque;

	pthread_mutex_lock(&n->d->lock);
}

static void dev_unlock(void *opaque)
{
	struct vnet *n = opaque;

	rx_signal(n);
	pthread_mutex_unlock(&n->d->lock);
}

/* ---- the resolver for NET_RESOLVE ---- */

static void answer(struct vnet *n, enum net_verdict v)
{
	if (v == NET_ANSWER)
		rx_deliver(n, n->res.reply, n->res.reply_len);
}

static void dns_warn(struct vnet *n, const char *why)
{
	if (!n->dns_warned) {
		n->dns_warned = true;
		log_warn("virtio-net: DNS server %s: %s: allowed names will not resolve",
			 n->dns_name[0] ? n->dns_name : "(none)", why);
	}
}

static void dns_start(struct vnet *n, const struct net_dns_pending *pq)
{
	struct dns_slot *s = NULL;
	int ret = -ENOENT;

	/* Only addresses are looked up; other types of allowed names get an
	 * empty NOERROR answer (docs/network-policy.md). */
	if (pq->q.qtype != DNS_T_A && pq->q.qtype != DNS_T_AAAA) {
		answer(n, net_filter_dns_answer(&n->pol, pq, NULL, 0, &n->res));
		return;
	}
	for (int i = 0; i < DNS_PENDING && !s; i++)
		if (!n->dns[i].used)
			s = &n->dns[i];
	if (s && n->dns_addr.ss_family)
		ret = net_helper_dns(n->helper, ++n->dns_seq, pq->q.qtype, pq->q.name);
	if (ret) {
		if (s)
			dns_warn(n, n->dns_addr.ss_family ? strerror(-ret)
							  : "no nameserver in /etc/resolv.conf");
		answer(n, net_filter_dns_fail(&n->pol, pq, DNS_RCODE_SERVFAIL, &n->res));
		return;
	}
	s->seq = n->dns_seq;
	s->used = true;
	s->deadline = mono_now_ms() + DNS_TIMEOUT_MS;
	s->q = *pq;
}

/* The helper's answer (it checked the id): the filter parses the message. */
static void from_helper_dns(void *opaque, uint32_t seq, int err, const uint8_t *msg, size_t len)
{
	struct vnet *n = opaque;
	struct dns_slot *s = NULL;

	for (int i = 0; i < DNS_PENDING && !s; i++)
		if (n->dns[i].used && n->dns[i].seq == seq)
			s = &n->dns[i];
	if (!s)
		return;	/* timed out here already */
	s->used = false;
	if (err) {
		dns_warn(n, strerror(-err));
		answer(n, net_filter_dns_fail(&n->pol, &s->q, DNS_RCODE_SERVFAIL, &n->res));
	} else {
		answer(n, net_filter_dns_response(&n->pol, &s->q, msg, len, &n->res));
	}
}

/* The host's interface addresses, for the policy. Read once, while the
 * device is built: once confined, the event loop may not open the netlink
 * socket getifaddrs needs (vmm/confine/seccomp_main.c), so an address the
 * host gains later is unknown to a running sandbox (docs/network-policy.md). */
static void read_host_addrs(struct vnet *n)
{
	struct net_addr a[NET_HOST_ADDRS_MAX];
	int cnt = net_host_addrs_read(a, NET_HOST_ADDRS_MAX);

	if (cnt >= 0)
		net_policy_set_host_addrs(&n->pol, a, (size_t)cnt);
}

static void on_tick(void *opaque, uint32_t events)
{
	struct vnet *n = opaque;
	uint64_t now = mono_now_ms(), cnt;

	(void)!read(n->tick_fd, &cnt, sizeof(cnt));
	pthread_mutex_lock(&n->d->lock);
	for (int i = 0; i < DNS_PENDING; i++) {
		struct dns_slot *s = &n->dns[i];

		if (s->used && now >= s->deadline) {
			s->used = false;
			answer(n, net_filter_dns_fail(&n->pol, &s->q, DNS_RCODE_SERVFAIL, &n->res));
		}
	}
	net_policy_flush_events(&n->pol);
	rx_signal(n);
	pthread_mutex_unlock(&n->d->lock);
}

static int host_nameserver(char *out, size_t cap)
{
	char line[256], addr[128];
	FILE *f = fopen("/etc/resolv.conf", "re");
	int ret = -ENOENT;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " nameserver %127s", addr) == 1) {
			snprintf(out, cap, strchr(addr, ':') ? "[%s]" : "%s", addr);
			ret = 0;
			break;
		}
	if (f)
		fclose(f);
	return ret;
}

/* Parse the upstream now (a bad --dns-server is a usage error); each query
 * opens its own socket, so a host without a route to it is quiet until a
 * name is asked. */
static int resolver_open(struct vnet *n, const char *server, char *err, size_t errlen)
{
	if (!server) {
		if (host_nameserver(n->dns_name, sizeof(n->dns_name)))
			return 0;
		server = n->dns_name;
	} else {
		snprintf(n->dns_name, sizeof(n->dns_name), "%s", server);
	}
	if (net_dns_server_parse(server, &n->dns_addr, &n->dns_addrlen)) {
		snprintf(err, errlen, "--dns-server %s: expected ADDR, ADDR:PORT or [ADDR6]:PORT",
			 server);
		return -EINVAL;
	}
	return 0;
}

/* ---- TX: frames from the guest ---- */

static void handle_frame(struct vnet *n, const uint8_t *f, size_t len)
{
	switch (net_filter_frame(&n->pol, f, len, &n->res)) {
	case NET_PASS:
		if (net_helper_frame(n->helper, f, len) == -ENOSPC)
			n->tx_dropped++; /* cannot happen: TX stops while blocked */
		break;
	case NET_ANSWER:
		rx_deliver(n, n->res.reply, n->res.reply_len);
		break;
	case NET_RESOLVE:
		dns_start(n, &n->res.dns);
		break;
	case NET_DROP:
		break;
	}
}

static void net_notify(struct virtio_dev *d, uint16_t q)
{
	struct vnet *n = d->priv;
	struct virtqueue *vq = &d->vq[q];
	int done = 0;

	if (q == NET_RX) {
		rx_flush(n);
		rx_signal(n);
		return;
	}
	if (q != NET_TX)
		return;
	while (!net_helper_blocked(n->helper) && vq_pop(vq, &n->chain) == 1) {
		uint64_t len = n->chain.readable;

		if (len <= NET_HDR_LEN || len > TX_MAX) {
			vq_push(vq, n->chain.head, 0);
			done++;
			continue;
		}
		vq_chain_read(&n->chain, 0, n->tx, len);
		vq_push(vq, n->chain.head, 0);
		done++;
		handle_frame(n, n->tx + NET_HDR_LEN, (size_t)len - NET_HDR_LEN);
	}
	net_helper_flush(n->helper);
	if (vq->broken)
		log_warn("virtio-net: guest sent a malformed chain; queue stopped");
	if (done)
		virtio_notify_used(d, q);
	rx_signal(n);
}

static void net_read_config(struct virtio_dev *d, uint32_t off, uint8_t *data, uint32_t len)
{
	struct vnet *n = d->priv;

	memcpy(data, n->mac + off, len);
}

static void net_reset(struct virtio_dev *d)
{
	struct vnet *n = d->priv;

	n->rx_head = n->rx_count = 0;
}

/* ---- events ---- */

static void on_event(void *opaque, const struct net_event *ev)
{
	struct vnet *n = opaque;

	if (n->events)
		net_event_log_json(n->events, ev);
	if (strcmp(ev->type, "net-deny"))
		return;
	if (!n->denied++)
		net_event_to_json(ev, n->first_denied, sizeof(n->first_denied));
}

static void net_destroy(struct virtio_dev *d)
{
	struct vnet *n = d->priv;

	if (!n)
		return;
	if (n->vm->net == n)
		n->vm->net = NULL;
	net_helper_destroy(n->helper);
	if (n->tick_fd >= 0) {
		ev_del(&n->vm->loop, n->tick_fd);
		close(n->tick_fd);
	}
	if (n->pol_ok)
		net_policy_free(&n->pol);
	if (n->rx_dropped)
		log_debug("virtio-net: %llu frames for the guest dropped (no RX buffers)",
			  (unsigned long long)n->rx_dropped);
	if (n->events_stderr_summary && n->denied)
		fprintf(stderr, "mvm: network: %llu connection attempt(s) denied; first: %s\n",
			(unsigned long long)n->denied, n->first_denied);
	free(n->events);
	free(n->rx);
	free(n);
}

/* Waits for the network helper (below). */
static int net_start(struct virtio_dev *d);

static const struct virtio_dev_ops net_ops = {
	.name = "virtio-net",
	.device_id = VIRTIO_ID_NET,
	.features = 1ULL << VIRTIO_NET_F_MAC | 1ULL << VIRTIO_NET_F_GUEST_CSUM |
		    1ULL << VIRTIO_F_EVENT_IDX,
	.num_queues = 2,
	.queue_max = NET_QUEUE_SIZE,
	.config_size = 6,
	.read_config = net_read_config,
	.notify = net_notify,
	.reset = net_reset,
	.start = net_start,
	.destroy = net_destroy,
};

/* The host loopback is reachable only when a rule names it (slirp config). */
static bool loopback_allowed(const struct net_policy *p)
{
	for (size_t i = 0; i < p->rules.n; i++) {
		const struct net_rule *r = &p->rules.v[i];

		if (r->action != NET_ALLOW)
			continue;
		if (r->kind == NET_RULE_HOST_LOOPBACK)
			return true;
		if (r->kind == NET_RULE_CIDR && r->prefix == 32 &&
		    net_addr_equal(&r->addr, &p->cfg.gw4))
			return true;
	}
	return false;
}

static int setup_policy(struct vnet *n, const struct vm_net *c, char *err, size_t errlen)
{
	enum net_mode mode = NET_MODE_ALLOWLIST;
	char e[512];
	int ret;

	if (c->mode && net_mode_parse(c->mode, &mode)) {
		snprintf(err, errlen, "--net %s: expected none, allowlist or open", c->mode);
		return -EINVAL;
	}
	ret = net_policy_init(&n->pol, mode);
	if (ret)
		return ret;
	n->pol_ok = true;
	if (c->policy_path) {
		ret = net_policy_load(&n->pol, c->policy_path, e, sizeof(e));
		if (ret) {
			snprintf(err, errlen, "--policy %s: %s", c->policy_path, e);
			return ret;
		}
		if (c->mode)
			net_policy_set_mode(&n->pol, mode);
	}
	for (int i = 0; i < c->nr_allow; i++) {
		ret = net_policy_allow(&n->pol, c->allow[i], e, sizeof(e));
		if (ret) {
			snprintf(err, errlen, "--allow %s: %s", c->allow[i], e);
			return ret;
		}
	}
	if (c->events_path) {
		/* Appended to per event; fail now if it cannot be. */
		int fd = open(c->events_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

		if (fd < 0 || !(n->events = strdup(c->events_path))) {
			ret = fd < 0 ? -errno : -ENOMEM;
			snprintf(err, errlen, "--events %s: %s", c->events_path, strerror(-ret));
			if (fd >= 0)
				close(fd);
			return ret;
		}
		close(fd);
	} else {
		n->events_stderr_summary = true;
	}
	net_policy_set_events(&n->pol, on_event, n);
	read_host_addrs(n);
	return 0;
}

int virtio_net_rule(struct vm *vm, const char *verb, const char *rule, char *err, size_t errlen)
{
	struct vnet *n = vm->net;
	int ret;

	if (!n || !n->d) {
		snprintf(err, errlen, "this VM has no network device");
		return -ENODEV;
	}
	if (!strcmp(verb, "allow") && !n->loopback_on) {
		struct net_rule r;

		/* slirp's host-loopback switch is fixed when it starts. */
		if (!net_rule_parse(rule, NET_ALLOW, &r, err, errlen) &&
		    (r.kind == NET_RULE_HOST_LOOPBACK ||
		     (r.kind == NET_RULE_CIDR && r.prefix == 32 &&
		      net_addr_equal(&r.addr, &n->pol.cfg.gw4)))) {
			snprintf(err, errlen, "the host loopback can only be allowed when the VM starts");
			return -ENOTSUP;
		}
	}
	pthread_mutex_lock(&n->d->lock);
	if (!strcmp(verb, "allow")) {
		ret = net_policy_allow(&n->pol, rule, err, errlen);
	} else if (!strcmp(verb, "deny")) {
		ret = net_policy_deny(&n->pol, rule, err, errlen);
	} else if (!strcmp(verb, "remove")) {
		ret = net_policy_remove(&n->pol, rule);
		if (ret)
			snprintf(err, errlen, "no rule '%s'", rule);
	} else {
		snprintf(err, errlen, "unknown verb %s", verb);
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&n->d->lock);
	return ret;
}

int virtio_net_check(struct vm *vm, const char *dest, char *why, size_t whylen)
{
	struct vnet *n = vm->net;
	int ret;

	if (!n || !n->d) {
		snprintf(why, whylen, "this VM has no network device");
		return -ENODEV;
	}
	pthread_mutex_lock(&n->d->lock);
	ret = net_policy_check(&n->pol, dest, why, whylen);
	pthread_mutex_unlock(&n->d->lock);
	return ret;
}

char *virtio_net_show(struct vm *vm)
{
	struct vnet *n = vm->net;
	char *out;

	if (!n || !n->d)
		return NULL;
	pthread_mutex_lock(&n->d->lock);
	out = net_rules_to_json(&n->pol.rules);
	pthread_mutex_unlock(&n->d->lock);
	return out;
}

/* The frames waiting in the TX queue, once the helper can take them. */
static void helper_writable(void *opaque)
{
	struct vnet *n = opaque;

	if (n->d->vq[NET_TX].ready)
		net_notify(n->d, NET_TX);
}

static void helper_dead(void *opaque)
{
}

/* Check --publish here (a usage error before any process starts); the
 * helper listens. */
static int start_helper(struct vnet *n, const struct vm_net *c, char *err, size_t errlen)
{
	struct net_helper_cb cb = { from_helper, from_helper_dns, helper_writable, helper_dead,
				    dev_lock, dev_unlock, n };
	struct net_helper_cfg hc = {
		.host_loopback = n->loopback_on,
		.publish = c->publish,
		.nr_publish = c->nr_publish,
	};
	int ret = 0;

	for (int i = 0; !ret && i < c->nr_publish; i++) {
		struct net_publish p;

		ret = net_publish_parse(c->publish[i], &p, err, errlen);
	}
	if (!ret)
		ret = resolver_open(n, c->dns_server, err, errlen);
	/* the upstream resolver_open found, for the helper's queries */
	hc.dns_server = n->dns_addr.ss_family ? n->dns_name : NULL;
	if (!ret)
		ret = net_helper_spawn(&n->vm->loop, &hc, &cb, &n->helper, err, errlen);
	return ret;
}

int virtio_net_ready(struct vm *vm, char *err, size_t errlen)
{
	struct vnet *n = vm->net;

	return n && n->helper ? net_helper_ready(n->helper, err, errlen) : 0;
}

/* Before any vCPU runs, whoever built the VM: the helper said it is set up. */
static int net_start(struct virtio_dev *d)
{
	struct vnet *n = d->priv;
	char err[512] = "";
	int ret = virtio_net_ready(n->vm, err, sizeof(err));

	if (ret) {
		log_error("virtio-net: %s", err);
		return ret;
	}
	/* Frames a restored guest had queued waited for the helper: now. */
	pthread_mutex_lock(&d->lock);
	helper_writable(n);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

static bool mac_given(const uint8_t *mac)
{
	static const uint8_t zero[6];

	return memcmp(mac, zero, sizeof(zero)) != 0;
}

int virtio_net_create(struct vm *vm, const struct vm_net *c, char *err, size_t errlen)
{
	struct vnet *n = calloc(1, sizeof(*n));
	struct virtio_dev *d;
	int ret;

	if (!n)
		return -ENOMEM;
	n->vm = vm;
	memcpy(n->mac, mac_given(c->mac) ? c->mac : default_mac, sizeof(n->mac));
	n->tick_fd = -1;
	n->rx = calloc(RX_SLOTS, RX_SLOT_LEN);
	ret = n->rx ? setup_policy(n, c, err, errlen) : -ENOMEM;
	if (ret) {
		n->d = NULL;
		if (n->pol_ok)
			net_policy_free(&n->pol);
		free(n->events);
		free(n->rx);
		free(n);
		return ret;
	}
	ret = virtio_mmio_create(vm, &net_ops, n, &d);
	if (ret)
		return ret; /* net_destroy freed n */
	n->d = d;
	n->loopback_on = c->runtime_rules || loopback_allowed(&n->pol);
	ret = start_helper(n, c, err, errlen);
	if (!ret) {
		vm->net = n;
		n->tick_fd = ev_timer(&vm->loop, TICK_MS, TICK_MS, on_tick, n);
		ret = n->tick_fd < 0 ? n->tick_fd : 0;
	}
	return ret; /* on failure vm_destroy calls net_destroy */
}

int virtio_net_helper_pid(struct vm *vm, int *landlock)
{
	struct vnet *n = vm->net;

	if (landlock)
		*landlock = n ? net_helper_landlock(n->helper) : 0;
	return n ? net_helper_pid(n->helper) : 0;
}
