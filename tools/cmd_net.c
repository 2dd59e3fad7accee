/* `mvm net allow|deny|remove|show NAME [RULE]`: a running sandbox's network
 * policy, changed through its control API (takes effect on the next frame). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/api_client.h"
#include "tools/cli.h"
#include "tools/cmd_sandbox.h"
#include "tools/sandbox.h"

static const char net_usage[] =
	"usage: mvm net allow NAME RULE    allow RULE (HOST[:PORTS][/tcp|/udp])\n"
	"       mvm net deny NAME RULE     add a deny rule (wins over allow rules)\n"
	"       mvm net remove NAME RULE   delete a rule by its exact text\n"
	"       mvm net show NAME          print the mode and the rules as JSON\n"
	"Sandboxes start with no rules: nothing leaves until a rule allows it.\n"
	"Changes apply to the running VMM (established connections that a deny\n"
	"revokes are reset) and are not kept across 'mvm stop'/'mvm start'.\n"
	"Rule syntax: docs/network-policy.md.\n";

int cmd_net(int argc, char **argv)
{
	const char *verb = argc > 1 ? argv[1] : "";
	bool show = !strcmp(verb, "show");
	cJSON *req, *resp;
	char op[32], *text, *reply = NULL;
	int ret;

	if (argc == 2 && (!strcmp(verb, "-h") || !strcmp(verb, "--help"))) {
		fputs(net_usage, stdout);
		return 0;
	}
	if ((!show && strcmp(verb, "allow") && strcmp(verb, "deny") && strcmp(verb, "remove")) ||
	    argc != (show ? 3 : 4)) {
		fputs(net_usage, stderr);
		return MVM_EXIT_USAGE;
	}
	if (!sb_name_ok(argv[2]) || !sb_exists(argv[2])) {
		cli_err("net", "no sandbox named %s", argv[2]);
		return MVM_EXIT_ERROR;
	}
	snprintf(op, sizeof(op), "net-%s", verb);
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", op);
	if (!show)
		cJSON_AddStringToObject(req, "rule", argv[3]);
	text = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	ret = text ? api_call(argv[2], text, &reply, 10000) : -1;
	free(text);
	if (ret) {
		cli_err("net", "%s is not running (mvm start %s)", argv[2], argv[2]);
		return MVM_EXIT_ERROR;
	}
	resp = cJSON_Parse(reply);
	free(reply);
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok"))) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(resp, "error");

		cli_err("net", "%s", cJSON_IsString(e) ? e->valuestring : "the VMM refused");
		cJSON_Delete(resp);
		return MVM_EXIT_ERROR;
	}
	if (show) {
		char *p = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(resp, "policy"));

		if (p)
			puts(p);
		free(p);
	}
	cJSON_Delete(resp);
	return 0;
}
