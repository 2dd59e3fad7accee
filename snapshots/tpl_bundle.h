/*
 * The template bundle: one file carrying a template (`mvm template export`)
 * to another host (`mvm template import`): its snapshot files, its
 * config.json and the image it references, each with a SHA-256 in a
 * manifest. The bundle is hostile input: it crossed a network and a shared
 * disk, and its contents are a guest's. Everything here is pure (no file
 * system): the manifest parser and the entry decoder are unit-tested and
 * fuzzed (tests/fuzz/tpl_bundle_fuzz.c). All numbers little-endian.
 *
 *   header   128 bytes: "MVMTPLB\x01", u32 version (1), u32 entry count,
 *            the template's name (64 bytes, NUL-padded), 16 zero bytes,
 *            then the manifest digest: SHA-256 of the header's first 96
 *            bytes and every entry record (the bundle's identity: what
 *            export prints, what import compares, what a re-import finds)
 *   entries  one 128-byte record each: name (64, NUL-padded), u32 kind,
 *            u32 0, u64 size (the file's), u64 stored (its payload's
 *            bytes in the bundle), 8 zero bytes, SHA-256 (32)
 *   payloads in the order of the records, each exactly `stored` bytes:
 *            extents (u64 offset, u64 length, then the bytes); offsets
 *            4 KiB-aligned and increasing, extents apart, within the size;
 *            lengths whole 4 KiB blocks but for one ending at the size.
 *            Everything between extents is zero.
 *   nothing after the last payload.
 *
 * An entry's SHA-256 is of its file as the snapshot's FILE section
 * defines it (snapshots/snapshot_dir.c): the u64 size, then each 4 KiB
 * block that is not all zeros as its u64 offset and its bytes. The same
 * digest for every kind, defined by the contents only, so it is
 * independent of how the payload was cut and the importer checks memory
 * and layers against the state file's own list too.
 *
 * Entries, in this order and no other: "state" (kind STATE), "config.json"
 * (CONFIG), "memory" (MEMORY), one or more disk layers (LAYER, plain names
 * as the state lists them), at most one image (IMAGE, its name in the
 * exporter's image store). A name is never a path: [A-Za-z0-9][A-Za-z0-9._-]*,
 * at most 63 bytes, no two alike, none of the names a template directory
 * keeps for itself.
 */
#ifndef MVM_TPL_BUNDLE_H
#define MVM_TPL_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nettle/sha2.h>

#include "snapshots/snap_mac.h"
#include "snapshots/snapshot_dir.h"

#define TB_MAGIC       "MVMTPLB\x01"
#define TB_VERSION     1
#define TB_HDR_LEN     128
#define TB_REC_LEN     128
#define TB_NAME_MAX    64			/* with the NUL */
#define TB_MAX_ENTRIES (SNAP_MAX_FILES + 3)	/* state, config, files, image */
#define TB_BLOCK       4096
#define TB_CONFIG_MAX  (64u << 10)
#define TB_MEMORY_MAX  (1ULL << 40)		/* 1 TiB of guest RAM */
#define TB_FILE_MAX    (64ULL << 40)		/* a layer or an image (QCOW2_MAX_VSIZE) */

enum tb_kind { TB_STATE = 1, TB_CONFIG, TB_MEMORY, TB_LAYER, TB_IMAGE };

struct tb_entry {
	char name[TB_NAME_MAX];
	uint32_t kind;
	uint64_t size, stored;
	uint8_t sha256[32];
};

struct tb_manifest {
	char tpl[TB_NAME_MAX];
	int n;
	struct tb_entry e[TB_MAX_ENTRIES];
	uint8_t digest[32];	/* of the header's first 96 bytes and the records */
};

/* Bytes of header and records for @n entries. */
static inline size_t tb_manifest_len(int n)
{
	return TB_HDR_LEN + (size_t)n * TB_REC_LEN;
}

/* The entry count of the header @h (TB_HDR_LEN bytes): magic and version
 * right, 4..TB_MAX_ENTRIES entries. The count, or -EBADMSG with @err. */
int tb_header_count(const uint8_t *h, size_t len, char *err, size_t errlen);

