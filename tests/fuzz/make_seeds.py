#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus into OUT_DIR: the small real graphs under
tests/data (pre- and post-fusion, hand-made comm graphs) and the small graphs
of the adversarial corpus (extreme numbers, invalid UTF-8, BOM, overflowing
indices and runtimes). Generated, never stored.

usage: make_seeds.py TESTS_DATA_DIR OUT_DIR [--max-bytes 65536]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial"))
import corpus  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("out")
    ap.add_argument("--max-bytes", type=int, default=64 * 1024)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    n = 0
    for root, _, files in os.walk(a.data):
        for f in sorted(files):
            p = os.path.join(root, f)
            if f.endswith(".json") and not f.endswith(".expected.json") and os.path.getsize(p) <= a.max_bytes:
                with open(p, "rb") as src, open(os.path.join(a.out, f"real_{n:03d}_{f}"), "wb") as dst:
                    dst.write(src.read())
                n += 1
    for case in corpus.cases():
        for fname, make in case.files.items():
            if case.seed and fname.endswith(".json") and fname == "g.json":
                corpus.write_file(os.path.join(a.out, f"adv_{case.name}.json"), make)
                n += 1
    print(f"{n} seeds in {a.out}")


if __name__ == "__main__":
    main()
