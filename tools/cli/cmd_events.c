/* `mvm events NAME [--json]`: the sandbox's lifecycle events and network
 * denials (events.jsonl). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/sandbox/sandbox.h"

/* "2026-12-02T13:00:00Z created outcome=exited ..." */
static void print_human(const char *line)
{
	cJSON *j = cJSON_Parse(line), *it;
	const cJSON *t = cJSON_GetObjectItem(j, "time"), *ty = cJSON_GetObjectItem(j, "type");
	char when[32] = "?";
	time_t secs;

	if (!j)
		return;
	if (cJSON_IsNumber(t)) {
		secs = (time_t)t->valuedouble;
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&secs));
	} else if (cJSON_IsString(t)) {
		snprintf(when, sizeof(when), "%s", t->valuestring);	/* net-deny: ISO 8601 */
	}
	printf("%s %-8s", when, cJSON_IsString(ty) ? ty->valuestring : "?");
	cJSON_ArrayForEach(it, j) {
		if (!strcmp(it->string, "time") || !strcmp(it->string, "type"))
			continue;
		if (cJSON_IsString(it))
			printf(" %s=%s", it->string, it->valuestring);
		else if (cJSON_IsNumber(it))
			printf(" %s=%g", it->string, it->valuedouble);
		else if (cJSON_IsBool(it) || cJSON_IsNull(it))
			printf(" %s=%s", it->string, cJSON_IsTrue(it) ? "true" :
			       cJSON_IsFalse(it) ? "false" : "none");
		else if (cJSON_IsArray(it)) {
			/* The confined event's namespaces: "user,mount,ipc". */
			const cJSON *e;
			const char *sep = "";

			printf(" %s=", it->string);
			cJSON_ArrayForEach(e, it)
				if (cJSON_IsString(e)) {
					printf("%s%s", sep, e->valuestring);
					sep = ",";
				}
		}
	}
	putchar('\n');
	cJSON_Delete(j);
}

int cmd_events(int argc, char **argv)
{
	const char *name = NULL;
	bool json = false;
	char p[4096], line[4096];
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs("usage: mvm events NAME [--json]\n"
			      "Print the sandbox's lifecycle events (created, started, stopped with\n"
			      "its outcome, killed) and its denied network attempts (net-deny:\n"
			      "protocol, destination, port, queried name, reason; rate-limited);\n"
			      "--json prints one JSON object per line.\n", stdout);
			return 0;
		} else if (!name) {
			name = argv[i];
		} else {
			cli_err("events", "unexpected '%s'", argv[i]);
			return MVM_EXIT_USAGE;
		}
	}
	if (!name || !sb_name_ok(name) || !sb_exists(name)) {
		cli_err("events", name ? "no sandbox named %s" : "expected a sandbox NAME%s", name ? name : "");
		return name ? MVM_EXIT_ERROR : MVM_EXIT_USAGE;
	}
	if (sb_path(name, "events.jsonl", p, sizeof(p)) || !(f = fopen(p, "r")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (json)
			fputs(line, stdout);
		else
			print_human(line);
	}
	fclose(f);
	return 0;
}
