#!/bin/sh
# `mvm run --image debian`: the Debian 12 image that `make image-debian`
# built on the host (debootstrap needs root and the network, which the test
# box has neither of) boots and runs apt.
. tests/integration/lib.sh
# The command's output without tty line endings (older guest inits add CR).
out() { tr -d '\r' < "$T/out"; }

store=${MVM_IMAGE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mvm/images}
[ -f "$store/debian.ext4" ] && [ -f "$store/debian.json" ] ||
	skip "no debian image in $store: build it on the host first (make image-debian)"
sum=$(sha256sum < "$store/debian.ext4")

run_mvm run --image debian --memory 512M -- apt-get --version
expect_eq "apt-get --version status" 0 "$rc"
expect_match "apt version" "^apt 2\.6\." "$(out | head -1)"
out | head -1

run_mvm run --image debian --memory 512M -- sh -c \
	'. /etc/os-release; echo "$VERSION_CODENAME"; grep -c "^URIs: http" /etc/apt/sources.list.d/debian.sources; dpkg-query -W -f "\${Status}\n" apt'
expect_eq "os-release etc. status" 0 "$rc"
expect_eq "bookworm" "bookworm" "$(out | sed -n 1p)"
expect_match "apt sources configured" "^[12]$" "$(out | sed -n 2p)"
expect_eq "apt installed" "install ok installed" "$(out | sed -n 3p)"
if out | grep -q '://[^/]*@'; then fail "credentials in the image's apt sources"; fi
expect_eq "image unchanged" "$sum" "$(sha256sum < "$store/debian.ext4")"
echo "image-debian: ok"
