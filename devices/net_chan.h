/*
 * The wire between a VMM's virtio-net and its network helper (mvm-net,
 * tools/nethelper/): one SOCK_SEQPACKET socketpair. Each message is a batch
 * of records, so one system call carries many frames (bench-net):
 *
 *   record = u32 type | u32 len | len bytes      (host byte order: same host)
 *
 *   NC_FRAME     both ways: one Ethernet frame (VMM -> helper: already
 *                allowed by the policy engine; helper -> VMM: from libslirp,
 *                still checked by net_filter_inbound in the VMM)
 *   NC_DNS_QUERY VMM -> helper: u32 seq | u16 qtype | name (no NUL)
 *   NC_DNS_REPLY helper -> VMM: u32 seq | i32 err (0 or -errno) | DNS message
 *   NC_HELLO     helper -> VMM, once, after set-up: i32 err | i32 landlock ABI | text
 *
 * Neither side trusts the other's lengths: nc_parse checks every record
 * against the bytes received. Pure code, no I/O.
 */
#ifndef MVM_NET_CHAN_H
#define MVM_NET_CHAN_H

#include <stddef.h>
#include <stdint.h>

enum nc_type { NC_FRAME = 1, NC_DNS_QUERY, NC_DNS_REPLY, NC_HELLO };

#define NC_REC_HDR 8
#define NC_FRAME_MAX 65536		/* the largest frame either side sends */
#define NC_BATCH 61440			/* flush a batch once it holds this much */
/* One message: a full batch plus one largest record, and room for small ones. */
#define NC_MSG_MAX (NC_BATCH + NC_REC_HDR + NC_FRAME_MAX + 4096)

struct nc_buf {
	uint8_t *b;			/* NC_MSG_MAX bytes */
	size_t len;
};

/* Append a record of @type whose payload is @a then @b (either may be
 * empty). 0, or -ENOSPC when it does not fit in NC_MSG_MAX. */
int nc_put(struct nc_buf *m, uint32_t type, const void *a, size_t alen, const void *b,
	   size_t blen);

typedef void (*nc_rec_fn)(void *opaque, uint32_t type, const uint8_t *p, size_t len);

/* Call @fn for each record of the message @msg. 0, or -EPROTO at the first
 * record that overruns the message (records before it were delivered). */
int nc_parse(const uint8_t *msg, size_t len, nc_rec_fn fn, void *opaque);

#endif
