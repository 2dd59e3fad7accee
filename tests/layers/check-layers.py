#!/usr/bin/env python3
"""The layout rules of docs/ARCHITECTURE.md, checked on the source tree.

1. Folders include only their own layer or layers below (LAYERS, bottom
   first; folders on one line are siblings) and no include cycle exists
   between product folders.
2. No product folder holds more than 30% of the product's .c files directly.
3. No global function defined in a CLI verb file (tools/cli/cmd_*.c) is
   used outside tools/cli/ (verb files parse arguments and print results).
Exit 0 when all hold; otherwise one line per violation and exit 1.
"""
import os, re, sys

LAYERS = [
    ["common"],
    ["vmm/confine"],
    ["vmm"],
    ["devices/netpolicy", "images"],
    ["devices"],
    ["snapshots"],
    ["tools/sandbox", "tools/nethelper"],
    ["tools/promote"],
    ["tools/cli", "tools/mcp"],
]
# Shared with the guest agent: protocol and tree codecs, pure C.
SHARED = {"guest/agent": 0}
RANK = {d: i for i, row in enumerate(LAYERS) for d in row}
RANK.update(SHARED)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
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


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    errors = []
    check_includes(root, errors)
    check_sizes(root, errors)
    check_cli_exports(root, errors)
    for e in errors:
        print(e)
    print(f"layers: {'ok' if not errors else str(len(errors)) + ' violation(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
