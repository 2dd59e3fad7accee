/* report.json: checks, the patch's hash, denied attempts and checkpoint events from events.jsonl. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/promote/promote_report.h"

static char dir[64];

static void setup(void)
{
	char p[128];
	FILE *f;

	strcpy(dir, "/tmp/mvm-report-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	setenv("MVM_STATE_DIR", dir, 1);
	snprintf(p, sizeof(p), "%s/box", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/box/events.jsonl", dir);
	f = fopen(p, "w");
	fputs("{\"time\":\"2026-12-02T10:00:01.000Z\",\"type\":\"created\"}\n"
	      "{\"time\":\"2026-12-02T10:00:00.000Z\",\"type\":\"net-deny\",\"proto\":\"dns\",\"name\":\"blocked.test\"}\n"
	      "not json at all\n"
	      "{\"time\":\"2026-12-02T10:00:03.000Z\",\"type\":\"checkpoint\",\"tag\":\"before-migration\"}\n"
	      "{\"time\":\"2026-12-02T10:00:04.000Z\",\"type\":\"rollback\",\"tag\":\"before-migration\"}\n", f);
	fclose(f);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
}

TestSuite(promote_report, .init = setup, .fini = teardown);

Test(promote_report, checks_patch_network_and_history)
{
	struct check_result c[2] = {
		{ .cmd = "make test", .ran = true, .exit_code = 0, .duration_s = 1.5, .log = "checks/1.log" },
		{ .cmd = "lint", .ran = true, .exit_code = 2, .duration_s = 0.25, .log = "checks/2.log" },
	};
	struct wsdiff w = { 0 };
	struct promote_report r = { .name = "box", .checks = c, .nchecks = 2, .diff = &w,
				    .patch_sha = "abc" };
	char *text;
	cJSON *j, *a;

	strcpy(w.guest_root, "/data/repo");
	refusals_add(&w.refused, ".git", "git metadata");
	text = promote_report_json(&r);
	cr_assert_not_null(text);
	j = cJSON_Parse(text);
	cr_assert_not_null(j, "%s", text);
	cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(j, "checks_passed")));
	a = cJSON_GetObjectItem(j, "checks");
	cr_expect_eq(cJSON_GetArraySize(a), 2);
	cr_expect_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 1), "exit_code")->valueint, 2);
	cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "patch"), "sha256")->valuestring, "abc");
	a = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "patch"), "not_compared");
	cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "path")->valuestring, ".git");
	/* No VMM answers here: the policy is null, the denials still come from events.jsonl. */
	a = cJSON_GetObjectItem(j, "network");
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(a, "policy")));
	a = cJSON_GetObjectItem(a, "denied");
	cr_expect_eq(cJSON_GetArraySize(a), 1);
	cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "name")->valuestring, "blocked.test");
	a = cJSON_GetObjectItem(j, "checkpoints");
	cr_expect_eq(cJSON_GetArraySize(a), 2);
	cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 1), "type")->valuestring, "rollback");
	cJSON_Delete(j);
	free(text);
	refusals_free(&w.refused);
}
