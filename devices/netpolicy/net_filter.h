/* Network policy decision: every guest Ethernet frame passes through
 * net_filter_frame() before libslirp sees it. Pure logic, no KVM, no slirp.
 *
 * Device glue, per frame the guest transmits:
 *
 *   struct net_filter_result *res;   (large: keep one per queue, not on a small stack)
 *   switch (net_filter_frame(pol, frame, len, res)) {
 *   case NET_PASS:    slirp_input(slirp, frame, len); break;
 *   case NET_DROP:    break;
 *   case NET_ANSWER:  deliver res->reply[0..res->reply_len) to the guest RX queue; break;
 *   case NET_RESOLVE: resolve res->dns.q.name (type res->dns.q.qtype) off the vCPU
 *                     thread, keep a copy of res->dns, then call
 *                     net_filter_dns_answer() (addresses) or net_filter_dns_response()
 *                     (raw upstream reply) or net_filter_dns_fail(); each yields
 *                     NET_ANSWER with the DNS reply frame for the guest.
 *   }
 *
 * and per frame slirp sends to the guest: net_filter_inbound() (pins
 * addresses from DNS-over-TCP answers and admits replies to host port
 * forwards). Events go to the callback set with net_policy_set_events()
 * (net_event_log_json appends them to an events.jsonl).
 *
 * A cheaper (weaker) NET_RESOLVE: hand the original frame to slirp_input()
 * and let slirp's forwarder answer; net_filter_inbound() then pins the
 * answer. Rebinding addresses are not pinned (so not reachable) but do
 * reach the guest, and TTLs are not capped. The glue should bound how many
 * resolutions it runs at once: a guest can ask for allowed names in a loop.
 *
 * Setup: net_policy_init(), net_policy_load() (--policy FILE) or
 * net_policy_allow()/net_policy_deny(), net_policy_set_events(). Teardown:
 * net_policy_free() (flushes a pending "suppressed" summary).
 * Single-threaded, like libslirp: call everything from the network thread. */
#ifndef MVM_NET_FILTER_H
#define MVM_NET_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns_msg.h"
#include "net_frame.h"
#include "net_pins.h"
#include "net_rules.h"

#define NET_CONNS_MAX 4096
#define NET_CONN_IDLE_MS ((2 * 60 + 4) * 60 * 1000ull) /* RFC 5382 REQ-5: 2 h 4 min */
#define NET_REASON_MAX (NET_RULE_TEXT_MAX + 64)

enum net_verdict { NET_PASS, NET_DROP, NET_ANSWER, NET_RESOLVE };

/* One denial. Written as a JSON line by net_event_to_json(). */
struct net_event {
	uint64_t time_ms;    /* wall clock, ms since the epoch */
	const char *type;    /* "net-deny" or "net-deny-suppressed" */
	const char *proto;   /* "tcp", "udp", "icmp", "icmpv6", "dns", "ip", "eth" */
	struct net_addr dst; /* family 0: none */
	uint16_t port;
	char name[NET_NAME_MAX + 1]; /* queried or pinned name, "" if none */
	char reason[NET_REASON_MAX];
	uint64_t suppressed; /* net-deny-suppressed: events dropped by the rate limit */
};

typedef void (*net_event_fn)(void *opaque, const struct net_event *ev);

/* A DNS query waiting for the glue to resolve it: everything needed to
 * build the reply frame later. Plain data: copy it freely. */
struct net_dns_pending {
	struct net_pkt pkt; /* addresses, ports, MACs of the query; pkt.frame is NULL */
	struct dns_query q;
	uint8_t msg[DNS_UDP_MAX]; /* the query up to the end of its question */
};

struct net_filter_result {
	enum net_verdict verdict;
	const char *why;  /* short reason for DROP/ANSWER (debug logging) */
	size_t reply_len; /* NET_ANSWER: frame for the guest */
	uint8_t reply[NET_REPLY_MAX];
	struct net_dns_pending dns; /* NET_RESOLVE */
};

/* A TCP connection the filter admitted (or a host port forward). */
struct net_conn {
	struct net_addr src, dst;
	uint16_t sport, dport;
	bool used;
	bool inbound; /* opened from outside (host port forward): not policy-checked */
	bool counted; /* holds one of limits.connections */
	uint8_t fin;  /* FIN seen: 1 from the guest, 2 from slirp */
	/* DNS over TCP to the virtual nameserver: the byte stream slirp
	 * receives must be exactly the bytes checked (net_filter.c). */
	bool vdns;
	bool ack_known;	    /* slirp_ack/slirp_win are from this connection's SYN */
	uint32_t isn;	    /* the guest's initial sequence number */
	uint32_t next_seq;  /* next stream byte the filter expects (and checked up to) */
	uint32_t slirp_ack; /* slirp's last acknowledgement: what it really holds */
	uint16_t slirp_win; /* and its last window, unscaled */
	uint64_t last_ms, gen;
};

/* A UDP flow (keyed by the guest's address and port, as slirp keys its
 * sockets) or an ICMP echo in flight (keyed by destination, id, sequence). */
struct net_flow {
	struct net_addr src, dst;
	uint16_t port, seq;
	uint8_t proto;
	bool used;
	uint64_t last_ms;
};

#define NET_FLOWS_MAX NET_LIMIT_MAX
#define NET_FLOW_IDLE_MS (240 * 1000ull) /* libslirp's SO_EXPIRE for UDP and ICMP sockets */
#define NET_CONN_CLOSED_MS (60 * 1000ull) /* a closed connection's last ACKs still pass */
#define NET_HOST_ADDRS_MAX 64

