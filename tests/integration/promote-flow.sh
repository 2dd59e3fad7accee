#!/bin/sh
# The normal promotion flow: a host repository copied in, changed in the
# sandbox (edit, add, delete, rename, chmod +x); mvm diff's patch applies to
# the host original with git apply and gives exactly what mvm export copies
# out; mvm promote with passing checks exits 0 with a matching bundle.
. tests/integration/lib.sh
. tests/integration/sandbox.lib

command -v git >/dev/null || skip "git is not installed on the host"
G="git -c user.email=t@example.invalid -c user.name=t"
mkdir -p "$T/repo/lib" "$T/repo/docs"
seq 1 50 > "$T/repo/lib/numbers.txt"
printf 'def f():\n    return 1\n' > "$T/repo/lib/code.py"
printf 'old doc\n' > "$T/repo/docs/old.md"
printf 'unchanged\n' > "$T/repo/docs/move-me.md"
printf '#!/bin/sh\necho run\n' > "$T/repo/run.sh"
(cd "$T/repo" && git init -q && $G add -A && $G commit -qm base)

sb_create flow --copy "$T/repo:/data/"
run_mvm exec flow -- sh -c '
	set -e; cd /data/repo
	sed -i "s/^25$/twenty-five/" lib/numbers.txt
	printf "def f():\n    return 2\n\ndef g():\n    return 3\n" > lib/code.py
	rm docs/old.md
	mv docs/move-me.md docs/moved.md
	chmod +x run.sh
	mkdir -p new && printf "fresh\n" > new/file.txt'
expect_eq "change the workspace" 0 "$rc"

run_mvm diff flow
expect_eq "mvm diff" 0 "$rc"
cp "$T/out" "$T/patch"
grep -q '^rename from docs/move-me.md$' "$T/patch" || fail "rename not marked"
grep -q '^deleted file mode 100644$' "$T/patch" || fail "deletion not marked"
grep -q '^old mode 100644$' "$T/patch" || fail "mode change not marked"
grep -q '^new file mode 100644$' "$T/patch" || fail "new file not marked"

# A subtree: only its changes, with paths still relative to the copied tree.
run_mvm diff flow /data/repo/lib
expect_eq "mvm diff of a subtree" 0 "$rc"
expect_eq "subtree files" "a/lib/code.py a/lib/numbers.txt" \
	"$(grep '^diff --git' "$T/out" | cut -d' ' -f3 | tr '\n' ' ' | sed 's/ $//')"

run_mvm export flow /data/repo "$T/exported"
expect_eq "mvm export" 0 "$rc"
git clone -q "$T/repo" "$T/applied"
(cd "$T/applied" && git apply --check "$T/patch" && git apply "$T/patch") || fail "git apply"
diff -r -x .git "$T/applied" "$T/exported" || fail "patched host copy differs from the export"
[ -x "$T/applied/run.sh" ] || fail "mode change not applied"

run_mvm promote flow --check 'grep -q twenty-five lib/numbers.txt' --check 'test -x run.sh' --out "$T/bundle"
expect_eq "promote with passing checks" 0 "$rc"
cmp -s "$T/bundle/changes.patch" "$T/patch" || fail "bundle patch differs from mvm diff"
python3 - "$T/bundle/report.json" "$(sha256sum "$T/patch" | cut -d' ' -f1)" <<'PY' || fail "report.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["checks_passed"] is True and len(r["checks"]) == 2, r["checks"]
assert r["patch"]["sha256"] == sys.argv[2]
assert r["patch"]["renamed"] == 1 and r["patch"]["deleted"] == 1, r["patch"]
assert r["workspace"]["guest_path"] == "/data/repo", r["workspace"]
PY
# The baseline (a subdirectory of the state dir) goes with the sandbox.
run_mvm rm -f flow
expect_eq "mvm rm" 0 "$rc"
[ ! -e "$MVM_STATE_DIR/flow" ] || fail "state left behind: $(ls -R "$MVM_STATE_DIR/flow")"
echo "promote-flow: ok"
