/* The address and name decision behind net_filter_frame() and
 * net_policy_check(): deny rules first, the virtual network (gateway =
 * host loopback, the resolver), special ranges, the mode, allow rules,
 * then DNS pins. Pure logic; private to devices/netpolicy. */
#ifndef MVM_NET_DECIDE_H
#define MVM_NET_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/netpolicy/net_filter.h"

/* May the guest open (@dst, @port, @proto: NET_P_*)? @name (NET_NAME_MAX+1)
 * receives the pinned name that admitted it, "" if none; @why a reason
 * either way. @any_age: accept expired pins (re-checks of established
 * connections must not die with a TTL). */
bool net_decide(struct net_policy *p, const struct net_addr *dst, uint16_t port, unsigned proto,
		bool any_age, char *name, char *why, size_t wl);

/* May the guest resolve @name? Deny rules win in every mode. */
bool net_name_allowed(const struct net_policy *p, const char *name, char *why, size_t wl);

/* Rebinding guard: may a DNS answer's address @a be pinned and shown? */
bool net_answer_ok(const struct net_policy *p, const struct net_addr *a);

/* Is @a the virtual nameserver (v4 or v6)? */
bool net_is_vdns(const struct net_policy *p, const struct net_addr *a);

#endif
