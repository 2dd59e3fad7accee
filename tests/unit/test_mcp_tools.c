/* The MCP tools' argument handling that needs no sandbox (tools/mcp/mcp_tools.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "tools/mcp/mcp_tools.h"

/* 64 checks (the schema's maxItems), a workspace and a timeout: every
 * entry and the closing NULL fit in MCP_PROMOTE_ARGV_MAX. Before, the
 * array was one entry short and the NULL went past its end. */
Test(mcp_tools, promote_argv_fits_the_most_the_schema_allows)
{
	cJSON *args = cJSON_CreateObject(), *checks = cJSON_AddArrayToObject(args, "checks");
	char *v[MCP_PROMOTE_ARGV_MAX + 1], tmo[16];
	int n;

	cJSON_AddStringToObject(args, "name", "box");
	cJSON_AddStringToObject(args, "workspace", "/work");
	cJSON_AddNumberToObject(args, "check_timeout", 60);
	for (int i = 0; i < 64; i++)
		cJSON_AddItemToArray(checks, cJSON_CreateString("true"));
	v[MCP_PROMOTE_ARGV_MAX] = (char *)"sentinel";
	n = mcp_promote_argv(args, "/out/b", v, MCP_PROMOTE_ARGV_MAX, tmo, sizeof(tmo));
	cr_assert_eq(n, 4 + 128 + 2 + 2 + 1);
	cr_assert_lt(n, MCP_PROMOTE_ARGV_MAX);
	cr_assert_null(v[n]);
	cr_assert_str_eq(v[n - 1], "box");
	cr_assert_str_eq(v[3], "/out/b");
	cr_assert_str_eq(v[MCP_PROMOTE_ARGV_MAX], "sentinel");
	/* One more check than the array holds: refused, nothing written past it. */
	cJSON_AddItemToArray(checks, cJSON_CreateString("true"));
	cr_assert_eq(mcp_promote_argv(args, "/out/b", v, MCP_PROMOTE_ARGV_MAX, tmo, sizeof(tmo)), -E2BIG);
	cr_assert_str_eq(v[MCP_PROMOTE_ARGV_MAX], "sentinel");
	cJSON_Delete(args);
}
