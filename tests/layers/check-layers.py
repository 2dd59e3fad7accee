#!/usr/bin/env python3
"""The layout rules of docs/ARCHITECTURE.md, checked on the source tree.

1. Folders include only their own layer or layers below (LAYERS, bottom
   first; folders on one line are siblings) and no include cycle exists
   between product folders.
2. No product folder holds more than 30% of the product's .c files directly.
3. No global function defined in a CLI verb file (tools/cli/cmd_*.c) is
   used outside tools/cli/ (verb files parse arguments and print results).
4. No file of tools/cli/ calls a system call that does a verb's work
   (RUNTIME_CALLS: processes, sockets, files opened, read, written or
   changed, directories listed): that goes to tools/sandbox/, tools/promote/
   or lower, and the verb calls it. Printing to stdout/stderr is stdio's.
Exit 0 when all hold; otherwise one line per violation and exit 1.
"""
import os, re, sys

LAYERS = [
    ["common"],
    ["vmm/confine", "vmm/arch", "vmm/arch/arm64"],
    ["vmm", "vmm/arch/x86", "vmm/arch/arm64/kvm", "vmm/arch/arm64/seam"],
    ["devices/netpolicy", "images"],
    ["devices"],
    ["snapshots"],
    ["tools/sandbox", "tools/nethelper"],
    ["tools/promote"],
    ["tools/mcp", "tools/serve"],
    ["tools/cli"],
]
# Shared with the guest agent: protocol and tree codecs, pure C.
SHARED = {"guest/agent": 0}
RANK = {d: i for i, row in enumerate(LAYERS) for d in row}
RANK.update(SHARED)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# The proxy for "does runtime work" in rule 4. No exceptions list: a verb
# that needs one of these needs a function in a lower layer instead.
RUNTIME_CALLS = (
    "fork vfork clone execl execlp execle execv execvp execve posix_spawn posix_spawnp "
    "system popen waitpid wait wait4 kill "
    "socket socketpair connect bind listen accept accept4 "
    "open openat creat fopen fdopen read pread write pwrite readv writev sendfile "
    "mkdir mkdirat rmdir unlink unlinkat rename renameat link symlink chmod fchmod "
    "chown fchown truncate ftruncate mmap opendir fdopendir chdir dup2 pipe pipe2"
).split()
RUNTIME_CALL = re.compile(r"(?<![\w.>])(" + "|".join(RUNTIME_CALLS) + r")\s*\(")
COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', re.S)
FUNC_DEF = re.compile(r'^(?!static\b)[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;{]*\)\s*\{', re.M)


def product_files(root, exts):
    for d in RANK:
        p = os.path.join(root, d)
        if not os.path.isdir(p):
            continue
        for f in sorted(os.listdir(p)):
            if f.endswith(exts):
                yield d, os.path.join(d, f)


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
        return fh.read()


def check_includes(root, errors):
    edges = {}
    for d, rel in product_files(root, (".c", ".h")):
        if d in SHARED:
            continue
        for inc in INCLUDE.findall(read(root, rel)):
            to = os.path.dirname(inc)
            if to == d or to not in RANK:
                continue
            edges.setdefault(d, set()).add(to)
            if RANK[to] > RANK[d]:
                errors.append(f"layer: {rel} includes {inc} ({to} is above {d})")
    # Cycles between folders (also among siblings of one layer).
    state = {}

    def visit(n, path):
        state[n] = 1
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                errors.append("cycle: " + " -> ".join(path[path.index(m):] + [m]))
            elif m not in state:
                visit(m, path + [m])
        state[n] = 2

    for n in sorted(edges):
        if n not in state:
            visit(n, [n])


def check_sizes(root, errors):
    counts = {}
    for d, _ in product_files(root, (".c",)):
        if d not in SHARED:
            counts[d] = counts.get(d, 0) + 1
    total = sum(counts.values())
    for d, n in sorted(counts.items()):
        if n * 100 > total * 30:
            errors.append(f"size: {d}/ holds {n} of {total} .c files (over 30%)")


def check_cli_exports(root, errors):
    cli = "tools/cli"
    exported = {}
    for f in sorted(os.listdir(os.path.join(root, cli))):
        if f.startswith("cmd_") and f.endswith(".c"):
            for name in FUNC_DEF.findall(read(root, os.path.join(cli, f))):
                exported[name] = f
    if not exported:
        return
    use = re.compile(r"\b(" + "|".join(map(re.escape, exported)) + r")\s*\(")
    for d, rel in product_files(root, (".c", ".h")):
        if d == cli or d in SHARED:
            continue
        for name in sorted(set(use.findall(read(root, rel)))):
            errors.append(f"cli: {rel} uses {name}() of tools/cli/{exported[name]}")


def check_cli_calls(root, errors):
    cli = "tools/cli"
    for f in sorted(os.listdir(os.path.join(root, cli))):
        if not f.endswith(".c"):
            continue
        rel = os.path.join(cli, f)
        code = COMMENT_OR_STRING.sub('""', read(root, rel))
        for name in sorted(set(RUNTIME_CALL.findall(code))):
            errors.append(f"cli: {rel} calls {name}() (runtime work belongs below tools/cli/)")


def self_test():
    """Rule 4 on a made-up tree: a call is found; comments, strings and
    longer names that end in a system call's name are not."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "tools/cli"))
        with open(os.path.join(root, "tools/cli/cmd_x.c"), "w") as fh:
            fh.write('/* open(x) */\nstatic const char u[] = "read(FILE)";\n'
                     'static int f(void) { sb_mkdir(1); o->write(2); return fork(); }\n')
        errors = []
        check_cli_calls(root, errors)
    want = ["cli: tools/cli/cmd_x.c calls fork() (runtime work belongs below tools/cli/)"]
    if errors != want:
        print(f"layers self-test: expected {want}, got {errors}")
        return 1
    print("layers self-test: ok")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    errors = []
    check_includes(root, errors)
    check_sizes(root, errors)
    check_cli_exports(root, errors)
    check_cli_calls(root, errors)
    for e in errors:
        print(e)
    print(f"layers: {'ok' if not errors else str(len(errors)) + ' violation(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
