/* `mvm template import`: a bundle into this host's stores (tools/sandbox/template_bundle.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dir_publish.h"
#include "common/file_io.h"
#include "common/fs_util.h"
#include "images/image_store.h"
#include "snapshots/snap_rebase.h"
#include "snapshots/snap_seal.h"
#include "snapshots/template.h"
#include "snapshots/tpl_bundle.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/snap_config.h"
#include "tools/sandbox/template_bundle.h"

#define CHUNK (1u << 20)

struct tb_import {
	const char *file;
	int fd;
	uint64_t total;
	struct tb_manifest m;
	char digest[SHA256_HEX];
	char name[TPL_NAME_MAX + 1];
	bool given;			/* --name */
	char stage[PATH_MAX], dst[PATH_MAX];
	int sfd;
	uint32_t crc[TB_MAX_ENTRIES];
	/* This host's tags of the snapshot files (FILE section v3): the
	 * bundle's own state was tagged, if at all, under another host's key. */
	uint8_t salt[SNAP_SALT_LEN], k[SNAP_KEY_LEN], tag[TB_MAX_ENTRIES][SNAP_TAG_LEN];
	bool has_img, img_reused, img_published;
	char store[PATH_MAX], img_path[PATH_MAX], img_stage[PATH_MAX + 32];
	int img_fd;
};

static void hex32(const uint8_t *d, char out[SHA256_HEX])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* Header and records, checked against the file's size. */
static int read_manifest(struct tb_import *x, char *err, size_t errlen)
{
	uint8_t h[TB_HDR_LEN], *buf;
	struct stat st;
	size_t len;
	int n, ret;

	x->fd = open(x->file, O_RDONLY | O_CLOEXEC);
	if (x->fd < 0 || fstat(x->fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", x->file, x->fd < 0 ? strerror(errno) :
			 "not a regular file");
		return x->fd < 0 ? -errno : -EINVAL;
	}
	x->total = (uint64_t)st.st_size;
	len = x->total < TB_HDR_LEN ? (size_t)x->total : TB_HDR_LEN;
	ret = file_pread(x->fd, h, len, 0);
	n = ret ? ret : tb_header_count(h, len, err, errlen);
	if (n < 0)
		return n;
	len = tb_manifest_len(n);
	if (x->total < len) {
		snprintf(err, errlen, "not a valid template bundle: truncated manifest");
		return -EBADMSG;
	}
	buf = malloc(len);
	ret = !buf ? -ENOMEM : file_pread(x->fd, buf, len, 0);
	if (!ret)
		ret = tb_manifest_parse(buf, len, x->total, &x->m, err, errlen);
	free(buf);
	if (!ret)
		hex32(x->m.digest, x->digest);
	return ret;
}

/* Template @name holds bundle @digest, by its sealed template.json. */
static bool holds(const char *name, const char *digest)
{
	struct tpl_meta *m = calloc(1, sizeof(*m));
	struct snap_seal s;
	char dir[PATH_MAX], err[512];
	bool yes = m && !tpl_dir(name, dir, sizeof(dir)) &&
		   !tpl_meta_load(dir, m, err, sizeof(err)) && !strcmp(m->bundle, digest) &&
		   !snap_seal_load(dir, "template", &s, err, sizeof(err)) &&
		   !snap_seal_expect(&s, dir, TPL_META, m->sha256, err, sizeof(err));

	free(m);
	return yes;
}

/* Already imported (a no-op), or the name is taken by another template. */
static int find_existing(struct tb_import *x, struct sb_import *r, char *err, size_t errlen)
{
	char **names = NULL;
	int n = x->given ? 0 : tpl_list(&names);

	for (int i = 0; i < n; i++) {
		if (!r->noop && holds(names[i], x->digest)) {
			snprintf(r->name, sizeof(r->name), "%s", names[i]);
			r->noop = true;
		}
		free(names[i]);
	}
	free(names);
	if (!r->noop && holds(x->name, x->digest)) {
		snprintf(r->name, sizeof(r->name), "%s", x->name);
		r->noop = true;
	}
	if (!r->noop && tpl_exists(x->name)) {
		snprintf(err, errlen, "a template named %s already exists and is not this bundle "
			 "(sha256 %s): import it under another name with --name NAME", x->name,
			 x->digest);
		return -EEXIST;
	}
	return 0;
}

