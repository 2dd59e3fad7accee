/* config.json of a sandbox: what `mvm create` decided, read by every later verb. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/file_io.h"
#include "tools/sandbox/sandbox.h"

#define CONFIG_MAX (1 << 20)

/* `mvm run`'s fields: written only when set, so create's config.json is as before. */
static int save_run_fields(cJSON *j, const struct sb_config *c)
{
	cJSON *disks, *d;

	if (c->initrd[0])
		cJSON_AddStringToObject(j, "initrd", c->initrd);
	if (c->cmdline)
		cJSON_AddStringToObject(j, "cmdline", c->cmdline);
	if (!c->ndisks)
		return 0;
	disks = cJSON_AddArrayToObject(j, "disks");
	for (int i = 0; disks && i < c->ndisks; i++) {
		d = cJSON_CreateObject();
		if (!d)
			return -ENOMEM;
		cJSON_AddItemToArray(disks, d);
		cJSON_AddStringToObject(d, "path", c->disks[i].path);
		cJSON_AddStringToObject(d, "format", c->disks[i].format[0] ? c->disks[i].format : "raw");
		cJSON_AddBoolToObject(d, "read_only", c->disks[i].read_only);
		cJSON_AddBoolToObject(d, "data", c->disks[i].data);
	}
	return disks ? 0 : -ENOMEM;
}

static bool mac_set(const uint8_t *mac)
{
	static const uint8_t zero[6];

	return memcmp(mac, zero, 6) != 0;
}

/* "mac": absent (before it existed: the VMM's default) or six hex pairs of
 * a unicast address; anything else makes the config invalid. */
static bool get_mac(cJSON *j, uint8_t *mac)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "mac");
	unsigned v[6];
	int end = 0;

	if (!m)
		return true;
	if (!cJSON_IsString(m) ||
	    sscanf(m->valuestring, "%2x:%2x:%2x:%2x:%2x:%2x%n", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &end) != 6 || end != 17 || m->valuestring[17] || (v[0] & 1))
		return false;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return mac_set(mac);
}

int sb_config_new_mac(struct sb_config *c)
{
	static const uint8_t old_default[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

	c->mac[0] = 0x52;
	c->mac[1] = 0x54;
	c->mac[2] = 0x00;
	do {
		if (getrandom(c->mac + 3, 3, 0) != 3)
			return -EIO;
	} while (!memcmp(c->mac, old_default, 6));	/* every template's, before */
	return 0;
}

int sb_config_save(const struct sb_config *c)
{
	char p[PATH_MAX];
	cJSON *j = cJSON_CreateObject(), *env = cJSON_CreateArray(), *pub = cJSON_CreateArray();
	char *text = NULL;
	int ret = -ENOMEM;

	if (!j || !env || !pub)
		goto out;
	cJSON_AddNumberToObject(j, "version", 2);	/* 2: disk_format, net, dns_server, publish */
	cJSON_AddStringToObject(j, "name", c->name);
	cJSON_AddStringToObject(j, "image", c->image);
	if (c->template_name[0])
		cJSON_AddStringToObject(j, "template", c->template_name);
	cJSON_AddStringToObject(j, "kernel", c->kernel);
	cJSON_AddStringToObject(j, "disk", c->disk);
	cJSON_AddStringToObject(j, "disk_format", c->disk_format[0] ? c->disk_format : "raw");
	cJSON_AddBoolToObject(j, "root_on_disk", c->root_on_disk);
	cJSON_AddNumberToObject(j, "cpus", c->cpus);
	cJSON_AddNumberToObject(j, "memory", (double)c->mem);
	if (c->cpu_quota)
		cJSON_AddNumberToObject(j, "cpu_quota", c->cpu_quota);
	cJSON_AddNumberToObject(j, "disk_size", (double)c->disk_size);
	cJSON_AddNumberToObject(j, "cid", (double)c->cid);
	cJSON_AddNumberToObject(j, "created", c->created);
	for (int i = 0; i < c->nenv; i++)
		cJSON_AddItemToArray(env, cJSON_CreateString(c->env[i]));
	cJSON_AddItemToObject(j, "env", env);
	env = NULL;
	cJSON_AddBoolToObject(j, "net", !c->net_off);
	if (mac_set(c->mac)) {
		char m[18];

		snprintf(m, sizeof(m), "%02x:%02x:%02x:%02x:%02x:%02x", c->mac[0], c->mac[1],
			 c->mac[2], c->mac[3], c->mac[4], c->mac[5]);
		cJSON_AddStringToObject(j, "mac", m);
	}
	cJSON_AddStringToObject(j, "dns_server", c->dns_server);
	for (int i = 0; i < c->npublish; i++)
		cJSON_AddItemToArray(pub, cJSON_CreateString(c->publish[i]));
	cJSON_AddItemToObject(j, "publish", pub);
	pub = NULL;
	if (save_run_fields(j, c))
		goto out;
	text = cJSON_Print(j);
	if (!text)
		goto out;
	ret = sb_path(c->name, "config.json", p, sizeof(p));
	if (ret)
		goto out;
	/* Atomic replace: a reader never sees half a config. */
	ret = file_write_atomic(p, text);
out:
	cJSON_Delete(pub);
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

static bool format_ok(const char *f)
{
	return !strcmp(f, "raw") || !strcmp(f, "qcow2");
}

/* The fields save_run_fields() writes. 0, or -EINVAL for a malformed disk. */
static int load_run_fields(const cJSON *j, struct sb_config *c)
{
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(j, "cmdline"), *e;

	get_str(j, "initrd", c->initrd, sizeof(c->initrd));
	if (cJSON_IsString(cl) && !(c->cmdline = strdup(cl->valuestring)))
		return -ENOMEM;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "disks")) {
		struct sb_disk *d = &c->disks[c->ndisks];
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "path");

		if (c->ndisks == SB_MAX_DISKS || !cJSON_IsString(p) || !p->valuestring[0])
			return -EINVAL;
		get_str(e, "format", d->format, sizeof(d->format));
		if (!format_ok(d->format) || !(d->path = strdup(p->valuestring)))
			return -EINVAL;
		d->read_only = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "read_only"));
		d->data = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "data"));
		c->ndisks++;
	}
	return 0;
}

