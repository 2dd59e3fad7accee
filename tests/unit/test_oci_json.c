/*
 * The JSON documents of OCI images (images/oci_json.c): the manifest a tag
 * names, digests and sizes taken only in their one valid form, docker's
 * manifest.json paths kept inside the archive, the config's defaults kept
 * and nothing else.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "images/oci_json.h"

#define H64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define D64 "sha256:" H64
#define MAN "application/vnd.oci.image.manifest.v1+json"

static char err[256];

static int index_of(const char *text, const char *tag, struct oci_desc *d, int *nested)
{
	return oci_parse_index(text, strlen(text), tag, d, nested, err, sizeof(err));
}

Test(oci_json, index_picks_the_tag_or_the_only_manifest)
{
	const char *two = "{\"manifests\":[{\"mediaType\":\"" MAN "\",\"digest\":\"" D64 "\",\"size\":7,"
			  "\"annotations\":{\"org.opencontainers.image.ref.name\":\"a\"}},"
			  "{\"mediaType\":\"" MAN "\",\"digest\":\"sha256:" H64 "\",\"size\":9,"
			  "\"annotations\":{\"org.opencontainers.image.ref.name\":\"b\"}}]}";
	struct oci_desc d;
	int nested;

	cr_assert_eq(index_of(two, "b", &d, &nested), 0, "%s", err);
	cr_assert_eq(d.size, 9);
	cr_assert_str_eq(d.hex, H64);
	cr_assert_eq(nested, 0);
	cr_assert_eq(index_of(two, NULL, &d, &nested), -EINVAL);
	cr_assert(strstr(err, "name one with oci:DIR:TAG"), "%s", err);
	cr_assert_eq(index_of(two, "c", &d, &nested), -EINVAL);
	cr_assert(strstr(err, "no manifest tagged 'c'"), "%s", err);
}

Test(oci_json, descriptors_take_only_sha256_and_whole_sizes)
{
	static const char *bad[] = {
		"{\"manifests\":[{\"mediaType\":\"" MAN "\",\"digest\":\"sha512:" H64 "\",\"size\":1}]}",
		"{\"manifests\":[{\"mediaType\":\"" MAN "\",\"digest\":\"sha256:" H64 "0\",\"size\":1}]}",
		"{\"manifests\":[{\"mediaType\":\"" MAN "\",\"digest\":\"sha256:../../../etc/passwd\",\"size\":1}]}",
		"{\"manifests\":[{\"mediaType\":\"" MAN "\",\"digest\":\"" D64 "\",\"size\":-1}]}",
		"{\"manifests\":[{\"mediaType\":\"" MAN "\",\"digest\":\"" D64 "\",\"size\":1.5}]}",
		"{\"manifests\":[{\"mediaType\":\"text/plain\",\"digest\":\"" D64 "\",\"size\":1}]}",
		"{\"manifests\":{}}", "[]", "not json",
	};
	struct oci_desc d;
	int nested;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		cr_assert_eq(index_of(bad[i], NULL, &d, &nested), -EINVAL, "accepted: %s", bad[i]);
		cr_assert(err[0]);
	}
}

Test(oci_json, manifest_layers_and_their_compression)
{
	const char *m = "{\"schemaVersion\":2,\"config\":{\"mediaType\":"
			"\"application/vnd.oci.image.config.v1+json\",\"digest\":\"" D64 "\",\"size\":3},"
			"\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\","
			"\"digest\":\"" D64 "\",\"size\":10},{\"mediaType\":"
			"\"application/vnd.oci.image.layer.v1.tar+zstd\",\"digest\":\"" D64 "\",\"size\":11},"
			"{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\",\"digest\":\"" D64 "\",\"size\":0}]}";
	struct oci_manifest man;

	cr_assert_eq(oci_parse_manifest(m, strlen(m), &man, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(man.n_layers, 3);
	cr_assert_eq(man.layers[0].comp, OCI_COMP_GZIP);
	cr_assert_eq(man.layers[1].comp, OCI_COMP_ZSTD);
	cr_assert_eq(man.layers[2].comp, OCI_COMP_NONE);
	cr_assert_eq(man.config.size, 3);
}

Test(oci_json, manifest_refuses_foreign_layers)
{
	const char *m = "{\"schemaVersion\":2,\"config\":{\"mediaType\":"
			"\"application/vnd.oci.image.config.v1+json\",\"digest\":\"" D64 "\",\"size\":3},"
			"\"layers\":[{\"mediaType\":\"application/vnd.example.helm.chart\","
			"\"digest\":\"" D64 "\",\"size\":10}]}";
	struct oci_manifest man;

	cr_assert_eq(oci_parse_manifest(m, strlen(m), &man, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "not a tar layer"), "%s", err);
}

Test(oci_json, docker_manifest_paths_stay_inside)
{
	const char *ok = "[{\"Config\":\"" H64 ".json\",\"RepoTags\":[\"t:latest\"],"
			 "\"Layers\":[\"abc/layer.tar\",\"./def/layer.tar\"]}]";
	const char *out = "[{\"Config\":\"x.json\",\"Layers\":[\"../../etc/shadow\"]}]";
	const char *abs = "[{\"Config\":\"/etc/passwd\",\"Layers\":[]}]";
	struct oci_manifest man;

	cr_assert_eq(oci_parse_docker_manifest(ok, strlen(ok), "t:latest", &man, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_str_eq(man.config.hex, H64, "a config named by its digest is checked against it");
	cr_assert_str_eq(man.layers[1].path, "def/layer.tar");
	cr_assert_eq(oci_parse_docker_manifest(ok, strlen(ok), "u:1", &man, err, sizeof(err)), -EINVAL);
	cr_assert_eq(oci_parse_docker_manifest(out, strlen(out), NULL, &man, err, sizeof(err)), -EINVAL);
	cr_assert_eq(oci_parse_docker_manifest(abs, strlen(abs), NULL, &man, err, sizeof(err)), -EINVAL);
}

Test(oci_json, config_keeps_the_defaults_and_only_them)
{
	const char *c = "{\"os\":\"linux\",\"architecture\":\"amd64\",\"config\":{\"Env\":[\"A=1\"],"
			"\"Cmd\":[\"sh\",\"-c\",\"x\"],\"WorkingDir\":\"/w\",\"User\":\"1000:1000\","
			"\"Volumes\":{\"/v\":{}},\"Entrypoint\":null},"
			"\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"" D64 "\"]}}";
	struct oci_config cfg;
	char *s;

	cr_assert_eq(oci_parse_config(c, strlen(c), &cfg, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(cfg.n_diff_ids, 1);
	s = cJSON_PrintUnformatted(cfg.defaults);
	cr_assert_str_eq(s, "{\"Env\":[\"A=1\"],\"Cmd\":[\"sh\",\"-c\",\"x\"],\"WorkingDir\":\"/w\","
			    "\"User\":\"1000:1000\"}");
	cJSON_free(s);
	oci_config_free(&cfg);
}

Test(oci_json, config_refusals)
{
	static const char *bad[] = {
		"{\"os\":\"linux\",\"architecture\":\"arm64\",\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[]}}",
		"{\"os\":\"linux\",\"architecture\":\"amd64\",\"rootfs\":{\"type\":\"x\",\"diff_ids\":[]}}",
		"{\"os\":\"linux\",\"architecture\":\"amd64\",\"config\":{\"Env\":[\"NOEQUALS\"]},"
		"\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[]}}",
		"{\"os\":\"linux\",\"architecture\":\"amd64\",\"config\":{\"Cmd\":[1]},"
		"\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[]}}",
		"{\"os\":\"linux\",\"architecture\":\"amd64\",\"config\":{\"User\":[]},"
		"\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[]}}",
		"{\"os\":\"linux\",\"architecture\":\"amd64\","
		"\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"md5:00\"]}}",
	};
	struct oci_config cfg;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		cr_assert_eq(oci_parse_config(bad[i], strlen(bad[i]), &cfg, err, sizeof(err)), -EINVAL,
			     "accepted: %s", bad[i]);
		cr_assert(err[0]);
		cr_assert_null(cfg.defaults);
	}
}

#include "images/oci_source.h"

Test(oci_json, source_kinds_and_tags)
{
	struct oci_source_ref r;

	cr_assert_eq(oci_source_parse("oci:/no/such/dir:v1", &r, err, sizeof(err)), 0);
	cr_assert_eq(r.kind, OCI_SRC_OCI_DIR);
	cr_assert_str_eq(r.path, "/no/such/dir");
	cr_assert_str_eq(r.tag, "v1");
	cr_assert_eq(oci_source_parse("docker-archive:/x/app.tar:repo/app:1.0", &r, err, sizeof(err)), 0);
	cr_assert_eq(r.kind, OCI_SRC_DOCKER_ARCHIVE);
	cr_assert_str_eq(r.path, "/x/app.tar");
	cr_assert_str_eq(r.tag, "repo/app:1.0", "a docker reference keeps its own colon");
	cr_assert_eq(oci_source_parse("oci-archive:/x/o.tar", &r, err, sizeof(err)), 0);
	cr_assert_eq(r.kind, OCI_SRC_OCI_ARCHIVE);
	cr_assert_str_eq(r.tag, "");
	cr_assert_eq(oci_source_parse("/tmp", &r, err, sizeof(err)), 0);
	cr_assert_eq(r.kind, OCI_SRC_AUTO);
	cr_assert_str_eq(r.path, "/tmp", "a bare path is never split");
	/* A path that exists whole is taken whole, colon and all. */
	cr_assert_eq(oci_source_parse("oci:/tmp", &r, err, sizeof(err)), 0);
	cr_assert_str_eq(r.path, "/tmp");
	cr_assert_eq(oci_source_parse("oci:", &r, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "no path"), "%s", err);
}
