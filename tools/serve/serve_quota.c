/* Tenant quotas (tools/serve/serve_quota.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshots/state_file.h"
#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_quota.h"
#include "tools/serve/serve_tpl_scope.h"

/* @a + @b, or UINT64_MAX past it (a sum that wraps would pass any check). */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

int sv_quota_check(const struct sv_quota *q, const struct sv_quota *use, const struct sv_quota *add,
		   char *why, size_t cap)
{
	if ((uint64_t)use->sandboxes + (uint64_t)add->sandboxes > (uint64_t)q->sandboxes)
		snprintf(why, cap, "quota: at most %d sandboxes (%d in use)", q->sandboxes, use->sandboxes);
	else if (add->templates > 0 && (uint64_t)use->templates + (uint64_t)add->templates > (uint64_t)q->templates)
		snprintf(why, cap, "quota: at most %d templates (%d held; DELETE /v1/templates/NAME frees one)",
			 q->templates, use->templates);
	else if (add->checkpoints > 0 &&
		 (uint64_t)use->checkpoints + (uint64_t)add->checkpoints > (uint64_t)q->checkpoints)
		snprintf(why, cap, "quota: at most %d checkpoints over all sandboxes (%d held; a sandbox's "
			 "starts again or is deleted)", q->checkpoints, use->checkpoints);
	else if ((uint64_t)use->cpus + (uint64_t)add->cpus > (uint64_t)q->cpus)
		snprintf(why, cap, "quota: at most %d vCPUs (%d in use, %d asked)", q->cpus, use->cpus, add->cpus);
	else if (sat_add(use->memory, add->memory) > q->memory)
		snprintf(why, cap, "quota: at most %llu MiB of memory (%llu in use, %llu asked)",
			 (unsigned long long)(q->memory >> 20), (unsigned long long)(use->memory >> 20),
			 (unsigned long long)(add->memory >> 20));
	else if (sat_add(use->disk, add->disk) > q->disk)
		snprintf(why, cap, "quota: at most %llu MiB of disk (%llu in use by sandboxes, checkpoints and "
			 "templates, %llu asked)", (unsigned long long)(q->disk >> 20), (unsigned long long)(use->disk >> 20),
			 (unsigned long long)(add->disk >> 20));
	else
		return 0;
	return -1;
}

uint64_t sv_quota_tpl_bound(uint64_t mem, uint64_t disk)
{
	return sat_add(mem, disk);
}

uint64_t sv_quota_ckpt_bound(uint64_t mem, uint64_t disk)
{
	/* Memory file: the pages plus two bitmaps (1/32768 each) and a header
	 * page; the frozen top: qcow2 tables of under 1/400 of the disk with
	 * clusters of 4 KiB or more. 1/256 of both covers either; 1 MiB the
	 * headers and the new overlay's first tables. */
	uint64_t slack = sat_add(sat_add(mem / 256, disk / 256), SNAP_STATE_MAX + (1ull << 20));

	return sat_add(sat_add(mem, disk), slack);
}

int sv_quota_usage(const char *tenant, struct sv_quota *use)
{
	char **names, name[SV_NAME_MAX + 1];
	int n = sb_list(&names), ret = 0, ck;
	struct sv_uses held = { 0 };
	uint64_t tpl_bytes = 0;

	memset(use, 0, sizeof(*use));
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct sb_config cfg;

		if (sv_own_name(tenant, names[i], name, sizeof(name))) {
			use->sandboxes++;
			/* An unreadable config still counts as a sandbox (a create in progress). */
			if (!sb_config_load(names[i], &cfg)) {
				use->cpus += cfg.cpus;
				use->memory = sat_add(use->memory, cfg.mem);
				use->disk = sat_add(use->disk, cfg.disk_size);
				/* Beside the disk's reservation, what checkpoints and forks left on the host. */
				if (!ret && !(ret = sv_sandbox_held(names[i], cfg.disk, &held, &ck)))
					use->checkpoints += ck;
				sb_config_free(&cfg);
			}
		}
		free(names[i]);
	}
	free(names);
	use->disk = sat_add(use->disk, sv_uses_sum(&held));
	sv_uses_free(&held);
	if (ret)
		return ret;
	/* Its templates' bytes are host disk like its sandboxes' (a tenant
	 * snapshotting to templates again and again would fill the host). */
	ret = sv_tpl_usage(tenant, &use->templates, &tpl_bytes);
	use->disk = sat_add(use->disk, tpl_bytes);
	return ret;
}

