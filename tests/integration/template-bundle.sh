#!/bin/sh
# Templates that travel (issue 29): a template of an --image sandbox is
# exported to one file and imported on a second "host" (its own state,
# template and image stores and its own host key). A bundle with one byte
# flipped in its data, one cut short and one with an edited manifest are
# refused, each leaving nothing in either store of the second host; the
# intact one is imported (its image added to that host's store, the
# template sealed with that host's key), a sandbox started from it sees the
# file the template had, and importing it again is a no-op. Under another
# name it is imported again with the image reused by digest; a name taken
# by another template is refused; the second host's export of it travels
# back and starts on the first host, reusing the image there. The first
# host's `mvm serve` hands out the same bundle (GET /v1/templates/NAME).
. tests/integration/lib.sh
. tests/integration/sandbox.lib

command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
cpio=$(cd "$(dirname "$MVM")" && pwd)/guest/initramfs.cpio
[ -f "$cpio" ] || skip "no $cpio (make guest)"
export MVM_IMAGE_DIR="$T/images" MVM_TEMPLATE_DIR="$T/templates" MVM_HOST_KEY="$T/h1.key"
H2="$T/h2"
mkdir -p "$T/images" "$H2"
# h2 ARGS...: mvm on the second host, like run_mvm.
h2() {
	rc=0
	MVM_STATE_DIR="$H2/state" MVM_TEMPLATE_DIR="$H2/templates" MVM_IMAGE_DIR="$H2/images" \
		MVM_HOST_KEY="$H2/host.key" "$MVM" "$@" >"$T/out" 2>"$T/err" || rc=$?
}
H2_SANDBOXES=""
h2_cleanup() {
	for n in $H2_SANDBOXES; do h2 rm -f "$n" || true; done
	sb_cleanup
}
trap h2_cleanup EXIT
# nothing_left WHAT: the second host's stores hold nothing, hidden or not.
nothing_left() {
	for d in templates images; do
		[ -z "$(ls -A "$H2/$d" 2>/dev/null)" ] || fail "$1 left $(ls -A "$H2/$d") in $d"
	done
}
# refused WHAT FILE PATTERN: the second host refuses FILE saying PATTERN.
refused() {
	h2 template import "$2"
	[ "$rc" != 0 ] || fail "$1 was imported"
	expect_match "why $1 is refused" "$3" "$(cat "$T/err")"
	expect_match "$1: says nothing was imported" "nothing was imported" "$(cat "$T/err")"
	nothing_left "$1"
}

mkdir "$T/rootdir"
(cd "$T/rootdir" && cpio -id --quiet < "$cpio")
echo image-root > "$T/rootdir/etc/marker"
mkfs.ext4 -q -F -d "$T/rootdir" "$T/images/root.ext4" 64M

sb_create src --image root --memory 256M
run_mvm exec src -- sh -c 'echo travelled > /root/note && sync'
[ "$rc" = 0 ] || fail "exec src: $(cat "$T/err")"
run_mvm template create tpl --from src
[ "$rc" = 0 ] || fail "template create: $(cat "$T/err")"
run_mvm template export tpl "$T/b.tpl"
[ "$rc" = 0 ] || fail "template export: $(cat "$T/err")"
digest=$(sed -n 's/.*sha256 \([0-9a-f]\{64\}\)).*/\1/p' "$T/out")
[ -n "$digest" ] || fail "export printed no digest: $(cat "$T/out")"
expect_match "the bundle is private to its owner" "^-rw-------" "$(ls -l "$T/b.tpl")"
run_mvm template export tpl "$T/b.tpl"
[ "$rc" != 0 ] || fail "export over an existing file succeeded"
expect_match "export never replaces a file" "exists: not replaced" "$(cat "$T/err")"
size=$(stat -c %s "$T/b.tpl")
echo "template-bundle: the bundle of a 64 MiB image template is $size bytes" >&2