int sb_config_load(const char *name, struct sb_config *c)
{
	char p[PATH_MAX], *text;
	const cJSON *env, *e;
	cJSON *j;
	int ret = sb_path(name, "config.json", p, sizeof(p));
	bool mac_ok;

	memset(c, 0, sizeof(*c));
	if (ret)
		return ret;
	text = file_read_text(p, CONFIG_MAX);
	if (!text)
		return -ENOENT;
	j = cJSON_Parse(text);
	free(text);
	if (!j)
		return -EINVAL;
	snprintf(c->name, sizeof(c->name), "%s", name);
	get_str(j, "image", c->image, sizeof(c->image));
	get_str(j, "template", c->template_name, sizeof(c->template_name));
	get_str(j, "kernel", c->kernel, sizeof(c->kernel));
	get_str(j, "disk", c->disk, sizeof(c->disk));
	get_str(j, "disk_format", c->disk_format, sizeof(c->disk_format));
	if (!c->disk_format[0])
		snprintf(c->disk_format, sizeof(c->disk_format), "raw");	/* before version 2 */
	get_str(j, "dns_server", c->dns_server, sizeof(c->dns_server));
	c->net_off = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "net"));
	mac_ok = get_mac(j, c->mac);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "publish")) {
		if (c->npublish < SB_MAX_PUBLISH && cJSON_IsString(e))
			c->publish[c->npublish++] = strdup(e->valuestring);
	}
	c->root_on_disk = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "root_on_disk"));
	c->cpus = (int)get_num(j, "cpus");
	c->mem = (uint64_t)get_num(j, "memory");
	c->cpu_quota = (int)get_num(j, "cpu_quota");
	c->disk_size = (uint64_t)get_num(j, "disk_size");
	c->cid = (uint64_t)get_num(j, "cid");
	c->created = get_num(j, "created");
	env = cJSON_GetObjectItemCaseSensitive(j, "env");
	cJSON_ArrayForEach(e, env) {
		if (c->nenv < SB_MAX_ENV && cJSON_IsString(e))
			c->env[c->nenv++] = strdup(e->valuestring);
	}
	ret = load_run_fields(j, c);
	cJSON_Delete(j);
	if (ret) {
		sb_config_free(c);
		return ret;
	}
	/* The disk name must stay a plain file name in the state directory
	 * ("": none, `mvm run` without a data disk), never "." or "..". */
	if (!mac_ok || strchr(c->disk, '/') || !strcmp(c->disk, ".") || !strcmp(c->disk, "..") ||
	    c->cpus < 1 ||
	    !format_ok(c->disk_format) ||
	    (!strcmp(c->disk_format, "qcow2") && c->image[0] != '/')) {
		sb_config_free(c);
		return -EINVAL;
	}
	return 0;
}

void sb_config_free(struct sb_config *c)
{
	for (int i = 0; i < c->nenv; i++)
		free(c->env[i]);
	c->nenv = 0;
	for (int i = 0; i < c->npublish; i++)
		free(c->publish[i]);
	c->npublish = 0;
	for (int i = 0; i < c->ndisks; i++)
		free(c->disks[i].path);
	c->ndisks = 0;
	free(c->cmdline);
	c->cmdline = NULL;
}
