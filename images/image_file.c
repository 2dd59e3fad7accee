/* What an image file is: format by magic, sizes, backing chain (image_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/image_file.h"
#include "images/qcow2_format.h"

const char *image_file_format(const char *path, uint64_t *vsize)
{
	uint8_t h[QH_SIZE + 8];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	*vsize = 0;
	if (fd < 0)
		return NULL;
	n = pread(fd, h, sizeof(h), 0);
	if (!fstat(fd, &st))
		*vsize = (uint64_t)st.st_size;
	close(fd);
	if (n == (ssize_t)sizeof(h) && get_be32(h) == QCOW2_MAGIC) {
		*vsize = get_be64(h + QH_SIZE);
		return "qcow2";
	}
	return "raw";
}

int image_file_info(const char *path, const char *want, bool trust_backing,
		    struct image_file_info *out, char *err, size_t errlen)
{
	struct qcow2_open_opts o = { .trust_backing = trust_backing };
	struct stat st;
	int ret;

	memset(out, 0, sizeof(*out));
	err[0] = 0;
	out->format = image_file_format(path, &out->vsize);
	if (!out->format || stat(path, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	out->disk = (uint64_t)st.st_blocks * 512;
	if (want && strcmp(want, out->format)) {
		if (!strcmp(want, "qcow2")) {
			snprintf(err, errlen, "%s is not a qcow2 image", path);
			return -EINVAL;
		}
		out->format = "raw", out->vsize = (uint64_t)st.st_size;
	}
	if (strcmp(out->format, "qcow2"))
		return 0;
	if (qcow2_info_get(path, &o, &out->qi)) {
		out->chain_refused = true;
		return -EPERM;
	}
	out->qcow2 = true;
	return 0;
}
