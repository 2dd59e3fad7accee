/*
 * libFuzzer target: a template bundle (snapshots/tpl_bundle.h) as `mvm
 * template import` reads it: the header, the manifest against the input's
 * size, then every entry's payload through the extent decoder, whose sink
 * checks that no byte lands outside the entry's file. The manifest digest
 * is recomputed for every input as well, so mutations reach the record and
 * extent checks instead of stopping at the digest.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "snapshots/tpl_bundle.h"

static int sink(void *opaque, uint64_t off, const uint8_t *p, size_t n)
{
	const struct tb_entry *e = opaque;

	(void)p;
	if (off > e->size || n > e->size - off)
		abort();	/* the decoder let a write past the file through */
	return 0;
}

static void check(const uint8_t *buf, size_t len)
{
	struct tb_manifest *m = malloc(sizeof(*m));
	char err[256];
	uint64_t off;
	int n;

	if (!m)
		return;
	n = tb_header_count(buf, len, err, sizeof(err));
	if (n < 0 || len < tb_manifest_len(n) ||
	    tb_manifest_parse(buf, tb_manifest_len(n), len, m, err, sizeof(err)))
		goto out;
	off = tb_manifest_len(n);
	for (int i = 0; i < m->n; i++) {
		struct tb_dec *d = malloc(sizeof(*d));
		uint8_t sha[32];
		uint32_t crc;

		if (!d)
			break;
		tb_dec_init(d, &m->e[i], sink, &m->e[i]);
		/* In two pieces, as reads of any size would deliver it. */
		if (!tb_dec_feed(d, buf + off, (size_t)m->e[i].stored / 2, err, sizeof(err)) &&
		    !tb_dec_feed(d, buf + off + m->e[i].stored / 2,
				 (size_t)(m->e[i].stored - m->e[i].stored / 2), err, sizeof(err)))
			tb_dec_finish(d, sha, &crc, err, sizeof(err));
		off += m->e[i].stored;
		free(d);
	}
out:
	free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sha256_ctx c;
	uint8_t *fixed;
	uint32_t n;

	check(data, size);
	if (size < TB_HDR_LEN || !(fixed = malloc(size)))
		return 0;
	memcpy(fixed, data, size);
	memcpy(&n, fixed + 12, 4);
	if (n <= TB_MAX_ENTRIES && size >= tb_manifest_len((int)n)) {
		sha256_init(&c);
		sha256_update(&c, 96, fixed);
		sha256_update(&c, (size_t)n * TB_REC_LEN, fixed + TB_HDR_LEN);
		sha256_digest(&c, 32, fixed + 96);
		check(fixed, size);
	}
	free(fixed);
	return 0;
}
