#!/usr/bin/env python3
"""Writes the fuzzer's starting corpus, fuzz/corpus/*: a few short operation
sequences in fuzz_allocator.c's encoding (first byte of each operation % 10:
0-2 alloc, 3 aligned alloc, 4 array alloc, 5 realloc, 6-8 free, 9 reset).
Run once; the files are committed. Not a fuzzer itself. fuzz/corpus/regress-*
are not written here: they are inputs the fuzzer once failed on, kept so that
every later run tries them first."""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def alloc(size, kind=0):  # pick_size: the low three bits choose the range
    r = (size << 3) | kind
    return bytes([0, r & 0xFF, (r >> 8) & 0xFF])


def entries():
    yield "alloc_free", alloc(0x10) + alloc(0x31, 4) + alloc(200, 7) + bytes([6, 0, 6, 0])
    yield "aligned", bytes([3, 6]) + alloc(0x41)[1:] + bytes([3, 12, 0x22, 0x01]) + bytes([7, 1, 7, 0])
    yield "realloc_grow_shrink", alloc(0x20) + bytes([5, 0, 0xFF, 0x10, 5, 0, 0x04, 0x00, 6, 0])
    yield "array", bytes([4, 7, 9, 5, 0, 30, 4, 16, 3, 6, 0, 6, 0])
    yield "reset", alloc(0x80) + alloc(0x11) + bytes([9]) + alloc(0x22) + bytes([9])
    rng = random.Random(4)
    yield "random_mix", bytes(rng.randrange(256) for _ in range(400))


def main():
    out = os.path.join(HERE, "corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in entries():
        path = os.path.join(out, name)
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
