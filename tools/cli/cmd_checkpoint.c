/*
 * `mvm checkpoint NAME [TAG]`, `mvm checkpoints NAME [--json]`,
 * `mvm rollback NAME TAG`: checkpoints of a running sandbox, taken and
 * rolled back in place by its VMM (snapshots/checkpoint.h).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snapshots/checkpoint.h"
#include "tools/sandbox/agent_sync.h"
#include "tools/sandbox/api_client.h"
#include "common/cli_util.h"
#include "tools/cli/cmd_snapshot.h"
#include "tools/sandbox/sandbox.h"

#define SNAP_API_TIMEOUT_MS (600 * 1000)	/* a big guest under emulation is slow */

static const char checkpoint_usage[] =
	"usage: mvm checkpoint NAME [TAG]\n"
	"Checkpoint the running sandbox NAME: memory, vCPUs, devices and disk.\n"
	"Prints the tag (default cpN). 'mvm rollback NAME TAG' returns to it.\n"
	"Checkpoints live as long as the sandbox's VMM: 'mvm stop' drops them\n"
	"(the disk keeps its contents).\n";
static const char checkpoints_usage[] =
	"usage: mvm checkpoints NAME [--json]\n"
	"List the checkpoints of the running sandbox NAME, oldest first.\n";
static const char rollback_usage[] =
	"usage: mvm rollback NAME TAG\n"
	"Return the running sandbox NAME to checkpoint TAG: memory, processes,\n"
	"devices and disk exactly as then. Checkpoints taken after TAG stay.\n"
	"Guest connections are reset; the guest clock is stepped to the host's\n"
	"and its RNG reseeded before the next exec.\n";

static bool help(int argc, char **argv, const char *usage)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return true;
	}
	return false;
}

cJSON *snap_cli_call(const char *verb, const char *name, cJSON *req)
{
	char *text = cJSON_PrintUnformatted(req), *reply = NULL;
	cJSON *resp;
	int ret;

	cJSON_Delete(req);
	if (!sb_name_ok(name) || !sb_exists(name)) {
		cli_err(verb, "no sandbox named %s", name);
		free(text);
		return NULL;
	}
	ret = text ? api_call(name, text, &reply, SNAP_API_TIMEOUT_MS) : -1;
	free(text);
	if (ret) {
		cli_err(verb, "%s is not running (mvm start %s)", name, name);
		return NULL;
	}
	resp = cJSON_Parse(reply);
	free(reply);
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok"))) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(resp, "error");

		cli_err(verb, "%s", cJSON_IsString(e) ? e->valuestring : "the VMM refused");
		cJSON_Delete(resp);
		return NULL;
	}
	return resp;
}

static cJSON *request(const char *op, const char *tag)
{
	cJSON *req = cJSON_CreateObject();

	cJSON_AddStringToObject(req, "op", op);
	if (tag)
		cJSON_AddStringToObject(req, "tag", tag);
	return req;
}

int snap_cli_sync(const char *verb, const char *name)
{
	int ret = agent_sync(name, 60 * 1000);

	if (ret)
		cli_err(verb, "%s: the guest agent did not take the clock and entropy sync: %s",
			name, strerror(-ret));
	return ret;
}

int cmd_checkpoint(int argc, char **argv)
{
	const cJSON *tag;
	cJSON *r;

	if (help(argc, argv, checkpoint_usage))
		return 0;
	if (argc < 2 || argc > 3 || argv[1][0] == '-') {
		fputs(checkpoint_usage, stderr);
		return MVM_EXIT_USAGE;
	}
	if (argc == 3 && !snap_tag_ok(argv[2])) {
		cli_err("checkpoint", "bad tag '%s': letters, digits, '.', '_', '-' (at most %d)",
			argv[2], SNAP_TAG_MAX - 1);
		return MVM_EXIT_USAGE;
	}
	r = snap_cli_call("checkpoint", argv[1], request("checkpoint", argc == 3 ? argv[2] : NULL));
	if (!r)
		return MVM_EXIT_ERROR;
	tag = cJSON_GetObjectItemCaseSensitive(r, "tag");
	printf("%s\n", cJSON_IsString(tag) ? tag->valuestring : "");
	cJSON_Delete(r);
	return 0;
}

static void print_table(const cJSON *list)
{
	const cJSON *c;

	printf("%-20s %-20s %-20s %10s %10s %s\n", "TAG", "PARENT", "CREATED", "CHANGED", "STORED",
	       "CURRENT");
	cJSON_ArrayForEach(c, list) {
		const cJSON *tag = cJSON_GetObjectItemCaseSensitive(c, "tag");
		const cJSON *par = cJSON_GetObjectItemCaseSensitive(c, "parent");
		time_t t = (time_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "time"));
		double ch = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "pages_changed"));
		double st = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "pages_stored"));
		char when[32];

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
		printf("%-20s %-20s %-20s %9.1fM %9.1fM %s\n",
		       cJSON_IsString(tag) ? tag->valuestring : "?",
		       cJSON_IsString(par) && par->valuestring[0] ? par->valuestring : "-", when,
		       ch * 4096 / (1 << 20), st * 4096 / (1 << 20),
		       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "current")) ? "yes" : "");
	}
}

int cmd_checkpoints(int argc, char **argv)
{
	bool json = argc == 3 && !strcmp(argv[2], "--json");
	cJSON *r;

	if (help(argc, argv, checkpoints_usage))
		return 0;
	if (argc < 2 || argc > 3 || argv[1][0] == '-' || (argc == 3 && !json)) {
		fputs(checkpoints_usage, stderr);
		return MVM_EXIT_USAGE;
	}
	r = snap_cli_call("checkpoints", argv[1], request("checkpoints", NULL));
	if (!r)
		return MVM_EXIT_ERROR;
	if (json) {
		char *p = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(r, "checkpoints"));

		if (p)
			puts(p);
		free(p);
	} else {
		print_table(cJSON_GetObjectItemCaseSensitive(r, "checkpoints"));
	}
	cJSON_Delete(r);
	return 0;
}

int cmd_rollback(int argc, char **argv)
{
	cJSON *r;

	if (help(argc, argv, rollback_usage))
		return 0;
	if (argc != 3 || argv[1][0] == '-') {
		fputs(rollback_usage, stderr);
		return MVM_EXIT_USAGE;
	}
	r = snap_cli_call("rollback", argv[1], request("rollback", argv[2]));
	if (!r)
		return MVM_EXIT_ERROR;
	cJSON_Delete(r);
	return snap_cli_sync("rollback", argv[1]) ? MVM_EXIT_ERROR : 0;
}
