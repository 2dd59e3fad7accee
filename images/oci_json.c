/* The JSON documents of OCI images and docker archives (oci_json.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "images/oci_json.h"
#include "images/oci_path.h"

#define MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define REF_NAME "org.opencontainers.image.ref.name"
#define ENV_MAX 4096		/* entries in Env, Cmd, Entrypoint */

static const struct {
	const char *type;
	enum oci_comp comp;
} layer_types[] = {
	{ "application/vnd.oci.image.layer.v1.tar", OCI_COMP_NONE },
	{ "application/vnd.oci.image.layer.v1.tar+gzip", OCI_COMP_GZIP },
	{ "application/vnd.oci.image.layer.v1.tar+zstd", OCI_COMP_ZSTD },
	{ "application/vnd.oci.image.layer.nondistributable.v1.tar", OCI_COMP_NONE },
	{ "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", OCI_COMP_GZIP },
	{ "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd", OCI_COMP_ZSTD },
	{ "application/vnd.docker.image.rootfs.diff.tar.gzip", OCI_COMP_GZIP },
	{ "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", OCI_COMP_GZIP },
};

static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int oci_digest_parse(const char *s, char hex[65])
{
	if (!s || strncmp(s, "sha256:", 7) || strlen(s + 7) != 64 ||
	    strspn(s + 7, "0123456789abcdef") != 64)
		return -EINVAL;
	memcpy(hex, s + 7, 65);
	return 0;
}

static cJSON *parse(const char *text, size_t len, const char *what, char *err, size_t errlen)
{
	cJSON *j;

	if (len > OCI_JSON_MAX) {
		bad(err, errlen, "%s: over %u bytes", what, OCI_JSON_MAX);
		return NULL;
	}
	j = cJSON_ParseWithLength(text, len);
	if (!j)
		bad(err, errlen, "%s: not JSON", what);
	return j;
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* digest + size of a descriptor object. */
static int desc_of(const cJSON *d, struct oci_desc *out, const char *what, char *err, size_t errlen)
{
	const cJSON *sz = cJSON_GetObjectItemCaseSensitive(d, "size");

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(d))
		return bad(err, errlen, "%s: not a descriptor object", what);
	if (oci_digest_parse(str_of(d, "digest"), out->hex))
		return bad(err, errlen, "%s: digest is not sha256:<64 lowercase hex>", what);
	if (!cJSON_IsNumber(sz) || sz->valuedouble < 0 || sz->valuedouble > 9007199254740992.0 ||
	    sz->valuedouble != (double)(int64_t)sz->valuedouble)
		return bad(err, errlen, "%s: size is not a non-negative integer", what);
	out->size = (int64_t)sz->valuedouble;
	return 0;
}

static bool is_index_type(const char *mt)
{
	return mt && (!strcmp(mt, MT_OCI_INDEX) || !strcmp(mt, MT_DOCKER_LIST));
}

static bool is_manifest_type(const char *mt)
{
	return mt && (!strcmp(mt, MT_OCI_MANIFEST) || !strcmp(mt, MT_DOCKER_MANIFEST));
}

static const cJSON *manifests_of(const cJSON *j, char *err, size_t errlen)
{
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(j, "manifests");

	if (!cJSON_IsObject(j) || !cJSON_IsArray(ms)) {
		bad(err, errlen, "index: no \"manifests\" array");
		return NULL;
	}
	if (cJSON_GetArraySize(ms) > 1024) {
		bad(err, errlen, "index: over 1024 manifests");
		return NULL;
	}
	return ms;
}

static int take(const cJSON *m, struct oci_desc *out, int *is_index, char *err, size_t errlen)
{
	const char *mt = str_of(m, "mediaType");

	if (!is_index_type(mt) && !is_manifest_type(mt))
		return bad(err, errlen, "index: manifest media type '%.80s' is not an image manifest",
			   mt ? mt : "(none)");
	*is_index = is_index_type(mt);
	return desc_of(m, out, "index: manifest", err, errlen);
}

