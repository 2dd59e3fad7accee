#!/bin/sh
# template-browser.sh [--from SANDBOX] [TPL] [-- CREATE-OPTIONS...]
#
# The browser image's standard template (`make template-browser`): a sandbox
# with Chromium started (`mvm browser`: display stack, CDP answering) and
# idle, taken as template TPL (default: browser). Afterwards
#     mvm create web --template browser && mvm browser web
# answers CDP without booting or starting Chromium.
#
# Names: TPL is a template name (the template store, `mvm template ls`), the
# image is MVM_TEMPLATE_IMAGE (default: browser, the image store, `mvm image
# ls`). They are separate stores: --template names a template, --image an
# image, never the other.
#
# Without --from, a source sandbox is created from the image (1024 MiB, 2
# vCPUs, the default network: nothing leaves; CREATE-OPTIONS are added) and
# removed at the end. With --from, SANDBOX (already a browser-image sandbox)
# is used and left running. A sandbox from the template gets its own network
# policy from its own create options, never the source's.
#
# The template references the image in the image store (never copies it):
# rebuilding the image makes the template refuse to start; make it again.
# MVM_TEMPLATE_IDLE: seconds to wait for the browser to go idle (default 120).
set -eu
MVM=${MVM:-mvm}
image=${MVM_TEMPLATE_IMAGE:-browser}
idle_max=${MVM_TEMPLATE_IDLE:-120}
case "$idle_max" in '' | *[!0-9]*) echo "template-browser: MVM_TEMPLATE_IDLE is not a number" >&2; exit 2 ;; esac
from=""
tpl=browser
while [ $# -gt 0 ]; do
	case $1 in
	--from) [ $# -ge 2 ] || { echo "template-browser: --from needs a sandbox" >&2; exit 2; }
		from=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "usage: $0 [--from SANDBOX] [TPL] [-- CREATE-OPTIONS...]" >&2; exit 2 ;;
	*) tpl=$1; shift ;;
	esac
done
t0=$(date +%s)
say() { echo "template-browser: $(( $(date +%s) - t0 ))s: $*" >&2; }

if "$MVM" template inspect "$tpl" >/dev/null 2>&1; then
	say "a template named $tpl exists (mvm template rm $tpl to make it again)"
	exit 1
fi
src=$from
if [ -z "$src" ]; then
	src="tpl-$tpl-$$"
	trap '"$MVM" rm -f "$src" >/dev/null 2>&1 || true' EXIT
	say "creating $src from the image $image"
	"$MVM" create "$src" --image "$image" --memory 1024M --cpus 2 "$@"
fi
say "starting Chromium in $src (mvm browser)"
"$MVM" browser "$src" >/dev/null

# Idle: the guest's CPUs at most 10% busy for 3 consecutive seconds (from
# /proc/stat), at most $idle_max s; a browser still busy then is taken as it is.
say "waiting until $src is idle"
if ! "$MVM" exec "$src" -- sh -c '
	calm=0; i=0; pt=""
	while [ $i -lt '"$idle_max"' ]; do
		set -- $(head -n 1 /proc/stat); shift
		t=0; for v in "$@"; do t=$((t + v)); done; idle=$(($4 + $5))
		if [ -n "$pt" ] && [ $((t - pt)) -gt 0 ]; then
			busy=$((100 * ((t - pt) - (idle - pi)) / (t - pt)))
			if [ $busy -le 10 ]; then calm=$((calm + 1)); else calm=0; fi
			[ $calm -lt 3 ] || exit 0
		fi
		pt=$t; pi=$idle; i=$((i + 1)); sleep 1
	done
	exit 1'; then
	say "$src did not become idle within $idle_max s; taking it as it is"
fi
say "taking template $tpl (the image is referenced and its checksum taken once)"
"$MVM" template create "$tpl" --from "$src"
say "template $tpl ready: mvm create NAME --template $tpl, then mvm browser NAME"
