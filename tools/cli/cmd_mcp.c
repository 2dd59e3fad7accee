/* `mvm mcp`: serve the Model Context Protocol on stdin/stdout (tools/mcp/). */
#include <stdio.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/mcp/mcp_serve.h"

static const char mcp_usage[] =
	"usage: mvm mcp\n"
	"Serve the Model Context Protocol on stdin/stdout (JSON-RPC 2.0, one message\n"
	"per line), for MCP clients that start it: command \"mvm\", args [\"mcp\"].\n"
	"Tools: sandbox_create, sandbox_list, sandbox_exec, file_read, file_write,\n"
	"checkpoint, rollback, diff, promote, sandbox_remove. Sandboxes created\n"
	"here have no network unless the call gives allow rules.\n";

int cmd_mcp(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(mcp_usage, stdout);
		return 0;
	}
	if (argc != 1) {
		fputs(mcp_usage, stderr);
		return MVM_EXIT_USAGE;
	}
	return mcp_serve() ? MVM_EXIT_ERROR : 0;
}
