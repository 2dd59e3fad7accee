/* Snapshot byte buffers: growing writer, bounds-checked reader. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/snap_buf.h"

static bool grow(struct snap_w *w, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (w->err)
		return false;
	if (n <= w->cap - w->len)
		return true;
	cap = w->cap ? w->cap : 4096;
	while (cap - w->len < n)
		cap *= 2;
	p = realloc(w->p, cap);
	if (!p) {
		w->err = -ENOMEM;
		return false;
	}
	w->p = p;
	w->cap = cap;
	return true;
}

void snap_w_bytes(struct snap_w *w, const void *src, size_t n)
{
	if (!grow(w, n))
		return;
	if (n)
		memcpy(w->p + w->len, src, n);
	w->len += n;
}

/* x86 only, like the VMM: host order is the file's little-endian order. */
void snap_w_u8(struct snap_w *w, uint8_t v) { snap_w_bytes(w, &v, 1); }
void snap_w_u16(struct snap_w *w, uint16_t v) { snap_w_bytes(w, &v, 2); }
void snap_w_u32(struct snap_w *w, uint32_t v) { snap_w_bytes(w, &v, 4); }
void snap_w_u64(struct snap_w *w, uint64_t v) { snap_w_bytes(w, &v, 8); }

void snap_w_blob(struct snap_w *w, const void *src, uint32_t n)
{
	snap_w_u32(w, n);
	snap_w_bytes(w, src, n);
}

size_t snap_w_reserve(struct snap_w *w, size_t n)
{
	size_t off = w->len;

	if (grow(w, n)) {
		memset(w->p + w->len, 0, n);
		w->len += n;
	}
	return off;
}

void snap_w_patch_u32(struct snap_w *w, size_t off, uint32_t v)
{
	if (!w->err && off + 4 <= w->len)
		memcpy(w->p + off, &v, 4);
}

void snap_w_free(struct snap_w *w)
{
	free(w->p);
	memset(w, 0, sizeof(*w));
}

void snap_r_init(struct snap_r *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->off = 0;
	r->err = 0;
}

void snap_r_bytes(struct snap_r *r, void *dst, size_t n)
{
	if (r->err || n > r->len - r->off) {
		r->err = -EBADMSG;
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, r->p + r->off, n);
	r->off += n;
}

uint8_t snap_r_u8(struct snap_r *r) { uint8_t v; snap_r_bytes(r, &v, 1); return v; }
uint16_t snap_r_u16(struct snap_r *r) { uint16_t v; snap_r_bytes(r, &v, 2); return v; }
uint32_t snap_r_u32(struct snap_r *r) { uint32_t v; snap_r_bytes(r, &v, 4); return v; }
uint64_t snap_r_u64(struct snap_r *r) { uint64_t v; snap_r_bytes(r, &v, 8); return v; }

void snap_r_blob_exact(struct snap_r *r, void *dst, uint32_t n)
{
	if (snap_r_u32(r) != n && !r->err)
		r->err = -EBADMSG;
	snap_r_bytes(r, dst, n);
}

const uint8_t *snap_r_blob(struct snap_r *r, uint32_t max, uint32_t *n)
{
	const uint8_t *p;

	*n = snap_r_u32(r);
	if (r->err || *n > max || *n > r->len - r->off) {
		r->err = -EBADMSG;
		*n = 0;
		return NULL;
	}
	p = r->p + r->off;
	r->off += *n;
	return p;
}

int snap_r_done(const struct snap_r *r)
{
	if (r->err)
		return r->err;
	return r->off == r->len ? 0 : -EBADMSG;
}
