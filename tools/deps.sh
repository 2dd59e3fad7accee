#!/bin/sh
# Install every missing Debian package that the build, the tests and the guest
# need. Idempotent; prints what it installs; needs root only when something
# is missing.
set -eu
PKGS="gcc make clang libclang-rt-14-dev pkg-config libslirp-dev libcjson-dev libseccomp-dev
libcriterion-dev nettle-dev libmicrohttpd-dev qemu-system-x86 qemu-utils linux-source-6.1 busybox-static
bc flex bison libelf-dev libssl-dev dwarves e2fsprogs cpio xz-utils
python3 socat kmod libglib2.0-dev dnsmasq-base debootstrap dpkg-dev
python3-pytest python3-setuptools nodejs strace libarchive-dev umoci skopeo
libfdt-dev device-tree-compiler gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
# `tools/deps.sh browser-peer`: also Debian's Chromium on the host, the peer
# that `make bench-browser` compares a browser sandbox with (nothing else
# needs it, so it is not installed by default).
[ "${1:-}" != browser-peer ] || PKGS="$PKGS chromium"
# `tools/deps.sh cluster` (make test-cluster, not make test): slurm-wlm and
# munge for the Slurm cluster of tests/cluster/.
[ "${1:-}" != cluster ] || PKGS="$PKGS slurm-wlm munge"
# openssl: the Python SDK's TLS test makes itself a certificate (test_remote_unit.py).
# git: tests/integration/image-dev.sh makes the repository the dev guest clones.
# gpg, gpg-agent: tests/integration/image-apt.sh signs the apt repository it
# serves (dpkg-dev, above, builds and indexes its packages).
PKGS="$PKGS openssl git gpg gpg-agent"
# `tools/deps.sh arm64` (make test-arm64, make arm64-box; not make test, so a
# user's dpkg gains no foreign architecture unasked): the arm64 unit tests run
# under qemu-aarch64 (qemu-user) and link libfdt for aarch64 from Debian
# multiarch (libfdt1:arm64; it brings libc6:arm64, so qemu-aarch64 finds the
# aarch64 loader). Only the runtime library: libfdt-dev and libcriterion are
# not Multi-Arch: same, installing their :arm64 builds would remove the
# host's. qemu-system-aarch64 runs the arm64 box (tests/nested/box-arm64.sh).
# The aarch64 mvm (make arm64-mvm) links libcjson and nettle for aarch64,
# its network helper mvm-net libslirp (which brings libglib2.0-0:arm64):
# their -dev packages are Multi-Arch: same, so they install beside the host's.
[ "${1:-}" != arm64 ] || PKGS="$PKGS qemu-user binfmt-support libfdt1:arm64 qemu-system-arm libcjson-dev:arm64 nettle-dev:arm64
libslirp-dev:arm64"
# fio: bench-guest-io's and bench-count's guest jobs; valgrind: bench-count's
# instruction counts (tests/bench/count.sh).
PKGS="$PKGS fio valgrind"
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
case "$missing" in *:arm64*)
	dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64 ;;
esac
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
