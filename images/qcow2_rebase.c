/*
 * A qcow2 image's backing file renamed in place (images/qcow2.h,
 * qcow2_set_backing): for a template's bottom layer unpacked on another
 * host, whose base image lives under another path there. The header is
 * parsed as hostile first; only the name's bytes and length change.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/qcow2_int.h"

int qcow2_set_backing(const char *path, const char *name, const char *want_fmt)
{
	size_t nlen = strlen(name), len;
	struct qcow2_hdr h;
	uint8_t *buf = NULL;
	struct stat st;
	uint32_t bits;
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = fstat(fd, &st) || !S_ISREG(st.st_mode) ? -EINVAL : 0;
	len = QCOW2_V3_HDR_LEN;
	if (!ret && (buf = malloc(1u << QCOW2_MAX_CLUSTER_BITS)) == NULL)
		ret = -ENOMEM;
	if (!ret)
		ret = file_pread(fd, buf, len, 0);
	if (!ret)
		ret = qcow2_hdr_peek_cluster_bits(buf, len, path, &bits);
	if (!ret) {
		len = 1u << bits;
		if ((uint64_t)st.st_size < len)
			len = (size_t)st.st_size;
		ret = file_pread(fd, buf, len, 0);
	}
	if (!ret)
		ret = qcow2_hdr_parse(buf, len, (uint64_t)st.st_size, path, &h);
	/* A layer over a base has a backing name, and its stated format. */
	if (!ret && (!h.backing_size || strcmp(h.backing_fmt, want_fmt)))
		ret = -EINVAL;
	if (!ret && (nlen == 0 || nlen > QCOW2_MAX_BACKING_NAME || h.backing_off + nlen > len))
		ret = -ENAMETOOLONG;
	if (!ret) {
		memset(buf + h.backing_off, 0, h.backing_size);
		memcpy(buf + h.backing_off, name, nlen);
		put_be32(buf + QH_BACKING_SIZE, (uint32_t)nlen);
		ret = file_pwrite(fd, buf, len, 0);
	}
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	free(buf);
	return ret;
}
