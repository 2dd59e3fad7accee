/* `mvm template export`: a template and its image into one bundle (tools/sandbox/template_bundle.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dir_publish.h"
#include "common/file_io.h"
#include "snapshots/snap_seal.h"
#include "snapshots/template.h"
#include "snapshots/tpl_bundle.h"
#include "tools/sandbox/template_bundle.h"

struct exp {
	int out;
	uint64_t pos;
	struct tb_manifest man;
	const char *dir;
	struct snap_seal seal;
	uint8_t k[SNAP_KEY_LEN];	/* the template's key (v3 file lists) */
};

/* A small sealed file (state, config.json): read once, checked against the
 * seal, and the bytes checked are the bytes written. */
static int put_small(struct exp *x, struct tb_entry *e, size_t max, char *err, size_t errlen)
{
	char p[PATH_MAX], *buf = NULL;
	struct sha256_ctx c;
	uint8_t sha[32];
	struct tb_enc enc;
	uint32_t crc;
	size_t len = 0;
	int ret;

	snprintf(p, sizeof(p), "%s/%s", x->dir, e->name);
	ret = file_read_regular(p, max, &buf, &len);
	if (ret) {
		snprintf(err, errlen, "%s: %s", p, strerror(-ret));
		return ret;
	}
	sha256_init(&c);
	sha256_update(&c, len, (const uint8_t *)buf);
	sha256_digest(&c, 32, sha);
	ret = snap_seal_expect(&x->seal, x->dir, e->name, sha, err, errlen);
	e->size = len;
	tb_enc_begin(&enc, x->out, x->pos, len);
	if (!ret)
		ret = tb_enc_data(&enc, (const uint8_t *)buf, len, 0);
	if (!ret)
		ret = tb_enc_end(&enc, &e->stored, e->sha256, &crc);
	free(buf);
	return ret;
}

/* A big file (memory, a layer, the image): streamed, and (@i >= 0: file @i
 * of @in) its digest must be the one recorded when it was made: its tag
 * (v3, computed in the same read) or its SHA-256 (v2). */
static int put_big(struct exp *x, struct tb_entry *e, const char *path,
		   const struct snap_dir_info *in, int i, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), ret;
	struct snap_mac *mac = NULL;
	uint8_t tag[SNAP_TAG_LEN];
	struct tb_enc enc;
	struct stat st;
	uint32_t crc;
	bool same = true;

	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	e->size = (uint64_t)st.st_size;
	tb_enc_begin(&enc, x->out, x->pos, e->size);
	if (i >= 0 && in->fver >= 3 && (mac = malloc(sizeof(*mac)))) {
		snap_mac_start(mac, x->k, (uint32_t)i, e->size);
		enc.mac = mac;
	}
	ret = i >= 0 && in->fver >= 3 && !mac ? -ENOMEM : tb_enc_fd(&enc, fd);
	close(fd);
	if (!ret)
		ret = tb_enc_end(&enc, &e->stored, e->sha256, &crc);
	if (mac) {
		snap_mac_end(mac, tag);
		same = snap_tag_equal(tag, in->f[i].tag);
		free(mac);
	} else if (i >= 0) {
		same = !memcmp(in->f[i].sha256, e->sha256, 32);
	}
	if (!ret && !same) {
		snprintf(err, errlen, "%s changed since the template was made: not exported "
			 "(mvm template rm, then create it again)", path);
		return -EBADMSG;
	}
	if (ret)
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
	return ret;
}

static void add(struct exp *x, const char *name, uint32_t kind)
{
	struct tb_entry *e = &x->man.e[x->man.n++];

	snprintf(e->name, sizeof(e->name), "%s", name);
	e->kind = kind;
}

/* Every entry's payload after the (later written) manifest. */
static int write_entries(struct exp *x, const struct snap_dir_info *in, const struct tpl_meta *m,
			 char *err, size_t errlen)
{
	char p[PATH_MAX];
	int ret = 0;

	add(x, SNAP_DIR_STATE, TB_STATE);
	add(x, "config.json", TB_CONFIG);
	for (int i = 0; i < in->nfiles; i++)
		add(x, in->f[i].name, i ? TB_LAYER : TB_MEMORY);
	if (m->has_base)
		add(x, strrchr(m->base.path, '/') + 1, TB_IMAGE);
	x->pos = tb_manifest_len(x->man.n);
	for (int i = 0; !ret && i < x->man.n; i++) {
		struct tb_entry *e = &x->man.e[i];

		if (e->kind == TB_STATE || e->kind == TB_CONFIG) {
			ret = put_small(x, e, e->kind == TB_STATE ? 16u << 20 : TB_CONFIG_MAX, err,
					errlen);
		} else if (e->kind == TB_IMAGE) {
			ret = put_big(x, e, m->base.path, in, -1, err, errlen);
		} else {
			snprintf(p, sizeof(p), "%s/%s", x->dir, e->name);
			ret = put_big(x, e, p, in, i - 2, err, errlen);
		}
		x->pos += e->stored;
	}
	return ret;
}

