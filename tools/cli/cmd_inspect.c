/* `mvm inspect NAME [--json]`: a sandbox's processes and what confines them. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_confine.h"

static const char inspect_usage[] =
	"usage: mvm inspect NAME [--json]\n"
	"Show a sandbox's status, its VMM's and network helper's pids, and which\n"
	"protections are in force on the VMM: seccomp and capabilities (from\n"
	"/proc/PID/status), no_new_privs, landlock (ABI version), namespaces, cgroup\n"
	"(its own; the cgroup it was started in; why it has none of its own);\n"
	"and on the network helper (mvm-net): seccomp, no_new_privs, capabilities,\n"
	"landlock, namespaces.\n";

/* The network helper (mvm-net): its own seccomp, no_new_privs,
 * capabilities, Landlock, and the namespaces it shares with the VMM. */
static void print_helper(const cJSON *h)
{
	const cJSON *sc = cJSON_GetObjectItem(h, "seccomp"), *ll = cJSON_GetObjectItem(h, "landlock");
	const cJSON *caps = cJSON_GetObjectItem(h, "capabilities");
	char abi[16] = "no", *ns = cJSON_PrintUnformatted(cJSON_GetObjectItem(h, "namespaces"));

	if (cJSON_IsNumber(ll))
		snprintf(abi, sizeof(abi), "ABI %d", ll->valueint);
	printf("helper pid:  %d (seccomp: %s, no_new_privs: %s, capabilities: %s, landlock: %s, "
	       "namespaces: %s)\n",
	       cJSON_GetObjectItem(h, "pid")->valueint, cJSON_IsString(sc) ? sc->valuestring : "no",
	       cJSON_IsTrue(cJSON_GetObjectItem(h, "no_new_privs")) ? "yes" : "no",
	       cJSON_IsString(caps) ? caps->valuestring : "?", abi, ns ? ns : "[]");
	free(ns);
}

static void print_text(const cJSON *o)
{
	const cJSON *p = cJSON_GetObjectItem(o, "protections"), *v;
	char *s;

	printf("name:        %s\n", cJSON_GetObjectItem(o, "name")->valuestring);
	printf("status:      %s\n", cJSON_GetObjectItem(o, "status")->valuestring);
	printf("vmm pid:     %d\n", cJSON_GetObjectItem(o, "vmm_pid")->valueint);
	if (!cJSON_IsObject(p))
		return;
	v = cJSON_GetObjectItem(p, "helper");
	if (cJSON_IsObject(v))
		print_helper(v);
	else if (cJSON_IsNumber(cJSON_GetObjectItem(p, "helper_pid")))
		printf("helper pid:  %d (not running: the guest has no network)\n",
		       cJSON_GetObjectItem(p, "helper_pid")->valueint);
	else
		printf("helper pid:  none (no network device)\n");
	v = cJSON_GetObjectItem(p, "seccomp");
	printf("seccomp:     %s\n", cJSON_IsString(v) ? v->valuestring : "no");
	printf("no_new_privs: %s\n",
	       cJSON_IsTrue(cJSON_GetObjectItem(p, "no_new_privs")) ? "yes" : "no");
	v = cJSON_GetObjectItem(p, "capabilities");
	printf("capabilities: %s\n", cJSON_IsString(v) ? v->valuestring : "?");
	v = cJSON_GetObjectItem(p, "landlock");
	if (cJSON_IsNumber(v))
		printf("landlock:    ABI %d\n", v->valueint);
	else
		printf("landlock:    no\n");
	s = cJSON_PrintUnformatted(cJSON_GetObjectItem(p, "namespaces"));
	printf("namespaces:  %s\n", s ? s : "[]");
	free(s);
	v = cJSON_GetObjectItem(p, "cgroup");
	printf("cgroup:      %s\n", cJSON_IsString(v) ? v->valuestring : "none");
	v = cJSON_GetObjectItem(p, "cgroup_caller");
	if (cJSON_IsString(v))
		printf("started in:  %s\n", v->valuestring);
	v = cJSON_GetObjectItem(p, "cgroup_note");
	if (cJSON_IsString(v))
		printf("placement:   %s\n", v->valuestring);
}

int cmd_inspect(int argc, char **argv)
{
	const char *name = NULL;
	bool json = false;
	cJSON *o, *p;
	pid_t pid;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(inspect_usage, stdout);
			return 0;
		} else if (!name && argv[i][0] != '-') {
			name = argv[i];
		} else {
			fputs(inspect_usage, stderr);
			return MVM_EXIT_USAGE;
		}
	}
	if (!name) {
		fputs(inspect_usage, stderr);
		return MVM_EXIT_USAGE;
	}
	if (!sb_name_ok(name) || !sb_exists(name)) {
		cli_err("inspect", "no sandbox named %s", name);
		return MVM_EXIT_ERROR;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddStringToObject(o, "status", sb_status(name, &pid));
	cJSON_AddNumberToObject(o, "vmm_pid", pid > 0 ? pid : 0);
	p = sb_protections(name, pid);
	if (p)
		cJSON_AddItemToObject(o, "protections", p);
	else
		cJSON_AddNullToObject(o, "protections");
	if (json) {
		char *s = cJSON_Print(o);

		printf("%s\n", s ? s : "{}");
		free(s);
	} else {
		print_text(o);
	}
	cJSON_Delete(o);
	return 0;
}