/* The store's image whose contents are @e's (same size, same digest), if any. */
static bool find_image(const char *store, const struct tb_entry *e, char *out, size_t cap)
{
	struct image_entry *v = NULL;
	int n = image_store_list(store, &v);
	bool found = false;

	for (int i = 0; !found && i < n; i++) {
		char p[PATH_MAX];
		uint8_t sha[32];
		uint64_t size;
		uint32_t crc;
		int fd;

		if (strcmp(v[i].format, "raw") || v[i].vsize != e->size)
			continue;
		snprintf(p, sizeof(p), "%s/%s", store, v[i].name);
		fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		found = fd >= 0 && !snap_file_digest(fd, &size, &crc, sha) && size == e->size &&
			!memcmp(sha, e->sha256, 32);
		if (fd >= 0)
			close(fd);
		if (found)
			snprintf(out, cap, "%s", p);
	}
	free(v);
	return found;
}

/* Where the image goes: reused by digest, else its own name if free, else
 * NAME-DIGEST12.EXT. */
static int plan_image(struct tb_import *x, char *err, size_t errlen)
{
	const struct tb_entry *e = &x->m.e[x->m.n - 1];
	char *store = image_store_dir(), real[PATH_MAX], stem[TB_NAME_MAX], *dot;
	int ret = 0;

	if (!store)
		return -ENOMEM;
	if (mkdir_p(store, 0755) || !realpath(store, real)) {
		snprintf(err, errlen, "the image store %s: %s", store, strerror(errno));
		free(store);
		return -errno;
	}
	free(store);
	snprintf(x->store, sizeof(x->store), "%s", real);
	x->img_reused = find_image(real, e, x->img_path, sizeof(x->img_path));
	if (x->img_reused)
		return 0;
	snprintf(x->img_path, sizeof(x->img_path), "%s/%s", real, e->name);
	if (access(x->img_path, F_OK) == 0) {
		snprintf(stem, sizeof(stem), "%s", e->name);
		dot = strrchr(stem, '.');
		if (dot)
			*dot = 0;
		snprintf(x->img_path, sizeof(x->img_path), "%s/%s-%.12s%s", real, stem, x->digest,
			 dot ? strrchr(e->name, '.') : "");
		if (access(x->img_path, F_OK) == 0) {
			snprintf(err, errlen, "the image store has a different %s and %s: remove one",
				 e->name, strrchr(x->img_path, '/') + 1);
			ret = -EEXIST;
		}
	}
	return ret;
}

static int sink(void *opaque, uint64_t off, const uint8_t *p, size_t n)
{
	return file_pwrite(*(int *)opaque, p, n, off);
}

/* Entry @i's payload from the bundle into @fd (-1: checked only); a
 * snapshot file's (memory, a layer) tagged on the way under this host's key. */
static int unpack_one(struct tb_import *x, int i, int fd, char *err, size_t errlen)
{
	const struct tb_entry *e = &x->m.e[i];
	bool tagged = e->kind == TB_MEMORY || e->kind == TB_LAYER;
	uint8_t *buf = malloc(CHUNK), sha[32];
	uint64_t left = e->stored;
	struct tb_dec *d = malloc(sizeof(*d));
	struct snap_mac *mac = tagged ? malloc(sizeof(*mac)) : NULL;
	int ret = buf && d && (mac || !tagged) ? 0 : -ENOMEM;

	if (!ret && fd >= 0 && ftruncate(fd, (off_t)e->size))
		ret = -errno;
	if (!ret)
		tb_dec_init(d, e, fd >= 0 ? sink : NULL, &fd);
	if (!ret && mac) {
		snap_mac_start(mac, x->k, (uint32_t)(i - 2), e->size);	/* file i - 2 */
		d->mac = mac;
	}
	while (!ret && left) {
		size_t n = left < CHUNK ? (size_t)left : CHUNK;
		ssize_t r = read(x->fd, buf, n);

		if (r <= 0) {
			snprintf(err, errlen, "template bundle truncated (in entry '%s')", e->name);
			ret = -EBADMSG;
			break;
		}
		left -= (uint64_t)r;
		ret = tb_dec_feed(d, buf, (size_t)r, err, errlen);
	}
	if (!ret)
		ret = tb_dec_finish(d, sha, &x->crc[i], err, errlen);
	if (mac) {
		snap_mac_end(mac, x->tag[i]);
		free(mac);
	}
	if (!ret && memcmp(sha, e->sha256, 32)) {
		snprintf(err, errlen, "template bundle entry '%s': its SHA-256 does not match the "
			 "manifest (edited or damaged): refusing the bundle", e->name);
		ret = -EBADMSG;
	}
	if (!ret && fd >= 0 && fsync(fd))
		ret = -errno;
	free(buf);
	free(d);
	return ret;
}

