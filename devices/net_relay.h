/*
 * The network helper's side of the wire (devices/net_chan.h): libslirp
 * (devices/net_slirp.h) and the upstream DNS queries, driven by one event
 * loop in the helper process (mvm-net). Frames from the VMM go into slirp as
 * they are (the VMM's policy engine passed them); what slirp sends and the
 * DNS answers go back in batches, one message per loop round. The VMM
 * closing its end (or dying) stops the loop.
 */
#ifndef MVM_NET_RELAY_H
#define MVM_NET_RELAY_H

#include <stdbool.h>
#include <stddef.h>

struct ev_loop;
struct net_relay;

struct net_relay_cfg {
	bool host_loopback;		/* slirp may reach the host's 127.0.0.1 */
	const char *const *publish;	/* --publish specs (net_publish_parse) */
	int nr_publish;
	const char *dns_server;		/* upstream "ADDR[:PORT]"/"[ADDR6]:PORT"; NULL: none */
};

/* Start slirp and the --publish listeners on @loop, talking to the VMM on
 * @fd (kept; closed by net_relay_destroy). 0 or -errno with @err filled
 * (e.g. a --publish port in use). */
int net_relay_create(struct ev_loop *loop, int fd, const struct net_relay_cfg *cfg,
		     struct net_relay **out, char *err, size_t errlen);

/* Tell the VMM on @fd how set-up went (NC_HELLO): @ret 0 or -errno,
 * @landlock the ABI in force (0: none), @text the error message (may be
 * NULL). Also when set-up failed before a relay existed. 0 or -errno. */
int net_relay_hello(int fd, int ret, int landlock, const char *text);

void net_relay_destroy(struct net_relay *r);

#endif
