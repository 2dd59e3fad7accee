#!/bin/sh
# Every `mvm ...` command shown in README.md's code blocks must still be one
# mvm accepts: its verb (and sub-verb, for image/net) answers --help, and each
# option it uses (before `--`) is one that verb's --help documents. Commands
# are only parsed here, never run (some would boot VMs or build images).
#   check-readme-commands.sh [MVM [FILE...]]   (default: build/mvm README.md)
# `--self-test` also proves the check fails on an unknown verb or option.
set -eu
cd "$(dirname "$0")/../.."
self_test=0
[ "${1:-}" != --self-test ] || { self_test=1; shift; }
mvm=${1:-build/mvm}
[ $# -eq 0 ] || shift
[ -x "$mvm" ] || { echo "check-readme-commands: $mvm not built" >&2; exit 2; }

check() { # FILE...
	python3 - "$mvm" "$@" <<'PY'
import re, shlex, subprocess, sys

mvm, files = sys.argv[1], sys.argv[2:]
SEPS = {";", "&&", "||", "|", "(", ")", "$(", "`"}
helps = {}

def help_of(words):
    key = tuple(words)
    if key not in helps:
        p = subprocess.run([mvm, *words, "--help"], capture_output=True, text=True)
        helps[key] = p.stdout if p.returncode == 0 else None
    return helps[key]

def commands(path):
    """(line number, argv after `mvm`) for each mvm command in the code blocks."""
    fence, block, buf, start = False, False, "", 0
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.lstrip().startswith("```"):
            # Shell blocks only (```sh, ```bash, ```console or unlabelled).
            fence, buf = not fence, ""
            block = fence and line.strip()[3:].strip() in ("", "sh", "bash", "shell", "console")
            continue
        if not block:
            continue
        if not buf:
            start = no
        buf += line.rstrip("\n")
        if buf.endswith("\\"):
            buf = buf[:-1] + " "
            continue
        lex = shlex.shlex(buf.replace("$(", " ( "), posix=True, punctuation_chars=";&|()<>")
        lex.whitespace_split, lex.commenters = True, "#"
        try:
            toks, buf = list(lex), ""
        except ValueError as e:
            toks, buf = [], ""
            if re.search(r"\bmvm ", line):
                yield start, ["(unparsable)", str(e)]
        for i, t in enumerate(toks):
            if t.rsplit("/", 1)[-1] != "mvm":
                continue
            argv = []
            for u in toks[i + 1:]:
                if u in SEPS:
                    break
                argv.append(u)
            yield start, argv

def problems(argv):
    if not argv:
        return ["no verb"]
    words = [argv[0]]
    text = help_of(words)
    if text is None:
        return [f"unknown verb '{argv[0]}' (mvm {argv[0]} --help fails)"]
    rest = argv[1:]
    subs = set(re.findall(rf"mvm {re.escape(argv[0])} ([a-z][a-z-]*)", text))
    if subs and rest and rest[0] in subs:
        words.append(rest[0])
        rest = rest[1:]
    elif subs and len(subs) > 1:
        return [f"'mvm {argv[0]}' needs one of: {', '.join(sorted(subs))}"]
    bad = []
    for t in rest:
        if t == "--":
            break
        if t.startswith("-") and t != "-" and t not in {"<", ">"}:
            opt = t.split("=", 1)[0]
            if not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text):
                bad.append(f"option '{opt}' is not in 'mvm {' '.join(words)} --help'")
    return bad

failed = n = 0
for path in files:
    for no, argv in commands(path):
        n += 1
        for p in problems(argv):
            failed += 1
            print(f"{path}:{no}: mvm {' '.join(argv)}: {p}", file=sys.stderr)
if n == 0:
    print(f"check-readme-commands: no mvm commands found in {' '.join(files)}", file=sys.stderr)
    sys.exit(1)
print(f"check-readme-commands: {n} commands, {failed} problems")
sys.exit(1 if failed else 0)
PY
}

[ $# -gt 0 ] || set -- README.md
check "$@"
[ "$self_test" = 1 ] || exit 0
# The check must fail on a verb or an option mvm does not know.
t=$(mktemp -d) && trap 'rm -rf "$t"' EXIT
for bad in 'mvm exec box --no-such-option -- true' 'mvm frobnicate box' 'mvm image grow x.img'; do
	printf '```sh\n%s\n```\n' "$bad" > "$t/README.md"
	if check "$t/README.md" 2>/dev/null >&2; then
		echo "check-readme-commands: self-test: '$bad' was accepted" >&2
		exit 1
	fi
done
echo "check-readme-commands: self-test: unknown verbs and options are refused"
