/* An imported image's defaults from its NAME.json (image_defaults.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_io.h"
#include "images/image_defaults.h"

#define META_MAX 65536

static void free_list(char **l)
{
	for (size_t i = 0; l && l[i]; i++)
		free(l[i]);
	free(l);
}

/* Append the strings of array @a to NULL-terminated *@l. */
static int append(char ***l, const cJSON *a)
{
	size_t n = 0, add = (size_t)cJSON_GetArraySize(a);
	const cJSON *s;
	char **grown;

	while (*l && (*l)[n])
		n++;
	if (!add)
		return 0;
	if (!(grown = realloc(*l, (n + add + 1) * sizeof(char *))))
		return -ENOMEM;
	*l = grown;
	cJSON_ArrayForEach(s, a) {
		if (!cJSON_IsString(s) || !(grown[n] = strdup(s->valuestring))) {
			grown[n] = NULL;
			return cJSON_IsString(s) ? -ENOMEM : -EINVAL;
		}
		grown[++n] = NULL;
	}
	return 0;
}

static int from_config(const cJSON *c, struct image_defaults *d)
{
	static const char *lists[] = { "Entrypoint", "Cmd" };
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(c, "Env"), *a;
	const cJSON *wd = cJSON_GetObjectItemCaseSensitive(c, "WorkingDir");
	const cJSON *user = cJSON_GetObjectItemCaseSensitive(c, "User");
	int ret = 0;

	for (size_t i = 0; i < 2 && !ret; i++)
		if (cJSON_IsArray(a = cJSON_GetObjectItemCaseSensitive(c, lists[i])))
			ret = append(&d->argv, a);
	if (!ret && cJSON_IsArray(env))
		ret = append(&d->env, env);
	for (size_t i = 0; !ret && d->env && d->env[i]; i++)
		if (!strchr(d->env[i], '=') || d->env[i][0] == '=')
			ret = -EINVAL;
	if (!ret && cJSON_IsString(wd) && wd->valuestring[0] == '/' && !(d->workdir = strdup(wd->valuestring)))
		ret = -ENOMEM;
	if (!ret && cJSON_IsString(user) && !(d->user = strdup(user->valuestring)))
		ret = -ENOMEM;
	return ret;
}

/* "user": {"uid": N, "gid": N}, whole numbers below 2^32 - 1. */
static int ids(const cJSON *u, struct image_defaults *d)
{
	const cJSON *uid = cJSON_GetObjectItemCaseSensitive(u, "uid");
	const cJSON *gid = cJSON_GetObjectItemCaseSensitive(u, "gid");

	if (!u)
		return 0;
	if (!cJSON_IsNumber(uid) || !cJSON_IsNumber(gid) || uid->valuedouble < 0 || gid->valuedouble < 0 ||
	    uid->valuedouble >= 4294967295.0 || gid->valuedouble >= 4294967295.0 ||
	    uid->valuedouble != (double)(uint32_t)uid->valuedouble ||
	    gid->valuedouble != (double)(uint32_t)gid->valuedouble)
		return -EINVAL;
	d->has_ids = 1;
	d->uid = (uint32_t)uid->valuedouble;
	d->gid = (uint32_t)gid->valuedouble;
	return 0;
}

int image_defaults_load(const char *img, struct image_defaults *d, char *err, size_t errlen)
{
	char meta[4200], *text = NULL;
	size_t len = strlen(img);
	const cJSON *c;
	struct stat st;
	cJSON *j = NULL;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	if (len < 5 || strcmp(img + len - 5, ".ext4") || len + 1 > sizeof(meta))
		return 0;
	snprintf(meta, sizeof(meta), "%.*s.json", (int)(len - 5), img);
	if (lstat(meta, &st) || !S_ISREG(st.st_mode) || st.st_size > META_MAX)
		return 0;
	text = file_read_text(meta, META_MAX);
	j = text ? cJSON_Parse(text) : NULL;
	c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "oci"), "config");
	if (text && !j)
		ret = -EINVAL;
	else if (c && !cJSON_IsObject(c))
		ret = -EINVAL;
	else if (c)
		ret = from_config(c, d);
	if (!ret)
		ret = ids(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "oci"), "user"), d);
	if (ret) {
		snprintf(err, errlen, "%s: the image's defaults (oci.config) are malformed", meta);
		image_defaults_free(d);
	}
	cJSON_Delete(j);
	free(text);
	return ret;
}

void image_defaults_free(struct image_defaults *d)
{
	free_list(d->argv);
	free_list(d->env);
	free(d->workdir);
	free(d->user);
	memset(d, 0, sizeof(*d));
}

static int has_name(char **env, int n, const char *kv)
{
	size_t k = (size_t)(strchr(kv, '=') - kv) + 1;

	for (int i = 0; i < n; i++)
		if (!strncmp(env[i], kv, k))
			return 1;
	return 0;
}

int image_defaults_env(const struct image_defaults *d, char **env, int *n, int cap)
{
	int given = *n, add = 0;

	for (size_t i = 0; d->env && d->env[i]; i++)
		add += !has_name(env, given, d->env[i]);
	if (*n + add > cap)
		return -E2BIG;
	/* Image entries first: move the caller's up. */
	memmove(env + add, env, (size_t)given * sizeof(char *));
	*n = 0;
	for (size_t i = 0; d->env && d->env[i]; i++)
		if (!has_name(env + add, given, d->env[i]))
			env[(*n)++] = d->env[i];
	*n += given;
	return 0;
}