# Damaged bundles: refused, nothing left on the second host.
cp "$T/b.tpl" "$T/flip.tpl"
python3 - "$T/flip.tpl" <<'PY'
import os, sys
f = open(sys.argv[1], "r+b")
size = os.fstat(f.fileno()).st_size
f.seek(size // 2); b = f.read(1); f.seek(size // 2)
f.write(bytes([b[0] ^ 0x5a]))
PY
refused "a bundle with one byte flipped" "$T/flip.tpl" "SHA-256 does not match|malformed extent"
head -c $((size - 4096)) "$T/b.tpl" > "$T/short.tpl"
refused "a truncated bundle" "$T/short.tpl" "truncated"
cp "$T/b.tpl" "$T/manifest.tpl"
printf 'X' | dd of="$T/manifest.tpl" bs=1 seek=17 conv=notrunc 2>/dev/null
refused "a bundle with an edited manifest" "$T/manifest.tpl" "manifest's digest does not match"

# The intact bundle: imported, sealed by the second host, started there.
h2 template import "$T/b.tpl"
[ "$rc" = 0 ] || fail "import: $(cat "$T/err")"
expect_match "import names the template and the export's digest" \
	"imported template tpl \(sha256 $digest\)" "$(cat "$T/out")"
expect_match "the image was added to the second host's store" \
	"image: $H2/images/root.ext4 \(added" "$(cat "$T/out")"
cmp -s "$T/images/root.ext4" "$H2/images/root.ext4" || fail "the imported image differs"
[ -z "$(ls -A "$H2/templates" | grep '^\.')" ] || fail "staging left: $(ls -A "$H2/templates")"
h2 template inspect tpl
expect_match "inspect names the bundle" "imported: +from bundle sha256 $digest" "$(cat "$T/out")"
expect_match "the imported template is intact on the second host" "status: +intact" "$(cat "$T/out")"
H2_SANDBOXES="c1"
h2 create c1 --template tpl
[ "$rc" = 0 ] || fail "create from the imported template: $(cat "$T/err")"
h2 exec c1 -- sh -c 'cat /root/note /etc/marker; hostname'
expect_eq "a sandbox from the imported template" "travelled
image-root
c1" "$(cat "$T/out")"
# Its seal is the second host's: the first host's key does not accept it.
MVM_TEMPLATE_DIR="$H2/templates" "$MVM" create x1 --template tpl >"$T/out" 2>"$T/err" && \
	fail "the first host accepted the second host's seal"
expect_match "another host's seal is refused" "seal does not match the host key" "$(cat "$T/err")"

h2 template import "$T/b.tpl"
[ "$rc" = 0 ] || fail "re-import: $(cat "$T/err")"
expect_match "a re-import is a no-op" "tpl: this bundle \(sha256 $digest\) is already imported; nothing to do" \
	"$(cat "$T/out")"

# Pulled from the first host's `mvm serve` (GET /v1/templates/NAME), as
# one host pulls from a peer: the same bundle (the second host calls it
# already imported), only with a token, nothing left in serve's TMPDIR.
"$MVM" serve token add puller --tokens "$T/tokens.json" > "$T/tok" || fail "serve token add"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir "$T/serve-tmp"
TMPDIR="$T/serve-tmp" "$MVM" serve --listen "127.0.0.1:$PORT" --tokens "$T/tokens.json" \
	--log "$T/requests.jsonl" >"$T/serve.err" 2>&1 &
SERVE_PID=$!
trap 'kill "$SERVE_PID" 2>/dev/null; h2_cleanup' EXIT
deadline=$(( $(date +%s) + 30 ))
until curl -sf "http://127.0.0.1:$PORT/v1/health" >/dev/null; do
	kill -0 "$SERVE_PID" 2>/dev/null || fail "mvm serve exited: $(cat "$T/serve.err")"
	[ "$(date +%s)" -lt "$deadline" ] || fail "mvm serve did not answer in 30 s"
	sleep 0.2
done
url="http://127.0.0.1:$PORT/v1/templates"
code=$(curl -s -o "$T/nobody" -w '%{http_code}' "$url/tpl")
expect_eq "a template without a token" 401 "$code"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/tok")" "$url/nosuch")
expect_eq "an unknown template" 404 "$code"
expect_match "an unknown template: says so" '"no template named nosuch"' "$(cat "$T/body")"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/tok")" "$url/..%2Fimages")
expect_eq "a path for a template name" 400 "$code"
code=$(curl -s -o "$T/pulled.tpl" -w '%{http_code} %{content_type}' -H "Authorization: Bearer $(cat "$T/tok")" "$url/tpl")
expect_eq "GET /v1/templates/tpl" "200 application/octet-stream" "$code"
[ -z "$(ls -A "$T/serve-tmp")" ] || fail "serve left $(ls -A "$T/serve-tmp") in its TMPDIR"
h2 template import "$T/pulled.tpl"
[ "$rc" = 0 ] || fail "import of the pulled bundle: $(cat "$T/err")"
expect_match "the pulled bundle is the exported one" "already imported; nothing to do" "$(cat "$T/out")"
expect_match "the pulled bundle's digest" "sha256 $digest" "$(cat "$T/out")"
expect_match "the request log names the download" '"verb":"template_get"' "$(cat "$T/requests.jsonl")"
# A tenant's sandbox from that template, through the API (no allow rules:
# the template's network device lets nothing out).
SANDBOXES="$SANDBOXES puller.fromtpl"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/tok")" \
	-d '{"name":"fromtpl","template":"tpl"}' "http://127.0.0.1:$PORT/v1/sandboxes")
