/*
 * A snapshot's FILE section (the list of its files with their salt and
 * tags, or the older digests) written, and a state file's bytes read into
 * the directory's view (struct snap_dir_info) without touching a file:
 * hostile input, fuzzed on its own (tests/fuzz/snap_state_fuzz.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nettle/sha2.h>

#include "common/snap_buf.h"
#include "devices/virtio_mmio.h"
#include "snapshots/snap_base.h"
#include "snapshots/snapshot_dir.h"
#include "snapshots/state_file.h"

void snap_files_section(struct snap_w *w, const struct snap_file *f, int n,
			const uint8_t *salt)
{
	struct snap_w s = { 0 };

	snap_w_u32(&s, (uint32_t)n);
	if (salt)
		snap_w_blob(&s, salt, SNAP_SALT_LEN);
	for (int i = 0; i < n; i++) {
		snap_w_blob(&s, f[i].name, (uint32_t)strlen(f[i].name));
		snap_w_blob(&s, f[i].format, (uint32_t)strlen(f[i].format));
		snap_w_u64(&s, f[i].size);
		if (salt) {
			snap_w_blob(&s, f[i].tag, SNAP_TAG_LEN);
			continue;
		}
		snap_w_u32(&s, f[i].crc);
		snap_w_blob(&s, f[i].sha256, sizeof(f[i].sha256));
	}
	/* Version 3: the salt and each file's tag; version 2: each file's
	 * CRC-32C and SHA-256. The seal (snap_seal.h) binds either. */
	snap_state_section(w, SNAP_SEC_FILE, 0, salt ? 3 : 2, s.p, s.len);
	if (s.err)
		w->err = s.err;
	snap_w_free(&s);
}

/* A plain name in the snapshot directory, and not one of its fixed files. */
static bool name_ok(const char *s)
{
	return s[0] && s[0] != '.' && !strchr(s, '/') && strcmp(s, SNAP_DIR_STATE) &&
	       strcmp(s, "config.json");
}

static int decode_files(const struct snap_section *sec, struct snap_dir_info *out)
{
	struct snap_r r;
	uint32_t n;

	snap_r_init(&r, sec->data, sec->len);
	n = snap_r_u32(&r);
	if (r.err || n < 2 || n > SNAP_MAX_FILES || sec->version < 1 || sec->version > 3)
		return -EBADMSG;
	out->fver = (int)sec->version;
	if (out->fver == 3) {
		uint32_t sl;
		const uint8_t *salt = snap_r_blob(&r, SNAP_SALT_LEN, &sl);

		if (!salt || sl != SNAP_SALT_LEN)
			return -EBADMSG;
		memcpy(out->salt, salt, SNAP_SALT_LEN);
	}
	for (uint32_t i = 0; i < n; i++) {
		struct snap_file *f = &out->f[i];
		uint32_t nl, fl;
		const uint8_t *name = snap_r_blob(&r, sizeof(f->name) - 1, &nl);
		const uint8_t *fmt = snap_r_blob(&r, sizeof(f->format) - 1, &fl);

		if (!name || !fmt)
			return -EBADMSG;
		memcpy(f->name, name, nl);
		memcpy(f->format, fmt, fl);
		f->size = snap_r_u64(&r);
		if (out->fver == 3) {
			uint32_t tl;
			const uint8_t *tag = snap_r_blob(&r, SNAP_TAG_LEN, &tl);

			if (!tag || tl != SNAP_TAG_LEN)
				return -EBADMSG;
			memcpy(f->tag, tag, SNAP_TAG_LEN);
		} else {
			f->crc = snap_r_u32(&r);
		}
		if (out->fver == 2) {
			uint32_t sl;
			const uint8_t *sha = snap_r_blob(&r, sizeof(f->sha256), &sl);

			if (!sha || sl != sizeof(f->sha256))
				return -EBADMSG;
			memcpy(f->sha256, sha, sizeof(f->sha256));
		}
		if (strlen(f->name) != nl || strlen(f->format) != fl || !name_ok(f->name))
			return -EBADMSG;
		if (i == 0 ? strcmp(f->name, SNAP_DIR_MEMORY) || strcmp(f->format, "memory") :
			     strcmp(f->format, "raw") && strcmp(f->format, "qcow2"))
			return -EBADMSG;
		for (uint32_t k = 0; k < i; k++)
			if (!strcmp(out->f[k].name, f->name))
				return -EBADMSG;
	}
	out->nfiles = (int)n;
	return snap_r_done(&r);
}

/* A device section of @st is a network device's: a virtio-mmio device (its
 * name leads the section) whose saved state starts with the net device id
 * (devices/virtio_mmio_snap.c). */
static bool has_net_device(const struct snap_state *st)
{
	static const char mmio[] = "virtio-mmio";

	for (uint32_t i = 0; i < st->nr_sections; i++) {
		const uint8_t *name;
		struct snap_r r;
		uint32_t n;

		if (st->sec[i].type != SNAP_SEC_DEV)
			continue;
		snap_r_init(&r, st->sec[i].data, st->sec[i].len);
		name = snap_r_blob(&r, 64, &n);
		if (name && n == strlen(mmio) && !memcmp(name, mmio, n) &&
		    snap_r_u32(&r) == VIRTIO_ID_NET && !r.err)
			return true;
	}
	return false;
}

int snap_dir_parse(const uint8_t *buf, size_t len, bool digest, struct snap_dir_info *out,
		   char *err, size_t errlen)
{
	struct snap_state *st = calloc(1, sizeof(*st));
	const struct snap_section *sec;
	struct sha256_ctx sha;
	int ret = st ? snap_state_parse(buf, len, st, err, errlen) : -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (ret)
		goto out;
	/* The bytes parsed here are the ones a seal must name (snap_seal.h). */
	if (digest) {
		sha256_init(&sha);
		sha256_update(&sha, len, buf);
		sha256_digest(&sha, sizeof(out->state_sha256), out->state_sha256);
	}
	sec = snap_state_find(st, SNAP_SEC_FILE, 0);
	if (!sec || decode_files(sec, out)) {
		snprintf(err, errlen, "snapshot state: missing or invalid file list");
		ret = -EBADMSG;
		goto out;
	}
	sec = snap_state_find(st, SNAP_SEC_BASE, 0);
	if (sec && snap_base_decode(sec, &out->base)) {
		snprintf(err, errlen, "snapshot state: invalid base image record");
		ret = -EBADMSG;
		goto out;
	}
	out->has_base = sec != NULL;
	out->has_net = has_net_device(st);
	out->ram_size = st->h.ram_size;
	out->ncpus = (int)st->h.ncpus;
	if (out->f[0].size != out->ram_size) {
		snprintf(err, errlen, "snapshot state: memory file size is not the RAM size");
		ret = -EBADMSG;
	}
out:
	free(st);
	return ret;
}
