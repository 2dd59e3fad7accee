#!/usr/bin/env python3
"""No test in `make test` asserts on a duration (tests/README.md, "No timing").

Every clock reading in a test file (shell `date +%s`, Python `time.time()`,
C `clock_gettime()`, JavaScript `Date.now()`, ...) must be listed in ALLOW
below with its kind and why. The kinds:

  hang-guard        a deadline that only stops a test that would otherwise
                    wait forever; passing it fails the test as hung
  report            a duration printed for people, never compared
  clock-under-test  the value of a clock is the property (a guest clock set
                    from the host's, read between two host readings; the
                    clock helpers themselves)
  seed              a random seed, not a duration

And no value read on a "report" line may reach an assertion: names assigned
from it (and names computed from those) must not appear on a line that
asserts or compares. Entries that match nothing are errors too, so the list
stays true.

Usage: no-timing.py [--self-test] [ROOT]
"""
import os
import re
import sys
import tempfile

# The test files of `make test` (tests/README.md). Benchmarks (tests/bench)
# measure time by design and are not here; nor is the box (tests/nested).
SCANNED = [
    ("tests/integration", (".sh", ".lib", ".py", ".c")),
    ("tests/unit", (".c", ".h")),
    ("tests/tsan", (".c", ".h")),
    ("tests/arm64", (".c", ".h")),
    ("tests/fuzz", (".c",)),
    ("tests/docs", (".sh",)),
    ("tests/mcp", (".mjs", ".js")),
    ("tests/browser", (".mjs", ".js")),
    ("sdk/python/tests", (".py",)),
]

CLOCK = re.compile(
    r"date \+%[sN]|\$SECONDS|\$\{SECONDS\}|/proc/uptime"
    r"|\btime\.(?:time|monotonic|perf_counter|process_time)(?:_ns)?\("
    r"|\bdatetime\.(?:now|utcnow)\("
    r"|\bclock_gettime\(|\bgettimeofday\(|\bmono_now_(?:s|ms|ns)\(|\bwall_now_s\(|\btime\(NULL\)"
    r"|\bDate\.now\(|\bperformance\.now\(|\bprocess\.hrtime|\bnew Date\(\)"
)
# A line that asserts or compares (shell, Python, C, JavaScript).
ASSERTS = re.compile(
    r"\bfail\b|\bexpect_(?:eq|match)\b|\bassert\b|\bcr_(?:assert|expect)\w*|\bexpect\("
    r"|\s-(?:lt|le|gt|ge|eq|ne)\s|\(\(.*[<>].*\)\)|[^<>\-=]\s*[<>]=?\s*[\w$(]"
)
ASSIGN = re.compile(r"(?:^|[\s;({])([A-Za-z_]\w*)(?:\[\w*\])?\s*\+?=(?!=)")
KINDS = {"hang-guard", "report", "clock-under-test", "seed"}

