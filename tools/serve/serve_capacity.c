/*
 * GET /v1/capacity: what a scheduler needs to place work on this host
 * (memory and vCPUs left after the running sandboxes, sandboxes running,
 * templates present) and what the calling tenant has left of its quota.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapshots/template.h"
#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_tpl_scope.h"
#include "tools/serve/serve_quota.h"

#define HOST_RESERVE   (512ull << 20)	/* the host's own needs */
#define VMM_OVERHEAD   (64ull << 20)	/* a VMM, its helper and page tables beyond guest RAM */

/* MemAvailable of /proc/meminfo in bytes, or 0. */
static uint64_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	unsigned long long kb = 0;
	char line[128];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kb << 10;
}

/* Running sandboxes of every tenant: count and vCPUs. */
static void running(int *n, int *vcpus)
{
	char **names;
	int cnt = sb_list(&names);

	*n = *vcpus = 0;
	for (int i = 0; i < cnt; i++) {
		struct sb_config cfg;

		if (sb_vmm_pid(names[i]) > 0) {
			(*n)++;
			if (!sb_config_load(names[i], &cfg)) {
				*vcpus += cfg.cpus;
				sb_config_free(&cfg);
			}
		}
		free(names[i]);
	}
	if (cnt > 0)
		free(names);
}

static cJSON *quota_json(const struct sv_quota *q)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddNumberToObject(j, "sandboxes", q->sandboxes);
	cJSON_AddNumberToObject(j, "cpus", q->cpus);
	cJSON_AddNumberToObject(j, "memory", (double)q->memory);
	/* sandboxes' disks, their checkpoints' and templates' bytes */
	cJSON_AddNumberToObject(j, "disk", (double)q->disk);
	cJSON_AddNumberToObject(j, "templates", q->templates);
	cJSON_AddNumberToObject(j, "checkpoints", q->checkpoints);
	return j;
}

static cJSON *templates(const char *tenant)
{
	cJSON *arr = cJSON_CreateArray();
	char **names;
	int n = tpl_list(&names);

	for (int i = 0; i < n; i++) {
		struct tpl_meta *m;
		char dir[PATH_MAX], err[128], shown[128];
		cJSON *t;

		if (!sv_tpl_visible(tenant, names[i], shown, sizeof(shown))) {
			free(names[i]);
			continue;	/* another tenant's */
		}
		t = cJSON_CreateObject();
		m = calloc(1, sizeof(*m));
		cJSON_AddStringToObject(t, "name", shown);
		if (m && !tpl_dir(names[i], dir, sizeof(dir)) && !tpl_meta_load(dir, m, err, sizeof(err)) &&
		    m->has_base)
			cJSON_AddStringToObject(t, "image_sha256", m->base.sha256);
		free(m);
		cJSON_AddItemToArray(arr, t);
		free(names[i]);
	}
	if (n > 0)
		free(names);
	return arr;
}

void sv_op_capacity(struct sv_call *c, struct sv_out *o)
{
	cJSON *j = cJSON_CreateObject(), *h = cJSON_AddObjectToObject(j, "host");
	cJSON *t = cJSON_AddObjectToObject(j, "tenant");
	uint64_t avail = mem_available();
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct sv_quota use;
	int nrun, vcpus;

	running(&nrun, &vcpus);
	avail = avail > HOST_RESERVE + (uint64_t)nrun * VMM_OVERHEAD ?
		avail - HOST_RESERVE - (uint64_t)nrun * VMM_OVERHEAD : 0;
	cJSON_AddNumberToObject(h, "memory_free", (double)avail);
	cJSON_AddNumberToObject(h, "cpus", (double)ncpu);
	cJSON_AddNumberToObject(h, "vcpus_free", (double)(ncpu > vcpus ? ncpu - vcpus : 0));
	cJSON_AddNumberToObject(h, "sandboxes_running", nrun);
	cJSON_AddItemToObject(j, "templates", templates(c->tenant.name));
	cJSON_AddStringToObject(t, "name", c->tenant.name);
	cJSON_AddItemToObject(t, "quota", quota_json(&c->tenant.quota));
	if (!sv_quota_usage(c->tenant.name, &use))
		cJSON_AddItemToObject(t, "used", quota_json(&use));
	sv_reply_json(o, 200, j);
}
