/* Whose template is it (tools/serve/serve_tpl_scope.h). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_io.h"
#include "snapshots/template.h"
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

/* A file's identity and the bytes it takes, to count a linked one once. */
struct file_use {
	dev_t dev;
	ino_t ino;
	uint64_t bytes;
};

struct uses {
	struct file_use *v;
	size_t n, cap;
};

static int use_cmp(const void *a, const void *b)
{
	const struct file_use *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The regular files directly in @store's directory (a template is one level of files) into @u. */
static int store_files(const char *store, struct uses *u)
{
	char dir[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *d;
	int dfd;

	if (tpl_dir(store, dir, sizeof(dir)))
		return -EINVAL;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return -errno;
	}
	while ((e = readdir(d))) {
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (u->n == u->cap) {
			size_t cap = u->cap ? u->cap * 2 : 64;
			struct file_use *nv = realloc(u->v, cap * sizeof(*nv));

			if (!nv) {
				closedir(d);
				return -ENOMEM;
			}
			u->v = nv;
			u->cap = cap;
		}
		u->v[u->n++] = (struct file_use){ st.st_dev, st.st_ino, (uint64_t)st.st_blocks * 512 };
	}
	closedir(d);
	return 0;
}

int sv_tpl_usage(const char *tenant, int *count, uint64_t *bytes)
{
	struct uses u = { 0 };
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
	if (u.n)
		qsort(u.v, u.n, sizeof(*u.v), use_cmp);
	for (size_t i = 0; !ret && i < u.n; i++)
		if (!i || use_cmp(&u.v[i - 1], &u.v[i]))
			*bytes = *bytes + u.v[i].bytes < *bytes ? UINT64_MAX : *bytes + u.v[i].bytes;
	free(u.v);
	if (ret)
		*count = 0;
	return ret;
}
