/*
 * libFuzzer target: mvm's own parsing of an OCI image (images/oci_json.h,
 * images/oci_path.h): index.json, a nested index, an image manifest,
 * docker's manifest.json, the image config, and a layer entry's name. The
 * first byte picks the parser; the rest is the document (a tag, when one
 * is used, is fixed). Beyond ASan's "no overrun": whatever is accepted is
 * in its one valid form (digests 64 lowercase hex, sizes whole, layer
 * counts within the cap, paths relative with no ".." and no empty or
 * control-character component), and a refusal always says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "images/oci_json.h"
#include "images/oci_path.h"
#include "images/oci_user.h"

static void hex_ok(const char *hex)
{
	if (strlen(hex) != 64 || strspn(hex, "0123456789abcdef") != 64)
		abort();
}

static void path_ok(const char *p)
{
	const char *c = p;

	if (p[0] == '/' || strlen(p) >= OCI_PATH_MAX)
		abort();
	while (*c) {
		const char *end = strchrnul(c, '/');
		size_t n = (size_t)(end - c);

		if (!n || (n == 2 && !strncmp(c, "..", 2)) || (n == 1 && *c == '.'))
			abort();
		for (const char *q = c; q < end; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				abort();
		c = *end ? end + 1 : end;
	}
}

static void manifest_ok(const struct oci_manifest *m, int docker)
{
	if (m->n_layers > OCI_LAYERS_MAX)
		abort();
	if (!docker)
		hex_ok(m->config.hex);
	else
		path_ok(m->config.path);
	for (unsigned i = 0; i < m->n_layers; i++) {
		if (docker)
			path_ok(m->layers[i].path);
		else if (hex_ok(m->layers[i].hex), m->layers[i].size < 0)
			abort();
	}
}

static void json_case(uint8_t pick, const char *t, size_t n)
{
	static struct oci_manifest m;
	struct oci_config c;
	struct oci_desc d;
	char err[256] = "";
	int nested = 0, ret;

	switch (pick % 6) {
	case 0: ret = oci_parse_index(t, n, NULL, &d, &nested, err, sizeof(err)); break;
	case 1: ret = oci_parse_index(t, n, "latest", &d, &nested, err, sizeof(err)); break;
	case 2: ret = oci_parse_platform_index(t, n, &d, &nested, err, sizeof(err)); break;
	case 3: ret = oci_parse_manifest(t, n, &m, err, sizeof(err)); break;
	case 4: ret = oci_parse_docker_manifest(t, n, pick & 8 ? "t:latest" : NULL, &m, err, sizeof(err)); break;
	default:
		ret = oci_parse_config(t, n, &c, err, sizeof(err));
		if (!ret) {
			if (!c.defaults || c.n_diff_ids > OCI_LAYERS_MAX)
				abort();
			for (unsigned i = 0; i < c.n_diff_ids; i++)
				hex_ok(c.diff_ids[i]);
			oci_config_free(&c);
		}
		break;
	}
	if (ret && !err[0])
		abort();
	if (!ret && pick % 6 <= 2 && (hex_ok(d.hex), d.size < 0))
		abort();
	if (!ret && (pick % 6 == 3 || pick % 6 == 4))
		manifest_ok(&m, pick % 6 == 4);
}

static void path_case(const char *t)
{
	char out[OCI_PATH_MAX];
	enum oci_path_kind k;
	const char *why = NULL;

	if (oci_path_classify(t, out, sizeof(out), &k, &why)) {
		if (!why || !*why)
			abort();
		return;
	}
	if (k == OCI_PATH_ROOT && out[0])
		abort();
	if (k != OCI_PATH_ROOT && k != OCI_PATH_OPAQUE && !out[0])
		abort();
	path_ok(out);
	/* Whiteouts name what they delete: never a whiteout name again. */
	if ((k == OCI_PATH_WHITEOUT || k == OCI_PATH_OPAQUE) && strstr(out, "/.wh.") == out)
		abort();
}

static void user_case(const char *t, size_t n)
{
	const char *pw = memchr(t, 0, n) ? t + strlen(t) + 1 : NULL;
	const char *gr = pw && pw < t + n ? pw + strlen(pw) + 1 : NULL;
	char err[256] = "";
	uint32_t uid, gid;

	if (pw && pw >= t + n)
		pw = NULL;
	if (gr && gr >= t + n)
		gr = NULL;
	if (oci_user_resolve(t, pw, gr, &uid, &gid, err, sizeof(err)) && !err[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *t;

	if (size < 1 || size > (1 << 20))
		return 0;
	if (!(t = malloc(size)))
		return 0;
	memcpy(t, data + 1, size - 1);
	t[size - 1] = 0;
	if (data[0] >= 0xf0)
		path_case(t);
	else if (data[0] >= 0xe0)
		user_case(t, size - 1);
	else
		json_case(data[0], t, size - 1);
	free(t);
	return 0;
}
