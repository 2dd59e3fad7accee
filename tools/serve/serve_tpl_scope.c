/* Whose template is it (tools/serve/serve_tpl_scope.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file_io.h"
#include "snapshots/template.h"
#include "tools/serve/serve_bytes.h"
#include "tools/serve/serve_route.h"
#include "tools/serve/serve_tpl_scope.h"

#define CONFIG_MAX (1u << 20)

/* The owner recorded in @store's config.json into @owner ("" none or unreadable). */
static void tpl_owner(const char *store, char *owner, size_t cap)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], *text;
	const cJSON *o;
	cJSON *j;

	owner[0] = '\0';
	if (tpl_dir(store, dir, sizeof(dir)) || snprintf(path, sizeof(path), "%s/config.json", dir) >= (int)sizeof(path))
		return;
	if (!(text = file_read_text(path, CONFIG_MAX)))
		return;
	j = cJSON_Parse(text);
	o = cJSON_GetObjectItemCaseSensitive(j, "owner");
	if (cJSON_IsString(o))
		snprintf(owner, cap, "%s", o->valuestring);
	cJSON_Delete(j);
	free(text);
}

bool sv_tpl_owned(const char *tenant, const char *store)
{
	char owner[OP_OWNER_MAX], want[OP_OWNER_MAX];

	tpl_owner(store, owner, sizeof(owner));
	return !op_owner_make("tenant", tenant, want, sizeof(want)) && !strcmp(owner, want);
}

bool sv_tpl_visible(const char *tenant, const char *store, char *shown, size_t cap)
{
	char owner[OP_OWNER_MAX], own[SV_TPL_MAX + 1];

	tpl_owner(store, owner, sizeof(owner));
	if (strncmp(owner, "tenant:", 7)) {
		snprintf(shown, cap, "%s", store);	/* the operator's */
		return true;
	}
	if (!sv_tpl_owned(tenant, store))
		return false;
	/* Its own: as the tenant named it (sv_own_name's rule, template names being longer). */
	if (!strncmp(store, tenant, strlen(tenant)) && store[strlen(tenant)] == '.' &&
	    snprintf(own, sizeof(own), "%s", store + strlen(tenant) + 1) < (int)sizeof(own) && own[0])
		snprintf(shown, cap, "%s", own);
	else
		snprintf(shown, cap, "%s", store);
	return true;
}

int sv_tpl_resolve(const struct op_policy *pol, const char *tenant, const char *name, char *store, size_t cap,
		   char *err, size_t errcap)
{
	char mine[SV_TENANT_MAX + SV_TPL_MAX + 2], shown[SV_TPL_MAX + 1];

	if (op_check_template(pol, name, err, errcap))
		return -EPERM;
	if (snprintf(mine, sizeof(mine), "%s.%s", tenant, name) < (int)sizeof(mine) && tpl_name_ok(mine) &&
	    tpl_exists(mine) && sv_tpl_owned(tenant, mine)) {
		snprintf(store, cap, "%s", mine);
		return 0;
	}
	if (tpl_exists(name) && sv_tpl_visible(tenant, name, shown, sizeof(shown))) {
		snprintf(store, cap, "%s", name);
		return 0;
	}
	snprintf(err, errcap, "no template named %s", name);
	return -ENOENT;
}

/* The files of @store's directory (a template is one level of files) into @u. */
static int store_files(const char *store, struct sv_uses *u)
{
	char dir[PATH_MAX];
	int dfd, ret;

	if (tpl_dir(store, dir, sizeof(dir)))
		return -EINVAL;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	ret = sv_uses_add_dir(u, dfd, 0, NULL);
	close(dfd);
	return ret;
}

int sv_tpl_usage(const char *tenant, int *count, uint64_t *bytes)
{
	struct sv_uses u = { 0 };
	char **names;
	int n = tpl_list(&names), ret = n < 0 ? n : 0;

	*count = 0;
	*bytes = 0;
	for (int i = 0; i < n; i++) {
		if (!ret && sv_tpl_owned(tenant, names[i])) {
			(*count)++;
			/* One that vanished meanwhile (removed) holds nothing. */
			if ((ret = store_files(names[i], &u)) == -ENOENT)
				ret = 0;
		}
		free(names[i]);
	}
	if (n > 0)
		free(names);
	if (!ret)
		*bytes = sv_uses_sum(&u);
	sv_uses_free(&u);
	if (ret)
		*count = 0;
	return ret;
}
