#!/bin/sh
# `mvm mcp` driven by the official MCP TypeScript SDK client (tests/mcp/,
# installed by `make mcp-client`): tools and schemas, create, exec, files,
# checkpoint/rollback, remove; malformed requests get JSON-RPC errors and
# the server stays up.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

command -v node >/dev/null || fail "node is missing (tools/deps.sh installs nodejs)"
MC=$(node_client mcp)
SANDBOXES="mcp-1"	# removed by the client; sb_cleanup removes it if a check failed
case $MVM in /*) ;; *) MVM="$(pwd)/$MVM" ;; esac
MVM="$MVM" node "$MC/client.mjs" || fail "the MCP client's checks"
