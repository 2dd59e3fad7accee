/* The CLI's side of the checkpoint calls: one control-API request, the guest's clock sync. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/sandbox/agent_sync.h"
#include "tools/sandbox/api_client.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/snap_client.h"

#define SNAP_API_TIMEOUT_MS (600 * 1000)	/* a big guest under emulation is slow */

/* A snapshot request carries that snapshot's key: wiped, not just freed,
 * so no copy outlives the call in the CLI's heap. */
static void req_free(cJSON *req)
{
	cJSON *k = cJSON_GetObjectItemCaseSensitive(req, "key");

	if (cJSON_IsString(k) && k->valuestring)
		explicit_bzero(k->valuestring, strlen(k->valuestring));
	cJSON_Delete(req);
}

static void text_free(char *text)
{
	if (text)
		explicit_bzero(text, strlen(text));
	free(text);
}

cJSON *sb_snap_call(const char *verb, const char *name, cJSON *req)
{
	char *text = cJSON_PrintUnformatted(req), *reply = NULL;
	cJSON *resp;
	int ret;

	req_free(req);
	if (!sb_name_ok(name) || !sb_exists(name)) {
		cli_err(verb, "no sandbox named %s", name);
		text_free(text);
		return NULL;
	}
	ret = text ? api_call(name, text, &reply, SNAP_API_TIMEOUT_MS) : -1;
	text_free(text);
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

int sb_snap_sync(const char *verb, const char *name)
{
	int ret = agent_sync(name, 60 * 1000);

	if (ret)
		cli_err(verb, "%s: the guest agent did not take the clock and entropy sync: %s",
			name, strerror(-ret));
	return ret;
}
