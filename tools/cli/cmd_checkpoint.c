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
#include "common/cli_util.h"
#include "tools/cli/cmd_snapshot.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/snap_client.h"

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

int checkpoint_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct verb_spec spec = { .verb = "checkpoint", .min_pos = 1, .max_pos = 2,
					       .synopsis = "NAME [TAG]" };
	int ret = verb_parse(&spec, NULL, argc, argv, a);

	if (!ret && a->npos == 2 && !snap_tag_ok(a->pos[1])) {
		cli_err("checkpoint", "bad tag '%s': letters, digits, '.', '_', '-' (at most %d)",
			a->pos[1], SNAP_TAG_MAX - 1);
		return -1;
	}
	return ret;
}

int checkpoints_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' }, { 0 } };
	static const struct verb_spec spec = { .verb = "checkpoints", .longopts = opts,
					       .min_pos = 1, .max_pos = 1, .synopsis = "one sandbox NAME" };

	return verb_parse(&spec, NULL, argc, argv, a);
}

int rollback_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct verb_spec spec = { .verb = "rollback", .min_pos = 2, .max_pos = 2,
					       .synopsis = "NAME TAG" };

	return verb_parse(&spec, NULL, argc, argv, a);
}

static cJSON *request(const char *op, const char *tag)
{
	cJSON *req = cJSON_CreateObject();

	cJSON_AddStringToObject(req, "op", op);
	if (tag)
		cJSON_AddStringToObject(req, "tag", tag);
	return req;
}

int cmd_checkpoint(int argc, char **argv)
{
	struct verb_args a;
	const cJSON *tag;
	cJSON *r;
	int ret = checkpoint_parse(argc, argv, &a);

	if (ret)
		return verb_parse_exit(ret, checkpoint_usage);
	r = sb_snap_call("checkpoint", a.pos[0], request("checkpoint", a.pos[1]));
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
	struct verb_args a;
	cJSON *r;
	int ret = checkpoints_parse(argc, argv, &a);
	bool json = a.flag;

	if (ret)
		return verb_parse_exit(ret, checkpoints_usage);
	r = sb_snap_call("checkpoints", a.pos[0], request("checkpoints", NULL));
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
	struct verb_args a;
	cJSON *r;
	int ret = rollback_parse(argc, argv, &a);

	if (ret)
		return verb_parse_exit(ret, rollback_usage);
	r = sb_snap_call("rollback", a.pos[0], request("rollback", a.pos[1]));
	if (!r)
		return MVM_EXIT_ERROR;
	cJSON_Delete(r);
	return sb_snap_sync("rollback", a.pos[0]) ? MVM_EXIT_ERROR : 0;
}
