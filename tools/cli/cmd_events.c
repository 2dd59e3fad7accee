/* `mvm events NAME [--json]`: the sandbox's lifecycle events and network
 * denials (events.jsonl after its rotated older part events.jsonl.1). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/sandbox_logs.h"

static const char events_usage[] =
	"usage: mvm events [--json] NAME\n"
	"Print the sandbox's lifecycle events (created, started, stopped with\n"
	"its outcome, killed, checkpoint, rollback, ...) and its denied network\n"
	"attempts (net-deny: protocol, destination, port, queried name, reason;\n"
	"rate-limited); --json prints one JSON object per line (docs/api.md).\n";

int events_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' }, { 0 } };
	static const struct verb_spec spec = { .verb = "events", .longopts = opts, .min_pos = 1,
					       .max_pos = 1, .synopsis = "one sandbox NAME" };

	return verb_parse(&spec, NULL, argc, argv, a);
}

/* @s with control characters shown as '?' (a terminal prints this). */
static void put_text(const char *s)
{
	for (; *s; s++)
		putchar((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

/* An array of strings as "a,b,c", each escaped like any guest-supplied text. */
static void print_list(const cJSON *arr)
{
	const cJSON *e;
	const char *sep = "";

	cJSON_ArrayForEach(e, arr)
		if (cJSON_IsString(e)) {
			fputs(sep, stdout);
			put_text(e->valuestring);
			sep = ",";
		}
}

/* "2026-12-02T13:00:00.123Z created outcome=exited ..." */
static void print_human(const char *line)
{
	cJSON *j = cJSON_Parse(line), *it;
	const cJSON *t = cJSON_GetObjectItem(j, "time"), *ty = cJSON_GetObjectItem(j, "type");

	if (!j)
		return;
	put_text(cJSON_IsString(t) ? t->valuestring : "?");
	putchar(' ');
	put_text(cJSON_IsString(ty) ? ty->valuestring : "?");
	cJSON_ArrayForEach(it, j) {
		if (!strcmp(it->string, "time") || !strcmp(it->string, "type") || cJSON_IsObject(it))
			continue;
		putchar(' ');
		put_text(it->string);
		putchar('=');
		if (cJSON_IsString(it))
			put_text(it->valuestring);
		else if (cJSON_IsNumber(it))
			printf("%g", it->valuedouble);
		else if (cJSON_IsBool(it) || cJSON_IsNull(it))
			fputs(cJSON_IsTrue(it) ? "true" : cJSON_IsFalse(it) ? "false" : "none", stdout);
		else
			print_list(it);	/* the confined event's namespaces: "user,mount,ipc" */
	}
	putchar('\n');
	cJSON_Delete(j);
}

static void print_line(const char *line, void *json)
{
	if (*(bool *)json)
		fputs(line, stdout);
	else
		print_human(line);
}

int cmd_events(int argc, char **argv)
{
	struct verb_args a;
	int r = events_parse(argc, argv, &a);

	if (r)
		return verb_parse_exit(r, events_usage);
	if (!verb_sandbox_ok("events", a.pos[0]))
		return MVM_EXIT_ERROR;
	return sb_events_each(a.pos[0], print_line, &a.flag) ? MVM_EXIT_ERROR : 0;
}
