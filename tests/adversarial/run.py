#!/usr/bin/env python3
"""Runs a hostile corpus against the real `schedlab` binary: the adversarial
corpus (corpus.py: graphs, options, knobs, outputs, signals) or, with
`--set hostile`, issue 30's (tests/hostile/hostile_corpus.py: profiles,
measured files, folder walks, generators' limits, the output policy).

usage: run.py --cli build/schedlab [--set adversarial|hostile] [--work DIR] [--timeout 60]
              [--max-rss-mb 1024] [--sanitized] [--only NAME] [--no-scale]

Every case asserts its exit code (never 3, never a signal), the one-line
message (no control byte in it), the files that must not be left behind and
those that must not change; each is bounded by --timeout (a hang fails
instead of stalling) and by --max-rss-mb (the process is killed above it,
and its peak resident memory is checked when it ends). --sanitized skips
the cases that need an address-space limit, which ASan cannot run under.
Wall times are printed as `bench:` lines (measured, never asserted). Ends
with `N passed, N failed`.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "hostile"))
import corpus  # noqa: E402


def expand(args, paths, work):
    out = []
    for a in args:
        a = a.replace("{dir}", work)
        for name, p in paths.items():
            a = a.replace("{" + name + "}", p)
        out.append(a)
    return out


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_bounded(argv, timeout, max_rss_mb, stdin_path=None, rlimit_as_mb=None):
    """Runs argv with its time and memory bounded. Returns (returncode or
    None on timeout, stdout, stderr, peak RSS in MB, killed-for-memory)."""
    def limit():
        if rlimit_as_mb:
            resource.setrlimit(resource.RLIMIT_AS, (rlimit_as_mb << 20, rlimit_as_mb << 20))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            open(stdin_path or os.devnull, "rb") as stdin:
        proc = subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=err, preexec_fn=limit)
        deadline, killed_for_memory, code, peak_kb = time.monotonic() + timeout, False, None, 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                code = os.waitstatus_to_exitcode(status)
                peak_kb = max(peak_kb, usage.ru_maxrss)
                break
            peak_kb = max(peak_kb, rss_kb(proc.pid))
            if peak_kb > max_rss_mb * 1024:
                killed_for_memory = True
            if killed_for_memory or time.monotonic() > deadline:
                proc.send_signal(signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
                peak_kb = max(peak_kb, usage.ru_maxrss)
                code = None
                break
            time.sleep(0.01)
        proc.returncode = code if code is not None else -9
        out.seek(0)
        err.seek(0)
        return code, out.read(), err.read(), peak_kb / 1024, killed_for_memory


def run_case(case, cli, work, timeout, max_rss_mb=1024):
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
    unchanged = {name: open(os.path.join(cdir, name), "rb").read() for name in getattr(case, "unchanged", [])}
    argv = [cli] + expand(case.args, paths, cdir)
    stdin = expand([case.stdin], paths, cdir)[0] if getattr(case, "stdin", None) else None
    t0 = time.monotonic()
    code, stdout, stderr, peak_mb, killed_for_memory = run_bounded(argv, timeout, max_rss_mb, stdin, getattr(case, "rlimit_as_mb", None))
    secs = time.monotonic() - t0
    text = (stdout + stderr).decode("utf-8", errors="replace")
    if killed_for_memory:
        return False, f"killed above {max_rss_mb} MB resident (a buffer as large as the input, or larger)", secs
    if code is None:
        return False, f"no answer within {timeout} s (hang or super-linear pass)", secs
    if peak_mb > max_rss_mb:
        return False, f"peak resident memory {peak_mb:.0f} MB, above {max_rss_mb} MB", secs
    if code not in case.codes:
        return False, f"exit {code}, expected {case.codes}: {text.strip()[:400]}", secs
    if code != 0:
        lines = [ln for ln in stderr.decode("utf-8", errors="replace").splitlines() if ln.strip()]
        if len(lines) != 1:
            return False, f"expected one error line on stderr, got {len(lines)}: {text.strip()[:400]}", secs
        if re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", stderr):
            return False, f"a control byte in the message: {stderr[:400]!r}", secs
    if case.message and not re.search(case.message, text):
        return False, f"message does not match /{case.message}/: {text.strip()[:400]}", secs
    for name in case.absent:
        if os.path.lexists(os.path.join(cdir, name)):
            return False, f"left {name} behind", secs
    for name, before in unchanged.items():
        if open(os.path.join(cdir, name), "rb").read() != before:
            return False, f"changed its input {name}", secs
    leftovers = [f for f in os.listdir(cdir) if re.search(r"\.tmp\w{6}$|\.tmp\d", f)]
    if leftovers:
        return False, f"left temporaries {leftovers}", secs
    return True, f"exit {code}, {peak_mb:.0f} MB", secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--set", choices=("adversarial", "hostile"), default="adversarial")
    ap.add_argument("--work")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--max-rss-mb", type=int, default=4096)
    ap.add_argument("--sanitized", action="store_true")
    ap.add_argument("--only")
    ap.add_argument("--no-scale", action="store_true")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="schedlab-adversarial-")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if a.set == "hostile":
        import hostile_corpus
        todo = [c for c in hostile_corpus.cases() if not (a.sanitized and c.rlimit_as_mb)]
    else:
        todo = corpus.cases() + ([] if a.no_scale else corpus.scale_cases())
    if a.only:
        todo = [c for c in todo if re.search(a.only, c.name)]
    passed = failed = 0
    for case in todo:
        ok, detail, secs = run_case(case, os.path.abspath(a.cli), work, a.timeout, a.max_rss_mb)
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
