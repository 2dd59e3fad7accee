/* Tenant quotas (tools/serve/serve_quota.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_quota.h"

int sv_quota_check(const struct sv_quota *q, const struct sv_quota *use, const struct sv_quota *add,
		   char *why, size_t cap)
{
	if ((uint64_t)use->sandboxes + (uint64_t)add->sandboxes > (uint64_t)q->sandboxes)
		snprintf(why, cap, "quota: at most %d sandboxes (%d in use)", q->sandboxes, use->sandboxes);
	else if ((uint64_t)use->cpus + (uint64_t)add->cpus > (uint64_t)q->cpus)
		snprintf(why, cap, "quota: at most %d vCPUs (%d in use, %d asked)", q->cpus, use->cpus, add->cpus);
	else if (use->memory + add->memory > q->memory || use->memory + add->memory < use->memory)
		snprintf(why, cap, "quota: at most %llu MiB of memory (%llu in use, %llu asked)",
			 (unsigned long long)(q->memory >> 20), (unsigned long long)(use->memory >> 20),
			 (unsigned long long)(add->memory >> 20));
	else if (use->disk + add->disk > q->disk || use->disk + add->disk < use->disk)
		snprintf(why, cap, "quota: at most %llu MiB of disk (%llu in use, %llu asked)",
			 (unsigned long long)(q->disk >> 20), (unsigned long long)(use->disk >> 20),
			 (unsigned long long)(add->disk >> 20));
	else
		return 0;
	return -1;
}

int sv_quota_usage(const char *tenant, struct sv_quota *use)
{
	char **names, name[SV_NAME_MAX + 1];
	int n = sb_list(&names);

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
				use->memory += cfg.mem;
				use->disk += cfg.disk_size;
				sb_config_free(&cfg);
			}
		}
		free(names[i]);
	}
	free(names);
	return 0;
}

int sv_quota_reserve(struct sv_server *s, const char *tenant, const char *host, const struct sv_quota *q,
		     const struct sv_quota *add, char *why, size_t cap)
{
	struct sv_quota use;
	int slot = -3;

	pthread_mutex_lock(&s->lock);
	snprintf(why, cap, "a sandbox of that name exists");
	if (sb_exists(host))
		goto out;
	for (int i = 0; i < SV_MAX_PENDING; i++)
		if (s->pending[i].used && !strcmp(s->pending[i].host, host))
			goto out;
	slot = -2;
	if (sv_quota_usage(tenant, &use)) {
		snprintf(why, cap, "cannot count the sandboxes");
		goto out;
	}
	for (int i = 0; i < SV_MAX_PENDING; i++) {
		struct sv_pending *p = &s->pending[i];

		if (p->used && !strcmp(p->tenant, tenant)) {
			use.sandboxes++;
			use.cpus += p->cpus;
			use.memory += p->memory;
			use.disk += p->disk;
		}
	}
	if (sv_quota_check(q, &use, add, why, cap)) {
		slot = -1;
		goto out;
	}
	for (int i = 0; i < SV_MAX_PENDING && slot < 0; i++) {
		if (!s->pending[i].used) {
			s->pending[i] = (struct sv_pending){ .cpus = add->cpus, .memory = add->memory,
							     .disk = add->disk, .used = true };
			snprintf(s->pending[i].tenant, sizeof(s->pending[i].tenant), "%s", tenant);
			snprintf(s->pending[i].host, sizeof(s->pending[i].host), "%s", host);
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
