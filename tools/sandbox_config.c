/* config.json of a sandbox: what `mvm create` decided, read by every later verb. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/sandbox.h"

#define CONFIG_MAX (1 << 20)

int sb_config_save(const struct sb_config *c)
{
	char p[PATH_MAX], tmp[PATH_MAX + 8];
	cJSON *j = cJSON_CreateObject(), *env = cJSON_CreateArray();
	char *text = NULL;
	int fd, ret = -ENOMEM;

	if (!j || !env)
		goto out;
	cJSON_AddNumberToObject(j, "version", 1);
	cJSON_AddStringToObject(j, "name", c->name);
	cJSON_AddStringToObject(j, "image", c->image);
	cJSON_AddStringToObject(j, "kernel", c->kernel);
	cJSON_AddStringToObject(j, "disk", c->disk);
	cJSON_AddBoolToObject(j, "root_on_disk", c->root_on_disk);
	cJSON_AddNumberToObject(j, "cpus", c->cpus);
	cJSON_AddNumberToObject(j, "memory", (double)c->mem);
	cJSON_AddNumberToObject(j, "disk_size", (double)c->disk_size);
	cJSON_AddNumberToObject(j, "cid", (double)c->cid);
	cJSON_AddNumberToObject(j, "created", c->created);
	for (int i = 0; i < c->nenv; i++)
		cJSON_AddItemToArray(env, cJSON_CreateString(c->env[i]));
	cJSON_AddItemToObject(j, "env", env);
	env = NULL;
	text = cJSON_Print(j);
	if (!text)
		goto out;
	ret = sb_path(c->name, "config.json", p, sizeof(p));
	if (ret)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	ret = write(fd, text, strlen(text)) == (ssize_t)strlen(text) && !fsync(fd) ? 0 : -EIO;
	close(fd);
	/* Atomic replace: a reader never sees half a config. */
	if (!ret && rename(tmp, p))
		ret = -errno;
out:
	cJSON_Delete(env);
	cJSON_Delete(j);
	free(text);
	return ret;
}

static void get_str(const cJSON *j, const char *key, char *out, size_t cap)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

	snprintf(out, cap, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static double get_num(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static char *read_file(const char *path)
{
	char *buf = malloc(CONFIG_MAX + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 && buf ? read(fd, buf, CONFIG_MAX) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

int sb_config_load(const char *name, struct sb_config *c)
{
	char p[PATH_MAX], *text;
	const cJSON *env, *e;
	cJSON *j;
	int ret = sb_path(name, "config.json", p, sizeof(p));

	memset(c, 0, sizeof(*c));
	if (ret)
		return ret;
	text = read_file(p);
	if (!text)
		return -ENOENT;
	j = cJSON_Parse(text);
	free(text);
	if (!j)
		return -EINVAL;
	snprintf(c->name, sizeof(c->name), "%s", name);
	get_str(j, "image", c->image, sizeof(c->image));
	get_str(j, "kernel", c->kernel, sizeof(c->kernel));
	get_str(j, "disk", c->disk, sizeof(c->disk));
	c->root_on_disk = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "root_on_disk"));
	c->cpus = (int)get_num(j, "cpus");
	c->mem = (uint64_t)get_num(j, "memory");
	c->disk_size = (uint64_t)get_num(j, "disk_size");
	c->cid = (uint64_t)get_num(j, "cid");
	c->created = get_num(j, "created");
	env = cJSON_GetObjectItemCaseSensitive(j, "env");
	cJSON_ArrayForEach(e, env) {
		if (c->nenv < SB_MAX_ENV && cJSON_IsString(e))
			c->env[c->nenv++] = strdup(e->valuestring);
	}
	cJSON_Delete(j);
	/* The disk name must stay a plain file name in the state directory. */
	if (!c->disk[0] || strchr(c->disk, '/') || c->cpus < 1)
		return -EINVAL;
	return 0;
}

void sb_config_free(struct sb_config *c)
{
	for (int i = 0; i < c->nenv; i++)
		free(c->env[i]);
	c->nenv = 0;
}
