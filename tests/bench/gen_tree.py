#!/usr/bin/env python3
"""gen_tree.py DIR [MIB]: a reproducible tree of mixed file sizes (default 200 MiB).

The input of the create --copy and hashing benchmarks (tests/bench/create_copy.sh,
tests/bench/sha256_tree.c): about 3000 files in nested folders, most of them
small (source-tree-like, 1-32 KiB), a few hundred of 32-512 KiB and a handful
of 2-8 MiB, filled with seeded pseudo-random bytes so every run hashes the
same contents.
"""
import os
import random
import sys


def sizes(total, rng):
    left = total
    while left > 0:
        r = rng.random()
        if r < 0.9:
            n = rng.randint(1 << 10, 32 << 10)
        elif r < 0.995:
            n = rng.randint(32 << 10, 512 << 10)
        else:
            n = rng.randint(2 << 20, 8 << 20)
        n = min(n, left)
        left -= n
        yield n


def main():
    root = sys.argv[1]
    total = int(sys.argv[2] if len(sys.argv) > 2 else 200) << 20
    rng = random.Random(14)
    for i, n in enumerate(sizes(total, rng)):
        d = os.path.join(root, "d%02d" % (i % 37), "s%d" % (i % 5))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%05d.bin" % i), "wb") as f:
            f.write(rng.randbytes(n))
    print(i + 1, "files,", total >> 20, "MiB in", root)


if __name__ == "__main__":
    main()