expect_eq "create from a template through mvm serve: $(cat "$T/body")" 201 "$code"
curl -sS -H "Authorization: Bearer $(cat "$T/tok")" -d '{"cmd":["cat","/root/note"]}' \
	"http://127.0.0.1:$PORT/v1/sandboxes/fromtpl/exec" > "$T/exec.ndjson" || fail "exec through mvm serve"
expect_match "the API's sandbox has the template's file" '"data":"travelled\\n"' "$(cat "$T/exec.ndjson")"
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $(cat "$T/tok")" \
	"http://127.0.0.1:$PORT/v1/sandboxes/fromtpl")
expect_eq "delete through mvm serve" 200 "$code"
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true
trap h2_cleanup EXIT

# Under another name: imported again, the image reused by its digest.
h2 template import "$T/b.tpl" --name tpl2
[ "$rc" = 0 ] || fail "import --name: $(cat "$T/err")"
expect_match "the image is reused by digest" "image: $H2/images/root.ext4 \(already in the store" \
	"$(cat "$T/out")"
expect_eq "one image in the second store" "root.ext4" "$(ls -A "$H2/images")"

# The second host's export goes back home; its name is taken there by
# another template unless --name is given.
h2 template export tpl2 "$T/back.tpl"
[ "$rc" = 0 ] || fail "export on the second host: $(cat "$T/err")"
run_mvm template import "$T/back.tpl" --name tpl
[ "$rc" != 0 ] || fail "import over another template succeeded"
expect_match "a name conflict is refused" "template named tpl already exists and is not this bundle.*--name" \
	"$(cat "$T/err")"
run_mvm template import "$T/back.tpl"
[ "$rc" = 0 ] || fail "import back home: $(cat "$T/err")"
expect_match "back home, the image is the store's own" "image: $T/images/root.ext4 \(already in the store" \
	"$(cat "$T/out")"
SANDBOXES="$SANDBOXES c2"
run_mvm create c2 --template tpl2
[ "$rc" = 0 ] || fail "create from the returned template: $(cat "$T/err")"
run_mvm exec c2 -- cat /root/note
expect_eq "the returned template has the file" "travelled" "$(cat "$T/out")"
echo "template-bundle: ok" >&2
