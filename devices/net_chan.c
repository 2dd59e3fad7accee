/* The VMM <-> network helper wire format (net_chan.h). */
#include <errno.h>
#include <string.h>

#include "devices/net_chan.h"

int nc_put(struct nc_buf *m, uint32_t type, const void *a, size_t alen, const void *b,
	   size_t blen)
{
	uint32_t hdr[2];

	if (alen > NC_MSG_MAX || blen > NC_MSG_MAX ||
	    NC_REC_HDR + alen + blen > NC_MSG_MAX - m->len)
		return -ENOSPC;
	hdr[0] = type;
	hdr[1] = (uint32_t)(alen + blen);
	memcpy(m->b + m->len, hdr, NC_REC_HDR);
	if (alen)
		memcpy(m->b + m->len + NC_REC_HDR, a, alen);
	if (blen)
		memcpy(m->b + m->len + NC_REC_HDR + alen, b, blen);
	m->len += NC_REC_HDR + alen + blen;
	return 0;
}

int nc_parse(const uint8_t *msg, size_t len, nc_rec_fn fn, void *opaque)
{
	size_t at = 0;

	while (at < len) {
		uint32_t hdr[2];

		if (len - at < NC_REC_HDR)
			return -EPROTO;
		memcpy(hdr, msg + at, NC_REC_HDR);
		at += NC_REC_HDR;
		if (hdr[1] > len - at)
			return -EPROTO;
		fn(opaque, hdr[0], msg + at, hdr[1]);
		at += hdr[1];
	}
	return 0;
}
