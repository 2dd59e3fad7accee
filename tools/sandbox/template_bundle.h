/*
 * Templates that travel: `mvm template export TPL FILE` writes one file
 * holding the template's snapshot files, its config.json and the image it
 * references, with a manifest of SHA-256s (the format:
 * snapshots/tpl_bundle.h); `mvm template import FILE [--name NAME]` takes
 * it into this host's stores. The bundle is hostile input: import checks
 * every digest while unpacking into a staging directory of the template
 * store (and a hidden file of the image store), cross-checks the state's
 * own file list, points the template at this host's copy of the image,
 * checks the configuration as a start would, then seals the template with
 * this host's key (no seal travels) and publishes it whole. Nothing is
 * left on failure. docs/security.md, "Template bundles".
 */
#ifndef MVM_SB_TEMPLATE_BUNDLE_H
#define MVM_SB_TEMPLATE_BUNDLE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/sha256.h"

/* Export @tpl (checked first: sealed by this host, unchanged) into the new
 * file @file (mode 0600: it holds guest memory), never replacing one.
 * @digest gets the manifest's SHA-256 (hex), @bytes the file's size.
 * 0 or -errno with @err. */
int sb_template_export(const char *tpl, const char *file, char digest[SHA256_HEX],
		       uint64_t *bytes, char *err, size_t errlen);

struct sb_import {
	char name[64];			/* the template imported (or found) */
	char digest[SHA256_HEX];	/* the bundle's manifest digest */
	bool noop;			/* already imported: nothing done */
	char image[PATH_MAX];		/* its image in this host's store ("": none) */
	bool image_reused;		/* the store had it already (by digest) */
};

/* Import the bundle @file as template @name (NULL: the bundle's own
 * name). 0 (see @r->noop) or -errno with @err saying why; on failure
 * nothing was added to either store. */
int sb_template_import(const char *file, const char *name, struct sb_import *r, char *err,
		       size_t errlen);

#endif
