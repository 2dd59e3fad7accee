#!/bin/sh
# Two sandboxes side by side: separate guests, both listed.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

mkdir -p "$T/seed/d" && echo seeded > "$T/seed/d/f"
sb_create one --memory 256M --copy "$T/seed:/data/" --env WHO=one
run_mvm exec one -- sh -c 'cat /data/seed/d/f; echo $WHO'
expect_eq "create --copy and --env" "seeded
one" "$(cat "$T/out")"
sb_create two --memory 256M
run_mvm exec one -- sh -c 'echo one > /data/who'
run_mvm exec two -- sh -c 'cat /data/who 2>/dev/null || echo none'
expect_eq "isolated disks" "none" "$(cat "$T/out")"
run_mvm ls --json
python3 - "$T/out" <<'PY' || fail "ls --json: $(cat "$T/out")"
import json, sys
v = json.load(open(sys.argv[1]))
names = {s["name"]: s["status"] for s in v}
assert names == {"one": "running", "two": "running"}, names
PY
echo "sandbox-two: ok"
