#!/bin/sh
# apt_repo.sh IMAGE: on the host, before the nested box (which has no
# network), the local apt repository that bench-guest-io's install workload
# installs from. The packages are MVM_BENCH_APT_PKGS (default: python3 perl,
# two language runtimes, ~18 MB of .deb, ~3000 files) plus every dependency
# that IMAGE (the store's debian image) lacks, without recommends, as this
# machine's apt resolves them against the image's own dpkg status. Fetched
# with `apt-get download` through the host's configured apt sources (no
# mirror is named here) into ${MVM_CACHE_DIR:-~/.cache/mvm}/bench-apt/KEY/
# (KEY: a hash of the exact name=version list), indexed by
# dpkg-scanpackages (a flat repository: `deb [trusted=yes] file:DIR ./`).
# Prints the repository directory; a second run with the same list reuses it.
set -eu
img=$1
pkgs=${MVM_BENCH_APT_PKGS:-python3 perl}
cache="${MVM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mvm}/bench-apt"
[ -f "$img" ] || { echo "bench-guest-io: no debian image at $img (sudo make image-debian)" >&2; exit 1; }
for c in debugfs dpkg-scanpackages apt-get; do
	command -v "$c" >/dev/null || { echo "bench-guest-io: $c missing (make deps)" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mvm-bench-apt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The image's installed packages, read from the ext4 file without mounting it.
debugfs -R 'cat /var/lib/dpkg/status' "$img" > "$tmp/status" 2>/dev/null
grep -q '^Package: dpkg$' "$tmp/status" ||
	{ echo "bench-guest-io: no dpkg status in $img" >&2; exit 1; }
# "Inst NAME [OLD] (NEW ARCHIVE [ARCH])": what the image would install.
# shellcheck disable=SC2086
apt-get -s -q -o Dir::State::status="$tmp/status" -o APT::Install-Recommends=false \
	install $pkgs 2>"$tmp/err" |
	awk '/^Inst / { v = $3; if (v ~ /^\[/) v = $4; sub(/^\(/, "", v); print $2 "=" v }' |
	sort > "$tmp/list" || true
[ -s "$tmp/list" ] || {
	echo "bench-guest-io: apt cannot resolve '$pkgs' for the image:" >&2
	cat "$tmp/err" >&2
	exit 1
}
key=$(sha256sum "$tmp/list" | cut -c1-16)
dir=$cache/$key
if [ -f "$dir/Packages" ]; then
	echo "$dir"
	exit 0
fi
mkdir -p "$cache"
rm -rf "$dir.part"
mkdir "$dir.part"
# shellcheck disable=SC2046
(cd "$dir.part" && apt-get download -q $(cat "$tmp/list")) > "$tmp/dl" 2>&1 || {
	echo "bench-guest-io: apt-get download failed (stale lists? sudo apt-get update):" >&2
	tail -5 "$tmp/dl" >&2
	exit 1
}
(cd "$dir.part" && dpkg-scanpackages -m . 2>/dev/null > Packages)
cp "$tmp/list" "$dir.part/list"
echo "$pkgs" > "$dir.part/pkgs"
files=$(for d in "$dir.part"/*.deb; do dpkg-deb -c "$d"; done | grep -vc '^d')
echo "bench-guest-io: install workload: $(wc -l < "$tmp/list") packages," \
	"$(du -sm "$dir.part" | cut -f1) MB of .deb, $files files ($pkgs)" >&2
mv "$dir.part" "$dir"
echo "$dir"