static int write_manifest(struct exp *x, const char *tpl, char digest[SHA256_HEX])
{
	size_t len = tb_manifest_len(x->man.n);
	uint8_t *buf = malloc(len);
	int ret;

	if (!buf)
		return -ENOMEM;
	snprintf(x->man.tpl, sizeof(x->man.tpl), "%s", tpl);
	tb_manifest_encode(&x->man, buf);
	ret = file_pwrite(x->out, buf, len, 0);
	if (!ret && fsync(x->out))
		ret = -errno;
	free(buf);
	for (int i = 0; i < 32; i++)
		snprintf(digest + 2 * i, 3, "%02x", x->man.digest[i]);
	return ret;
}

/* The template as a start would check it, and its seal for the small files. */
static int check(const char *tpl, const char *dir, struct snap_dir_info *in, struct tpl_meta *m,
		 struct snap_seal *seal, uint8_t k[SNAP_KEY_LEN], char *err, size_t errlen)
{
	char why[1024];
	int ret;

	if (!tpl_exists(tpl)) {
		snprintf(err, errlen, "no template named %s (mvm template ls)", tpl);
		return -ENOENT;
	}
	ret = tpl_check(dir, in, m, why, sizeof(why));
	if (!ret)
		ret = snap_seal_load(dir, "template", seal, why, sizeof(why));
	if (!ret)
		ret = snap_dir_key(in, k, why, sizeof(why));
	if (!ret && m->has_base && !tb_name_ok(strrchr(m->base.path, '/') + 1)) {
		snprintf(why, sizeof(why), "its image's name %s cannot travel", m->base.path);
		ret = -EINVAL;
	}
	if (ret)
		snprintf(err, errlen, "template %s: %s: not exported", tpl, why);
	return ret;
}

int sb_template_export(const char *tpl, const char *file, char digest[SHA256_HEX],
		       uint64_t *bytes, char *err, size_t errlen)
{
	struct snap_dir_info *in = calloc(1, sizeof(*in));
	struct tpl_meta *m = calloc(1, sizeof(*m));
	struct exp *x = calloc(1, sizeof(*x));
	char dir[PATH_MAX], tmp[PATH_MAX + 16], d[PATH_MAX], b[PATH_MAX], why[PATH_MAX + 160];
	int ret = !in || !m || !x ? -ENOMEM : 0;

	if (!ret && tpl_dir(tpl, dir, sizeof(dir))) {
		snprintf(err, errlen, "bad template name '%s'", tpl);
		ret = -EINVAL;
	}
	if (!ret)
		ret = check(tpl, dir, in, m, &x->seal, x->k, err, errlen);
	if (ret)
		goto out;
	x->dir = dir;
	snprintf(d, sizeof(d), "%s", file);
	snprintf(b, sizeof(b), "%s", file);
	snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dirname(d), basename(b));
	if (access(file, F_OK) == 0 || errno != ENOENT) {
		snprintf(err, errlen, "%s exists: not replaced", file);
		ret = -EEXIST;
		goto out;
	}
	x->out = mkostemp(tmp, O_CLOEXEC);	/* 0600: a bundle holds guest memory */
	if (x->out < 0) {
		snprintf(err, errlen, "cannot create a file beside %s: %s", file, strerror(errno));
		ret = -errno;
		goto out;
	}
	ret = write_entries(x, in, m, err, errlen);
	if (!ret && (ret = write_manifest(x, tpl, digest)))
		snprintf(err, errlen, "writing %s: %s", tmp, strerror(-ret));
	*bytes = x->pos;
	close(x->out);
	if (!ret && (ret = dir_publish(tmp, file, why, sizeof(why))))
		snprintf(err, errlen, "%s: %s", file, why);
	if (ret)
		unlink(tmp);
out:
	if (x)
		explicit_bzero(x->k, sizeof(x->k));
	free(in);
	free(m);
	free(x);
	return ret;
}
