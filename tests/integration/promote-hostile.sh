#!/bin/sh
# The promotion gate against a hostile workspace: the guest plants git hooks,
# a filter driver in .gitattributes, core.fsmonitor and diff.external in
# .git/config, a symlink to /etc/passwd, a symlink loop, a FIFO, a 10 GiB
# sparse file and a filename with a newline. mvm diff, export and promote
# complete, run nothing from the guest on the host (marker files stay
# absent), follow no link outside and list what they refused.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

command -v git >/dev/null || skip "git is not installed on the host"
G="git -c user.email=t@example.invalid -c user.name=t"
mkdir -p "$T/repo/src"
printf 'hello\n' > "$T/repo/README"
printf 'echo app\n' > "$T/repo/src/app.sh"
(cd "$T/repo" && git init -q && $G add -A && $G commit -qm base)
echo precious > "$T/escape"

sb_create evil --copy "$T/repo:/data/repo"
# Every planted command would create a marker on the host if the host ran it.
M="$T/pwned"
run_mvm exec evil -- sh -c "
	set -e; cd /data/repo
	printf 'hello, world\n' > README
	for h in pre-commit post-checkout pre-applypatch post-applypatch fsmonitor-watchman; do
		printf '#!/bin/sh\ntouch $M-hook\n' > .git/hooks/\$h; chmod +x .git/hooks/\$h
	done
	printf '* filter=evil diff=evil\n' > .gitattributes
	printf '[core]\n\tfsmonitor = touch $M-fsmonitor\n[diff]\n\texternal = touch $M-external\n' >> .git/config
	printf '[filter \"evil\"]\n\tclean = touch $M-clean\n\tsmudge = touch $M-smudge\n[diff \"evil\"]\n\ttextconv = touch $M-textconv\n' >> .git/config
	ln -s /etc/passwd passwd
	ln -s ../../escape src/up
	ln -s loop-b loop-a; ln -s loop-a loop-b
	mkfifo fifo
	truncate -s 10G sparse
	printf 'x\n' > \"\$(printf 'new\nline')\"
	echo more > src/new.txt
	ln src/app.sh src/app-hardlink.sh"
expect_eq "plant the hostile tree" 0 "$rc"

rc=0; timeout 600 "$MVM" diff evil > "$T/patch" 2> "$T/diff.err" || rc=$?
[ "$rc" = 0 ] || cat "$T/diff.err" >&2
expect_eq "mvm diff" 0 "$rc"
grep -q '^+hello, world$' "$T/patch" || fail "README change missing from the patch"
grep -q '^diff --git a/src/new.txt b/src/new.txt$' "$T/patch" || fail "new file missing"
grep -q '^diff --git a/.gitattributes b/.gitattributes$' "$T/patch" || fail ".gitattributes is content"
! grep -q '\.git/' "$T/patch" || fail "git metadata in the patch"
! grep -q 'passwd\|fifo\|sparse\|app' "$T/patch" || fail "a refused entry in the patch"
for w in '\.git: git metadata' 'passwd: symlink to /etc/passwd' 'src/up: symlink' 'fifo: a FIFO' \
	'sparse: larger than' 'new\\nline: control character' '\.gitattributes: changes how git' \
	'src/app.sh: a hard link'; do
	grep -q "$w" "$T/diff.err" || { cat "$T/diff.err" >&2; fail "diff did not report /$w/"; }
done

rc=0; timeout 600 "$MVM" export evil /data/repo "$T/exp" 2> "$T/export.err" || rc=$?
[ "$rc" = 0 ] || cat "$T/export.err" >&2
expect_eq "mvm export" 0 "$rc"
expect_eq "exported README" "hello, world" "$(cat "$T/exp/README")"
expect_eq "inside loop kept as a link" "loop-b" "$(readlink "$T/exp/loop-a")"
for f in .git passwd src/up fifo sparse; do
	[ ! -e "$T/exp/$f" ] && [ ! -L "$T/exp/$f" ] || fail "export wrote $f"
done
[ "$(find "$T/exp" -name 'new?line' | wc -l)" = 0 ] || fail "export wrote the newline name"
grep -q 'skipped sparse: larger than' "$T/export.err" || fail "export did not report the sparse file"
[ -z "$(find "$T/exp" ! -type f ! -type d ! -type l)" ] || fail "special file exported"
ls -a "$T" | grep -q '\.exp\.mvm-' && fail "staging directory left behind"

# An existing HOST_DIR is never replaced.
rc=0; "$MVM" export evil /data/repo "$T/exp" 2> "$T/err" || rc=$?
[ "$rc" != 0 ] || fail "export over an existing directory succeeded"
expect_match "existing dir message" "already exists" "$(cat "$T/err")"

rc=0; timeout 900 "$MVM" promote evil --check 'test -f README' --check 'echo checking; exit 3' \
	--out "$T/bundle" 2> "$T/promote.err" || rc=$?
[ "$rc" = 1 ] || cat "$T/promote.err" >&2
expect_eq "promote with a failing check" 1 "$rc"
[ -f "$T/bundle/changes.patch" ] && [ -f "$T/bundle/report.json" ] || fail "bundle incomplete"
cmp -s "$T/bundle/changes.patch" "$T/patch" || fail "promote's patch differs from mvm diff's"
sha=$(sha256sum "$T/bundle/changes.patch" | cut -d' ' -f1)
python3 - "$T/bundle/report.json" "$sha" <<'PY' || fail "report.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["patch"]["sha256"] == sys.argv[2], r["patch"]
assert [c["exit_code"] for c in r["checks"]] == [0, 3], r["checks"]
assert r["checks_passed"] is False
assert all(c["duration_s"] >= 0 and c["log"] for c in r["checks"])
paths = {e["path"] for e in r["patch"]["not_compared"]}
assert {".git", "passwd", "fifo", "sparse", "new\nline"} <= paths, paths
assert "policy" in r["network"] and "denied" in r["network"]
assert "kernel" in r and "image" in r
PY
expect_eq "check log" "checking" "$(cat "$T/bundle/checks/2.log")"

# The host copy takes the patch; git on the host reads only the host's config.
(cd "$T/repo" && git apply --check "$T/bundle/changes.patch") || fail "git apply --check"
expect_eq "outside untouched" "precious" "$(cat "$T/escape")"
ls "$T" | grep -q '^pwned' && fail "a command planted by the guest ran on the host: $(ls "$T" | grep pwned)"
echo "promote-hostile: ok"
