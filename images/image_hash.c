/* The SHA-256 of a finished store image, recorded in its NAME.json (image_hash.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/sha256.h"
#include "images/image_hash.h"

#define META_MAX 65536

static bool newer_or_same(const struct stat *a, const struct stat *b)
{
	return a->st_mtim.tv_sec > b->st_mtim.tv_sec ||
	       (a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec >= b->st_mtim.tv_nsec);
}

static bool has_sha(const cJSON *j)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "sha256");

	return cJSON_IsString(s) && strlen(s->valuestring) == 64 &&
	       strspn(s->valuestring, "0123456789abcdef") == 64;
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
	text = file_read_text(meta, META_MAX);
	j = text ? cJSON_Parse(text) : NULL;
	if (!cJSON_IsObject(j)) {
		snprintf(err, errlen, "%s: not a JSON object", meta);
		goto out;
	}
	ret = 0;
	if (has_sha(j) && newer_or_same(&sm, &si))
		goto out;
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
