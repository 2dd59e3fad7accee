/*
 * The virtio-vsock back-end (virtio 1.2 §5.10) without the virtio parts:
 * stream connections between guest ports and host Unix sockets, the
 * connection state machine and credit-based flow control. Host side, as
 * Firecracker's hybrid vsock: a client connects to the Unix socket @path and
 * writes "CONNECT <port>\n"; once the guest accepts, it reads "OK <hostport>\n"
 * and the stream is the guest connection. A guest connecting to host port P
 * reaches the Unix socket "@path_P" if something listens there.
 *
 * Every header from the guest is hostile. The mux never blocks: all fds are
 * non-blocking and the owner (virtio_vsock.c) polls them through ops->watch.
 * Single-threaded: the owner serialises every call.
 */
#ifndef MVM_VSOCK_MUX_H
#define MVM_VSOCK_MUX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VSOCK_HOST_CID   2
#define VSOCK_TYPE_STREAM 1
#define VSOCK_HDR_SIZE   44
#define VSOCK_MAX_CONNS  48		/* each is an event-loop handler */
#define VSOCK_BUF_ALLOC  (256u << 10)	/* our receive credit per connection */
#define VSOCK_MAX_PKT    (64u << 10)	/* largest payload accepted from the guest */

enum vsock_op {
	VSOCK_OP_INVALID = 0,
	VSOCK_OP_REQUEST = 1,
	VSOCK_OP_RESPONSE = 2,
	VSOCK_OP_RST = 3,
	VSOCK_OP_SHUTDOWN = 4,
	VSOCK_OP_RW = 5,
	VSOCK_OP_CREDIT_UPDATE = 6,
	VSOCK_OP_CREDIT_REQUEST = 7,
};

#define VSOCK_SHUTDOWN_RCV  1u
#define VSOCK_SHUTDOWN_SEND 2u

/* struct virtio_vsock_hdr, decoded (the wire form is packed little-endian). */
struct vsock_hdr {
	uint64_t src_cid, dst_cid;
	uint32_t src_port, dst_port;
	uint32_t len;
	uint16_t type, op;
	uint32_t flags;
	uint32_t buf_alloc, fwd_cnt;
};

void vsock_hdr_decode(const uint8_t b[VSOCK_HDR_SIZE], struct vsock_hdr *h);
void vsock_hdr_encode(const struct vsock_hdr *h, uint8_t b[VSOCK_HDR_SIZE]);

enum vsock_state {
	VS_FREE,
	VS_HANDSHAKE,		/* host client accepted; reading its CONNECT line */
	VS_CONNECTING,		/* REQUEST queued or sent; waiting for RESPONSE */
	VS_ESTABLISHED,
	VS_CLOSING,		/* fd gone; waiting for the guest's RST */
};

/* Control packets owed to the guest, sent before any data. */
#define VS_CTL_REQUEST   0x01u
#define VS_CTL_RESPONSE  0x02u
#define VS_CTL_SHUTDOWN  0x04u
#define VS_CTL_CREDIT    0x08u
#define VS_CTL_CREDIT_RQ 0x10u
#define VS_CTL_RST       0x20u

struct vsock_conn {
	enum vsock_state state;
	int fd;
	uint32_t host_port, guest_port;
	char line[32];			/* the CONNECT line so far */
	size_t line_len;
	uint32_t peer_buf_alloc, peer_fwd_cnt;	/* the guest's credit */
	uint32_t tx_cnt;		/* bytes sent to the guest */
	uint32_t rx_cnt, fwd_cnt;	/* bytes from the guest / written to fd */
	uint32_t fwd_advertised;	/* fwd_cnt last told to the guest */
	uint8_t *pend;			/* guest bytes not yet written to fd */
	size_t pend_off, pend_len;
	unsigned ctl;
	uint32_t shut_flags;		/* of the SHUTDOWN we owe */
	bool readable;			/* fd has (or may have) bytes for the guest */
	bool host_eof, host_hup;
	bool peer_shut_send, peer_shut_rcv;
	bool rst_after_flush;
	bool credit_rq_sent;
	uint32_t watched;		/* epoll mask registered with the owner */
};

struct vsock_mux;

struct vsock_host_ops {
	/* Register/modify (@events != 0) or remove (@events == 0) @fd's poll mask.
	 * @c is NULL for the listening socket. */
	int (*watch)(void *opaque, int fd, uint32_t events, struct vsock_conn *c, bool added);
	/* Packets for the guest are waiting: fill the rx queue. */
	void (*kick)(void *opaque);
};

struct vsock_mux {
	uint64_t guest_cid;
	char path[108];
	int listen_fd;
	uint32_t next_port;
	unsigned rr;			/* round-robin start for data */
	struct vsock_conn conns[VSOCK_MAX_CONNS];
	struct vsock_hdr rst_q[16];	/* RSTs for packets with no connection */
	int rst_n;
	const struct vsock_host_ops *ops;
	void *opaque;
};

/* Listen on @path (a stale socket file there is replaced). 0 or -errno. */
int vsock_mux_init(struct vsock_mux *m, uint64_t guest_cid, const char *path,
		   const struct vsock_host_ops *ops, void *opaque);
void vsock_mux_fini(struct vsock_mux *m);
/* Driver reset: drop every connection (their fds close), keep listening. */
void vsock_mux_reset(struct vsock_mux *m);

/* A packet the guest sent on the tx queue; @payload holds h->len bytes
 * (the caller checked h->len <= VSOCK_MAX_PKT and the chain length). */
void vsock_mux_guest_pkt(struct vsock_mux *m, const struct vsock_hdr *h, const uint8_t *payload);
/* The poll mask fired for @c's fd (@c NULL: the listening socket). */
void vsock_mux_fd_event(struct vsock_mux *m, struct vsock_conn *c, uint32_t events);
/*
 * The next packet for the guest into @h and @buf (payload of at most @cap
 * bytes, read straight from a host socket). 1: a packet; 0: nothing to send.
 */
int vsock_mux_next_pkt(struct vsock_mux *m, struct vsock_hdr *h, uint8_t *buf, size_t cap);
/* Whether next_pkt may have something (cheap; may be a false positive). */
bool vsock_mux_pending(const struct vsock_mux *m);

#endif