/* Every entry into the staging directory (the image into its hidden file). */
static int unpack(struct tb_import *x, char *err, size_t errlen)
{
	char extra;
	int ret = lseek(x->fd, (off_t)tb_manifest_len(x->m.n), SEEK_SET) < 0 ? -errno : 0;

	for (int i = 0; !ret && i < x->m.n; i++) {
		const struct tb_entry *e = &x->m.e[i];
		int fd = -1;

		if (e->kind == TB_IMAGE)
			fd = x->img_reused ? -1 : dup(x->img_fd);
		else
			fd = openat(x->sfd, e->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC, 0600);
		if (fd < 0 && !(e->kind == TB_IMAGE && x->img_reused)) {
			snprintf(err, errlen, "staging %s: %s", e->name, strerror(errno));
			return -errno;
		}
		ret = unpack_one(x, i, fd, err, errlen);
		if (fd >= 0)
			close(fd);
	}
	if (!ret && read(x->fd, &extra, 1) != 0) {
		snprintf(err, errlen, "template bundle changed while it was read: refusing it");
		ret = -EBADMSG;
	}
	return ret;
}

/* The state's own file list is the bundle's: names, sizes, and (v2) digests;
 * then, in @in, the files as this host tagged them (v3, its own salt). A v3
 * state's tags are another key's: the entries' SHA-256s, checked against
 * the manifest, vouch for the contents. */
static int cross_check(struct tb_import *x, struct snap_dir_info *in, char *err, size_t errlen)
{
	int nfiles = x->m.n - 2 - (x->m.e[x->m.n - 1].kind == TB_IMAGE);
	int ret = snap_dir_info(x->stage, in, err, errlen);

	if (ret)
		return ret;
	if (!snap_files_bound(in) || in->nfiles != nfiles ||
	    in->has_base != (x->m.e[x->m.n - 1].kind == TB_IMAGE))
		goto differ;
	for (int i = 0; i < nfiles; i++) {
		const struct tb_entry *e = &x->m.e[2 + i];

		if (strcmp(in->f[i].name, e->name) || in->f[i].size != e->size ||
		    (in->fver == 2 && (memcmp(in->f[i].sha256, e->sha256, 32) ||
				       in->f[i].crc != x->crc[2 + i])))
			goto differ;
	}
	in->fver = 3;
	memcpy(in->salt, x->salt, SNAP_SALT_LEN);
	for (int i = 0; i < nfiles; i++)
		memcpy(in->f[i].tag, x->tag[2 + i], SNAP_TAG_LEN);
	return 0;
differ:
	snprintf(err, errlen, "template bundle: its state's file list and its entries disagree: "
		 "refusing it");
	return -EBADMSG;
}

/* config.json names this host's copy of the image (or none), and passes
 * the checks a start makes. */
