#!/usr/bin/env python3
"""Runs the adversarial corpus (corpus.py) against the real `schedlab` binary.

usage: run.py --cli build/schedlab [--work DIR] [--timeout 60] [--only NAME] [--no-scale]

Every case asserts its exit code (never 3, never a signal), the one-line
message and the files that must not be left behind; each is bounded by
--timeout so a hang fails instead of stalling. Wall times are printed as
`bench:` lines (measured, never asserted). Ends with `N passed, N failed`.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402


def expand(args, paths, work):
    out = []
    for a in args:
        a = a.replace("{dir}", work)
        for name, p in paths.items():
            a = a.replace("{" + name + "}", p)
        out.append(a)
    return out


def run_case(case, cli, work, timeout):
    """Returns (ok, detail, seconds)."""
    cdir = os.path.join(work, case.name)
    os.makedirs(cdir, exist_ok=True)
    if case.setup:
        case.setup(cdir)
    paths = {}
    for fname, make in case.files.items():
        p = os.path.join(cdir, fname)
        corpus.write_file(p, make)
        paths[fname] = p
    for step in case.before:
        r = subprocess.run([cli] + expand(step, paths, cdir), capture_output=True, timeout=timeout)
        if r.returncode != 0:
            return False, f"setup step failed ({r.returncode}): {r.stdout.decode(errors='replace')}{r.stderr.decode(errors='replace')}", 0.0
    argv = [cli] + expand(case.args, paths, cdir)
    t0 = time.monotonic()
    try:
        r = subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False, f"no answer within {timeout} s (hang or super-linear pass)", time.monotonic() - t0
    secs = time.monotonic() - t0
    text = (r.stdout + r.stderr).decode("utf-8", errors="replace")
    if r.returncode not in case.codes:
        return False, f"exit {r.returncode}, expected {case.codes}: {text.strip()[:400]}", secs
    if r.returncode != 0:
        lines = [ln for ln in r.stderr.decode("utf-8", errors="replace").splitlines() if ln.strip()]
        if len(lines) != 1:
            return False, f"expected one error line on stderr, got {len(lines)}: {text.strip()[:400]}", secs
    if case.message and not re.search(case.message, text):
        return False, f"message does not match /{case.message}/: {text.strip()[:400]}", secs
    for name in case.absent:
        if os.path.lexists(os.path.join(cdir, name)):
            return False, f"left {name} behind", secs
    leftovers = [f for f in os.listdir(cdir) if re.search(r"\.tmp\d", f)]
    if leftovers:
        return False, f"left temporaries {leftovers}", secs
    return True, f"exit {r.returncode}", secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--only")
    ap.add_argument("--no-scale", action="store_true")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="schedlab-adversarial-")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    todo = corpus.cases() + ([] if a.no_scale else corpus.scale_cases())
    if a.only:
        todo = [c for c in todo if re.search(a.only, c.name)]
    passed = failed = 0
    for case in todo:
        ok, detail, secs = run_case(case, os.path.abspath(a.cli), work, a.timeout)
        print(f"{'ok  ' if ok else 'FAIL'} {case.name}: {detail}", flush=True)
        if case.name.startswith("scale_"):
            print(f"bench: adversarial {case.name}: {secs:.2f} s (whole process)", flush=True)
        passed += ok
        failed += not ok
    shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
