#!/usr/bin/env python3
"""Writes a fuzzer's seed corpus into OUT_DIR. For the graph fuzzers
(--kind graph, the default): the small real graphs under tests/data (pre-
and post-fusion, hand-made comm graphs) and the small graphs of the
adversarial corpus (extreme numbers, invalid UTF-8, BOM, overflowing indices
and runtimes). For --kind profile: the checked-in profiles and the hostile
profiles of tests/hostile; for --kind measured: the small measured files
under tests/data and the hostile measured files of tests/hostile.
Generated, never stored.

usage: make_seeds.py TESTS_DATA_DIR OUT_DIR [--kind graph|profile|measured] [--max-bytes 65536]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial"))
import corpus  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hostile"))
import hostile_corpus  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("out")
    ap.add_argument("--kind", choices=("graph", "profile", "measured", "trace"), default="graph")
    ap.add_argument("--max-bytes", type=int, default=64 * 1024)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.kind != "graph":
        n = 0
        if a.kind == "profile":
            real = [os.path.join(a.data, "..", "..", "profiles", f) for f in sorted(os.listdir(os.path.join(a.data, "..", "..", "profiles")))]
        else:
            suffix = ".measured.json" if a.kind == "measured" else ".trace.json"
            real = [os.path.join(r, f) for r, _, fs in os.walk(a.data) for f in sorted(fs) if f.endswith(suffix)]
        for p in real:
            if p.endswith(".json") and os.path.getsize(p) <= a.max_bytes:
                with open(p, "rb") as src, open(os.path.join(a.out, f"real_{n:03d}_{os.path.basename(p)}"), "wb") as dst:
                    dst.write(src.read())
                n += 1
        for name, data in hostile_corpus.seeds(a.kind):
            with open(os.path.join(a.out, f"hostile_{name}.json"), "wb") as f:
                f.write(data)
            n += 1
        print(f"{n} seeds in {a.out}")
        return
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
