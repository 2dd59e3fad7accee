#!/bin/sh
# `mvm serve` (issue 28) through real HTTP clients, curl and Python's
# http.client (serve_client.py): every verb; tenant B cannot see, exec in,
# read, write, stop or remove tenant A's sandbox; a missing or wrong token
# gets 401 and changes nothing; the quota refuses (a template too, by the
# bytes it may hold, before it is made); malformed requests get a
# JSON 4xx; slow connections do not starve a normal client; a kill -9 of
# the server mid-stream cuts the stream with an error and loses no sandbox.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

command -v curl >/dev/null || fail "curl is missing"
SANDBOXES="alice.w1 alice.w2"
TOK="$T/tokens.json"
LOG="$T/requests.jsonl"
"$MVM" serve token add alice --tokens "$TOK" --sandboxes 2 > "$T/alice" || fail "token add alice"
"$MVM" serve token add bob --tokens "$TOK" > "$T/bob" || fail "token add bob"
A=$(cat "$T/alice"); B=$(cat "$T/bob")
expect_match "token form" '^mvm_[0-9a-f]{64}$' "$A"
expect_eq "tokens file mode" 600 "$(stat -c %a "$TOK")"
grep -q "$A" "$TOK" && fail "the token itself is in the tokens file"
run_mvm serve token ls --tokens "$TOK"
expect_match "token ls" '^alice	sandboxes=2 .* templates=2 checkpoints=32$' "$(cat "$T/out")"

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SERVE_PID=""
start_serve() {
	# shellcheck disable=SC2086
	"$MVM" serve --listen "127.0.0.1:$PORT" --tokens "$TOK" --log "$LOG" --max-per-ip 32 \
		--idle-timeout 20 ${EXTRA:-} >>"$T/serve.err" 2>&1 &
	SERVE_PID=$!
	deadline=$(( $(date +%s) + 30 ))
	until curl -sf "http://127.0.0.1:$PORT/v1/health" >/dev/null; do
		kill -0 "$SERVE_PID" 2>/dev/null || { cat "$T/serve.err" >&2; fail "mvm serve exited"; }
		[ "$(date +%s)" -lt "$deadline" ] || fail "mvm serve did not answer in 30 s"
		sleep 0.2
	done
}
stop_serve() { kill "$SERVE_PID" 2>/dev/null || true; wait "$SERVE_PID" 2>/dev/null || true; }
trap 'stop_serve; sb_cleanup' EXIT

# Plain HTTP beyond loopback is refused unless forced.
run_mvm serve --listen "0.0.0.0:$PORT" --tokens "$TOK"
expect_eq "plain HTTP on 0.0.0.0 refused" 125 "$rc"
expect_match "says why" 'not loopback' "$(cat "$T/err")"

