/* Network policy rules: parse "example.com:443/tcp"-style rules, match them,
 * and load a whole policy from JSON. Pure logic: no KVM, no libslirp. */
#ifndef MVM_NET_RULES_H
#define MVM_NET_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_NAME_MAX 253 /* RFC 1035 §2.3.4: 255 octets on the wire = 253 chars */
#define NET_RULE_TEXT_MAX 320
#define NET_RULES_MAX 4096 /* a policy is small; the cap bounds a hostile JSON file */

/* A v4 or v6 address; v4 uses b[0..3]. family is AF_INET, AF_INET6 or 0. */
struct net_addr {
	int family;
	uint8_t b[16];
};

enum net_mode { NET_MODE_NONE, NET_MODE_ALLOWLIST, NET_MODE_OPEN };
enum net_action { NET_ALLOW, NET_DENY };

/* Protocol bits. A rule without /tcp or /udp matches every protocol,
 * including ICMP echo (which has no port, so only portless rules admit it). */
enum {
	NET_P_TCP = 1,
	NET_P_UDP = 2,
	NET_P_ICMP = 4,
	NET_P_ANY = 7,
};

enum net_rule_kind {
	NET_RULE_NAME,		/* example.com: exactly that name */
	NET_RULE_SUFFIX,	/* *.example.com: strict subdomains of it */
	NET_RULE_CIDR,		/* 203.0.113.0/24, [2001:db8::]/32, single hosts */
	NET_RULE_HOST_LOOPBACK, /* host-loopback: the gateway address = host 127.0.0.1 */
};

struct net_rule {
	enum net_rule_kind kind;
	enum net_action action;
	char name[NET_NAME_MAX + 1];  /* lower case, no trailing dot; SUFFIX: part after "*." */
	struct net_addr addr;	      /* CIDR: network address (host bits zero) */
	unsigned prefix;	      /* CIDR: prefix length */
	uint16_t port_lo, port_hi;    /* 0-65535 when no port was given */
	unsigned protos;	      /* NET_P_* bits */
	char text[NET_RULE_TEXT_MAX]; /* the rule as written, for events and removal */
};

struct net_rules {
	enum net_mode mode;
	struct net_rule *v;
	size_t n, cap;
	uint64_t gen; /* bumped on every change that may revoke something */
};

/* Where the slirp virtual network lives; defaults are slirp's own. */
struct net_config {
	struct net_addr net4, gw4, dns4;
	unsigned prefix4;
	struct net_addr net6, gw6, dns6;
	unsigned prefix6;
	uint32_t ttl_min, ttl_max;  /* DNS pin lifetime floor and cap, seconds */
	uint32_t ev_rate, ev_burst; /* event token bucket: events/second, bucket size */
	bool allow_dhcp;	    /* pass DHCPv4 to slirp's built-in server */
	/* How many slirp sockets the guest may hold open (limits.*): each
	 * admitted TCP connection, UDP flow or ICMP echo costs one host fd. */
	uint32_t max_conns;	    /* concurrent TCP connections */
	uint32_t max_flows;	    /* concurrent UDP flows and unanswered ICMP echos */
};

/* Defaults: 10.0.2.0/24 gw .2 dns .3, fec0::/64 gw ::2 dns ::3, TTL 30..300 s,
 * 10 events/s with a burst of 50, DHCP allowed, at most NET_DEF_MAX_CONNS
 * connections and NET_DEF_MAX_FLOWS datagram flows. */
#define NET_DEF_MAX_CONNS 256
#define NET_DEF_MAX_FLOWS 128
#define NET_LIMIT_MAX 4096 /* the tracking tables' size: no limit above it */
void net_config_default(struct net_config *c);