/*
 * Parse header and records (@len = tb_manifest_len(count) bytes) of a
 * bundle of @total bytes into @m: digest, names, kinds and their order,
 * sizes within their kind's bounds, each payload plausible for its size,
 * and header + payloads exactly @total bytes. 0, or -EBADMSG with @err
 * naming what is wrong.
 */
int tb_manifest_parse(const uint8_t *buf, size_t len, uint64_t total, struct tb_manifest *m,
		      char *err, size_t errlen);

/* Header and records of @m into @buf (tb_manifest_len(m->n) bytes), its
 * digest computed into m->digest. */
void tb_manifest_encode(struct tb_manifest *m, uint8_t *buf);

/* A plain entry name (see above), not one a template keeps for itself. */
bool tb_name_ok(const char *name);

/* Where the decoder puts an extent's bytes (at offset @off of the file):
 * 0 or -errno. NULL: nowhere (only checked). */
typedef int (*tb_sink_fn)(void *opaque, uint64_t off, const uint8_t *p, size_t n);

/* The decoder of one entry's payload, fed in pieces of any size. */
struct tb_dec {
	uint64_t size, stored, fed;
	uint64_t end;		/* where the last extent ended */
	uint64_t at, left;	/* the current extent: next offset, bytes still due */
	uint8_t hdr[16];
	unsigned hdr_have;
	uint8_t blk[TB_BLOCK];
	size_t blk_have;
	uint64_t blk_off;
	struct sha256_ctx sha;
	uint32_t crc;		/* CRC-32C of the same stream (the FILE section's) */
	struct snap_mac *mac;	/* NULL, or set (and started) by the caller after
				 * tb_dec_init: the file's v3 tag of the same stream */
	tb_sink_fn sink;
	void *opaque;
};

void tb_dec_init(struct tb_dec *d, const struct tb_entry *e, tb_sink_fn sink, void *opaque);
/* The next @n bytes of the payload. 0, -EBADMSG (a malformed extent, more
 * than `stored`) or the sink's error, with @err. */
int tb_dec_feed(struct tb_dec *d, const uint8_t *p, size_t n, char *err, size_t errlen);
/* After exactly `stored` bytes: the payload ended cleanly and its digest
 * (and CRC-32C) are the file's. 0 or -EBADMSG with @err. */
int tb_dec_finish(struct tb_dec *d, uint8_t sha256[32], uint32_t *crc, char *err,
		  size_t errlen);

/* The digest stream of a whole buffer (small files: state, config.json),
 * as tb_dec computes it. */
void tb_digest_buf(const uint8_t *p, size_t n, uint8_t sha256[32], uint32_t *crc);

/* The digest stream by hand: start it with the file's size, then each
 * block (at most 4 KiB, at its offset; all-zero ones leave no trace). */
void tb_stream_start(struct sha256_ctx *c, uint32_t *crc, uint64_t size);
void tb_stream_block(struct sha256_ctx *c, uint32_t *crc, uint64_t off, const uint8_t *p,
		     size_t n);

/* The writer (snapshots/tpl_bundle_write.c): one entry's payload into the
 * bundle @out from offset @pos on, extents of the file's non-zero blocks,
 * maximal (so the payload depends on the contents only). */
struct tb_enc {
	int out;
	uint64_t pos, start, size;
	bool in_run;
	uint64_t run_hdr, run_off, run_len;
	struct sha256_ctx sha;
	uint32_t crc;
	struct snap_mac *mac;	/* as tb_dec's */
};

void tb_enc_begin(struct tb_enc *e, int out, uint64_t pos, uint64_t size);
/* @n bytes of the file at @off (4 KiB-aligned, increasing; whole blocks
 * unless they end at the size). 0 or -errno. */
int tb_enc_data(struct tb_enc *e, const uint8_t *p, size_t n, uint64_t off);
/* All of the regular file @fd (its size given to tb_enc_begin; holes are
 * skipped, read as zeros). 0, -EBADMSG (its size changed) or -errno. */
int tb_enc_fd(struct tb_enc *e, int fd);
/* Close the payload: its bytes in *@stored, the file's digest and CRC. */
int tb_enc_end(struct tb_enc *e, uint64_t *stored, uint8_t sha256[32], uint32_t *crc);

#endif
