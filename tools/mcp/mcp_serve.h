/* `mvm mcp`'s stdio loop and the operator's options for it. */
#ifndef MVM_MCP_SERVE_H
#define MVM_MCP_SERVE_H

#include <stdbool.h>

/* What the operator chose on `mvm mcp`'s command line (docs/mcp.md). */
struct mcp_options {
	const char *id;			/* the owner "mcp:ID" of what this server creates; NULL = "default" */
	bool all_sandboxes;		/* --all-sandboxes */
	bool allow_host_paths;		/* --allow-host-paths */
	const char *out_root;		/* --out-root DIR; NULL = the default under XDG_STATE_HOME */
	const char *allow_max;		/* --allow-max FILE; NULL = none */
};

/* Set the policy up from @o (a message on stderr and -errno if it cannot
 * be), then serve until the end of stdin. 0 or -errno. */
int mcp_serve(const struct mcp_options *o);

#endif
