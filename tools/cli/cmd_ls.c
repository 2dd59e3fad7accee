/* `mvm ls [--json]`: every sandbox and its status. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_confine.h"

static const char ls_usage[] =
	"usage: mvm ls [--json]\n"
	"List sandboxes: name, status (running, paused, stopped, crashed), vCPUs,\n"
	"memory, root image, VMM pid.\n";

static cJSON *entry(const char *name)
{
	struct sb_config c;
	pid_t pid;
	const char *st = sb_status(name, &pid);
	cJSON *o = cJSON_CreateObject(), *prot;
	bool ok = !sb_config_load(name, &c);

	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddStringToObject(o, "status", st);
	cJSON_AddNumberToObject(o, "pid", pid);
	cJSON_AddNumberToObject(o, "cpus", ok ? c.cpus : 0);
	cJSON_AddNumberToObject(o, "memory", ok ? (double)c.mem : 0);
	cJSON_AddStringToObject(o, "image", ok && c.image[0] ? c.image : "");
	cJSON_AddNumberToObject(o, "created", ok ? c.created : 0);
	/* Which confinement is in force (null when not running). */
	prot = sb_protections(name, pid);
	if (prot)
		cJSON_AddItemToObject(o, "protections", prot);
	else
		cJSON_AddNullToObject(o, "protections");
	if (ok)
		sb_config_free(&c);
	return o;
}

int ls_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' }, { 0 } };
	static const struct verb_spec spec = { .verb = "ls", .longopts = opts, .synopsis = "no arguments" };

	return verb_parse(&spec, NULL, argc, argv, a);
}

int cmd_ls(int argc, char **argv)
{
	struct verb_args a;
	char **names;
	cJSON *arr;
	int crashed, n = ls_parse(argc, argv, &a);
	bool json = a.flag;

	if (n)
		return verb_parse_exit(n, ls_usage);
	n = sb_list(&names);
	if (n < 0) {
		cli_err("ls", "cannot read the state directory");
		return MVM_EXIT_ERROR;
	}
	arr = cJSON_CreateArray();
	crashed = 0;
	if (!json)
		printf("%-24s %-8s %4s %8s %8s  %s\n", "NAME", "STATUS", "CPUS", "MEMORY", "PID", "IMAGE");
	for (int i = 0; i < n; i++) {
		cJSON *o = entry(names[i]);

		crashed += !strcmp(cJSON_GetObjectItem(o, "status")->valuestring, "crashed");
		if (!json) {
			const cJSON *img = cJSON_GetObjectItem(o, "image");

			printf("%-24s %-8s %4d %7lluM %8d  %s\n", names[i],
			       cJSON_GetObjectItem(o, "status")->valuestring,
			       cJSON_GetObjectItem(o, "cpus")->valueint,
			       (unsigned long long)(cJSON_GetObjectItem(o, "memory")->valuedouble / 1048576),
			       cJSON_GetObjectItem(o, "pid")->valueint,
			       img->valuestring[0] ? img->valuestring : "(initramfs + /data)");
		}
		cJSON_AddItemToArray(arr, o);
		free(names[i]);
	}
	free(names);
	if (json) {
		char *s = cJSON_Print(arr);

		printf("%s\n", s ? s : "[]");
		free(s);
	}
	cJSON_Delete(arr);
	if (crashed && !json)
		fprintf(stderr, "mvm ls: %d sandbox(es) crashed: their VMM is gone (killed with a "
			"job?); 'mvm gc' removes them\n", crashed);
	return 0;
}
