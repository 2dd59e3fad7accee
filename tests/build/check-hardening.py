#!/usr/bin/env python3
"""Every binary mvm ships is built hardened (issue 27 item 11), read from the
ELF files themselves with readelf:

  PIE          ELF type DYN with DF_1_PIE (the guest's static binaries: static-pie)
  full RELRO   a PT_GNU_RELRO segment and BIND_NOW (-z relro -z now)
  NX stack     PT_GNU_STACK without the execute flag
  fortify      calls to glibc's checked functions (__*_chk; _FORTIFY_SOURCE)
  per file     every compiled file's recorded options (.GCC.command.line,
               -frecord-gcc-switches) hold -fstack-protector-strong,
               -fstack-clash-protection, -fcf-protection and -fPIE: these
               leave no other trace a reader can rely on

  check-hardening.py [--self-test] ELF...
--self-test first builds a hardened and a plain probe and proves the check
passes the one and names every missing item of the other."""
import os
import re
import subprocess
import sys
import tempfile

PER_FILE = [
    ("stack protector", re.compile(r"-fstack-protector-(strong|all)\b")),
    ("stack clash protection", re.compile(r"-fstack-clash-protection\b")),
    ("CET (-fcf-protection)", re.compile(r"-fcf-protection(=full|=branch|=return)?\b(?!=none)")),
    ("PIE code", re.compile(r"-f(PIE|pie|PIC|pic)\b")),
]


def readelf(*args):
    p = subprocess.run(["readelf", "-W", *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"check-hardening: readelf {' '.join(args)}: {p.stderr.strip()}")
    return p.stdout


def problems(path):
    """The hardening items @path lacks (empty: all there)."""
    out = []
    header, dynamic, segments = readelf("-h", path), readelf("-d", path), readelf("-l", path)
    if not re.search(r"Type:\s+DYN", header) or not re.search(r"FLAGS_1.*\bPIE\b", dynamic):
        out.append("not PIE")
    if "GNU_RELRO" not in segments:
        out.append("no RELRO segment")
    if not re.search(r"\(FLAGS\).*\bBIND_NOW\b|FLAGS_1.*\bNOW\b", dynamic):
        out.append("no BIND_NOW (-z now): RELRO is partial")
    stack = re.search(r"GNU_STACK(\s+\S+){5}\s+(\S+)", segments)
    if not stack or "E" in stack.group(2):
        out.append("executable or unmarked stack")
    syms = readelf("-s", path)
    if not re.search(r"\b__(?!stack_chk)\w+_chk\b", syms):
        out.append("no fortified calls (_FORTIFY_SOURCE)")
    p = subprocess.run(["readelf", "-W", "-p", ".GCC.command.line", path],
                       capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if re.search(r"\bGNU C", l)]
    if not lines:
        out.append("no recorded compiler options (-frecord-gcc-switches): cannot check the rest")
    for what, rx in PER_FILE:
        bad = [l for l in lines if not rx.search(l)]
        if bad:
            out.append(f"{what} missing in {len(bad)} of {len(lines)} compiled files "
                       f"(e.g. {bad[0].split(']', 1)[-1].strip()[:120]})")
    return out


def self_test():
    src = ('#include <stdio.h>\n#include <string.h>\n'
           'int main(int c, char **v) { char b[32]; strcpy(b, v[0]); return printf("%s", b) > c; }\n')
    hard = ["-O2", "-fstack-protector-strong", "-fstack-clash-protection", "-fcf-protection",
            "-fPIE", "-frecord-gcc-switches", "-D_FORTIFY_SOURCE=2", "-pie",
            "-Wl,-z,relro", "-Wl,-z,now"]
    plain = ["-O0", "-fno-stack-protector", "-fcf-protection=none", "-no-pie", "-Wl,-z,norelro",
             "-Wl,-z,lazy", "-frecord-gcc-switches"]
    with tempfile.TemporaryDirectory() as d:
        c = os.path.join(d, "p.c")
        open(c, "w").write(src)
        for name, flags in (("hard", hard), ("plain", plain), ("static", hard[:-3] + ["-static-pie", "-Wl,-z,relro", "-Wl,-z,now"])):
            subprocess.run([os.environ.get("CC", "gcc"), *flags, "-o", os.path.join(d, name), c], check=True)
        for ok in ("hard", "static"):
            if problems(os.path.join(d, ok)):
                raise SystemExit(f"check-hardening self-test: the hardened probe ({ok}) fails: "
                                 f"{problems(os.path.join(d, ok))}")
        got = problems(os.path.join(d, "plain"))
        want = ["not PIE", "no RELRO", "BIND_NOW", "fortified", "stack protector", "stack clash",
                "CET", "PIE code"]
        missed = [w for w in want if not any(w in g for g in got)]
        if missed:
            raise SystemExit(f"check-hardening self-test: the plain probe passed on {missed}: {got}")
    print("check-hardening: self-test ok")


def main(argv):
    if argv and argv[0] == "--self-test":
        self_test()
        argv = argv[1:]
    failed = 0
    for path in argv:
        if not os.path.exists(path):
            print(f"check-hardening: {path}: not built", file=sys.stderr)
            failed += 1
            continue
        for p in problems(path):
            print(f"check-hardening: {path}: {p}", file=sys.stderr)
            failed += 1
    if failed:
        return 1
    print(f"check-hardening: {len(argv)} binaries hardened")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
