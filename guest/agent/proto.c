/* The agent wire protocol codec, shared by the guest agent and the host. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/agent/proto.h"

static void put_bytes(struct ap_wr *w, const void *p, size_t n)
{
	if (w->err || n > w->cap - w->len) {
		w->err = true;
		return;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

void ap_put_u16(struct ap_wr *w, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	put_bytes(w, b, 2);
}

void ap_put_u32(struct ap_wr *w, uint32_t v)
{
	uint8_t b[4];

	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put_bytes(w, b, 4);
}

void ap_put_u64(struct ap_wr *w, uint64_t v)
{
	ap_put_u32(w, (uint32_t)v);
	ap_put_u32(w, (uint32_t)(v >> 32));
}

void ap_put_str(struct ap_wr *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n > AP_MAX_STR) {
		w->err = true;
		return;
	}
	ap_put_u32(w, (uint32_t)n);
	put_bytes(w, s, n);
}

static const uint8_t *get_bytes(struct ap_rd *r, size_t n)
{
	const uint8_t *p;

	if (r->err || n > r->len - r->off) {
		r->err = true;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

uint16_t ap_get_u16(struct ap_rd *r)
{
	const uint8_t *b = get_bytes(r, 2);

	return b ? (uint16_t)(b[0] | b[1] << 8) : 0;
}

uint32_t ap_get_u32(struct ap_rd *r)
{
	const uint8_t *b = get_bytes(r, 4);
	uint32_t v = 0;

	for (int i = 3; b && i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

uint64_t ap_get_u64(struct ap_rd *r)
{
	uint64_t lo = ap_get_u32(r);

	return lo | (uint64_t)ap_get_u32(r) << 32;
}

void ap_get_str(struct ap_rd *r, char *out, size_t cap)
{
	uint32_t n = ap_get_u32(r);
	const uint8_t *p;

	out[0] = 0;
	if (r->err || n >= cap) {
		r->err = true;
		return;
	}
	p = get_bytes(r, n);
	if (!p || memchr(p, 0, n)) {
		r->err = true;
		return;
	}
	memcpy(out, p, n);
	out[n] = 0;
}

void ap_hdr_encode(uint8_t out[AP_HDR_SIZE], uint16_t type, uint32_t len)
{
	struct ap_wr w = { .buf = out, .cap = AP_HDR_SIZE };

	ap_put_u32(&w, len);
	ap_put_u16(&w, type);
	ap_put_u16(&w, 0);
}

int ap_hdr_decode(const uint8_t *b, size_t n, struct ap_hdr *h)
{
	struct ap_rd r = { .p = b, .len = n };

	if (n < AP_HDR_SIZE)
		return -EAGAIN;
	h->len = ap_get_u32(&r);
	h->type = ap_get_u16(&r);
	h->flags = ap_get_u16(&r);
	if (h->type == 0 || h->type > AP_TYPE_MAX || h->flags)
		return -EPROTO;
	if (h->len > AP_MAX_PAYLOAD)
		return -EMSGSIZE;
	return 0;
}

long ap_frame_size(const uint8_t *b, size_t n)
{
	struct ap_hdr h;
	int ret = ap_hdr_decode(b, n, &h);

	if (ret == -EAGAIN)
		return 0;
	if (ret)
		return ret;
	return n - AP_HDR_SIZE >= h.len ? (long)(AP_HDR_SIZE + h.len) : 0;
}