int oci_parse_index(const char *text, size_t len, const char *tag, struct oci_desc *out,
		    int *is_index, char *err, size_t errlen)
{
	cJSON *j = parse(text, len, "index.json", err, errlen);
	const cJSON *ms = j ? manifests_of(j, err, errlen) : NULL, *m, *pick = NULL;
	int n = 0, ret = -EINVAL;

	if (!ms)
		goto out;
	cJSON_ArrayForEach(m, ms) {
		const char *ref = str_of(cJSON_GetObjectItemCaseSensitive(m, "annotations"), REF_NAME);

		if (!tag || (ref && !strcmp(ref, tag))) {
			pick = m;
			n++;
		}
	}
	if (n == 0)
		ret = bad(err, errlen, tag ? "index: no manifest tagged '%.64s'" : "index: no manifest",
			  tag ? tag : "");
	else if (n > 1)
		ret = bad(err, errlen, tag ? "index: %d manifests tagged '%.64s'"
				       : "index: %d manifests; name one with oci:DIR:TAG", n, tag ? tag : "");
	else
		ret = take(pick, out, is_index, err, errlen);
out:
	cJSON_Delete(j);
	return ret;
}

int oci_parse_platform_index(const char *text, size_t len, struct oci_desc *out, int *is_index,
			     char *err, size_t errlen)
{
	cJSON *j = parse(text, len, "image index", err, errlen);
	const cJSON *ms = j ? manifests_of(j, err, errlen) : NULL, *m;
	int ret = -EINVAL;

	if (!ms)
		goto out;
	ret = bad(err, errlen, "image index: no linux/amd64 image");
	cJSON_ArrayForEach(m, ms) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(m, "platform");
		const char *os = str_of(p, "os"), *arch = str_of(p, "architecture");

		if (os && arch && !strcmp(os, "linux") && !strcmp(arch, "amd64")) {
			ret = take(m, out, is_index, err, errlen);
			break;
		}
	}
out:
	cJSON_Delete(j);
	return ret;
}

static int layer_comp(const char *mt, enum oci_comp *c)
{
	for (size_t i = 0; mt && i < sizeof(layer_types) / sizeof(layer_types[0]); i++)
		if (!strcmp(mt, layer_types[i].type)) {
			*c = layer_types[i].comp;
			return 0;
		}
	return -EINVAL;
}

int oci_parse_manifest(const char *text, size_t len, struct oci_manifest *m, char *err, size_t errlen)
{
	cJSON *j = parse(text, len, "manifest", err, errlen);
	const cJSON *ls, *l, *sv;
	const char *cmt;
	int ret = -EINVAL, i = 0;

	memset(m, 0, sizeof(*m));
	if (!j)
		return -EINVAL;
	sv = cJSON_GetObjectItemCaseSensitive(j, "schemaVersion");
	ls = cJSON_GetObjectItemCaseSensitive(j, "layers");
	if (!cJSON_IsNumber(sv) || sv->valueint != 2) {
		bad(err, errlen, "manifest: schemaVersion is not 2");
		goto out;
	}
	if (desc_of(cJSON_GetObjectItemCaseSensitive(j, "config"), &m->config, "manifest: config",
		    err, errlen))
		goto out;
	cmt = str_of(cJSON_GetObjectItemCaseSensitive(j, "config"), "mediaType");
	if (!cmt || (strcmp(cmt, "application/vnd.oci.image.config.v1+json") &&
		     strcmp(cmt, "application/vnd.docker.container.image.v1+json"))) {
		bad(err, errlen, "manifest: config media type '%.80s' is not an image config",
		    cmt ? cmt : "(none)");
		goto out;
	}
	if (!cJSON_IsArray(ls) || cJSON_GetArraySize(ls) > OCI_LAYERS_MAX) {
		bad(err, errlen, "manifest: \"layers\" is not an array of at most %d", OCI_LAYERS_MAX);
		goto out;
	}
	cJSON_ArrayForEach(l, ls) {
		const char *mt = str_of(l, "mediaType");

		if (desc_of(l, &m->layers[i], "manifest: layer", err, errlen))
			goto out;
		if (layer_comp(mt, &m->layers[i].comp)) {
			bad(err, errlen, "manifest: layer %d: media type '%.80s' is not a tar layer", i,
			    mt ? mt : "(none)");
			goto out;
		}
		i++;
	}
	m->n_layers = (unsigned)i;
	ret = 0;
out:
	cJSON_Delete(j);
	return ret;
}

