#!/bin/sh
# Templates: taken from a running sandbox with a prepared file and a
# background process; two sandboxes started from it see both, diverge
# independently, draw different random numbers and carry their own
# hostnames and MAC addresses. A template survives its source's removal,
# `template rm` is refused while a sandbox uses it, and a template whose
# disk layer or memory file changed after creation is refused at start with
# nothing left behind (its modification time put back or not), and so is one whose
# config.json was edited to name a host file (kernel, disk); a snapshot's
# likewise (keyed seals, issue 27), and a restore takes no network setting
# from it. A --template naming only an image is refused as such.
. tests/integration/lib.sh
. tests/integration/sandbox.lib
export MVM_TEMPLATE_DIR="$T/templates"

# tamper DIR PYTHON: edit DIR/config.json (as c) as anyone with the user's
# rights could, unseen by a template's stat check: in place (same inode),
# its old modification time put back, template.json's record of its size
# (when DIR has one) made to match.
tamper() {
	chmod u+w "$1"/*.json
	python3 - "$1" "$2" <<'PY' || fail "tampering with $1/config.json"
import json, os, sys
d, edit = sys.argv[1], sys.argv[2]
p, m = d + "/config.json", d + "/template.json"
st = os.stat(p)
c = json.load(open(p))
exec(edit)
with open(p, "r+") as f:
    f.truncate(0)
    f.write(json.dumps(c))
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
if os.path.exists(m):
    meta = json.load(open(m))
    for e in meta["files"]:
        if e["name"] == "config.json":
            e["size"] = os.stat(p).st_size
    with open(m, "w") as f:
        json.dump(meta, f)
PY
}
why() {
	"$MVM" logs "$1" 2>&1 | grep -v '^\[' | tail -25 >&2
	fail "$2"
}
gx() { n=$1; shift; run_mvm exec "$n" -- sh -c "$1"; [ "$rc" = 0 ] || why "$n" "exec $n '$1' ($rc): $(cat "$T/err")"; }

sb_create src --disk-size 64M --memory 256M
gx src 'echo prepared > /data/f; setsid sleep 100000 </dev/null >/dev/null 2>&1 & echo $! > /data/bgpid'

run_mvm template create tpl --from src
[ "$rc" = 0 ] || why src "template create: $(cat "$T/err")"
for f in state memory config.json template.json; do
	[ -f "$T/templates/tpl/$f" ] || fail "template file $f missing: $(ls "$T/templates/tpl")"
done
[ ! -w "$T/templates/tpl/memory" ] || [ "$(id -u)" = 0 ] || fail "template memory is writable"
expect_match "memory file sealed read-only" "^-r--r--r--" "$(ls -l "$T/templates/tpl/memory")"
gx src 'cat /data/f'
expect_eq "source runs on" "prepared" "$(cat "$T/out")"
run_mvm create bad --template tpl --memory 1G
[ "$rc" = 2 ] || fail "--memory with --template gave $rc"
expect_match "conflict message" "memory" "$(cat "$T/err")"
[ ! -e "$MVM_STATE_DIR/bad" ] || fail "a refused create left a state directory"

# The source goes; the template stays usable.
run_mvm rm -f src
[ "$rc" = 0 ] || fail "rm src: $(cat "$T/err")"
SANDBOXES="$SANDBOXES a b"
for n in a b; do
	t0=$(date +%s%N)
	run_mvm create $n --template tpl
	[ "$rc" = 0 ] || why $n "create $n --template: $(cat "$T/err")"
	t_start=$(( ($(date +%s%N) - t0) / 1000000 ))
done
# Informational (issue 27: what hashing the memory file at every start
# would add; a start keeps it by its identity instead): the data of the
# memory file read and hashed as the seal's digest does, against the
# second start's whole time. Never a pass/fail criterion.
t_hash=$(python3 - "$T/templates/tpl/memory" <<'PY'
import hashlib, os, sys, time
t_begin = time.monotonic()
fd, h, pos = os.open(sys.argv[1], os.O_RDONLY), hashlib.sha256(), 0
end = os.fstat(fd).st_size
while pos < end:
    try:
        pos = os.lseek(fd, pos, os.SEEK_DATA)
    except OSError:
        break
    hole = os.lseek(fd, pos, os.SEEK_HOLE)
    while pos < hole:
        b = os.pread(fd, min(1 << 20, hole - pos), pos)
        h.update(b)
        pos += len(b)
print(int((time.monotonic() - t_begin) * 1000))
PY
)
echo "template: a start took $t_start ms; hashing its memory file's data would add $t_hash ms" \
	"(ratio $(python3 -c "print(round(($t_start + $t_hash) / max($t_start, 1), 2))"))" >&2
for n in a b; do
	gx $n 'cat /data/f; kill -0 "$(cat /data/bgpid)" && echo bg-alive; hostname'
	expect_eq "$n sees the template's file, process and its own hostname" "prepared
bg-alive
$n" "$(cat "$T/out")"
done
# Each its own MAC address: the one in its config.json, on the guest's NIC.
for n in a b; do
	want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["mac"])' \
		"$MVM_STATE_DIR/$n/config.json") || fail "no mac in $n's config.json"
	gx $n 'cat /sys/class/net/eth0/address'
	expect_eq "$n's NIC has its own MAC" "$want" "$(cat "$T/out")"
	eval "mac_$n=\$want"
done
[ "$mac_a" != "$mac_b" ] || fail "two sandboxes from one template share MAC $mac_a"
gx a 'echo only-a > /data/g'
gx b 'test ! -e /data/g && echo absent'
expect_eq "a write in a is invisible in b" "absent" "$(cat "$T/out")"
gx a 'head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n"'; u1=$(cat "$T/out")
gx b 'head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n"'; u2=$(cat "$T/out")
[ -n "$u1" ] && [ "$u1" != "$u2" ] || fail "template sandboxes share /dev/urandom output ($u1)"
h0=$(date +%s); gx a 'date +%s'; g=$(cat "$T/out"); h1=$(date +%s)
[ "$g" -ge $((h0 - 1)) ] && [ "$g" -le $((h1 + 1)) ] || fail "a's clock $g, host $h0..$h1"

# mvm run from the template: the file is there, the hostname is the run's own.
run_mvm run --template tpl -- sh -c 'cat /data/f; hostname'
[ "$rc" = 0 ] || fail "run --template: $(cat "$T/err")"
expect_match "run --template sees the template" "^prepared
run-[0-9]+$" "$(cat "$T/out")"
# Its --events: the run's denied attempts land in the user's file.
run_mvm run --template tpl --events "$T/run-events.jsonl" -- \
	sh -c 'wget -q -T 3 -O /dev/null http://192.0.2.1:81/ 2>/dev/null; true'
[ "$rc" = 0 ] || fail "run --template --events: $(cat "$T/err")"
expect_match "run --template --events records the denial" '"192\.0\.2\.1"' \
	"$(cat "$T/run-events.jsonl" 2>/dev/null)"
run_mvm run --template tpl --cpus 2 -- true
[ "$rc" = 2 ] || fail "run --template --cpus gave $rc"

run_mvm template ls --json
expect_match "ls lists the template and its users" '"name":"tpl".*"sandboxes":\["a","b"\]' "$(tr -d ' \n\t' < "$T/out")"
run_mvm template rm tpl
[ "$rc" = 125 ] || fail "template rm while in use gave $rc"
expect_match "rm refusal names a user" "in use.*a" "$(cat "$T/err")"
[ -d "$T/templates/tpl" ] || fail "refused rm removed the template"

# config.json is hostile input too. Edited unseen (tamper), a kernel or a
# further disk naming a host file would have the new sandbox's VMM open it:
# refused by the template's keyed seal (issue 27), nothing is created. The
# edits go to a copy (tplx): tpl's files stay as sealed for what follows.
export HOSTFILE="$T/hostfile"
echo host-secret > "$HOSTFILE"
cp -a "$T/templates/tpl" "$T/templates/tplx"
tamper "$T/templates/tplx" 'c["kernel"] = os.environ["HOSTFILE"]'
run_mvm create k --template tplx
[ "$rc" = 125 ] || fail "create from a template whose config names a kernel gave $rc: $(cat "$T/err")"
expect_match "an edited kernel is refused" "template.json changed since the template was sealed" "$(cat "$T/err")"
[ ! -e "$MVM_STATE_DIR/k" ] || fail "a refused template start (kernel) left a state directory"
tamper "$T/templates/tplx" 'c["kernel"] = ""; c["disks"] = [{"path": os.environ["HOSTFILE"], "format": "raw"}]'
run_mvm run --template tplx -- true
[ "$rc" = 125 ] || fail "run from a template whose config names a disk gave $rc: $(cat "$T/err")"
expect_match "an edited disk is refused" "changed since the template was sealed" "$(cat "$T/err")"
chmod -R u+w "$T/templates/tplx" && rm -rf "$T/templates/tplx"
# A snapshot's config.json alike, refused by its seal; put back as it was,
# it restores, and its published ports and DNS server are not the restored
# sandbox's (restore has no network options: none).
run_mvm snapshot a "$T/snap"
[ "$rc" = 0 ] || why a "snapshot a: $(cat "$T/err")"
[ -f "$T/snap/seal" ] || fail "the snapshot has no seal: $(ls "$T/snap")"
cp "$T/snap/config.json" "$T/snap-config.json"
tamper "$T/snap" 'c["kernel"] = os.environ["HOSTFILE"]'
run_mvm restore "$T/snap" r
[ "$rc" = 125 ] || fail "restore of a snapshot whose config names a kernel gave $rc"
expect_match "restore: an edited config.json is refused" "config.json changed since the snapshot was sealed" "$(cat "$T/err")"
[ ! -e "$MVM_STATE_DIR/r" ] || fail "a refused restore left a state directory"
tamper "$T/snap" 'c["kernel"] = ""; c["publish"] = ["127.0.0.1:47613:22"]; c["dns_server"] = "127.0.0.9"'
run_mvm restore "$T/snap" r
[ "$rc" = 125 ] || fail "restore of a snapshot whose config names ports gave $rc"
expect_match "restore: edited ports are refused" "config.json changed since the snapshot was sealed" "$(cat "$T/err")"
cp "$T/snap-config.json" "$T/snap/config.json"
SANDBOXES="$SANDBOXES r"
run_mvm restore "$T/snap" r
[ "$rc" = 0 ] || why r "restore: $(cat "$T/err")"
expect_eq "the restored sandbox's own network settings" "[] ''" "$(python3 -c '
import json, sys; c = json.load(open(sys.argv[1])); print(c["publish"], repr(c["dns_server"]))' \
	"$MVM_STATE_DIR/r/config.json")"
gx r 'cat /data/f'
expect_eq "the restored sandbox runs" "prepared" "$(cat "$T/out")"
run_mvm rm -f r

# A changed disk layer is refused at start, even with its modification time
# put back, though starts no longer read unchanged layers (their ledger of
# change times, snapshots/tpl_ledger.h): its change time moved, so it is
# read against its keyed tag; nothing is created.
[ -f "$T/templates/tpl/data.img" ] || fail "no data.img layer: $(ls "$T/templates/tpl")"
chmod u+w "$T/templates/tpl" "$T/templates/tpl/data.img"
mtime=$(stat -c %y "$T/templates/tpl/data.img")
# In the disk's last block: free, so a and b (running on the same inode)
# never read it.
printf 'Y' | dd of="$T/templates/tpl/data.img" bs=1 seek=$(($(stat -c %s "$T/templates/tpl/data.img") - 100)) \
	conv=notrunc 2>/dev/null
touch -d "$mtime" "$T/templates/tpl/data.img"
run_mvm create c --template tpl
[ "$rc" = 125 ] || fail "create from a template with an edited layer gave $rc"
expect_match "edited layer message" "data.img.*keyed tag" "$(cat "$T/err")"
[ ! -e "$MVM_STATE_DIR/c" ] || fail "a refused template start (layer) left a state directory"

# A changed memory file is refused at start, even with its modification
# time put back (its change time is sealed); nothing is created.
chmod u+w "$T/templates/tpl" "$T/templates/tpl/memory"
mtime=$(stat -c %y "$T/templates/tpl/memory")
printf 'X' | dd of="$T/templates/tpl/memory" bs=1 seek=4096 conv=notrunc 2>/dev/null
touch -d "$mtime" "$T/templates/tpl/memory"
run_mvm create c --template tpl
[ "$rc" = 125 ] || fail "create from a modified template gave $rc"
expect_match "modified template message" "memory.*changed" "$(cat "$T/err")"
[ ! -e "$MVM_STATE_DIR/c" ] || fail "a refused template start left a state directory"
run_mvm template inspect tpl --json
expect_match "inspect says damaged" '"status":"damaged"' "$(tr -d ' \n\t' < "$T/out")"

# --force removes it; its sandboxes run on (their own links).
run_mvm template rm --force tpl
[ "$rc" = 0 ] || fail "template rm --force: $(cat "$T/err")"
[ ! -e "$T/templates/tpl" ] || fail "template still there after rm --force"
gx a 'cat /data/g'
expect_eq "a runs on after its template went" "only-a" "$(cat "$T/out")"
# --template looks in the template store only: a name that is only an
# image's is refused, saying so, and nothing is created.
mkdir -p "$T/images" && : > "$T/images/onlyimg.ext4"
rc=0
MVM_IMAGE_DIR="$T/images" "$MVM" create x --template onlyimg >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 125 ] || fail "create --template with an image's name gave $rc"
expect_match "an image's name as --template" "no template named onlyimg.*onlyimg is an image: --image onlyimg" "$(cat "$T/err")"
[ ! -e "$MVM_STATE_DIR/x" ] || fail "a refused --template left a state directory"
echo "template: ok"
