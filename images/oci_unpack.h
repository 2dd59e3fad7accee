/*
 * The part of `mvm image import` that reads hostile bytes, in a child
 * process of its own: SOURCE opened (archives unpacked), blobs checked,
 * layers applied to WORK/root, the debugfs owner script written to
 * WORK/owners. The child is confined by Landlock (where the kernel has it)
 * to reading SOURCE and writing WORK, with no_new_privs: a bug in
 * libarchive or in mvm's own parsing reaches no other file.
 */
#ifndef MVM_OCI_UNPACK_H
#define MVM_OCI_UNPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "images/oci_layer.h"

#define OCI_DEFAULTS_MAX 49152	/* the config's defaults as JSON; NAME.json stays < 64 KiB */

/* What the parent needs of the image once it is staged. */
struct oci_staged {
	bool docker;			/* from a docker archive's manifest.json */
	char digest[65];		/* the manifest's (OCI) or the config's (docker) */
	unsigned layers;
	uint64_t content;		/* bytes the tree takes */
	bool has_lost_found;		/* the image has its own /lost+found */
	bool has_user;			/* the config names a User: resolved to */
	uint32_t uid, gid;		/* these with the image's passwd and group */
	char defaults[OCI_DEFAULTS_MAX];	/* JSON object: Env, WorkingDir, User, Entrypoint, Cmd */
};

/*
 * Stage @source into @work (an existing private directory). 0, or -errno
 * with @err; -ECHILD with @err when the child died (a crash while parsing
 * is reported, never taken for success).
 */
int oci_unpack(const char *source, const char *work, const struct oci_limits *lim,
	       struct oci_staged *out, char *err, size_t errlen);

#endif
