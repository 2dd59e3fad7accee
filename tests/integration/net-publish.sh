#!/bin/sh
# Networking: --publish HOST_PORT:GUEST_PORT reaches a server in the guest
# from the host (127.0.0.1 by default), under deny-by-default.
. tests/integration/lib.sh
. tests/integration/net.lib

"$MVM" run --publish 18000:8000 --events "$T/events.jsonl" -- \
	sh -c 'echo pong | timeout 60 nc -l -p 8000; echo "nc=$?"' >"$T/out" 2>"$T/err" &
mvm_pid=$!
net_pids="$net_pids $mvm_pid"
ping_pong 18000 > "$T/client" 2>&1 || true
wait "$mvm_pid" || true
cat "$T/client" "$T/out" "$T/err"
expect_match "host got the guest's reply" 'got pong' "$(cat "$T/client")"
expect_match "guest got the host's data" 'ping' "$(cat "$T/out")"
expect_match "guest nc status" 'nc=0' "$(cat "$T/out")"
if [ -s "$T/events.jsonl" ]; then
	fail "published connection logged as denied: $(cat "$T/events.jsonl")"
fi

run_mvm run --publish 'bad:port' -- true
expect_eq "bad --publish status" 125 "$rc"
expect_match "bad --publish message" 'publish' "$(cat "$T/err")"
echo "net-publish: ok"