/* A path inside a docker archive, cleaned; the digest it names, if any. */
static int member(const cJSON *v, struct oci_desc *d, const char *what, char *err, size_t errlen)
{
	const char *why, *base;

	memset(d, 0, sizeof(*d));
	d->size = -1;
	if (!cJSON_IsString(v) || oci_path_clean(v->valuestring, d->path, sizeof(d->path), &why) ||
	    !d->path[0])
		return bad(err, errlen, "manifest.json: %s is not a path inside the archive", what);
	base = strrchr(d->path, '/');
	base = base ? base + 1 : d->path;
	if (strspn(base, "0123456789abcdef") == 64 && (!base[64] || !strcmp(base + 64, ".json")))
		memcpy(d->hex, base, 64);
	return 0;
}

static bool has_tag(const cJSON *img, const char *tag)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(img, "RepoTags"))
		if (cJSON_IsString(t) && !strcmp(t->valuestring, tag))
			return true;
	return false;
}

int oci_parse_docker_manifest(const char *text, size_t len, const char *tag,
			      struct oci_manifest *m, char *err, size_t errlen)
{
	cJSON *j = parse(text, len, "manifest.json", err, errlen);
	const cJSON *img, *pick = NULL, *ls, *l;
	int n = 0, ret = -EINVAL, i = 0;

	memset(m, 0, sizeof(*m));
	if (!cJSON_IsArray(j)) {
		if (j)
			bad(err, errlen, "manifest.json: not an array");
		goto out;
	}
	cJSON_ArrayForEach(img, j)
		if (!tag || has_tag(img, tag)) {
			pick = img;
			n++;
		}
	if (n > 1) {
		bad(err, errlen, "manifest.json: %d images; name one with docker-archive:FILE:TAG", n);
		goto out;
	}
	if (!n) {
		bad(err, errlen, "manifest.json: no image%s%.64s", tag ? " tagged " : "", tag ? tag : "");
		goto out;
	}
	if (member(cJSON_GetObjectItemCaseSensitive(pick, "Config"), &m->config, "Config", err, errlen))
		goto out;
	ls = cJSON_GetObjectItemCaseSensitive(pick, "Layers");
	if (!cJSON_IsArray(ls) || cJSON_GetArraySize(ls) > OCI_LAYERS_MAX) {
		bad(err, errlen, "manifest.json: Layers is not an array of at most %d", OCI_LAYERS_MAX);
		goto out;
	}
	cJSON_ArrayForEach(l, ls) {
		if (member(l, &m->layers[i], "a layer", err, errlen))
			goto out;
		/* docker save writes layers as plain tars; gzip is detected too. */
		m->layers[i].hex[0] = 0;
		m->layers[i++].comp = OCI_COMP_NONE;
	}
	m->n_layers = (unsigned)i;
	ret = 0;
out:
	cJSON_Delete(j);
	return ret;
}

/* An array of at most ENV_MAX strings, copied; NULL and an error otherwise. */
static int copy_strings(const cJSON *cfg, const char *key, cJSON *out, char *err, size_t errlen)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(cfg, key), *s;
	cJSON *copy;

	if (!a || cJSON_IsNull(a))
		return 0;
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > ENV_MAX)
		return bad(err, errlen, "config: %s is not an array of at most %d strings", key, ENV_MAX);
	cJSON_ArrayForEach(s, a)
		if (!cJSON_IsString(s) || strlen(s->valuestring) > 65536)
			return bad(err, errlen, "config: %s holds a non-string or one over 64 KiB", key);
	if (!strcmp(key, "Env"))
		cJSON_ArrayForEach(s, a)
			if (!strchr(s->valuestring, '=') || s->valuestring[0] == '=')
				return bad(err, errlen, "config: Env entry without NAME=");
	copy = cJSON_Duplicate(a, 1);
	if (!copy || !cJSON_AddItemToObject(out, key, copy)) {
		cJSON_Delete(copy);
		return bad(err, errlen, "config: out of memory");
	}
	return 0;
}

