#!/bin/sh
# The worked example (examples/worked-example/run.sh) end to end: debian
# image, a registry on the test host, checkpoint + rollback, a blocked
# domain, mvm promote, git apply --check on the host original.
. tests/integration/lib.sh
. tests/integration/sandbox.lib
. tests/integration/net.lib
trap '"$MVM" rm -f invoice >/dev/null 2>&1 || true; net_cleanup' EXIT

command -v git >/dev/null || skip "git is not installed on the host"
store=${MVM_IMAGE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mvm/images}
[ -f "$store/debian.ext4" ] || skip "no debian image in $store (sudo make image-debian)"
mkdir -p "$T/work"
rc=0
MVM="$(pwd)/$MVM" WORK="$T/work" REGISTRY_WWW="$T/www" timeout 900 \
	examples/worked-example/run.sh > "$T/story.log" 2>&1 || rc=$?
cat "$T/story.log"
expect_eq "worked example" 0 "$rc"
echo "promote-worked-example: ok"