/* Parse "a.b.c.d", "a:b::c" (no brackets) into @a. Returns 0 or -EINVAL. */
int net_addr_parse(const char *s, struct net_addr *a);
/* Format without brackets. @buf needs 46 bytes (INET6_ADDRSTRLEN). */
const char *net_addr_format(const struct net_addr *a, char *buf, size_t len);
bool net_addr_equal(const struct net_addr *a, const struct net_addr *b);
bool net_addr_in_prefix(const struct net_addr *a, const struct net_addr *net, unsigned prefix);

/* Normalise a DNS name into @out (lower case, no trailing dot) and check
 * RFC 1035 §2.3.1 shape (labels 1..63 of [a-z0-9_-], total <= 253).
 * Returns 0, or -EINVAL with a message in @err. */
int net_name_normalize(const char *in, char *out, size_t outlen, char *err, size_t errlen);

/* Parse one rule. On error returns -EINVAL and writes what is wrong to @err. */
int net_rule_parse(const char *text, enum net_action act, struct net_rule *out, char *err,
		   size_t errlen) __attribute__((warn_unused_result));

void net_rules_init(struct net_rules *r, enum net_mode mode);
void net_rules_free(struct net_rules *r);
/* Add a rule (parsed from @text). Adding an identical rule twice is a no-op.
 * Returns 0, -EINVAL (message in @err), -ENOSPC or -ENOMEM. */
int net_rules_add(struct net_rules *r, enum net_action act, const char *text, char *err,
		  size_t errlen) __attribute__((warn_unused_result));
/* Remove the rule(s) whose text equals @text. Returns 0 or -ENOENT. */
int net_rules_remove(struct net_rules *r, const char *text);
void net_rules_set_mode(struct net_rules *r, enum net_mode mode);
int net_mode_parse(const char *s, enum net_mode *out);
const char *net_mode_name(enum net_mode m);
/* {"mode":"allowlist","allow":[RULE...],"deny":[RULE...]} (malloc'd), the
 * form of `mvm net show` and of policy.json's rule lists; NULL on ENOMEM. */
char *net_rules_to_json(const struct net_rules *rs);

/* Does the rule's port range and protocol set admit (port, proto bit)?
 * ICMP has no port: only rules without a port admit it. */
bool net_rule_match_port(const struct net_rule *r, uint16_t port, unsigned proto);
/* NAME/SUFFIX rule against a normalised name. */
bool net_rule_match_name(const struct net_rule *r, const char *name);
/* CIDR rule against a destination. */
bool net_rule_match_addr(const struct net_rule *r, const struct net_addr *a, uint16_t port,
			 unsigned proto);

/* First rule of @act whose name pattern matches @name (ports ignored), or NULL. */
const struct net_rule *net_rules_find_name(const struct net_rules *r, enum net_action act,
					   const char *name);
/* First name rule of @act matching @name AND (port, proto), or NULL. */
const struct net_rule *net_rules_find_name_port(const struct net_rules *r, enum net_action act,
						const char *name, uint16_t port, unsigned proto);
/* First CIDR rule of @act matching the destination, or NULL. With @exact, only
 * host rules (/32, /128) count: used for the gateway and DNS addresses. */
const struct net_rule *net_rules_find_addr(const struct net_rules *r, enum net_action act,
					   const struct net_addr *a, uint16_t port, unsigned proto,
					   bool exact);
/* First host-loopback rule of @act matching (port, proto), or NULL. */
const struct net_rule *net_rules_find_loopback(const struct net_rules *r, enum net_action act,
					       uint16_t port, unsigned proto);

/* Load a JSON policy (format: docs/network-policy.md) from a string or file,
 * replacing @r's mode and rules and updating @c. On error nothing is changed,
 * -EINVAL/-ENOENT/... is returned and @err says what is wrong. */
int net_policy_parse_json(const char *json, size_t len, struct net_rules *r, struct net_config *c,
			  char *err, size_t errlen) __attribute__((warn_unused_result));
int net_policy_load_file(const char *path, struct net_rules *r, struct net_config *c, char *err,
			 size_t errlen) __attribute__((warn_unused_result));

#endif
