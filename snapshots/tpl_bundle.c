/* The template bundle's manifest and entry decoder (snapshots/tpl_bundle.h). Pure. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/le_bytes.h"
#include "common/crc32c.h"
#include "snapshots/template.h"
#include "snapshots/tpl_bundle.h"

#define DIGEST_OFF 96

static bool zeros(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int bad(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "not a valid template bundle: %s", why);
	return -EBADMSG;
}

/* [A-Za-z0-9][A-Za-z0-9._-]*, shorter than TB_NAME_MAX: tpl_name_ok's rule,
 * kept here so the parser links without the template store. */
static bool plain_name(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n < TB_NAME_MAX && name[0] != '.' && name[0] != '-' && name[0] != '_' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

bool tb_name_ok(const char *name)
{
	static const char *const kept[] = { SNAP_DIR_STATE, "config.json", SNAP_DIR_MEMORY,
					    TPL_META, "seal", NULL };

	if (!plain_name(name))
		return false;
	for (int i = 0; kept[i]; i++)
		if (!strcmp(name, kept[i]))
			return false;
	return true;
}

/* A NUL-padded name field: one NUL-terminated string, zeros after it. */
static bool name_field(const uint8_t *p, char out[TB_NAME_MAX])
{
	size_t n = strnlen((const char *)p, TB_NAME_MAX);

	if (n == TB_NAME_MAX || !zeros(p + n, TB_NAME_MAX - n))
		return false;
	memcpy(out, p, n);
	out[n] = 0;
	return true;
}

int tb_header_count(const uint8_t *h, size_t len, char *err, size_t errlen)
{
	uint32_t n;

	if (len < TB_HDR_LEN)
		return bad(err, errlen, "truncated header");
	if (memcmp(h, TB_MAGIC, 8))
		return bad(err, errlen, "bad magic (not a bundle written by mvm template export)");
	if (le_get32(h + 8) != TB_VERSION) {
		snprintf(err, errlen, "template bundle version %u: this mvm reads version %u",
			 le_get32(h + 8), TB_VERSION);
		return -EBADMSG;
	}
	n = le_get32(h + 12);
	if (n < 4 || n > TB_MAX_ENTRIES)
		return bad(err, errlen, "entry count out of range");
	return (int)n;
}

/* The kind the entry at @i must have, given the kinds before it. */
static bool kind_in_order(const struct tb_manifest *m, int i, uint32_t kind)
{
	static const uint32_t fixed[] = { TB_STATE, TB_CONFIG, TB_MEMORY };

	if (i < 3)
		return kind == fixed[i];
	if (kind == TB_LAYER)
		return m->e[i - 1].kind == TB_MEMORY || m->e[i - 1].kind == TB_LAYER;
	return kind == TB_IMAGE && i == m->n - 1 && m->e[i - 1].kind == TB_LAYER;
}

static uint64_t kind_max(uint32_t kind)
{
	return kind == TB_STATE ? 16u << 20 : kind == TB_CONFIG ? TB_CONFIG_MAX :
	       kind == TB_MEMORY ? TB_MEMORY_MAX : TB_FILE_MAX;
}

static int record(const uint8_t *r, struct tb_manifest *m, int i, char *err, size_t errlen)
{
	struct tb_entry *e = &m->e[i];
	uint64_t blocks;

	if (!name_field(r, e->name))
		return bad(err, errlen, "an entry name is not NUL-terminated and padded");
	if (i == 0 ? strcmp(e->name, SNAP_DIR_STATE) : i == 1 ? strcmp(e->name, "config.json") :
	    i == 2 ? strcmp(e->name, SNAP_DIR_MEMORY) : !tb_name_ok(e->name)) {
		snprintf(err, errlen, "not a valid template bundle: unexpected entry name '%.63s'",
			 e->name);
		return -EBADMSG;
	}
	for (int k = 0; k < i; k++)
		if (!strcmp(m->e[k].name, e->name)) {
			snprintf(err, errlen, "not a valid template bundle: entry '%s' twice", e->name);
			return -EBADMSG;
		}
	e->kind = le_get32(r + 64);
	e->size = le_get64(r + 72);
	e->stored = le_get64(r + 80);
	memcpy(e->sha256, r + 96, 32);
	if (!kind_in_order(m, i, e->kind) || le_get32(r + 68) || !zeros(r + 88, 8))
		return bad(err, errlen, "entries out of order, of an unknown kind or with reserved "
			   "fields set");
	if (e->size > kind_max(e->kind)) {
		snprintf(err, errlen, "not a valid template bundle: entry '%s' is too big", e->name);
		return -EBADMSG;
	}
	if (e->kind == TB_IMAGE && e->size % TB_BLOCK)
		return bad(err, errlen, "the image is not whole 4 KiB blocks");
	/* At most every byte plus one extent header per block. */
	blocks = (e->size + TB_BLOCK - 1) / TB_BLOCK;
	if (e->stored > e->size + 16 * blocks || (e->stored && e->stored < 17)) {
		snprintf(err, errlen, "not a valid template bundle: entry '%s': payload size "
			 "impossible for its file", e->name);
		return -EBADMSG;
	}
	return 0;
}

static void digest_of(const uint8_t *buf, int n, uint8_t out[32])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, DIGEST_OFF, buf);
	sha256_update(&c, (size_t)n * TB_REC_LEN, buf + TB_HDR_LEN);
	sha256_digest(&c, 32, out);
}

