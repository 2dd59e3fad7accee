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
#include "vmm/vm.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sb_seal.h"

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
	if (c->owner[0])
		cJSON_AddStringToObject(j, "owner", c->owner);
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
	if (c->expires)
		cJSON_AddNumberToObject(j, "expires", c->expires);
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
	/* Atomic replace: a reader never sees half a config. Then its seal:
	 * a start opens only what a config sealed here names (sb_seal.h). */
	ret = file_write_atomic(p, text);
	if (!ret)
		ret = sb_seal(c->name, SB_SEALED_CONFIG);
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

/*
 * A whole number in [@min, @max] at @key, or @dflt when absent. Every
 * numeric field of a config passes here: config.json comes back from
 * snapshots and templates someone may have edited, and a double cast to an
 * integer out of its range is undefined (a cpu_quota past INT_MAX / 1000
 * once wrapped, and the cgroup then dropped the memory and pids caps too).
 */
static bool get_range(const cJSON *j, const char *key, double min, double max, double dflt,
		      double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

	if (!v) {
		*out = dflt;
		return true;
	}
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= min && v->valuedouble <= max) ||
	    v->valuedouble != (double)(int64_t)v->valuedouble)
		return false;
	*out = v->valuedouble;
	return true;
}

/* The numbers of a config, each within what `mvm create` accepts. */
static bool load_numbers(const cJSON *j, struct sb_config *c)
{
	double cpus, mem, quota, disk, cid, created, expires;

	if (!get_range(j, "cpus", 1, VM_MAX_CPUS, 0, &cpus) ||
	    !get_range(j, "memory", 0, (double)SB_MAX_MEMORY, 0, &mem) ||
	    !get_range(j, "cpu_quota", 0, SB_MAX_CPU_QUOTA, 0, &quota) ||
	    !get_range(j, "disk_size", 0, (double)SB_MAX_DISK_SIZE, 0, &disk) ||
	    !get_range(j, "cid", 0, 0xffffffff, 3, &cid) ||
	    !get_range(j, "created", 0, 1e11, 0, &created) ||
	    !get_range(j, "expires", 0, 1e11, 0, &expires))
		return false;
	c->cpus = (int)cpus;
	c->mem = (uint64_t)mem;
	c->cpu_quota = (int)quota;
	c->disk_size = (uint64_t)disk;
	c->cid = (uint64_t)cid;
	c->created = created;
	c->expires = expires;
	return true;
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
	char p[PATH_MAX];
	int ret = sb_path(name, "config.json", p, sizeof(p));

	if (ret) {
		memset(c, 0, sizeof(*c));
		return ret;
	}
	return sb_config_load_file(p, name, c);
}

int sb_config_load_file(const char *p, const char *name, struct sb_config *c)
{
	const cJSON *env, *e;
	char *text;
	cJSON *j;
	int ret;
	bool mac_ok, nums_ok;

	memset(c, 0, sizeof(*c));
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
	get_str(j, "owner", c->owner, sizeof(c->owner));
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
	nums_ok = load_numbers(j, c);
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
	if (!mac_ok || !nums_ok || strchr(c->disk, '/') || !strcmp(c->disk, ".") || !strcmp(c->disk, "..") ||
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
