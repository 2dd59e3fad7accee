/* Per-sandbox DNS pin set: which addresses were resolved for which allowed
 * name, so a name rule admits only those addresses (and only while the pin
 * lives). Also the DNS-rebinding guard for answers. */
#ifndef MVM_NET_PINS_H
#define MVM_NET_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_rules.h"

#define NET_PINS_MAX 4096 /* bounds memory however many names the guest resolves */

struct net_pin {
	char name[NET_NAME_MAX + 1];
	struct net_addr addr;
	uint64_t expires_ms;
};

struct net_pins {
	struct net_pin *v;
	size_t n, max;
	uint32_t ttl_min, ttl_max;
};

/* Special-purpose ranges an allowed name must not resolve into. */
enum net_addr_class {
	NET_ADDR_PUBLIC,
	NET_ADDR_UNSPECIFIED, /* 0.0.0.0/8, :: */
	NET_ADDR_LOOPBACK,    /* 127/8, ::1 */
	NET_ADDR_PRIVATE,     /* RFC 1918 */
	NET_ADDR_CGNAT,	      /* RFC 6598 100.64/10 */
	NET_ADDR_LINKLOCAL,   /* 169.254/16, fe80::/10 */
	NET_ADDR_ULA,	      /* RFC 4193 fc00::/7, and deprecated site-local fec0::/10 */
	NET_ADDR_MULTICAST,   /* 224/4, ff00::/8 */
	NET_ADDR_RESERVED,    /* 240/4 incl. broadcast, v4-mapped/compatible v6 */
	NET_ADDR_TRANSLATED,  /* v6 that a translator turns into v4: NAT64 64:ff9b::/96
			       * and 64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32 */
};

enum net_addr_class net_addr_classify(const struct net_addr *a);
const char *net_addr_class_name(enum net_addr_class c);

/* @max 0 means NET_PINS_MAX. TTLs are clamped to [ttl_min, ttl_max] seconds:
 * the floor stops a 0-TTL answer from expiring before the guest connects,
 * the cap stops a name from holding an address forever. Returns 0 or -ENOMEM. */
int net_pins_init(struct net_pins *p, size_t max, uint32_t ttl_min, uint32_t ttl_max)
    __attribute__((warn_unused_result));
void net_pins_free(struct net_pins *p);

/* Rebinding guard: may @name's answer contain @a? Public addresses yes;
 * special ranges only if an allow CIDR rule covers the address. */
bool net_pins_answer_ok(const struct net_rules *r, const struct net_addr *a);

/* Pin (name, addr) until now + clamp(ttl). Refreshes an existing pin. When
 * full, drops expired pins, then the one closest to expiry. Returns 0. */
int net_pins_add(struct net_pins *p, const char *name, const struct net_addr *a, uint32_t ttl,
		 uint64_t now_ms);

/* Call @fn for each live pin of @a (expired ones too if @any_age) until it
 * returns true; returns whether one did. */
bool net_pins_find(const struct net_pins *p, const struct net_addr *a, uint64_t now_ms,
		   bool any_age, bool (*fn)(void *opaque, const char *name), void *opaque);

/* Drop every pin of @name (e.g. the rule allowing it was removed). */
void net_pins_forget(struct net_pins *p, const char *name);
void net_pins_expire(struct net_pins *p, uint64_t now_ms);

#endif
