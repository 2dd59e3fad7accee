# Shared by images/build-*.sh (sourced). A builder fills a staging directory
# and calls image_finish; no loop mounts: `mkfs.ext4 -d` writes the image.
#
# Environment from `mvm image build` (or a caller):
#   MVM_IMAGE_OUT   the image to write (…/NAME.ext4); NAME.json goes beside it
#   MVM_IMAGE_SIZE  image size in bytes (0/unset: content + headroom)
#   MVM_GUEST_DIR   where build/guest (mvm-init, mvm-agent) lives
#   MVM_IMAGE_INPUTS  recorded as "inputs" in NAME.json (make's hash of the
#                   builder's files, to tell a stale image)
set -eu

step_no=0
step() {
	step_no=$((step_no + 1))
	echo "image: [$step_no/$STEPS] $* ($(( $(date +%s) - t0 ))s)"
}
t0=$(date +%s)

# A throw-away directory next to the output (same filesystem; removed on exit).
image_stage() {
	out=${MVM_IMAGE_OUT:?MVM_IMAGE_OUT is not set (run through: mvm image build NAME)}
	mkdir -p "$(dirname "$out")"
	work=$(mktemp -d "$(dirname "$out")/.build.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	trap 'exit 130' INT TERM
	stage=$work/root
	mkdir -p "$stage"
}

# image_finish SOURCE-DESCRIPTION [MIN_SIZE_MIB]
# Size: MVM_IMAGE_SIZE, else content * 1.5 + 256 MiB, at least MIN_SIZE_MIB,
# rounded up to 64 MiB
# (the file is sparse, so headroom costs nothing until the guest writes).
image_finish() {
	src=$1 min_mib=${2:-64}
	kib=$(du -sxk "$stage" | cut -f1)
	size=${MVM_IMAGE_SIZE:-0}
	if [ "$size" = 0 ]; then
		mib=$(( kib * 3 / 2 / 1024 + 256 ))
		[ "$mib" -ge "$min_mib" ] || mib=$min_mib
		mib=$(( (mib + 63) / 64 * 64 ))
		size=$(( mib * 1024 * 1024 ))
	fi
	step "mkfs.ext4 -d: $(( kib / 1024 )) MiB of files into a $(( size / 1048576 )) MiB image"
	rm -f "$work/img"
	truncate -s "$size" "$work/img"
	mkfs.ext4 -q -F -L mvm-root -d "$stage" "$work/img"
	name=$(basename "$out" .ext4)
	cat > "$work/json" <<JSON
{
  "name": "$name",
  "format": "raw",
  "filesystem": "ext4",
  "size": $size,
  "content_bytes": $(( kib * 1024 )),
  "created": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "build_seconds": $(( $(date +%s) - t0 )),
  "source": "$src",
  "inputs": "${MVM_IMAGE_INPUTS:-}"
}
JSON
	# Image first, then its metadata: NAME.json marks a finished build.
	rm -f "${out%.ext4}.json"
	mv -f "$work/img" "$out"
	mv -f "$work/json" "${out%.ext4}.json"
	echo "image: done: $out ($(du -k "$out" | cut -f1) KiB on disk, $(( $(date +%s) - t0 ))s)"
}

# ---- Debian images (build-debian.sh, build-browser.sh) ----
# Set by debian_bootstrap: suite, cache, mirror, security.

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

# debian_bootstrap WHO: checks (debootstrap, root, a mirror), the stage, then
# `debootstrap --variant=minbase` from the host's mirror with the shared
# package cache (~/.cache/mvm/debootstrap), or the base an earlier build left
# there (debian_base_key). WHO names the builder in errors.
debian_bootstrap() {
	who=$1
	suite=${MVM_DEBIAN_SUITE:-bookworm}
	cache="${MVM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mvm}/debootstrap"
	command -v debootstrap >/dev/null 2>&1 ||
		{ echo "$who: debootstrap missing (run: make deps)" >&2; exit 1; }
	[ "$(id -u)" = 0 ] ||
		{ echo "$who: debootstrap needs root (try: sudo mvm image build ${who#build-})" >&2; exit 1; }
	set -- $(host_mirrors)
	mirror=${MVM_DEBIAN_MIRROR:-${1:-}}
	security=${MVM_DEBIAN_SECURITY:-${2:-}}
	[ -n "$mirror" ] || {
		echo "$who: no Debian mirror in /etc/apt/sources.list{,.d}; set MVM_DEBIAN_MIRROR" >&2
		exit 1
	}
	image_stage
	mkdir -p "$cache"

	# No fsync per unpacked file while building (dpkg's default, made for
	# machines that may crash mid-upgrade): a stage that breaks is thrown
	# away, and mkfs.ext4 copies it anyway. Placed before debootstrap so
	# that its own dpkg runs read it too; debian_clean removes it, so the
	# guest's dpkg syncs as usual.
	mkdir -p "$stage/etc/dpkg/dpkg.cfg.d"
	echo force-unsafe-io > "$stage/etc/dpkg/dpkg.cfg.d/00mvm-build-unsafe-io"
	# One build per package cache at a time in this part: debian, browser
	# and dev share it, two debootstraps at once broke each other's
	# downloads, and the first build's base serves the others.
	exec 8>"$cache/.lock"
	flock -n 8 || { echo "image: another build is bootstrapping from $cache; waiting for it"; flock 8; }
	key=$(debian_base_key)
	base=$cache/base-$key.tar
	if [ -n "$key" ] && [ -f "$base" ]; then
		step "the bootstrapped base from the package cache (debootstrap --variant=minbase $suite, $mirror; $(basename "$base"))"
		tar -xpf "$base" --numeric-owner --xattrs --xattrs-include='*' -C "$stage" ||
			{ echo "$who: cannot unpack $base" >&2; exit 1; }
	else
		step "debootstrap --variant=minbase $suite from the host's mirror ($mirror)"
		# debootstrap's own I: lines are the progress; its log stays in the stage on failure.
		debootstrap --variant=minbase --cache-dir="$cache" "$suite" "$stage" "$mirror" 2>&1 |
			sed -u 's/^/  /' || :
		[ -x "$stage/usr/bin/apt-get" ] && [ -f "$stage/etc/debian_version" ] || {
			echo "$who: debootstrap failed" >&2
			tail -20 "$stage/debootstrap/debootstrap.log" 2>/dev/null >&2 || true
			exit 1
		}
		if [ -n "$key" ]; then
			rm -f "$cache"/base-*.tar "$cache"/base-*.tar.tmp
			tar -cf "$base.tmp" --numeric-owner --xattrs --xattrs-include='*' \
				--exclude='./var/cache/apt/archives/*.deb' -C "$stage" . &&
				mv -f "$base.tmp" "$base" || rm -f "$base.tmp"
		fi
	fi
	exec 8>&-
}

# debian_base_key: what decides the bootstrapped base's contents, hashed
# (empty when the mirror's InRelease cannot be read: then no base is kept).
# debootstrap reads only the suite itself (not -updates or -security), so
# its package set changes only with the suite's InRelease; the rest is the
# mirror, debootstrap's version, the architecture and this file. The base
# is the system as debootstrap left it, before any image's configuration:
# debian, browser and dev all start from it, and all but the first build
# on a machine unpack it (seconds) instead of running debootstrap (40-60 s).
debian_base_key() {
	rel=$(python3 -c 'import hashlib, sys, urllib.request
print(hashlib.sha256(urllib.request.urlopen(sys.argv[1], timeout=60).read()).hexdigest())' \
		"$mirror/dists/$suite/InRelease" 2>/dev/null) || return 0
	printf '%s\n' "$rel" "$mirror" "$suite" "$(debootstrap --version)" \
		"$(dpkg --print-architecture)" "$(sha256sum < "$here/image-lib.sh")" |
		sha256sum | cut -c1-16
}

# debian_configure: apt sources for the host's mirror (no credentials), no
# recommends, and none of the host's identity in /etc.
debian_configure() {
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
}

# debian_install PKG...: apt-get install in the stage (chroot, no mounts),
# from the sources debian_configure wrote. Downloaded packages go through
# the shared cache, so a rebuild downloads nothing new. The host's resolver
# is lent to the chroot for the duration only.
debian_install() {
	step "apt-get install $# packages and their dependencies ($*)"
	arch=$stage/var/cache/apt/archives
	mkdir -p "$arch/partial"
	cp -l "$cache"/*.deb "$arch/" 2>/dev/null || cp "$cache"/*.deb "$arch/" 2>/dev/null || :
	cp -L /etc/resolv.conf "$stage/etc/resolv.conf"
	# A VM image nobody reads manuals in: no docs (licences stay), manual
	# pages or translations.
	cat > "$stage/etc/dpkg/dpkg.cfg.d/90mvm-nodoc" <<DPKG
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
DPKG
	export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
	chroot "$stage" apt-get -q update 2>&1 | sed -u 's/^/  /'
	# Progress: one line per package unpacked and set up (apt's own lines).
	if ! chroot "$stage" apt-get -q -y -o Dpkg::Use-Pty=0 install "$@" 2>&1 |
		sed -u -n 's/^\(Get:[0-9]*\|Unpacking\|Setting up\|E:\)/  &/p'; then
		:
	fi
	for p in "$@"; do
		chroot "$stage" dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null |
			grep -q 'install ok installed' ||
			{ echo "$who: apt-get install failed: $p is not installed" >&2; exit 1; }
	done
	for d in "$arch"/*.deb; do
		[ -e "$d" ] && [ ! -e "$cache/${d##*/}" ] && cp "$d" "$cache/" || :
	done
	rm -f "$stage/etc/resolv.conf"
}

# debian_clean: no package caches or lists (apt-get update refreshes them),
# no build logs.
debian_clean() {
	step "cleaning package caches and lists (apt-get update refreshes them)"
	rm -rf "$stage/var/cache/apt/archives/"*.deb "$stage/var/cache/apt/"*.bin \
		"$stage/var/lib/apt/lists/"* "$stage/debootstrap" "$stage/var/log/"*.log \
		"$stage/etc/dpkg/dpkg.cfg.d/00mvm-build-unsafe-io"
	mkdir -p "$stage/var/lib/apt/lists/partial"
}
