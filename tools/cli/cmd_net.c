/* `mvm net allow|deny|remove|show|check NAME [RULE|DEST]`: a running sandbox's
 * network policy, changed through its control API (takes effect on the next
 * frame; the VMM also saves it in policy.json), or checked (a dry run). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/sandbox/api_client.h"
#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_policy.h"

static const char net_usage[] =
	"usage: mvm net allow NAME RULE    allow RULE (HOST[:PORTS][/tcp|/udp])\n"
	"       mvm net deny NAME RULE     add a deny rule (wins over allow rules)\n"
	"       mvm net remove NAME RULE   delete a rule by its exact text\n"
	"       mvm net show NAME          print the mode and the rules as JSON\n"
	"       mvm net check NAME DEST    would the guest reach DEST (HOST:PORT[/tcp|/udp],\n"
	"                                  HOST a name, an address or host-loopback)? Prints\n"
	"                                  allowed/denied and why; status 0 allowed, 1 denied\n"
	"Sandboxes start with the rules given to 'mvm create' (--net, --allow,\n"
	"--policy; none: nothing leaves). Changes apply to the running VMM at once\n"
	"(established connections that a deny revokes are reset) and are kept across\n"
	"'mvm stop'/'mvm start'; on a stopped sandbox they change its stored policy\n"
	"for the next start. check asks the running VMM (names count as allowed\n"
	"only for the addresses the guest resolved), or the stored policy of a\n"
	"stopped sandbox (show too). Rule syntax: docs/network-policy.md.\n";

/* A stopped sandbox: its stored policy.json, changed for the next start,
 * shown, or asked (a dry run without DNS pins). */
static int stopped(const char *name, const char *verb, const char *arg)
{
	char msg[512] = "", *json = NULL;
	struct sb_config c;
	int v;

	if (sb_config_load(name, &c)) {
		cli_err("net", "cannot read the configuration of %s", name);
		return MVM_EXIT_ERROR;
	}
	sb_config_free(&c);
	if (c.net_off) {
		cli_err("net", "%s has no network device (created with --net none)", name);
		return MVM_EXIT_ERROR;
	}
	if (!strcmp(verb, "check"))
		v = sb_policy_check(name, arg, msg, sizeof(msg));
	else if (!strcmp(verb, "show"))
		v = sb_policy_show(name, &json, msg, sizeof(msg));
	else
		v = sb_policy_edit(name, verb, arg, msg, sizeof(msg));
	if (v < 0) {
		cli_err("net", "%s", msg[0] ? msg : strerror(-v));
		return MVM_EXIT_ERROR;
	}
	if (json)
		puts(json);
	free(json);
	if (strcmp(verb, "check"))
		return 0;
	printf("%s: %s (stored policy; %s is not running)\n", v ? "allowed" : "denied", msg, name);
	return v ? 0 : 1;
}

static int print_check(const cJSON *resp)
{
	const cJSON *why = cJSON_GetObjectItemCaseSensitive(resp, "why");
	bool allowed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "allowed"));

	printf("%s: %s\n", allowed ? "allowed" : "denied",
	       cJSON_IsString(why) ? why->valuestring : "");
	return allowed ? 0 : 1;
}

int net_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct verb_spec spec = { .verb = "net", .min_pos = 2, .max_pos = 3,
					       .synopsis = "allow|deny|remove|show|check NAME [RULE|DEST]" };
	int ret = verb_parse(&spec, NULL, argc, argv, a);
	const char *verb = ret ? "" : a->pos[0];
	bool show = !strcmp(verb, "show");

	if (ret)
		return ret;
	if ((!show && strcmp(verb, "check") && strcmp(verb, "allow") && strcmp(verb, "deny") &&
	     strcmp(verb, "remove")) || a->npos != (show ? 2 : 3)) {
		cli_err("net", "expected %s (see mvm net --help)", spec.synopsis);
		return -1;
	}
	return 0;
}

int cmd_net(int argc, char **argv)
{
	struct verb_args a;
	int ret = net_parse(argc, argv, &a);
	const char *verb = a.pos[0], *name = a.pos[1], *arg = a.pos[2];
	bool show, check;
	cJSON *req, *resp;
	char op[32], *text, *reply = NULL;

	if (ret)
		return verb_parse_exit(ret, net_usage);
	show = !strcmp(verb, "show");
	check = !strcmp(verb, "check");
	if (!verb_sandbox_ok("net", name))
		return MVM_EXIT_ERROR;
	snprintf(op, sizeof(op), "net-%s", verb);
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", op);
	if (!show)
		cJSON_AddStringToObject(req, check ? "dest" : "rule", arg);
	text = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	ret = text ? api_call(name, text, &reply, 10000) : -1;
	if (ret)
		reply = NULL;
	free(text);
	if (ret && sb_vmm_pid(name) > 0) {
		cli_err("net", "the VMM of %s does not answer on its control socket", name);
		return MVM_EXIT_ERROR;
	}
	if (ret)
		return stopped(name, verb, arg);
	resp = cJSON_Parse(reply);
	free(reply);
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok"))) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(resp, "error");

		cli_err("net", "%s", cJSON_IsString(e) ? e->valuestring : "the VMM refused");
		cJSON_Delete(resp);
		return MVM_EXIT_ERROR;
	}
	if (check)
		ret = print_check(resp);
	if (show) {
		char *p = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(resp, "policy"));

		if (p)
			puts(p);
		free(p);
	}
	cJSON_Delete(resp);
	return ret;
}
