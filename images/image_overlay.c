/* Root images through private qcow2 overlays; see image_overlay.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/qcow2.h"
#include "images/image_overlay.h"
#include "images/image_store.h"

int image_base_resolve(const char *img, struct image_base *b, char *err, size_t errlen)
{
	char found[PATH_MAX], magic[4], *dir;
	struct stat st;
	int fd, ret = 0;

	if (image_store_resolve(img, found, sizeof(found))) {
		snprintf(err, errlen, "no image '%s' (build one: mvm image build %s; or give a path)",
			 img, img);
		return -ENOENT;
	}
	if (!realpath(found, b->path)) {
		snprintf(err, errlen, "%s: %s", found, strerror(errno));
		return -errno;
	}
	fd = open(b->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", b->path, strerror(errno));
		return ret;
	}
	/* Stated formats only: a base that is qcow2 is refused, never followed. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || pread(fd, magic, 4, 0) != 4 ||
	    !memcmp(magic, "QFI\xfb", 4)) {
		snprintf(err, errlen, "%s: not a raw ext4 image", b->path);
		ret = -EINVAL;
	}
	close(fd);
	if (ret)
		return ret;
	snprintf(b->dir, sizeof(b->dir), "%s", b->path);
	dir = dirname(b->dir);
	memmove(b->dir, dir, strlen(dir) + 1);
	return 0;
}

int image_overlay_create(const char *path, const struct image_base *b, char *err,
			 size_t errlen)
{
	int ret;

	if (access(path, F_OK) == 0) {
		snprintf(err, errlen, "%s already exists", path);
		return -EEXIST;
	}
	ret = qcow2_create_overlay(path, b->path, IMAGE_BASE_FORMAT, 0, 16);
	if (ret)
		snprintf(err, errlen, "overlay on %s: %s", b->path, strerror(-ret));
	return ret;
}
