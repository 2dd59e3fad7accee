/*
 * The VMM's side of its network helper (mvm-net, tools/nethelper/): the
 * process that runs libslirp and glib, so that neither is ever mapped where
 * /dev/kvm and guest memory are. Started during set-up, before the VMM
 * confines itself; it talks over one SOCK_SEQPACKET socketpair in batches
 * (devices/net_chan.h).
 *
 * Sending never blocks the VMM: records go into one batch, sent at the end
 * of a round or once it holds NC_BATCH bytes. When the socket is full the
 * batch waits (net_helper_blocked) for the helper to catch up; the caller
 * stops taking frames from the guest meanwhile and is called back
 * (writable) when it may go on, so a busy guest is slowed, not dropped.
 *
 * Callbacks run on the event loop between lock() and unlock() (the device's
 * lock), like the device's own handlers.
 */
#ifndef MVM_NET_HELPER_H
#define MVM_NET_HELPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ev_loop;
struct net_helper;

struct net_helper_cfg {
	bool host_loopback;		/* slirp may reach the host's 127.0.0.1 */
	const char *const *publish;	/* --publish specs, checked by the caller */
	int nr_publish;
	const char *dns_server;		/* upstream for NC_DNS_QUERY; NULL: none */
};

struct net_helper_cb {
	void (*frame)(void *opaque, const uint8_t *frame, size_t len);	/* from slirp */
	/* The answer to net_helper_dns(@seq): @err 0 and the upstream's DNS
	 * message (not yet checked), or -errno. */
	void (*dns)(void *opaque, uint32_t seq, int err, const uint8_t *msg, size_t len);
	void (*writable)(void *opaque);	/* a waiting batch went out */
	void (*dead)(void *opaque);	/* the helper is gone (reported already) */
	void (*lock)(void *opaque);
	void (*unlock)(void *opaque);
	void *opaque;
};

/* The helper program: "mvm-net" in the directory of /proc/self/exe. */
#define NET_HELPER_EXE "mvm-net"

/*
 * Start the helper (fork+exec of NET_HELPER_EXE beside this program, with
 * only the socket, /dev/null and stderr), wait for it to be set up and
 * confined, and watch its socket on @loop. Call single-threaded, before
 * the VMM's own confinement. 0, or -errno with @err filled (the helper's
 * own message, e.g. a --publish port in use).
 */
int net_helper_start(struct ev_loop *loop, const struct net_helper_cfg *cfg,
		     const struct net_helper_cb *cb, struct net_helper **out, char *err,
		     size_t errlen);

/* A frame the policy passed. 0; -ENOSPC when the batch is full (only while
 * blocked: the caller should have stopped); -EPIPE once the helper died. */
int net_helper_frame(struct net_helper *h, const uint8_t *frame, size_t len);
/* Ask the helper to resolve @name (@qtype A or AAAA) upstream; the answer
 * comes to cb.dns with @seq. 0 or -errno as net_helper_frame. */
int net_helper_dns(struct net_helper *h, uint32_t seq, uint16_t qtype, const char *name);
/* End of a round: send what is batched. */
void net_helper_flush(struct net_helper *h);
/* A batch waits for room in the socket: take no more frames. */
bool net_helper_blocked(const struct net_helper *h);

pid_t net_helper_pid(const struct net_helper *h);	/* 0 once it died; in our PID namespace */
int net_helper_landlock(const struct net_helper *h);	/* its Landlock ABI, 0: none */

/* Close the socket (the helper ends on end-of-file) and reap it. */
void net_helper_destroy(struct net_helper *h);

#endif