int tb_manifest_parse(const uint8_t *buf, size_t len, uint64_t total, struct tb_manifest *m,
		      char *err, size_t errlen)
{
	uint64_t sum;
	int n = tb_header_count(buf, len, err, errlen), ret;

	memset(m, 0, sizeof(*m));
	if (n < 0)
		return n;
	if (len != tb_manifest_len(n) || total < len)
		return bad(err, errlen, "truncated manifest");
	digest_of(buf, n, m->digest);
	if (memcmp(m->digest, buf + DIGEST_OFF, 32))
		return bad(err, errlen, "the manifest's digest does not match it (edited or damaged)");
	if (!name_field(buf + 16, m->tpl) || !plain_name(m->tpl) || !zeros(buf + 80, 16))
		return bad(err, errlen, "bad template name or reserved header bytes");
	m->n = n;
	sum = len;
	for (int i = 0; i < n; i++) {
		ret = record(buf + tb_manifest_len(i), m, i, err, errlen);
		if (ret)
			return ret;
		if (m->e[i].stored > total - sum) {
			snprintf(err, errlen, "template bundle truncated: it has %llu bytes, its "
				 "manifest describes more (entry '%s' and after)",
				 (unsigned long long)total, m->e[i].name);
			return -EBADMSG;
		}
		sum += m->e[i].stored;
	}
	if (sum != total) {
		snprintf(err, errlen, "not a valid template bundle: %llu bytes after its last entry",
			 (unsigned long long)(total - sum));
		return -EBADMSG;
	}
	return 0;
}

void tb_manifest_encode(struct tb_manifest *m, uint8_t *buf)
{
	memset(buf, 0, tb_manifest_len(m->n));
	memcpy(buf, TB_MAGIC, 8);
	le_put32(buf + 8, TB_VERSION);
	le_put32(buf + 12, (uint32_t)m->n);
	memcpy(buf + 16, m->tpl, strnlen(m->tpl, TB_NAME_MAX - 1));
	for (int i = 0; i < m->n; i++) {
		uint8_t *r = buf + tb_manifest_len(i);
		const struct tb_entry *e = &m->e[i];

		memcpy(r, e->name, strnlen(e->name, TB_NAME_MAX - 1));
		le_put32(r + 64, e->kind);
		le_put64(r + 72, e->size);
		le_put64(r + 80, e->stored);
		memcpy(r + 96, e->sha256, 32);
	}
	digest_of(buf, m->n, m->digest);
	memcpy(buf + DIGEST_OFF, m->digest, 32);
}

/* --- the digest stream: the size, then each non-zero block with its offset --- */

void tb_stream_start(struct sha256_ctx *c, uint32_t *crc, uint64_t size)
{
	uint8_t s[8];

	le_put64(s, size);
	sha256_init(c);
	sha256_update(c, 8, s);
	*crc = crc32c(0, s, 8);
}