static int fix_config(struct tb_import *x, const struct snap_dir_info *in, char *err,
		      size_t errlen)
{
	char p[PATH_MAX], why[512], *text = NULL, *out = NULL;
	struct sb_config c;
	cJSON *j = NULL;
	int ret = 0;

	snprintf(p, sizeof(p), "%s/config.json", x->stage);
	if (in->has_base) {
		text = file_read_text(p, TB_CONFIG_MAX);
		j = text ? cJSON_Parse(text) : NULL;
		ret = cJSON_IsObject(j) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "image"))
		      ? 0 : -EBADMSG;
		if (!ret && !cJSON_ReplaceItemInObjectCaseSensitive(j, "image",
								     cJSON_CreateString(x->img_path)))
			ret = -ENOMEM;
		if (!ret && !(out = cJSON_Print(j)))
			ret = -ENOMEM;
		if (!ret && unlink(p))
			ret = -errno;
		if (!ret)
			ret = file_write_atomic(p, out);
	}
	if (!ret)
		ret = sb_config_load_file(p, "import", &c) ? -EBADMSG : 0;
	if (!ret) {
		ret = sb_snap_config_ok(&c, in, why, sizeof(why));
		sb_config_free(&c);
	}
	if (ret)
		snprintf(err, errlen, "template bundle: its config.json: %s",
			 ret == -EINVAL ? why : "not a sandbox configuration");
	cJSON_Delete(j);
	free(text);
	free(out);
	return ret;
}

/* The template on this host's copy of the image: its layers, state and config. */
static int rebase(struct tb_import *x, struct snap_dir_info *in, char *err, size_t errlen)
{
	struct snap_ident id;
	int fd = x->img_reused ? open(x->img_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : x->img_fd;
	int ret = fd < 0 ? -errno : snap_ident_fd(fd, &id);

	if (x->img_reused && fd >= 0)
		close(fd);
	if (ret) {
		snprintf(err, errlen, "%s: %s", x->img_path, strerror(-ret));
		return ret;
	}
	ret = snap_rebase(x->stage, in, x->k, x->img_path, &id, err, errlen);
	if (!ret)
		ret = snap_dir_info(x->stage, in, err, errlen);
	return ret;
}

/* The state's file list as this host tagged it (cross_check). */
static int retag(struct tb_import *x, struct snap_dir_info *in, char *err, size_t errlen)
{
	int ret = snap_state_files(x->stage, in, err, errlen);

	return ret ? ret : snap_dir_info(x->stage, in, err, errlen);
}

/* The image into the store, complete (nothing when it was there already). */
static int publish_image(struct tb_import *x, char *err, size_t errlen)
{
	char why[PATH_MAX + 160];
	int ret;

	if (x->img_reused)
		return 0;
	ret = fchmod(x->img_fd, 0644) ? -errno : 0;
	if (!ret)
		ret = dir_publish(x->img_stage, x->img_path, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "%s: %s", x->img_path, ret == -EEXIST ?
			 "an image of that name appeared meanwhile" : why);
		return ret;
	}
	x->img_published = true;
	x->img_stage[0] = 0;
	return 0;
}

/* Staging: a hidden directory of the template store, a hidden file of the
 * image store (both on the file systems they are published to). */
