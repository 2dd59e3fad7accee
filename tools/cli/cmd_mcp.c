/* `mvm mcp`: serve the Model Context Protocol on stdin/stdout (tools/mcp/),
 * or with --http over the network through `mvm serve` (tools/serve/serve_mcp.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_beside.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/mcp/mcp_serve.h"

static const char mcp_usage[] =
	"usage: mvm mcp [OPTIONS]\n"
	"       mvm mcp --http ADDR:PORT [mvm serve OPTIONS]\n"
	"Serve the Model Context Protocol on stdin/stdout (JSON-RPC 2.0, one message\n"
	"per line), for MCP clients that start it: command \"mvm\", args [\"mcp\"].\n"
	"Tools: sandbox_create, sandbox_list, sandbox_exec, file_read, file_write,\n"
	"checkpoint, rollback, diff, promote, sandbox_remove. Sandboxes created\n"
	"here have no network unless the call gives allow rules.\n"
	"\n"
	"The client is untrusted (a language model may be prompt-injected); what\n"
	"it may reach is the operator's choice (docs/security.md):\n"
	"  --id ID               this server's identity: what it creates is recorded\n"
	"                        as owned by mcp:ID (default: mcp:default)\n"
	"  --all-sandboxes       see and act on every sandbox of this user, not only\n"
	"                        those created with this --id\n"
	"  --out-root DIR        promote writes its bundles only beneath DIR (default\n"
	"                        ${XDG_STATE_HOME:-~/.local/state}/mvm/mcp-out, 0700)\n"
	"  --allow-max FILE      allow rules (one per line, the --allow syntax) a\n"
	"                        caller may use beyond the default ceiling, which\n"
	"                        refuses host-loopback, the host's own addresses,\n"
	"                        private, CGNAT, link-local and loopback ranges and\n"
	"                        prefixes wider than /16 (IPv6: /48)\n"
	"  --allow-host-paths    let callers name images by host path (default:\n"
	"                        names from 'mvm image ls' only)\n"
	"  -h, --help            this text\n"
	"\n"
	"With --http (first), MCP's Streamable HTTP transport for agents that do not\n"
	"run on this host: the same as 'mvm serve --listen ADDR:PORT ...', which\n"
	"serves it at http[s]://ADDR:PORT/v1/mcp beside the HTTP API, behind the\n"
	"tenants' bearer tokens ('mvm serve token add'). Each tenant acts in its own\n"
	"scope (its sandboxes, its quota, the --allow-max ceiling, no host paths);\n"
	"the options above do not apply there (docs/api.md, \"MCP over HTTP\").\n";

enum { O_ID = 256, O_ALL, O_OUT_ROOT, O_ALLOW_MAX, O_HOST_PATHS };

/* `mvm mcp --http ADDR [serve options]`: become `mvm serve --listen ADDR [...]`. */
static int mcp_http(int argc, char **argv)
{
	const char *addr = !strncmp(argv[1], "--http=", 7) ? argv[1] + 7 : argc > 2 ? argv[2] : NULL;
	int first = argv[1][6] == '=' ? 2 : 3, n = 3;
	char **v = calloc((size_t)argc + 3, sizeof(*v));

	if (!addr || !addr[0] || !v) {
		free(v);
		cli_err("mcp", "--http needs ADDR:PORT (see mvm mcp --help)");
		return MVM_EXIT_USAGE;
	}
	v[1] = "--listen";
	v[2] = (char *)addr;
	for (int i = first; i < argc; i++)
		v[n++] = argv[i];
	return cli_beside(SERVE_EXE, "mcp", v);
}

int cmd_mcp(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "id", required_argument, NULL, O_ID },
		{ "all-sandboxes", no_argument, NULL, O_ALL },
		{ "out-root", required_argument, NULL, O_OUT_ROOT },
		{ "allow-max", required_argument, NULL, O_ALLOW_MAX },
		{ "allow-host-paths", no_argument, NULL, O_HOST_PATHS },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	struct mcp_options o = { 0 };
	int ch;

	if (argc > 1 && (!strcmp(argv[1], "--http") || !strncmp(argv[1], "--http=", 7)))
		return mcp_http(argc, argv);
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'h': fputs(mcp_usage, stdout); return 0;
		case O_ID: o.id = optarg; break;
		case O_ALL: o.all_sandboxes = true; break;
		case O_OUT_ROOT: o.out_root = optarg; break;
		case O_ALLOW_MAX: o.allow_max = optarg; break;
		case O_HOST_PATHS: o.allow_host_paths = true; break;
		default:
			cli_err("mcp", "unexpected '%s' (see mvm mcp --help)", argv[optind - 1]);
			return MVM_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_err("mcp", "unexpected '%s' (see mvm mcp --help)", argv[optind]);
		return MVM_EXIT_USAGE;
	}
	return mcp_serve(&o) ? MVM_EXIT_ERROR : 0;
}
