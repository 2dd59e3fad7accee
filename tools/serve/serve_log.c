/*
 * The request log of `mvm serve`: one JSON line per request (time, client
 * address, tenant, method, verb, sandbox, status, outcome), appended
 * through common/rotlog.c so a flood of requests cannot fill the disk.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mono_time.h"
#include "common/fs_util.h"
#include "common/rotlog.h"
#include "tools/serve/serve.h"

void sv_log_request(struct sv_server *s, const char *ip, const char *tenant, const char *method,
		    const char *verb, const char *sandbox, int status, const char *outcome)
{
	cJSON *j;
	char *line, *txt;

	if (!s->log_path[0])
		return;
	j = cJSON_CreateObject();
	cJSON_AddNumberToObject(j, "time", wall_now_s());
	cJSON_AddStringToObject(j, "ip", ip);
	cJSON_AddItemToObject(j, "tenant", tenant ? cJSON_CreateString(tenant) : cJSON_CreateNull());
	/* The method is the client's bytes: only a known one is logged as given. */
	cJSON_AddStringToObject(j, "method", strlen(method) < 8 && strspn(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") ==
				strlen(method) ? method : "?");
	cJSON_AddStringToObject(j, "verb", verb ? verb : "?");
	cJSON_AddItemToObject(j, "sandbox", sandbox ? cJSON_CreateString(sandbox) : cJSON_CreateNull());
	cJSON_AddNumberToObject(j, "status", status);
	cJSON_AddStringToObject(j, "outcome", outcome);
	txt = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (txt && asprintf(&line, "%s\n", txt) > 0) {
		rotlog_append_line(s->log_path, rotlog_max_from_env(), NULL, line, strlen(line));
		free(line);
	}
	free(txt);
}

int sv_log_default_path(char *out, size_t cap)
{
	const char *x = getenv("XDG_STATE_HOME"), *h = getenv("HOME");
	char dir[PATH_MAX];
	int n;

	if (x && x[0] == '/')
		n = snprintf(dir, sizeof(dir), "%s/mvm-serve", x);
	else if (h && h[0] == '/')
		n = snprintf(dir, sizeof(dir), "%s/.local/state/mvm-serve", h);
	else
		return -ENOENT;
	if (n < 0 || (size_t)n >= sizeof(dir) || mkdir_p(dir, 0700))
		return -ENAMETOOLONG;
	n = snprintf(out, cap, "%s/requests.jsonl", dir);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}