static int make_stage(struct tb_import *x, char *err, size_t errlen)
{
	char root[PATH_MAX];

	if (tpl_root(root, sizeof(root)) || tpl_dir(x->name, x->dst, sizeof(x->dst)) ||
	    mkdir_p(root, 0700)) {
		snprintf(err, errlen, "cannot create the template store %s: %s", root, strerror(errno));
		return -EIO;
	}
	snprintf(x->stage, sizeof(x->stage), "%s/.import-%s.XXXXXX", root, x->name);
	if (!mkdtemp(x->stage) || (x->sfd = open(x->stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "cannot stage in %s: %s", root, strerror(errno));
		x->stage[0] = 0;
		return -errno;
	}
	if (!x->has_img || x->img_reused)
		return 0;
	snprintf(x->img_stage, sizeof(x->img_stage), "%s/.import-%s.XXXXXX", x->store,
		 strrchr(x->img_path, '/') + 1);
	x->img_fd = mkostemp(x->img_stage, O_CLOEXEC);
	if (x->img_fd < 0) {
		snprintf(err, errlen, "cannot stage in %s: %s", x->store, strerror(errno));
		x->img_stage[0] = 0;
		return -errno;
	}
	return 0;
}

/* Checked as a start would, sealed with this host's key, published whole. */
static int finish(struct tb_import *x, struct snap_dir_info *in, char *err, size_t errlen)
{
	char why[PATH_MAX + 160];
	int ret = 0;

	if (x->has_img) {
		ret = snap_base_check(&in->base, err, errlen);
		/* The digest verified above, by the snapshot's own definition. */
		hex32(x->m.e[x->m.n - 1].sha256, in->base.sha256);
		snprintf(in->base.sha256_of, sizeof(in->base.sha256_of), "blocks");
	}
	if (!ret)
		ret = tpl_seal_bundle(x->stage, x->name, x->m.tpl, in, x->digest, err, errlen);
	if (!ret && (ret = dir_publish(x->stage, x->dst, why, sizeof(why))))
		snprintf(err, errlen, ret == -EEXIST ? "a template named %s appeared meanwhile" :
			 "cannot move the template into place: %s", ret == -EEXIST ? x->name : why);
	if (!ret)
		x->stage[0] = 0;
	return ret;
}

static void cleanup(struct tb_import *x, int ret)
{
	if (x->stage[0])
		rm_tree(x->stage);
	if (x->img_stage[0])
		unlink(x->img_stage);
	if (ret && x->img_published)
		unlink(x->img_path);	/* ours, just placed: nothing half-imported */
	if (x->sfd >= 0)
		close(x->sfd);
	if (x->img_fd >= 0)
		close(x->img_fd);
	if (x->fd >= 0)
		close(x->fd);
}

static int run(struct tb_import *x, struct sb_import *r, char *err, size_t errlen)
{
	struct snap_dir_info *in = calloc(1, sizeof(*in));
	int ret = in ? read_manifest(x, err, errlen) : -ENOMEM;

	if (!ret && !x->given)
		snprintf(x->name, sizeof(x->name), "%s", x->m.tpl);
	if (!ret)
		ret = find_existing(x, r, err, errlen);
	if (ret || r->noop)
		goto out;
	x->has_img = x->m.e[x->m.n - 1].kind == TB_IMAGE;
	if (x->has_img)
		ret = plan_image(x, err, errlen);
	if (!ret && snap_mac_salt(x->salt)) {
		snprintf(err, errlen, "no random bytes for the template's salt");
		ret = -EIO;
	}
	if (!ret)
		ret = snap_mac_key(x->salt, x->k, err, errlen);
	if (!ret)
		ret = make_stage(x, err, errlen);
	if (!ret)
		ret = unpack(x, err, errlen);
	/* Every digest checked: only now is anything of the bundle parsed. */
	if (!ret)
		ret = cross_check(x, in, err, errlen);
	if (!ret)
		ret = x->has_img ? rebase(x, in, err, errlen) : retag(x, in, err, errlen);
	if (!ret)
		ret = fix_config(x, in, err, errlen);
	if (!ret)
		ret = publish_image(x, err, errlen);
	if (!ret)
		ret = finish(x, in, err, errlen);
out:
	if (!r->noop)
		snprintf(r->name, sizeof(r->name), "%s", x->name);
	snprintf(r->digest, sizeof(r->digest), "%s", x->digest);
	snprintf(r->image, sizeof(r->image), "%s", x->has_img ? x->img_path : "");
	r->image_reused = x->img_reused;
	free(in);
	return ret;
}

int sb_template_import(const char *file, const char *name, struct sb_import *r, char *err,
		       size_t errlen)
{
	struct tb_import *x = calloc(1, sizeof(*x));
	int ret;

	memset(r, 0, sizeof(*r));
	if (!x)
		return -ENOMEM;
	x->file = file;
	x->fd = x->sfd = x->img_fd = -1;
	if (name && !tpl_name_ok(name)) {
		snprintf(err, errlen, "bad template name '%s': letters, digits, '.', '_', '-' "
			 "(at most %d)", name, TPL_NAME_MAX);
		free(x);
		return -EINVAL;
	}
	x->given = name != NULL;
	snprintf(x->name, sizeof(x->name), "%s", name ? name : "");
	ret = run(x, r, err, errlen);
	if (ret && !strstr(err, "nothing"))
		snprintf(err + strlen(err), errlen - strlen(err), "; nothing was imported");
	cleanup(x, ret);
	explicit_bzero(x->k, sizeof(x->k));
	free(x);
	return ret;
}
