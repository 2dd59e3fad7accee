/*
 * Byte buffers for snapshot sections: a growing writer and a bounds-checked
 * reader. The reader treats its bytes as hostile: every get checks the bytes
 * left, and an error sticks (later gets return zeroes), so a decoder checks
 * r->err once at the end. Little-endian, no padding. Pure: no KVM, no I/O.
 */
#ifndef MVM_SNAP_BUF_H
#define MVM_SNAP_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snap_w {
	uint8_t *p;
	size_t len, cap;
	int err;		/* -ENOMEM once an allocation failed */
};

struct snap_r {
	const uint8_t *p;
	size_t len, off;
	int err;		/* -EBADMSG once a get ran past the end */
};

void snap_w_bytes(struct snap_w *w, const void *src, size_t n);
void snap_w_u8(struct snap_w *w, uint8_t v);
void snap_w_u16(struct snap_w *w, uint16_t v);
void snap_w_u32(struct snap_w *w, uint32_t v);
void snap_w_u64(struct snap_w *w, uint64_t v);
/* u32 length + bytes. */
void snap_w_blob(struct snap_w *w, const void *src, uint32_t n);
/* Reserve @n bytes and return where they start (offset), for a length to patch. */
size_t snap_w_reserve(struct snap_w *w, size_t n);
void snap_w_patch_u32(struct snap_w *w, size_t off, uint32_t v);
void snap_w_free(struct snap_w *w);

void snap_r_init(struct snap_r *r, const void *p, size_t len);
void snap_r_bytes(struct snap_r *r, void *dst, size_t n);
uint8_t snap_r_u8(struct snap_r *r);
uint16_t snap_r_u16(struct snap_r *r);
uint32_t snap_r_u32(struct snap_r *r);
uint64_t snap_r_u64(struct snap_r *r);
/* A blob whose length must be exactly @n (fixed-size kernel structs). */
void snap_r_blob_exact(struct snap_r *r, void *dst, uint32_t n);
/* A blob of at most @max bytes: pointer into the buffer, its length in *n. */
const uint8_t *snap_r_blob(struct snap_r *r, uint32_t max, uint32_t *n);
/* 0 when no error happened and every byte was consumed. */
int snap_r_done(const struct snap_r *r);

#endif
