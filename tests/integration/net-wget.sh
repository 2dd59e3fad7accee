#!/bin/sh
# The guest's wget with the options agents' scripts use: -T SECS (which
# crashed Debian 12's busybox 1.35), -t N, -q, -O FILE, -O -, the default
# file name, --header, -S, an HTTP error, and -T bounding a fetch from a
# host the policy drops.
. tests/integration/lib.sh
. tests/integration/sandbox.lib
. tests/integration/net.lib
trap 'for n in $SANDBOXES; do "$MVM" rm -f "$n" >/dev/null 2>&1; done; net_cleanup' EXIT

sb_create wg --memory 256M --allow 203.0.113.10:8080/tcp
url=http://203.0.113.10:8080/hello.txt
wx() { run_mvm exec wg -- sh -c "$1"; }

wx "timeout 60 wget -T 10 -q -O - $url; echo w=\$?"
expect_match "-T SECS -q -O -" '^hello-from-test-host$' "$(head -1 "$T/out")"
expect_match "-T exit status" 'w=0' "$(cat "$T/out")"

wx "timeout 60 wget -T 10 -t 2 -O /tmp/f $url && cat /tmp/f"
expect_eq "-t N -O FILE" 0 "$rc"
expect_eq "-O FILE content" hello-from-test-host "$(cat "$T/out")"

wx "cd /tmp && timeout 60 wget -q --timeout=10 --tries=3 $url && cat hello.txt"
expect_eq "default name, long options" hello-from-test-host "$(cat "$T/out")"

wx "timeout 60 wget -q -T 10 --header 'X-Mvm-Test: 1' --header 'Accept: text/plain' -O - $url"
expect_eq "--header" hello-from-test-host "$(cat "$T/out")"

wx "timeout 60 wget -S -T 10 -O /dev/null $url"
expect_eq "-S" 0 "$rc"
expect_match "-S shows the status line" 'HTTP/1\.[01] 200' "$(cat "$T/err")"

wx "timeout 60 wget -q -T 10 -O - http://203.0.113.10:8080/missing.txt; echo w=\$?"
expect_match "an HTTP error fails" 'w=1' "$(cat "$T/out")"

# A host the policy refuses: -T bounds it, exit status 1, no crash (139).
wx "timeout 120 wget -q -T 3 -t 1 -O - http://203.0.113.20:8080/hello.txt; echo w=\$?"
expect_match "a refused host fails within -T" 'w=1$' "$(cat "$T/out")"
echo "net-wget: ok"
