# Shared by images/build-*.sh (sourced). A builder fills a staging directory
# and calls image_finish; no loop mounts: `mkfs.ext4 -d` writes the image.
#
# Environment from `mvm image build` (or a caller):
#   MVM_IMAGE_OUT   the image to write (…/NAME.ext4); NAME.json goes beside it
#   MVM_IMAGE_SIZE  image size in bytes (0/unset: content + headroom)
#   MVM_GUEST_DIR   where build/guest (mvm-init, mvm-agent) lives
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
  "source": "$src"
}
JSON
	# Image first, then its metadata: NAME.json marks a finished build.
	rm -f "${out%.ext4}.json"
	mv -f "$work/img" "$out"
	mv -f "$work/json" "${out%.ext4}.json"
	echo "image: done: $out ($(du -k "$out" | cut -f1) KiB on disk, $(( $(date +%s) - t0 ))s)"
}