start_serve
# curl: 401 without and with a wrong token, a JSON error body.
code=$(curl -s -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/v1/sandboxes")
expect_eq "curl: no token" 401 "$code"
expect_match "curl: 401 body" '^\{"error":"' "$(cat "$T/body")"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer ${A}x" "http://127.0.0.1:$PORT/v1/sandboxes")
expect_eq "curl: wrong token" 401 "$code"
[ -z "$(ls "$MVM_STATE_DIR" 2>/dev/null)" ] || fail "a refused request left state: $(ls "$MVM_STATE_DIR")"

SERVE_TOKENS="$TOK" python3 tests/integration/serve_client.py "$PORT" "$A" "$B" main || fail "http.client checks (main)"

# curl: exec streamed as NDJSON lines (no buffering: -N), files in and out.
curl -sSN -H "Authorization: Bearer $A" -d '{"cmd":["sh","-c","echo one; echo two"]}' \
	"http://127.0.0.1:$PORT/v1/sandboxes/w1/exec" > "$T/exec.ndjson" || fail "curl exec"
expect_eq "curl exec lines" '{"type":"stdout","data":"one\n"}' "$(head -n1 "$T/exec.ndjson" | sed 's/two\\n//')"
expect_match "curl exec exit" '"type":"exit","exit_code":0' "$(tail -n1 "$T/exec.ndjson")"
echo "from curl" > "$T/f"
curl -sSf -H "Authorization: Bearer $A" -T "$T/f" "http://127.0.0.1:$PORT/v1/sandboxes/w1/files?path=/tmp/f" >/dev/null ||
	fail "curl put"
expect_eq "curl get" "from curl" "$(curl -sSf -H "Authorization: Bearer $A" "http://127.0.0.1:$PORT/v1/sandboxes/w1/files?path=/tmp/f")"

# curl and GNU tar: a tree in and out as tar streams (the guest extracts; the host only checks).
mkdir -p "$T/tree/sub" && echo "from tar" > "$T/tree/sub/f" && ln -s sub/f "$T/tree/l"
tar -C "$T/tree" -cf - . | curl -sSf -H "Authorization: Bearer $A" -T - \
	"http://127.0.0.1:$PORT/v1/sandboxes/w1/tree?path=/tmp/fromtar" > "$T/body" || fail "curl tree put"
expect_match "curl tree put" '"entries":3' "$(cat "$T/body")"
curl -sSf -H "Authorization: Bearer $A" "http://127.0.0.1:$PORT/v1/sandboxes/w1/tree?path=/tmp/fromtar" |
	tar -C "$T" -xf - --one-top-level=back || fail "curl tree get | tar -x"
expect_eq "tree round trip through GNU tar" "from tar" "$(cat "$T/back/sub/f")"
expect_eq "tree round trip: the link" "sub/f" "$(readlink "$T/back/l")"

python3 tests/integration/serve_client.py "$PORT" "$A" "$B" slow || fail "slow connections"

# kill -9 mid-stream: the client sees an error; the sandbox lives on.
python3 tests/integration/serve_client.py "$PORT" "$A" "$B" cut "$SERVE_PID" || fail "stream cut"
wait "$SERVE_PID" 2>/dev/null || true
st=$("$MVM" ls --json | python3 -c 'import json, sys; print(" ".join(s["status"] for s in json.load(sys.stdin) if s["name"] == "alice.w1"))')
expect_eq "the sandbox survives the server" running "$st"
start_serve
python3 tests/integration/serve_client.py "$PORT" "$A" "$B" after || fail "http.client checks (after restart)"
[ ! -e "$MVM_STATE_DIR/alice.w1" ] || fail "delete left the state directory"

# A removed token stops working at once; the request log names tenant, verb, sandbox, outcome.
"$MVM" serve token rm bob --tokens "$TOK" || fail "token rm"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $B" "http://127.0.0.1:$PORT/v1/sandboxes")
expect_eq "removed token" 401 "$code"
grep -q '"tenant":"alice","method":"POST","verb":"exec","sandbox":"w1","status":200' "$LOG" ||
	fail "request log: no exec line: $(tail -n 3 "$LOG")"
grep -q '"tenant":"bob","method":"DELETE","verb":"delete","sandbox":"w1","status":404' "$LOG" ||
	fail "request log: no refused delete of bob"
grep -q '"tenant":null,.*"status":401' "$LOG" || fail "request log: no 401 line"
stop_serve

# Request rate per tenant: alice's flood meets 429; carol, beside her, does
# not. One token per 1000 s: the burst of 3 runs out however slowly the
# requests come (at 1/s a loaded box refilled it as fast as curl asked).
"$MVM" serve token add carol --tokens "$TOK" > "$T/carol" || fail "token add carol"
C=$(cat "$T/carol")
EXTRA="--rate 0.001 --burst 3" start_serve
codes=""
for i in 1 2 3 4 5 6 7 8 9 10; do
	codes="$codes $(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $A" "http://127.0.0.1:$PORT/v1/sandboxes")"
done
expect_match "alice's flood is limited" ' 429' "$codes"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $C" "http://127.0.0.1:$PORT/v1/sandboxes")
expect_eq "carol beside the flood" 200 "$code"
stop_serve
echo "serve-api: ok"
