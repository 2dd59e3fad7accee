#!/bin/sh
# `mvm create --lifetime SECS` (and mvm serve's create "timeout"): the host
# ends the sandbox, whatever its guest does. The guest below keeps itself
# busy and never asks to stop; its VMM stops it when the lifetime is over,
# says so in the events, and the sandbox cannot be started again. The
# lifetime (60 s) only has to outlast create; the wait for the stop is a
# hang guard (300 s), not a measurement.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

sb_create lt --disk-size 64M --lifetime 60
run_mvm exec lt -- sh -c 'nohup sh -c "while :; do :; done" >/dev/null 2>&1 & echo busy'
expect_eq "a busy guest" "busy" "$(cat "$T/out")"
expect_match "config.json keeps when it ends" '"expires":[[:space:]]*[0-9]' \
	"$(tr -d '\n' < "$MVM_STATE_DIR/lt/config.json")"

deadline=$(( $(date +%s) + 300 ))
until run_mvm ls --json && ! tr -d '\n' < "$T/out" | grep -q '"name":[[:space:]]*"lt"[^}]*"status":[[:space:]]*"running"'; do
	[ "$(date +%s)" -lt "$deadline" ] || fail "the sandbox still runs 300 s after a 60 s lifetime"
	sleep 1
done
run_mvm events lt
expect_match "the events say why it stopped" 'lifetime ended: stopped by the host' "$(cat "$T/out")"
[ ! -e "$MVM_STATE_DIR/lt/pid" ] || fail "the VMM left its pid file (a crash, not a stop)"

run_mvm start lt
[ "$rc" != 0 ] || fail "a sandbox past its lifetime started again"
expect_match "start says why not" 'lifetime' "$(cat "$T/err") $("$MVM" logs lt 2>/dev/null | tail -5)"

# Out of range, or not a number: refused, nothing made.
run_mvm create lt2 --lifetime 0
[ "$rc" != 0 ] || fail "--lifetime 0 accepted"
run_mvm create lt2 --lifetime soon
[ "$rc" != 0 ] || fail "--lifetime soon accepted"
[ ! -e "$MVM_STATE_DIR/lt2" ] || fail "a refused create left state"