/* What is in flight for @tenant, added to @use. Under the server's lock. */
static void add_pending(const struct sv_server *s, const char *tenant, struct sv_quota *use)
{
	for (int i = 0; i < SV_MAX_PENDING; i++) {
		const struct sv_pending *p = &s->pending[i];

		if (p->used && !strcmp(p->tenant, tenant)) {
			use->sandboxes += p->add.sandboxes;
			use->templates += p->add.templates;
			use->checkpoints += p->add.checkpoints;
			use->cpus += p->add.cpus;
			use->memory = sat_add(use->memory, p->add.memory);
			use->disk = sat_add(use->disk, p->add.disk);
		}
	}
}

/* @host exists or is being made by another request. Under the server's lock. */
static bool host_taken(const struct sv_server *s, const char *host)
{
	if (sb_exists(host))
		return true;
	for (int i = 0; i < SV_MAX_PENDING; i++)
		if (s->pending[i].used && !strcmp(s->pending[i].host, host))
			return true;
	return false;
}

int sv_quota_reserve(struct sv_server *s, const char *tenant, const char *host, const struct sv_quota *q,
		     const struct sv_quota *add, char *why, size_t cap)
{
	struct sv_quota use;
	int slot = -3;

	pthread_mutex_lock(&s->lock);
	snprintf(why, cap, "a sandbox of that name exists");
	if (host && host_taken(s, host))
		goto out;
	slot = -2;
	if (sv_quota_usage(tenant, &use)) {
		snprintf(why, cap, "cannot count the sandboxes and templates");
		goto out;
	}
	add_pending(s, tenant, &use);
	if (sv_quota_check(q, &use, add, why, cap)) {
		slot = -1;
		goto out;
	}
	for (int i = 0; i < SV_MAX_PENDING && slot < 0; i++) {
		if (!s->pending[i].used) {
			s->pending[i] = (struct sv_pending){ .add = *add, .used = true };
			snprintf(s->pending[i].tenant, sizeof(s->pending[i].tenant), "%s", tenant);
			snprintf(s->pending[i].host, sizeof(s->pending[i].host), "%s", host ? host : "");
			slot = i;
		}
	}
	if (slot < 0)
		snprintf(why, cap, "%d creates in flight: try again later", SV_MAX_PENDING);
out:
	pthread_mutex_unlock(&s->lock);
	return slot;
}

void sv_quota_release(struct sv_server *s, int slot)
{
	pthread_mutex_lock(&s->lock);
	s->pending[slot].used = false;
	pthread_mutex_unlock(&s->lock);
}

int sv_quota_ckpt_reserve(struct sv_server *s, const char *tenant, const char *host, const struct sv_quota *q,
			  char *why, size_t cap)
{
	struct sv_quota add = { .checkpoints = 1 };
	struct sb_config cfg;

	if (sb_config_load(host, &cfg)) {
		snprintf(why, cap, "cannot read the sandbox's configuration");
		return -2;
	}
	add.disk = sv_quota_ckpt_bound(cfg.mem, cfg.disk_size);
	sb_config_free(&cfg);
	return sv_quota_reserve(s, tenant, NULL, q, &add, why, cap);
}

int sv_quota_disk_recheck(const char *tenant, const struct sv_quota *q, char *why, size_t cap)
{
	/* Only the disk: the template changed nothing else. */
	struct sv_quota only = { INT_MAX, INT_MAX, UINT64_MAX, q->disk, INT_MAX, INT_MAX }, use, none = { 0 };

	if (sv_quota_usage(tenant, &use)) {
		snprintf(why, cap, "cannot count the sandboxes and templates");
		return -1;
	}
	return sv_quota_check(&only, &use, &none, why, cap);
}
