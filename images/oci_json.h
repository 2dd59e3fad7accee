/*
 * The JSON documents of an OCI image and of a `docker save` archive, parsed
 * and checked (pure: bytes in, structs out; every one is hostile input):
 * index.json, an image manifest, docker's manifest.json and the image
 * config. Nothing here reads a file or trusts a digest: the caller checks
 * every blob against the digest that named it (oci_source.c).
 */
#ifndef MVM_OCI_JSON_H
#define MVM_OCI_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define OCI_JSON_MAX (4u << 20)	/* any one JSON document */
#define OCI_LAYERS_MAX 128
#define OCI_REF_MAX 256		/* a tag, or a path inside a docker archive */

enum oci_comp { OCI_COMP_NONE, OCI_COMP_GZIP, OCI_COMP_ZSTD };

/* A content descriptor: "sha256:HEX" (the only algorithm taken), a size,
 * and for a layer its compression from the media type. */
struct oci_desc {
	char hex[65];		/* lowercase; "" when unknown (a docker path) */
	int64_t size;		/* -1 when unknown */
	enum oci_comp comp;
	char path[OCI_REF_MAX];	/* docker archive: the member's path; else "" */
};

struct oci_manifest {
	struct oci_desc config;
	unsigned n_layers;
	struct oci_desc layers[OCI_LAYERS_MAX];
};

/*
 * An index (index.json, or an image index it names): the manifest to use.
 * @tag non-NULL: the one whose "org.opencontainers.image.ref.name" is @tag;
 * else the only manifest (several: refused, name a tag). A nested index
 * (multi-platform) is returned with *@is_index set, and then the entry for
 * linux/amd64 is taken. 0, or -EINVAL with @err.
 */
int oci_parse_index(const char *text, size_t len, const char *tag, struct oci_desc *out,
		    int *is_index, char *err, size_t errlen);
/* Like oci_parse_index on a nested index, picking linux/amd64. */
int oci_parse_platform_index(const char *text, size_t len, struct oci_desc *out, int *is_index,
			     char *err, size_t errlen);

/* An image manifest (OCI or docker v2 schema 2): config and layers with
 * their digests, sizes and compressions. 0, or -EINVAL with @err. */
int oci_parse_manifest(const char *text, size_t len, struct oci_manifest *m, char *err, size_t errlen);

/*
 * docker's manifest.json: the image named @tag in RepoTags (NULL: the only
 * image); Config and Layers become paths inside the archive (clean, no
 * escape). A config named by a digest ("HEX.json", "blobs/sha256/HEX") gets
 * that digest to check; layers are checked against the config's diff_ids.
 */
int oci_parse_docker_manifest(const char *text, size_t len, const char *tag,
			      struct oci_manifest *m, char *err, size_t errlen);

/* An image config: what the sandbox keeps, and the layers' diff_ids. */
struct oci_config {
	unsigned n_diff_ids;
	char diff_ids[OCI_LAYERS_MAX][65];
	/* {"Env": [...], "WorkingDir": "...", "User": "...", "Entrypoint":
	 * [...], "Cmd": [...]}: only these, only strings, each present only
	 * when the image sets it. Owned: cJSON_Delete. */
	cJSON *defaults;
	char os[32], arch[32];
};

/* 0, or -EINVAL with @err (a config that is not linux/amd64 is refused). */
int oci_parse_config(const char *text, size_t len, struct oci_config *c, char *err, size_t errlen);
void oci_config_free(struct oci_config *c);

/* "sha256:" and 64 lowercase hex digits into @hex; 0 or -EINVAL. */
int oci_digest_parse(const char *s, char hex[65]);

#endif
