#!/usr/bin/env python3
"""mvm, which is also every sandbox's VMM, loads none of the libraries that
belong to the programs beside it, read from the ELF files with readelf -d:

  libmicrohttpd, libgnutls   mvm-serve's (`mvm serve`)
  libarchive                 mvm-oci's (`mvm image import`)
  libslirp, libglib          mvm-net's (the network helper)
  libseccomp                 the build's (seccomp-gen compiles the filters)

Linked into mvm, libmicrohttpd and libarchive raised the VMM's memory
overhead to 4000 KiB against run-resources' bound of 3072 KiB; they live in
mvm-serve and mvm-oci since (tools/cli/cmd_beside.h). Each NEEDED entry is
followed into the library it names (found through ldconfig's cache), so a
new dependency that brings one of them along is caught too.

  check-needed.py [--self-test] ELF...
--self-test first links two probes, one with -larchive and one without, and
proves the check names the first and passes the second."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

FORBIDDEN = re.compile(r"^lib(microhttpd|gnutls|archive|slirp|glib-2\.0|seccomp)\.so")


def readelf_needed(path):
    p = subprocess.run(["readelf", "-W", "-d", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"check-needed: readelf -d {path}: {p.stderr.strip()}")
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", p.stdout)


def library_paths():
    """soname -> path of this machine's 64-bit libraries (ldconfig -p)."""
    exe = shutil.which("ldconfig") or "/sbin/ldconfig"
    p = subprocess.run([exe, "-p"], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"check-needed: {exe} -p: {p.stderr.strip()}")
    out = {}
    for m in re.finditer(r"^\s*(\S+) \(([^)]*)\) => (\S+)$", p.stdout, re.M):
        if "x86-64" in m.group(2) or "64bit" in m.group(2):
            out.setdefault(m.group(1), m.group(3))
    return out


def forbidden(path, libs):
    """The forbidden libraries @path loads, each with the chain that brings it."""
    found, seen, todo = [], set(), [(path, [])]
    while todo:
        elf, chain = todo.pop()
        for soname in readelf_needed(elf):
            if soname in seen:
                continue
            seen.add(soname)
            if FORBIDDEN.match(soname):
                found.append(" -> ".join(chain + [soname]))
            elif soname in libs:
                todo.append((libs[soname], chain + [soname]))
    return sorted(found)


def self_test(libs):
    src = "#include <archive.h>\nint main(void) { return archive_version_number() < 0; }\n"
    with tempfile.TemporaryDirectory() as d:
        c = os.path.join(d, "p.c")
        open(c, "w").write(src)
        cc = os.environ.get("CC", "gcc")
        subprocess.run([cc, "-o", os.path.join(d, "with"), c, "-larchive"], check=True)
        subprocess.run([cc, "-o", os.path.join(d, "without"), "-x", "c", "-"],
                       input="int main(void) { return 0; }\n", text=True, check=True)
        got = forbidden(os.path.join(d, "with"), libs)
        if not any(g.startswith("libarchive.so") for g in got):
            raise SystemExit(f"check-needed self-test: a probe linked with -larchive passed: {got}")
        got = forbidden(os.path.join(d, "without"), libs)
        if got:
            raise SystemExit(f"check-needed self-test: a plain probe failed: {got}")
    print("check-needed: self-test ok")


def main(argv):
    libs = library_paths()
    if argv and argv[0] == "--self-test":
        self_test(libs)
        argv = argv[1:]
    failed = 0
    for path in argv:
        if not os.path.exists(path):
            print(f"check-needed: {path}: not built", file=sys.stderr)
            failed += 1
            continue
        for chain in forbidden(path, libs):
            print(f"check-needed: {path} loads {chain}: it belongs to a program beside "
                  f"mvm (tests/build/check-needed.py)", file=sys.stderr)
            failed += 1
    if failed:
        return 1
    print(f"check-needed: {' '.join(argv)}: none of mvm-serve's, mvm-oci's, mvm-net's "
          f"or the build's libraries")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
