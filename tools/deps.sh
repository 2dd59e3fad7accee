#!/bin/sh
# Install every missing Debian package that the build, the tests and the guest
# need. Idempotent; prints what it installs; needs root only when something
# is missing.
set -eu
PKGS="gcc make clang libclang-rt-14-dev pkg-config libslirp-dev libcjson-dev libseccomp-dev
libcriterion-dev nettle-dev qemu-system-x86 qemu-utils linux-source-6.1 busybox-static
bc flex bison libelf-dev libssl-dev dwarves e2fsprogs cpio xz-utils
python3 socat kmod libglib2.0-dev dnsmasq-base debootstrap dpkg-dev
python3-pytest python3-setuptools nodejs"
# `tools/deps.sh browser-peer`: also Debian's Chromium on the host, the peer
# that `make bench-browser` compares a browser sandbox with (nothing else
# needs it, so it is not installed by default).
[ "${1:-}" != browser-peer ] || PKGS="$PKGS chromium"
missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	case "$st" in ii*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
echo "deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run 'sudo make deps' (or install them with apt-get) and retry" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
