/*
 * Where an OCI import reads from: SOURCE as `mvm image import` takes it,
 * opened into a manifest, a config and layer blobs, every document and
 * blob checked against the digest that names it before it is used.
 *
 *   docker-archive:FILE[:REPO:TAG]  a `docker save` tar (manifest.json)
 *   oci:DIR[:TAG]                   an OCI image layout directory
 *   oci-archive:FILE[:TAG]          a tar of an OCI image layout
 *   FILE or DIR                     any of these, told apart by content
 * Archives are unpacked (regular files and directories only, within the
 * import's limits) into the import's private work directory first.
 */
#ifndef MVM_OCI_SOURCE_H
#define MVM_OCI_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "images/oci_json.h"
#include "images/oci_layer.h"

enum oci_source_kind { OCI_SRC_AUTO, OCI_SRC_DOCKER_ARCHIVE, OCI_SRC_OCI_DIR, OCI_SRC_OCI_ARCHIVE };

struct oci_source_ref {
	enum oci_source_kind kind;
	char path[4096];
	char tag[OCI_REF_MAX];	/* "" when none */
};

/*
 * Split SOURCE (pure but for one stat: a path that exists whole, colons
 * and all, is taken whole). 0, or -EINVAL with @err.
 */
int oci_source_parse(const char *source, struct oci_source_ref *ref, char *err, size_t errlen);

struct oci_image {
	bool docker;			/* manifest.json, not an OCI layout */
	int dir;			/* the layout (or unpacked archive), O_DIRECTORY */
	struct oci_manifest m;
	struct oci_config c;
	char digest[65];		/* OCI: the manifest's; docker: the config's */
};

/*
 * Open @ref: an archive is unpacked into @work (a private directory that
 * must not exist); then the manifest and the config are read and checked.
 * 0, or -errno with @err. oci_source_close in every case.
 */
int oci_source_open(const struct oci_source_ref *ref, const char *work, const struct oci_limits *lim,
		    struct oci_image *img, char *err, size_t errlen);

/* Layer @i's blob, checked against its digest and size where the manifest
 * gives them (OCI). An fd, or -errno with @err. */
int oci_source_layer(struct oci_image *img, unsigned i, char *err, size_t errlen);

void oci_source_close(struct oci_image *img);

#endif