# (file, regex over the line, kind, why). Keep each entry's why honest.
ALLOW = [
    # Deadlines of polling loops: without them a broken sandbox hangs the suite.
    ("tests/integration/confine-attack.sh", r"deadline=|-lt \"\$deadline\"", "hang-guard",
     "waits up to 60 s for the attack's report"),
    ("tests/integration/confine-nethelper.sh", r"deadline=|-lt \"\$deadline\"", "hang-guard",
     "waits up to 30 s for the VMM to report its helper's death"),
    ("tests/integration/confine-strace.sh", r"deadline=|-lt \"\$deadline\"", "hang-guard",
     "waits up to 300 s for a boot under strace"),
    ("tests/integration/sandbox.lib", r"deadline=|-lt \"\$deadline\"", "hang-guard",
     "run_vmm_pid waits up to 120 s for `mvm run`'s guest"),
    ("tests/integration/net.lib", r"deadline = time\.time\(\) \+ 90|while time\.time\(\) < deadline",
     "hang-guard", "waits up to 90 s for the test host's servers"),
    ("tests/integration/cdp_nav.py", r"DEADLINE = time\.time\(\)|DEADLINE - time\.time\(\)",
     "hang-guard", "the CDP client's overall time limit (CDP_TIMEOUT)"),
    ("tests/unit/test_net_helper.c", r"mono_now_ms\(\)", "hang-guard",
     "pump() runs the loop until a flag is set or the limit passes; callers assert the flag"),
    ("sdk/python/tests/test_sdk.py", r"deadline = time\.monotonic\(\) \+ 120|time\.monotonic\(\) < deadline",
     "hang-guard", "waits up to 120 s for the lifetime watchdog to remove a sandbox"),
    ("tests/integration/serve-api.sh", r"deadline=\$\(\( \$\(date|-lt \"\$deadline\"", "hang-guard",
     "waits up to 30 s for mvm serve to answer its health check"),
    ("tests/unit/test_sandbox_vm_config.c", r"c\.expires = \(double\)time\(NULL\) [+-]", "clock-under-test",
     "a lifetime's end is a wall-clock time: one an hour ahead, one just past"),
    ("tests/integration/sandbox-lifetime.sh", r"deadline=\$\(\( \$\(date|-lt \"\$deadline\"", "hang-guard",
     "waits up to 300 s for the VMM to end a 60 s lifetime"),
    ("tests/integration/template-bundle.sh", r"deadline=\$\(\( \$\(date|-lt \"\$deadline\"", "hang-guard",
     "waits up to 30 s for mvm serve to answer its health check"),
    # Durations printed for the log (the per-test table, browser steps).
    ("tests/integration/run-all.sh", r"start=\$\(date|secs=\$\(\( \$\(date", "report",
     "each test's duration for the summary table"),
    ("tests/integration/run-all.sh", r"t1=\$\(date|- t1 \)\) -ge \"\$limit\"", "hang-guard",
     "a test KILLed (137) once its limit passed was ended by the limit: a timeout, not a crash"),
    ("tests/integration/lib.sh", r"T0=\$\(date|\$\(date \+%s\) - T0", "report",
     "each step's start time, and when the limit ended a test, for the log"),
    ("tests/integration/browser-cdp.sh", r"t_start=|t[0-2]=\$\(date|\$\(date \+%s\) - t|\$\(date \+%s%N\) - t0",
     "report", "how long each browser step took, for the log"),
    ("tests/integration/browser-image.sh", r"t0=\$\(date|(start|shot)_s=", "report",
     "Chromium's start and a screenshot, for the log"),
    ("tests/integration/sandbox-image.sh", r"t_tpl=|t0=\$\(date|\$\(date \+%s%N\) - t", "report",
     "template creation and checks, for the log"),
    ("tests/browser/cdp-check.mjs", r"const t0 = Date\.now\(\)|after_ms: Date\.now\(\) - t0", "report",
     "hold: when the connection dropped, printed beside the verdict"),
    ("tests/integration/template.sh", r"t0=\$\(date|t_start=\$\(\( \(\$\(date|t_begin = time\.monotonic\(\)|time\.monotonic\(\) - t_begin\)", "report",
     "what hashing a template's memory file at every start would add, printed beside a start"),
    # The clock is the property.
    ("tests/integration/snap-fork.sh", r"h0=\$\(date \+%s\); gx", "clock-under-test",
     "a restored guest's clock, read between two host readings"),
    ("tests/integration/snap-rollback.sh", r"h0=\$\(date \+%s\); gexec", "clock-under-test",
     "the guest's clock after a rollback, read between two host readings"),
    ("tests/integration/template.sh", r"h0=\$\(date \+%s\); gx", "clock-under-test",
     "a template sandbox's clock, read between two host readings"),
    ("tests/unit/test_common_fs_util.c", r"mono_now_|wall_now_s\(\)", "clock-under-test",
     "common/mono_time.c itself: units bracketed, and nanosleep's guaranteed lower bound"),
    ("tests/unit/test_sandbox_api.c", r"vm->t0 = mono_now_s\(\)", "clock-under-test",
     "a fixture's VM start time, for the status reply's uptime field"),
    # Seeds.
    ("tests/integration/blk_aio.c", r"rng \^= \(uint64_t\)time\(NULL\)", "seed", "random offsets"),
    ("tests/unit/test_qcow2_crash.c", r"rs = \(uint64_t\)time\(NULL\)", "seed", "random crash points"),
]


def scanned_files(root):
    for d, exts in SCANNED:
        top = os.path.join(root, d)
        for dirpath, dirs, files in os.walk(top):
            dirs[:] = [x for x in dirs if x not in ("node_modules", "corpus", "criterion")]
            for f in sorted(files):
                if f.endswith(exts):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def names_in(line):
    return set(re.findall(r"[A-Za-z_]\w*", line))


def check_file(rel, text, allow):
    """Errors for one file; marks the allow entries it used in allow[i][4]."""
    errs = []
    tainted = set()
    entries = [e for e in allow if e[0] == rel]
    lines = text.splitlines()
    for no, line in enumerate(lines, 1):
        code = line.split("#", 1)[0] if rel.endswith((".sh", ".lib", ".py")) else line
        if line.lstrip().startswith(("//", "/*", "* ")):
            continue
        if CLOCK.search(code):
            hit = next((e for e in entries if re.search(e[1], line)), None)
            if not hit:
                errs.append(f"{rel}:{no}: a clock read in a test: a duration assertion? "
                            f"Make it structural, or justify it in ALLOW (tests/README.md): {line.strip()}")
                continue
            hit[4] = True
            if hit[2] == "report":
                if ASSERTS.search(code):
                    errs.append(f"{rel}:{no}: a reported duration is asserted on: {line.strip()}")
                tainted |= {m.group(1) for m in ASSIGN.finditer(code)}
            continue
        if tainted:
            used = names_in(code) & tainted
            lhs = {m.group(1) for m in ASSIGN.finditer(code)}
            if used and lhs and not ASSERTS.search(code):
                tainted |= lhs
            elif used and ASSERTS.search(code):
                errs.append(f"{rel}:{no}: a reported duration ({', '.join(sorted(used))}) "
                            f"reaches an assertion: {line.strip()}")
    return errs


