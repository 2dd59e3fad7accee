/*
 * The libslirp back-end of virtio-net, driven by the VMM's one event loop.
 *
 * Polling: slirp's sockets go into a private epoll set whose fd is one
 * handler on the VMM loop (so a guest with many connections costs one
 * handler slot, not one per socket). After every call into slirp
 * (slirp_input, a timer, a poll round) slirp_pollfds_fill is run again and
 * the private set is re-synced with the fds and events slirp asked for;
 * the timeout fill returns arms one timerfd (slirp's TCP fast/slow timers).
 * When the private set or that timer fires: poll() the last filled array
 * with timeout 0 and hand the result to slirp_pollfds_poll. slirp's own
 * timers (timer_new_opaque) are timerfds on the loop. One thread only.
 *
 * Locking: the device that owns the back-end passes lock/unlock; every
 * entry from the loop (fds, timers) takes it, so send_packet always runs
 * with the device lock held (as notify() does).
 */
#ifndef MVM_NET_SLIRP_H
#define MVM_NET_SLIRP_H

#include "devices/net_publish.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ev_loop;
struct net_slirp;

struct net_slirp_cb {
	/* A frame from slirp for the guest (device lock held). */
	void (*to_guest)(void *opaque, const uint8_t *frame, size_t len);
	void (*lock)(void *opaque);
	void (*unlock)(void *opaque);
	void *opaque;
};

/* Start slirp: 10.0.2.0/24, gateway .2, nameserver .3, guest .15; fec0::/64. */
int net_slirp_create(struct ev_loop *loop, bool host_loopback, const struct net_slirp_cb *cb,
		     struct net_slirp **out, char *err, size_t errlen);
/* A TCP host port forward to the guest (10.0.2.15). */
int net_slirp_publish(struct net_slirp *s, const struct net_publish *p, char *err, size_t errlen);
/* A guest frame the filter passed (caller holds the device lock). */
void net_slirp_input(struct net_slirp *s, const uint8_t *frame, size_t len);
/* After a batch of net_slirp_input(): re-sync slirp's sockets and timeout
 * once (a fill per frame cost more than the frames). */
void net_slirp_flush(struct net_slirp *s);
void net_slirp_destroy(struct net_slirp *s);

#endif