struct net_policy {
	struct net_rules rules;
	struct net_config cfg;
	struct net_pins pins;
	struct net_conn *conns;		    /* admitted TCP connections, NET_CONNS_MAX slots */
	struct net_flow *flows;		    /* UDP flows and ICMP echos, NET_FLOWS_MAX slots */
	uint32_t n_conns, n_flows;	    /* live ones, against cfg.max_conns/max_flows */
	uint32_t hash_key;		    /* random: the guest cannot aim at one probe window */
	uint64_t sweep_ms[2];		    /* last walk of each table for idle entries */
	struct net_addr host_addrs[NET_HOST_ADDRS_MAX]; /* the host's own interface addresses */
	size_t n_host_addrs;
	uint64_t (*clock_ms)(void *opaque); /* monotonic; overridable for tests */
	void *clock_opaque;
	net_event_fn on_event;
	void *event_opaque;
	uint64_t tokens_milli; /* event token bucket, in 1/1000 tokens */
	uint64_t bucket_ms;
	uint64_t suppressed;
};

/* Default config, @mode, no rules. Returns 0 or -ENOMEM. */
int net_policy_init(struct net_policy *p, enum net_mode mode) __attribute__((warn_unused_result));
void net_policy_free(struct net_policy *p);
/* Replace mode, rules and config from a JSON file (docs/network-policy.md).
 * Pins are kept; established connections are re-checked. */
int net_policy_load(struct net_policy *p, const char *path, char *err, size_t errlen)
    __attribute__((warn_unused_result));
int net_policy_load_json(struct net_policy *p, const char *json, size_t len, char *err,
			 size_t errlen) __attribute__((warn_unused_result));
/* Run-time changes. deny adds a deny rule (deny wins over allow); remove
 * deletes a rule by its text (either kind). Established connections that a
 * change revokes get a RST on their next packet. */
int net_policy_allow(struct net_policy *p, const char *rule, char *err, size_t errlen)
    __attribute__((warn_unused_result));
int net_policy_deny(struct net_policy *p, const char *rule, char *err, size_t errlen)
    __attribute__((warn_unused_result));
int net_policy_remove(struct net_policy *p, const char *rule);
void net_policy_set_mode(struct net_policy *p, enum net_mode mode);
void net_policy_set_events(struct net_policy *p, net_event_fn fn, void *opaque);
void net_policy_set_clock(struct net_policy *p, uint64_t (*fn)(void *), void *opaque);
/* The host's own addresses (net_host_addrs_read()): denied like the host
 * loopback unless a rule names the address exactly. Up to
 * NET_HOST_ADDRS_MAX are kept; call again to refresh. No event, no alloc. */
void net_policy_set_host_addrs(struct net_policy *p, const struct net_addr *a, size_t n);
/* Every address on the host's interfaces into @out (at most @cap); returns
 * how many, or -errno. A syscall: call it at start and from a timer, never
 * per frame. */
int net_host_addrs_read(struct net_addr *out, size_t cap);
/* Emit a pending "N events suppressed" summary now (e.g. from a timer). */
void net_policy_flush_events(struct net_policy *p);

/* Dry run for `mvm net check host:port/proto` (host: name, IPv4, [IPv6] or
 * host-loopback). Returns 1 allowed, 0 denied, -EINVAL (message in @why);
 * @why explains the decision. Does not emit events. */
int net_policy_check(struct net_policy *p, const char *spec, char *why, size_t whylen);

/* The decision for one guest frame. See the top of this file. */
enum net_verdict net_filter_frame(struct net_policy *p, const uint8_t *frame, size_t len,
				  struct net_filter_result *out);

/* Complete a NET_RESOLVE: pin the addresses (rebinding-checked) and build
 * the answer frame. @ttl of each record is the upstream TTL (seconds). */
enum net_verdict net_filter_dns_answer(struct net_policy *p, const struct net_dns_pending *q,
				       const struct dns_addr_rec *addrs, size_t n,
				       struct net_filter_result *out);
/* Same from a raw upstream DNS response to a query for q->q.name. */
enum net_verdict net_filter_dns_response(struct net_policy *p, const struct net_dns_pending *q,
					 const uint8_t *msg, size_t len,
					 struct net_filter_result *out);
/* Resolution failed: answer with @rcode (e.g. DNS_RCODE_SERVFAIL). */
enum net_verdict net_filter_dns_fail(struct net_policy *p, const struct net_dns_pending *q,
				     unsigned rcode, struct net_filter_result *out);

/* A frame slirp sends to the guest. Never blocks it (always NET_PASS). */
enum net_verdict net_filter_inbound(struct net_policy *p, const uint8_t *frame, size_t len);

struct cJSON;
/* @ev as an event of events.jsonl (common/events.h), or NULL (no memory). */
struct cJSON *net_event_json(const struct net_event *ev);
/* The same as one JSON line (no newline, NUL-terminated). Returns its
 * length, or -ENOSPC if @cap is too small (NET_EVENT_JSON_MAX always
 * suffices: names and reasons are bounded). */
#define NET_EVENT_JSON_MAX 2048
int net_event_to_json(const struct net_event *ev, char *buf, size_t cap);
/* Ready-made event callback: @opaque is the path of an events.jsonl
 * (appended through common/events.h, capped and rotated). */
void net_event_log_json(void *opaque, const struct net_event *ev);

#endif
