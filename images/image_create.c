/* New qcow2 images and overlays on a base (image_create.h). */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "images/image_create.h"
#include "images/image_file.h"
#include "images/qcow2.h"

/* Store the base relative to the overlay's directory when it lives below
 * it (the store stays movable), absolute otherwise. */
static char *backing_name(const char *base, const char *overlay)
{
	char *rb = realpath(base, NULL), *tmp = strdup(overlay), *rd = NULL, *out;
	size_t n;

	if (tmp)
		rd = realpath(dirname(tmp), NULL);
	free(tmp);
	if (!rb || !rd) {
		free(rd);
		return rb;
	}
	n = strlen(rd);
	if (!strncmp(rb, rd, n) && rb[n] == '/')
		out = strdup(rb + n + 1);
	else
		out = strdup(rb);
	free(rb);
	free(rd);
	return out;
}

int image_create(const char *base, const char *base_fmt, uint64_t size, unsigned cluster_bits,
		 const char *overlay, char *err, size_t errlen)
{
	uint64_t vs;
	const char *probe;
	char *name;
	int ret;

	err[0] = 0;
	if (!base)
		return qcow2_create(overlay, size, cluster_bits) ? -EIO : 0;
	probe = image_file_format(base, &vs);
	if (!probe) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", base, strerror(-ret));
		return ret;
	}
	/* Guard only: a qcow2 base is never silently used as raw or vice versa. */
	if (!base_fmt && !strcmp(probe, "qcow2")) {
		snprintf(err, errlen, "%s is a qcow2 image; pass --base-format qcow2", base);
		return -EINVAL;
	}
	name = backing_name(base, overlay);
	if (!name) {
		snprintf(err, errlen, "cannot resolve %s", base);
		return -ENOENT;
	}
	ret = qcow2_create_overlay(overlay, name, base_fmt ? base_fmt : "raw", size, cluster_bits);
	free(name);
	return ret ? -EIO : 0;
}
