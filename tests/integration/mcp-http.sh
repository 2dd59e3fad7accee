#!/bin/sh
# MCP over HTTP (issue 28): `mvm serve`'s /v1/mcp driven by the official MCP
# TypeScript SDK's StreamableHTTPClientTransport (tests/mcp/http-client.mjs)
# with bearer tokens: tools/list, create, exec, files, the tenant's quota;
# tenant bob cannot see or touch alice's sandbox, nor use her session; a
# wrong token gets 401; malformed messages and headers get their errors.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

command -v node >/dev/null || fail "node is missing (tools/deps.sh installs nodejs)"
command -v curl >/dev/null || fail "curl is missing"
MC=$(node_client mcp)
SANDBOXES="alice.h1 alice.h2 bob.h1"	# removed by the client; sb_cleanup if a check failed
TOK="$T/tokens.json"
"$MVM" serve token add alice --tokens "$TOK" --sandboxes 1 --checkpoints 0 > "$T/alice" || fail "token add alice"
"$MVM" serve token add bob --tokens "$TOK" > "$T/bob" || fail "token add bob"

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$MVM" serve --listen "127.0.0.1:$PORT" --tokens "$TOK" --log "$T/requests.jsonl" >"$T/serve.err" 2>&1 &
SERVE_PID=$!
trap 'kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; sb_cleanup' EXIT
tries=0	# a bound on the polls, not a clock: the server answers once it listens
until curl -sf "http://127.0.0.1:$PORT/v1/health" >/dev/null; do
	kill -0 "$SERVE_PID" 2>/dev/null || { cat "$T/serve.err" >&2; fail "mvm serve exited"; }
	tries=$((tries + 1))
	[ "$tries" -lt 300 ] || fail "mvm serve did not answer its health check"
	sleep 0.2
done

# GET (a server stream) is not offered: 405, which the transport allows,
# with Allow naming what the endpoint takes.
code=$(curl -s -D "$T/get-head" -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/alice")" \
	-H 'Accept: text/event-stream' "http://127.0.0.1:$PORT/v1/mcp")
expect_eq "GET /v1/mcp" 405 "$code"
expect_match "GET /v1/mcp: Allow" '^Allow: POST, DELETE' "$(tr -d '\r' < "$T/get-head" | grep -i '^Allow:')"

MCP_BASE="http://127.0.0.1:$PORT" TOKEN_A="$(cat "$T/alice")" TOKEN_B="$(cat "$T/bob")" \
	node "$MC/http-client.mjs" || { cat "$T/serve.err" >&2; fail "the MCP client's checks"; }

# Nothing left behind; the request log names the tenant and the MCP verb.
left=$("$MVM" ls --json | python3 -c 'import json, sys; print(" ".join(s["name"] for s in json.load(sys.stdin)))')
expect_eq "no sandbox left" "" "$left"
grep -q '"tenant":"bob","method":"POST","verb":"mcp"' "$T/requests.jsonl" || fail "request log: no bob mcp line"
