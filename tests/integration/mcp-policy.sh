#!/bin/sh
# `mvm mcp`'s operator policy through the official MCP TypeScript SDK client
# (tests/mcp/policy.mjs; issue 27 items 4-7, 9, 12): scope by owner, the
# output root, the allow-rule ceiling and --allow-max, images by name, env
# values never on a command line, promote with the most checks allowed.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

command -v node >/dev/null || fail "node is missing (tools/deps.sh installs nodejs)"
MC=$(node_client mcp)
case $MVM in /*) ;; *) MVM="$(pwd)/$MVM" ;; esac
export XDG_STATE_HOME="$T/xdg"

# The workspace promote reviews, copied in at create by the operator (the
# CLI), recorded as owned by the MCP identity "alpha".
mkdir -p "$T/ws"
printf 'one\n' > "$T/ws/a.txt"
sb_create pol-1 --net none --memory 256M --owner mcp:alpha --copy "$T/ws:/work"
SANDBOXES="$SANDBOXES pol-2"	# made by the client; removed here if a check failed
printf '# the operator ceiling\nhost-loopback:8080/tcp\n' > "$T/allow-max"
mkdir -m 700 "$T/out"
mkdir -p "$T/outside"
ln -s "$T/outside" "$T/out/esc"

MVM="$MVM" T="$T" node "$MC/policy.mjs" || fail "the MCP client's policy checks"
[ -z "$(ls -A "$T/outside")" ] || fail "something was written through the symlink: $(ls -A "$T/outside")"
