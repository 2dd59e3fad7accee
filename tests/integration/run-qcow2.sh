#!/bin/sh
# A sandbox disk as a qcow2 overlay on a raw base: the guest writes every
# block, the writes land only in the overlay, the base is byte-for-byte
# unchanged, and qemu-img finds the overlay consistent.
. tests/integration/lib.sh

head -c 8M /dev/urandom > "$T/base.img"
sum=$(sha256sum < "$T/base.img")
"$MVM" image create --base "$T/base.img" --base-format raw "$T/ov.qcow2" >/dev/null ||
	fail "mvm image create"
run_mvm run --disk "$T/ov.qcow2:qcow2" -- sh -c \
	'dd if=/dev/zero of=/dev/vda bs=64k 2>/dev/null; sync; echo overlay-data | dd of=/dev/vda bs=512 conv=sync 2>/dev/null; sync'
expect_eq "guest writes every block" 0 "$rc"
expect_eq "base unchanged" "$sum" "$(sha256sum < "$T/base.img")"
qemu-img check -q "$T/ov.qcow2" || fail "qemu-img check reports problems"
run_mvm run --disk "$T/ov.qcow2:qcow2:ro" -- sh -c 'head -c 12 /dev/vda'
expect_eq "overlay read back" "overlay-data" "$(cat "$T/out")"
# qemu-img sees the same bytes mvm wrote.
expect_eq "qemu-img view" "overlay-data" "$(qemu-img convert -O raw "$T/ov.qcow2" "$T/flat.raw" && head -c 12 "$T/flat.raw")"
