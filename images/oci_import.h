/*
 * `mvm image import SOURCE --name NAME`: an OCI image (oci_source.h)
 * becomes STORE/NAME.ext4 + NAME.json, bootable with `mvm run --image NAME`.
 *
 * All work happens in a private STORE/.import.XXXXXX: archives unpacked,
 * layers applied (oci_layer.h) to a staging tree, `mkfs.ext4 -d` from it,
 * owners and modes written by debugfs (no root needed, no set-id file or
 * foreign owner ever on the host), NAME.json. Only then is the image moved
 * in (NAME.ext4 first, NAME.json last: its presence marks a finished
 * image); any refusal leaves nothing in the store. mvm's init and agent are
 * not added: they live in the initramfs (guest/init copies the agent to
 * /run, a tmpfs), so the image's files are exactly the layers' merge.
 */
#ifndef MVM_OCI_IMPORT_H
#define MVM_OCI_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "images/oci_layer.h"

struct oci_import {
	/* in */
	const char *source;		/* SOURCE (oci_source_parse) */
	const char *name;		/* image_name_ok() */
	bool force;			/* replace an image of that name */
	uint64_t size;			/* the ext4's size; 0: content * 1.5 + 256 MiB */
	const struct oci_limits *lim;	/* NULL: oci_limits_default */
	/* out */
	char *out;			/* STORE/NAME.ext4 (malloc'd; oci_import_free) */
	unsigned layers;
	double seconds;
};

/* 0, or -errno with a message in @err (-EEXIST: NAME exists, no --force). */
int oci_import(struct oci_import *im, char *err, size_t errlen);
void oci_import_free(struct oci_import *im);

#endif