void tb_stream_block(struct sha256_ctx *c, uint32_t *crc, uint64_t off, const uint8_t *p,
			 size_t n)
{
	uint8_t o[8];

	if (zeros(p, n))
		return;
	le_put64(o, off);
	sha256_update(c, 8, o);
	sha256_update(c, n, p);
	*crc = crc32c(crc32c(*crc, o, 8), p, n);
}

void tb_digest_buf(const uint8_t *p, size_t n, uint8_t sha256[32], uint32_t *crc)
{
	struct sha256_ctx c;

	tb_stream_start(&c, crc, n);
	for (size_t o = 0; o < n; o += TB_BLOCK)
		tb_stream_block(&c, crc, o, p + o, n - o < TB_BLOCK ? n - o : TB_BLOCK);
	sha256_digest(&c, 32, sha256);
}

void tb_dec_init(struct tb_dec *d, const struct tb_entry *e, tb_sink_fn sink, void *opaque)
{
	memset(d, 0, sizeof(*d));
	d->size = e->size;
	d->stored = e->stored;
	d->sink = sink;
	d->opaque = opaque;
	tb_stream_start(&d->sha, &d->crc, e->size);
}

/* An extent header just completed: check it against the file and the last one. */
static int extent_start(struct tb_dec *d, char *err, size_t errlen)
{
	uint64_t off = le_get64(d->hdr), len = le_get64(d->hdr + 8);

	d->hdr_have = 0;
	if (len == 0 || off % TB_BLOCK || off < d->end || off > d->size || len > d->size - off ||
	    (len % TB_BLOCK && off + len != d->size)) {
		snprintf(err, errlen, "not a valid template bundle: a malformed extent "
			 "(offset %llu, length %llu, file size %llu)", (unsigned long long)off,
			 (unsigned long long)len, (unsigned long long)d->size);
		return -EBADMSG;
	}
	d->at = off;
	d->left = len;
	d->blk_off = off;
	d->blk_have = 0;
	return 0;
}

/* Extent bytes: to the sink as they come, into the digest a block at a time. */
static int extent_bytes(struct tb_dec *d, const uint8_t *p, size_t n)
{
	int ret = d->sink ? d->sink(d->opaque, d->at, p, n) : 0;

	d->at += n;
	d->left -= n;
	while (n) {
		size_t k = TB_BLOCK - d->blk_have < n ? TB_BLOCK - d->blk_have : n;

		memcpy(d->blk + d->blk_have, p, k);
		d->blk_have += k;
		p += k;
		n -= k;
		if (d->blk_have == TB_BLOCK || d->left == 0) {
			tb_stream_block(&d->sha, &d->crc, d->blk_off, d->blk, d->blk_have);
			if (d->mac && !zeros(d->blk, d->blk_have))
				snap_mac_block(d->mac, d->blk_off, d->blk, d->blk_have);
			d->blk_off += d->blk_have;
			d->blk_have = 0;
		}
	}
	if (d->left == 0)
		d->end = d->at;
	return ret;
}

int tb_dec_feed(struct tb_dec *d, const uint8_t *p, size_t n, char *err, size_t errlen)
{
	int ret = 0;

	if (n > d->stored - d->fed)
		return bad(err, errlen, "an entry runs past its recorded size");
	d->fed += n;
	while (n && !ret) {
		if (d->left) {
			size_t k = d->left < n ? (size_t)d->left : n;

			ret = extent_bytes(d, p, k);
			if (ret)
				snprintf(err, errlen, "writing an entry: %s", strerror(-ret));
			p += k;
			n -= k;
			continue;
		}
		while (n && d->hdr_have < 16) {
			d->hdr[d->hdr_have++] = *p++;
			n--;
		}
		if (d->hdr_have == 16)
			ret = extent_start(d, err, errlen);
	}
	return ret;
}

int tb_dec_finish(struct tb_dec *d, uint8_t sha256[32], uint32_t *crc, char *err,
		  size_t errlen)
{
	if (d->fed != d->stored || d->left || d->hdr_have)
		return bad(err, errlen, "an entry ends inside an extent");
	sha256_digest(&d->sha, 32, sha256);
	*crc = d->crc;
	return 0;
}