static int copy_string(const cJSON *cfg, const char *key, cJSON *out, char *err, size_t errlen)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(cfg, key);

	if (!s || cJSON_IsNull(s) || (cJSON_IsString(s) && !s->valuestring[0]))
		return 0;
	if (!cJSON_IsString(s) || strlen(s->valuestring) > 4096)
		return bad(err, errlen, "config: %s is not a string of at most 4096 bytes", key);
	if (!cJSON_AddStringToObject(out, key, s->valuestring))
		return bad(err, errlen, "config: out of memory");
	return 0;
}

static int diff_ids(const cJSON *j, struct oci_config *c, char *err, size_t errlen)
{
	const cJSON *rootfs = cJSON_GetObjectItemCaseSensitive(j, "rootfs"), *ids, *d;
	const char *type = str_of(rootfs, "type");

	ids = cJSON_GetObjectItemCaseSensitive(rootfs, "diff_ids");
	if (!type || strcmp(type, "layers") || !cJSON_IsArray(ids) ||
	    cJSON_GetArraySize(ids) > OCI_LAYERS_MAX)
		return bad(err, errlen, "config: rootfs is not {\"type\": \"layers\", \"diff_ids\": [...]}");
	cJSON_ArrayForEach(d, ids)
		if (!cJSON_IsString(d) || oci_digest_parse(d->valuestring, c->diff_ids[c->n_diff_ids++]))
			return bad(err, errlen, "config: a diff_id is not sha256:<64 lowercase hex>");
	return 0;
}

int oci_parse_config(const char *text, size_t len, struct oci_config *c, char *err, size_t errlen)
{
	static const char *lists[] = { "Env", "Entrypoint", "Cmd" };
	static const char *strs[] = { "WorkingDir", "User" };
	cJSON *j = parse(text, len, "config", err, errlen);
	const cJSON *cfg;
	const char *os, *arch;
	int ret = -EINVAL;

	memset(c, 0, sizeof(*c));
	if (!cJSON_IsObject(j)) {
		if (j)
			bad(err, errlen, "config: not an object");
		goto out;
	}
	os = str_of(j, "os");
	arch = str_of(j, "architecture");
	if (!os || !arch || strcmp(os, "linux") || strcmp(arch, "amd64")) {
		bad(err, errlen, "config: the image is for %.20s/%.20s, not linux/amd64",
		    os ? os : "?", arch ? arch : "?");
		goto out;
	}
	snprintf(c->os, sizeof(c->os), "%s", os);
	snprintf(c->arch, sizeof(c->arch), "%s", arch);
	if (diff_ids(j, c, err, errlen) || !(c->defaults = cJSON_CreateObject()))
		goto out;
	cfg = cJSON_GetObjectItemCaseSensitive(j, "config");
	if (cfg && !cJSON_IsNull(cfg) && !cJSON_IsObject(cfg)) {
		bad(err, errlen, "config: \"config\" is not an object");
		goto out;
	}
	for (size_t i = 0; i < 3; i++)
		if (copy_strings(cfg, lists[i], c->defaults, err, errlen))
			goto out;
	for (size_t i = 0; i < 2; i++)
		if (copy_string(cfg, strs[i], c->defaults, err, errlen))
			goto out;
	ret = 0;
out:
	if (ret)
		oci_config_free(c);
	cJSON_Delete(j);
	return ret;
}

void oci_config_free(struct oci_config *c)
{
	cJSON_Delete(c->defaults);
	c->defaults = NULL;
}
