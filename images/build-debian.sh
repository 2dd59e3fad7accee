#!/bin/sh
# `mvm image build debian`: Debian 12 (bookworm) minbase from debootstrap,
# apt configured for the machine's own Debian mirror, as a raw ext4 image.
# Needs root (debootstrap chroots and makes device nodes) and the network;
# a few minutes. Downloaded packages are cached for the next --force build.
here=$(cd "$(dirname "$0")" && pwd)
STEPS=4
. "$here/image-lib.sh"
suite=${MVM_DEBIAN_SUITE:-bookworm}
cache="${MVM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mvm}/debootstrap"

command -v debootstrap >/dev/null 2>&1 ||
	{ echo "build-debian: debootstrap missing (run: make deps)" >&2; exit 1; }
[ "$(id -u)" = 0 ] ||
	{ echo "build-debian: debootstrap needs root (try: sudo mvm image build debian)" >&2; exit 1; }

# The mirror this machine's apt already uses (deb822 .sources or sources.list),
# never a hard-coded one. Credentials in a URI are dropped. Prints
# "MAIN-URI SECURITY-URI" (security may be empty).
host_mirrors() {
	{
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			awk '
				function flush() { if (deb && uris != "") for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) print u[i], s[j]; deb = 0; uris = ""; nu = ns = 0 }
				/^[ \t]*$/ { flush(); next }
				/^[ \t]*#/ { next }
				tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
				tolower($1) == "uris:" { uris = $0; nu = 0; for (i = 2; i <= NF; i++) u[++nu] = $i }
				tolower($1) == "suites:" { ns = 0; for (i = 2; i <= NF; i++) s[++ns] = $i }
				END { flush() }' "$f"
		done
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -f "$f" ] || continue
			sed -n 's/^[ \t]*deb[ \t]\+\(\[[^]]*\][ \t]\+\)\?\([^ \t]\+\)[ \t]\+\([^ \t]\+\).*/\2 \3/p' "$f"
		done
	} | sed 's#://[^/@]*@#://#' | awk -v suite="$suite" '
		$1 !~ /^https?:\/\// { next }
		$2 == suite && main == "" { main = $1 }
		$2 == suite "-security" && sec == "" { sec = $1 }
		$2 !~ /-(security|updates|backports)$/ && any == "" { any = $1 }
		$2 ~ /-security$/ && anysec == "" { anysec = $1 }
		END { if (main == "") main = any; if (sec == "") sec = anysec; print main, sec }'
}

set -- $(host_mirrors)
mirror=${MVM_DEBIAN_MIRROR:-${1:-}}
security=${MVM_DEBIAN_SECURITY:-${2:-}}
[ -n "$mirror" ] || {
	echo "build-debian: no Debian mirror in /etc/apt/sources.list{,.d}; set MVM_DEBIAN_MIRROR" >&2
	exit 1
}
image_stage
mkdir -p "$cache"

step "debootstrap --variant=minbase $suite from the host's mirror ($mirror)"
# debootstrap's own I: lines are the progress; its log stays in the stage on failure.
if ! debootstrap --variant=minbase --cache-dir="$cache" "$suite" "$stage" "$mirror" 2>&1 |
	sed -u 's/^/  /'; then
	:
fi
[ -x "$stage/usr/bin/apt-get" ] && [ -f "$stage/etc/debian_version" ] || {
	echo "build-debian: debootstrap failed" >&2
	tail -20 "$stage/debootstrap/debootstrap.log" 2>/dev/null >&2 || true
	exit 1
}

step "configuring apt (sources: the host's mirror, no credentials) and the system"
rm -f "$stage/etc/apt/sources.list" "$stage/etc/apt/auth.conf"
rm -rf "$stage/etc/apt/auth.conf.d"
{
	printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\n' "$mirror" "$suite" "$suite"
	printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
	if [ -n "$security" ]; then
		printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\n' "$security" "$suite"
		printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
	fi
} > "$stage/etc/apt/sources.list.d/debian.sources"
# A throw-away VM: no recommends, no translations, no cached debs.
cat > "$stage/etc/apt/apt.conf.d/90mvm" <<APT
APT::Install-Recommends "false";
Acquire::Languages "none";
APT
# Nothing of the host's identity stays in the image.
echo mvm > "$stage/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tmvm\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$stage/etc/hosts"
rm -f "$stage/etc/resolv.conf"
: > "$stage/etc/machine-id"

step "cleaning package caches and lists (apt-get update refreshes them)"
rm -rf "$stage/var/cache/apt/archives/"*.deb "$stage/var/cache/apt/"*.bin \
	"$stage/var/lib/apt/lists/"* "$stage/debootstrap" "$stage/var/log/"*.log
mkdir -p "$stage/var/lib/apt/lists/partial"

echo "image: staged Debian $(cat "$stage/etc/debian_version")"
image_finish "debootstrap --variant=minbase $suite $mirror" 2048
