/* The manifest container and its JSON form (tools/sandbox/manifest.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sha256.h"
#include "guest/agent/proto.h"
#include "common/file_io.h"
#include "tools/sandbox/manifest.h"

#define MANIFEST_FILE_MAX (512u << 20)

static const char *const kind_names[] = { [MF_FILE] = "file", [MF_DIR] = "dir", [MF_LINK] = "symlink" };

int mf_add(struct manifest *m, const struct mf_entry *e)
{
	struct mf_entry *n;

	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;

		n = realloc(m->e, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		m->e = n;
		m->cap = cap;
	}
	n = &m->e[m->n];
	*n = *e;
	n->path = strdup(e->path);
	n->target = e->target ? strdup(e->target) : NULL;
	if (!n->path || (e->target && !n->target)) {
		free(n->path);
		free(n->target);
		return -ENOMEM;
	}
	m->n++;
	return 0;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct mf_entry *)a)->path, ((const struct mf_entry *)b)->path);
}

void mf_sort(struct manifest *m)
{
	if (m->n)
		qsort(m->e, m->n, sizeof(*m->e), by_path);
}

void mf_dedupe(struct manifest *m)
{
	size_t w = 0;

	for (size_t i = 0; i < m->n; i++) {
		if (w && !strcmp(m->e[w - 1].path, m->e[i].path)) {
			free(m->e[i].path);
			free(m->e[i].target);
			continue;
		}
		m->e[w++] = m->e[i];
	}
	m->n = w;
}

const struct mf_entry *mf_find(const struct manifest *m, const char *path)
{
	struct mf_entry key = { .path = (char *)path };

	return m->n ? bsearch(&key, m->e, m->n, sizeof(*m->e), by_path) : NULL;
}

void mf_free(struct manifest *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->e[i].path);
		free(m->e[i].target);
	}
	free(m->e);
	free(m->guest_root);
	free(m->host_src);
	memset(m, 0, sizeof(*m));
}

unsigned mf_git_mode(const struct mf_entry *e)
{
	if (e->kind == MF_LINK)
		return 0120000;
	if (e->kind == MF_FILE)
		return e->mode & 0100 ? 0100755 : 0100644;
	return 0;
}

static cJSON *entry_json(const struct mf_entry *e)
{
	cJSON *j = cJSON_CreateObject();

	if (!j)
		return NULL;
	cJSON_AddStringToObject(j, "path", e->path);
	cJSON_AddStringToObject(j, "kind", kind_names[e->kind]);
	cJSON_AddNumberToObject(j, "mode", e->mode);
	if (e->kind == MF_FILE)
		cJSON_AddNumberToObject(j, "size", (double)e->size);
	if (e->kind != MF_DIR)
		cJSON_AddStringToObject(j, "sha256", e->sha);
	if (e->kind == MF_LINK)
		cJSON_AddStringToObject(j, "target", e->target);
	return j;
}

int mf_save(const struct manifest *m, const char *path)
{
	cJSON *j = cJSON_CreateObject(), *arr = cJSON_CreateArray();
	char *text = NULL;
	int ret = -ENOMEM;

	if (!j || !arr)
		goto out;
	cJSON_AddNumberToObject(j, "version", 1);
	cJSON_AddStringToObject(j, "guest_root", m->guest_root ? m->guest_root : "");
	cJSON_AddStringToObject(j, "host_src", m->host_src ? m->host_src : "");
	for (size_t i = 0; i < m->n; i++) {
		cJSON *e = entry_json(&m->e[i]);

		if (!e)
			goto out;
		cJSON_AddItemToArray(arr, e);
	}
	cJSON_AddItemToObject(j, "entries", arr);
	arr = NULL;
	text = cJSON_PrintUnformatted(j);
	ret = text ? file_write_atomic(path, text) : -ENOMEM;
out:
	cJSON_Delete(arr);
	cJSON_Delete(j);
	free(text);
	return ret;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int parse_entry(const cJSON *o, struct mf_entry *e)
{
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(o, "mode");
	const cJSON *size = cJSON_GetObjectItemCaseSensitive(o, "size");
	const char *kind = jstr(o, "kind"), *sha = jstr(o, "sha256");

	memset(e, 0, sizeof(*e));
	e->path = (char *)jstr(o, "path");
	e->target = (char *)jstr(o, "target");
	for (int k = MF_FILE; k <= MF_LINK; k++)
		if (kind && !strcmp(kind, kind_names[k]))
			e->kind = k;
	if (!e->path || !ap_path_safe(e->path) || !e->kind || !cJSON_IsNumber(mode) ||
	    mode->valuedouble < 0 || mode->valuedouble > 07777)
		return -EINVAL;
	e->mode = (uint32_t)mode->valuedouble;
	if (e->kind != MF_DIR && (!sha || !sha256_hex_valid(sha)))
		return -EINVAL;
	if (sha)
		snprintf(e->sha, sizeof(e->sha), "%s", sha);
	if (e->kind == MF_FILE && (!cJSON_IsNumber(size) || size->valuedouble < 0))
		return -EINVAL;
	e->size = e->kind == MF_FILE ? (uint64_t)size->valuedouble : 0;
	if ((e->kind == MF_LINK) != (e->target != NULL))
		return -EINVAL;
	return 0;
}

static char *read_small(const char *path, int *ret)
{
	struct stat st;
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*ret = 0;
	if (fd < 0 || fstat(fd, &st)) {
		*ret = -errno;
	} else if (st.st_size > MANIFEST_FILE_MAX) {
		*ret = -EFBIG;
	} else if (!(buf = calloc(1, (size_t)st.st_size + 1))) {
		*ret = -ENOMEM;
	} else if (read(fd, buf, (size_t)st.st_size) != st.st_size) {
		*ret = -EIO;
		free(buf);
		buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	return buf;
}

int mf_load(struct manifest *m, const char *path, char *err, size_t errlen)
{
	int ret;
	char *text = read_small(path, &ret);

	memset(m, 0, sizeof(*m));
	if (!text) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = mf_parse(m, text, path, err, errlen);
	free(text);
	return ret;
}

int mf_parse(struct manifest *m, const char *text, const char *path, char *err, size_t errlen)
{
	const cJSON *arr, *it;
	cJSON *j = NULL;
	int ret;

	memset(m, 0, sizeof(*m));
	j = cJSON_Parse(text);
	arr = cJSON_GetObjectItemCaseSensitive(j, "entries");
	ret = -EINVAL;
	if (!jstr(j, "guest_root") || !jstr(j, "host_src") || !cJSON_IsArray(arr))
		goto bad;
	m->guest_root = strdup(jstr(j, "guest_root"));
	m->host_src = strdup(jstr(j, "host_src"));
	cJSON_ArrayForEach(it, arr) {
		struct mf_entry e;

		if (parse_entry(it, &e))
			goto bad;
		ret = mf_add(m, &e);
		if (ret)
			goto bad;
		ret = -EINVAL;
	}
	mf_sort(m);
	for (size_t i = 1; i < m->n; i++)
		if (!strcmp(m->e[i - 1].path, m->e[i].path))
			goto bad;
	cJSON_Delete(j);
	return 0;
bad:
	snprintf(err, errlen, "%s is not a valid manifest", path);
	cJSON_Delete(j);
	mf_free(m);
	return ret;
}