def run(root, allow):
    allow = [list(e) + [False] for e in allow]
    errs = []
    for e in allow:
        if e[2] not in KINDS:
            errs.append(f"ALLOW: {e[0]}: unknown kind {e[2]}")
    for rel in scanned_files(root):
        with open(os.path.join(root, rel), errors="replace") as f:
            errs += check_file(rel, f.read(), allow)
    errs += [f"ALLOW: {e[0]}: /{e[1]}/ matches no clock read (stale entry)" for e in allow if not e[4]]
    return errs


def self_test():
    bad = {
        "tests/integration/lat.sh":
            't0=$(date +%s%N)\nmvm exec x -- true\n'
            '[ $(( ($(date +%s%N) - t0) / 1000000 )) -le 500 ] || fail "slow"\n',
        "tests/unit/test_fast.c":
            "long t0 = now_ms();\nstatic long now_ms(void) { clock_gettime(CLOCK_MONOTONIC, &t); }\n"
            "cr_assert_lt(now_ms() - t0, 5000);\n",
        "sdk/python/tests/test_fast.py":
            "start = time.monotonic()\nrun()\nassert time.monotonic() - start < 60\n",
        "tests/integration/guest.sh":
            "mvm run -- sh -c 's=$(date +%s); wget x; e=$(date +%s); echo secs=$((e - s))'\n"
            "expect_match fast 'secs=[012]' \"$(cat out)\"\n",
        "tests/integration/sneaky.sh":
            't0=$(date +%s)\nwork\nt1=$(date +%s)\nd=$((t1 - t0))\n[ "$d" -lt 5 ] || fail "too slow"\n',
        "tests/mcp/fast.mjs": "const t0 = Date.now();\nawait x();\nexpect(Date.now() - t0 < 100);\n",
        "tests/integration/inline.sh":
            't0=$(date +%s)\nwork\n[ $(( $(date +%s) - t0 )) -lt 5 ] || fail "slow"\n',
    }
    good = {
        "tests/integration/poll.sh":
            'deadline=$(( $(date +%s) + 60 ))\nwhile [ "$(date +%s)" -lt "$deadline" ]; do :; done\n',
        "tests/integration/log.sh":
            't0=$(date +%s)\nwork\necho "took $(( $(date +%s) - t0 )) s"\nexpect_eq "answer" 42 "$x"\n',
        "tests/unit/test_plain.c": "cr_assert_eq(f(), 0);\n",
        "tests/integration/quiet.sh": "# date +%s would be flagged in code, not in a comment\nexpect_eq a 1 1\n",
    }
    allow = [
        ("tests/integration/poll.sh", r"deadline=|-lt \"\$deadline\"", "hang-guard", "planted"),
        ("tests/integration/log.sh", r"t0=|date \+%s\) - t0", "report", "planted"),
        ("tests/integration/inline.sh", r"t0=|date \+%s\) - t0", "report", "planted: compared inline"),
        ("tests/integration/sneaky.sh", r"t[01]=\$\(date", "report", "planted: reported, then compared"),
    ]
    fails = 0
    with tempfile.TemporaryDirectory() as root:
        for rel, text in {**bad, **good}.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        errs = run(root, allow)
        for rel in bad:
            if not any(e.startswith(rel + ":") for e in errs):
                print(f"self-test: {rel} (a duration assertion) was not flagged")
                fails += 1
        for rel in good:
            for e in errs:
                if e.startswith(rel + ":"):
                    print(f"self-test: {rel} flagged wrongly: {e}")
                    fails += 1
        stale = run(root, allow + [("tests/unit/test_plain.c", r"nothing", "report", "stale")])
        if not any("stale entry" in e for e in stale):
            print("self-test: a stale ALLOW entry was not reported")
            fails += 1
    print(f"no-timing self-test: {'ok' if not fails else f'{fails} failed'}")
    return 1 if fails else 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    args = [a for a in argv if not a.startswith("-")]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    errs = run(os.path.abspath(root), ALLOW)
    for e in errs:
        print(e)
    if errs:
        print(f"no-timing: {len(errs)} problem(s): no test in `make test` may assert on a duration "
              "(tests/README.md)")
        return 1
    print("no-timing: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
