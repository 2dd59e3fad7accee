/* policy.json of a sandbox; see sandbox_policy.h. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/netpolicy/net_filter.h"
#include "common/file_io.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_policy.h"

#define POLICY_MAX (1 << 20)	/* as net_policy_load */

static char *slurp(const char *path)
{
	char *buf = malloc(POLICY_MAX + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 && buf ? read(fd, buf, POLICY_MAX + 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0 || n > POLICY_MAX) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

int sb_policy_validate(const struct vm_net *n, char *err, size_t errlen)
{
	struct net_policy p;
	char e[512];
	int ret = net_policy_init(&p, NET_MODE_ALLOWLIST);

	if (ret)
		return ret;
	if (n->policy_path && (ret = net_policy_load(&p, n->policy_path, e, sizeof(e))))
		snprintf(err, errlen, "--policy %s: %s", n->policy_path, e);
	for (int i = 0; !ret && i < n->nr_allow; i++)
		if ((ret = net_policy_allow(&p, n->allow[i], e, sizeof(e))))
			snprintf(err, errlen, "--allow %s: %s", n->allow[i], e);
	net_policy_free(&p);
	return ret;
}

int sb_policy_create(const char *name, const struct vm_net *n, char *err, size_t errlen)
{
	char path[PATH_MAX], *text = NULL;
	cJSON *j = NULL, *allow;
	int ret = sb_policy_validate(n, err, errlen);

	if (ret)
		return ret;
	if (n->policy_path) {
		text = slurp(n->policy_path);
		j = text ? cJSON_Parse(text) : NULL;
		free(text);
	} else {
		j = cJSON_Parse("{\"version\":1,\"mode\":\"allowlist\"}");
	}
	ret = -ENOMEM;
	if (!j)
		goto out;
	if (n->mode)
		cJSON_ReplaceItemInObjectCaseSensitive(j, "mode", cJSON_CreateString(n->mode));
	allow = cJSON_GetObjectItemCaseSensitive(j, "allow");
	if (!allow)
		allow = cJSON_AddArrayToObject(j, "allow");
	for (int i = 0; allow && i < n->nr_allow; i++)
		cJSON_AddItemToArray(allow, cJSON_CreateString(n->allow[i]));
	text = cJSON_Print(j);
	ret = text ? sb_path(name, SB_POLICY_FILE, path, sizeof(path)) : -ENOMEM;
	if (!ret)
		ret = file_write_atomic(path, text);
out:
	if (ret)
		snprintf(err, errlen, "cannot write the network policy: %s", strerror(-ret));
	free(text);
	cJSON_Delete(j);
	return ret;
}

int sb_policy_persist(const char *path, const char *show)
{
	char *text = slurp(path), *out;
	cJSON *j = text ? cJSON_Parse(text) : cJSON_Parse("{\"version\":1}");
	cJSON *s = cJSON_Parse(show);
	static const char *keys[] = { "mode", "allow", "deny" };
	int ret = -EINVAL;

	free(text);
	if (!j || !s)
		goto out;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(s, keys[i]);

		if (!v)
			goto out;
		cJSON_DeleteItemFromObjectCaseSensitive(j, keys[i]);
		cJSON_AddItemToObject(j, keys[i], v);
	}
	out = cJSON_Print(j);
	ret = out ? file_write_atomic(path, out) : -ENOMEM;
	free(out);
out:
	cJSON_Delete(j);
	cJSON_Delete(s);
	return ret;
}

/* NAME's stored policy into @p (none stored: allowlist, no rules). */
static int load_stored(const char *name, struct net_policy *p, char *path, char *err,
		       size_t errlen)
{
	int ret = sb_path(name, SB_POLICY_FILE, path, PATH_MAX);

	if (ret)
		return ret;
	ret = net_policy_init(p, NET_MODE_ALLOWLIST);
	if (ret)
		return ret;
	if (access(path, F_OK) == 0 && (ret = net_policy_load(p, path, err, errlen)))
		net_policy_free(p);
	return ret;
}

int sb_policy_edit(const char *name, const char *verb, const char *rule, char *err,
		   size_t errlen)
{
	struct net_policy p;
	char path[PATH_MAX], *json;
	int ret = load_stored(name, &p, path, err, errlen);

	if (ret)
		return ret;
	if (!strcmp(verb, "allow")) {
		ret = net_policy_allow(&p, rule, err, errlen);
	} else if (!strcmp(verb, "deny")) {
		ret = net_policy_deny(&p, rule, err, errlen);
	} else {
		ret = net_policy_remove(&p, rule);
		if (ret)
			snprintf(err, errlen, "no rule '%s'", rule);
	}
	json = ret ? NULL : net_rules_to_json(&p.rules);
	if (!ret)
		ret = json ? sb_policy_persist(path, json) : -ENOMEM;
	free(json);
	net_policy_free(&p);
	return ret;
}

int sb_policy_show(const char *name, char **json, char *err, size_t errlen)
{
	struct net_policy p;
	char path[PATH_MAX];
	int ret = load_stored(name, &p, path, err, errlen);

	if (ret)
		return ret;
	*json = net_rules_to_json(&p.rules);
	net_policy_free(&p);
	return *json ? 0 : -ENOMEM;
}

int sb_policy_check(const char *name, const char *dest, char *why, size_t whylen)
{
	struct net_policy p;
	char path[PATH_MAX];
	int ret = load_stored(name, &p, path, why, whylen);

	if (ret)
		return ret;
	ret = net_policy_check(&p, dest, why, whylen);
	net_policy_free(&p);
	return ret;
}
