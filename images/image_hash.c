/* The SHA-256 of a finished store image, recorded in its NAME.json (image_hash.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/sha256.h"
#include "images/image_hash.h"

#define META_MAX 65536

int image_recorded_sha256(const char *meta, int64_t img_mtime_ns, char out[SHA256_HEX])
{
	char *text = NULL;
	const cJSON *s;
	struct stat st;
	cJSON *j = NULL;
	int fd, ret = -ENOENT;

	if (stat(meta, &st) || !S_ISREG(st.st_mode) || st.st_size > META_MAX ||
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec < img_mtime_ns)
		return -ENOENT;
	fd = open(meta, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	text = fd < 0 ? NULL : calloc(1, (size_t)st.st_size + 1);
	if (text && !file_pread(fd, text, (size_t)st.st_size, 0) && (j = cJSON_Parse(text))) {
		s = cJSON_GetObjectItemCaseSensitive(j, "sha256");
		if (cJSON_IsString(s) && strlen(s->valuestring) == 64 &&
		    strspn(s->valuestring, "0123456789abcdef") == 64) {
			snprintf(out, SHA256_HEX, "%s", s->valuestring);
			ret = 0;
		}
	}
	if (fd >= 0)
		close(fd);
	cJSON_Delete(j);
	free(text);
	return ret;
}

static int hash_file(const char *img, char hex[SHA256_HEX])
{
	int fd = open(img, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = sha256_fd_hex(fd, hex);
	close(fd);
	return ret;
}

int image_record_sha256(const char *img, const char *meta, char *err, size_t errlen)
{
	char hex[SHA256_HEX], *text = NULL, *out = NULL;
	struct stat si, sm;
	cJSON *j = NULL;
	int ret = -EINVAL;

	if (stat(img, &si)) {
		snprintf(err, errlen, "%s: %s", img, strerror(errno));
		return -errno;
	}
	if (stat(meta, &sm)) {
		snprintf(err, errlen, "%s: %s", meta, strerror(errno));
		return -errno;
	}
	if (!image_recorded_sha256(meta, (int64_t)si.st_mtim.tv_sec * 1000000000 + si.st_mtim.tv_nsec,
				   hex))
		return 0;
	text = file_read_text(meta, META_MAX);
	j = text ? cJSON_Parse(text) : NULL;
	if (!cJSON_IsObject(j)) {
		snprintf(err, errlen, "%s: not a JSON object", meta);
		goto out;
	}
	if ((ret = hash_file(img, hex))) {
		snprintf(err, errlen, "%s: %s", img, strerror(-ret));
		goto out;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(j, "sha256");
	ret = -ENOMEM;
	if (!cJSON_AddStringToObject(j, "sha256", hex) || !(out = cJSON_Print(j)))
		goto out;
	ret = file_write_atomic(meta, out);
	if (!ret && chmod(meta, 0644))
		ret = -errno;
	if (ret)
		snprintf(err, errlen, "%s: %s", meta, strerror(-ret));
out:
	cJSON_Delete(j);
	free(text);
	free(out);
	return ret;
}
