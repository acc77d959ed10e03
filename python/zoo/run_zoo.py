"""Export (and measure) the model zoo (cases.py): one capture per case, prefix = case name.

    PYTHONPATH=python python3 python/zoo/run_zoo.py --out out/zoo [--only NAME ...]
        [--measure [--cudagraphs]] [--jobs N] [--export-only NAME ...]

Each case runs in its own process (so distributed cases get their own fake
process group and a failing case cannot take others down). All cases compile
in parallel; with --measure, measurement then runs one case at a time while
the others wait idle (concurrent kernels would corrupt the timings). A case
that fails is reported and skipped; the exit status is non-zero if any did.
The report (zoo_report.json) lists every case's graphs, errors and seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _wait_for(path: Path, deadline: float, poll: float = 0.2) -> bool:
    while time.time() < deadline:
        if path.exists():
            return True
        time.sleep(poll)  # idle waiting: stays off the measuring process's cores
    return False


def _wait_until_measured(p: subprocess.Popen, path: Path, deadline: float) -> bool:
    """Waits for a worker's signal file; False at the deadline or when the
    worker exited without writing it."""
    while time.time() < deadline:
        if path.exists():
            return True
        if p.poll() is not None:
            return path.exists()
        time.sleep(0.02)
    return False


def worker(name: str, out: Path, sync: Path, measure: bool, cudagraphs: bool, timeout: float,
           wall_rounds: int = 0, round_samples: int = 20) -> int:
    """One case: compile + export (+ keep inputs), signal ready, wait for the
    go, measure, signal measured; then, with `wall_rounds`, one more round of
    wall samples at each round's go; write the record."""
    import torch

    import schedlab_export

    sys.path.insert(0, str(HERE))
    import cases

    torch.manual_seed(0)
    started = time.time()
    record = {"case": name, "graphs": [], "errors": []}
    session = None
    try:
        if cases.is_distributed(name):
            cases.init_fake_process_group()
        on_gpu = cases.case_device(name) != "cpu"
        with schedlab_export.capture(out, prefix=name, measure=measure and on_gpu, cudagraphs=cudagraphs,
                                     measure_on_exit=False) as session:
            cases.KNOWN_CASES[name]()
    except Exception:  # noqa: BLE001 - reported in the record
        record["errors"].append(traceback.format_exc())
        print(f"zoo: case {name} failed:\n{record['errors'][-1]}", file=sys.stderr)
    record["compile_seconds"] = round(time.time() - started, 1)
    (sync / f"ready.{name}").write_text("")
    if session is not None and session.pending:
        if _wait_for(sync / f"go.{name}", time.time() + timeout):
            session.measure_pending(keep_for_rounds=wall_rounds > 0)
            (sync / f"measured.{name}").write_text(str(len(session.kept_for_rounds)))
            for r in range(wall_rounds if session.kept_for_rounds else 0):
                if not _wait_for(sync / f"go.{name}.{r}", time.time() + timeout, poll=0.05):
                    record["errors"].append(f"wall round {r} never started (orchestrator timeout)")
                    break
                session.measure_wall_round(round_samples)
                (sync / f"round.{name}.{r}").write_text("")
            session.finish_wall_rounds()
        else:
            record["errors"].append("measurement never started (orchestrator timeout)")
    if session is not None:
        record["graphs"] = [
            {"case": g.case, "kind": g.kind, "device": g.device, "complete": g.has_post, "measured": g.measured}
            for g in session.graphs
        ]
        record["errors"] += session.errors
        record["notes"] = session.notes
    record["seconds"] = round(time.time() - started, 1)
    (sync / f"done.{name}.json").write_text(json.dumps(record))
    return 0


def orchestrate(names: list[str], out: Path, measure: bool, cudagraphs: bool, jobs: int,
                compile_timeout: float, measure_timeout: float, wall_rounds: int = 0,
                round_samples: int = 20, export_only: frozenset = frozenset()) -> list[dict]:
    sync = out / ".sync"
    sync.mkdir(parents=True, exist_ok=True)
    for f in sync.iterdir():
        f.unlink()
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    env = dict(os.environ)
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    procs: dict[str, subprocess.Popen] = {}
    queue = list(names)
    ready: list[str] = []
    deadline = time.time() + compile_timeout
    # compile phase: at most `jobs` processes compiling at a time; a ready
    # process waits idle (holding its compiled graphs) until measured
    while (queue or any(n not in ready for n in procs)) and time.time() < deadline:
        compiling = [n for n, p in procs.items() if n not in ready and p.poll() is None]
        while queue and len(compiling) < jobs:
            name = queue.pop(0)
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--out", str(out),
                   "--sync", str(sync), "--timeout", str(compile_timeout + measure_timeout * len(names))]
            if measure and name not in export_only:
                cmd.append("--measure")
            if cudagraphs:
                cmd.append("--cudagraphs")
            if wall_rounds:
                cmd += ["--wall-rounds", str(wall_rounds), "--round-samples", str(round_samples)]
            log = open(logs / f"{name}.log", "w")
            procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
            compiling.append(name)
        for n, p in procs.items():
            if n not in ready and ((sync / f"ready.{n}").exists() or p.poll() is not None):
                ready.append(n)
                print(f"zoo: {n} compiled ({time.time() - deadline + compile_timeout:.0f} s)", file=sys.stderr,
                      flush=True)
        time.sleep(0.1)
    for n, p in procs.items():
        if n not in ready:
            print(f"zoo: {n}: compile timeout, killed", file=sys.stderr)
            p.kill()
    # measurement phase: one process at a time
    for n in names:
        p = procs.get(n)
        if p is None or p.poll() is not None:
            continue
        time.sleep(1.0)  # the previous case's process has just exited: let the machine settle
        (sync / f"go.{n}").write_text("")
        t0 = time.time()
        if wall_rounds:
            # the process stays, holding its graphs, for the wall rounds
            if not _wait_until_measured(p, sync / f"measured.{n}", time.time() + measure_timeout):
                print(f"zoo: {n}: measurement timeout, killed", file=sys.stderr)
                p.kill()
        else:
            try:
                p.wait(timeout=measure_timeout)
            except subprocess.TimeoutExpired:
                print(f"zoo: {n}: measurement timeout, killed", file=sys.stderr)
                p.kill()
        print(f"zoo: {n} measured ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    # wall rounds: every waiting case takes a short turn per round, so that
    # a slow stretch of the host is shared by all graphs
    for r in range(wall_rounds):
        t0 = time.time()
        for n in names:
            p = procs.get(n)
            measured = sync / f"measured.{n}"
            if p is None or p.poll() is not None or not measured.exists() or measured.read_text() in ("", "0"):
                continue
            (sync / f"go.{n}.{r}").write_text("")
            if not _wait_until_measured(p, sync / f"round.{n}.{r}", time.time() + measure_timeout):
                print(f"zoo: {n}: wall round {r} timeout, killed", file=sys.stderr)
                p.kill()
        print(f"zoo: wall round {r} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    for n, p in procs.items():
        try:
            p.wait(timeout=measure_timeout)
        except subprocess.TimeoutExpired:
            print(f"zoo: {n}: did not finish, killed", file=sys.stderr)
            p.kill()
    if wall_rounds:
        from schedlab_export import measure as measure_module

        full_speed = measure_module.settle_wall_at_full_host_speed(sorted(out.glob("*.measured.json")))
        print(f"zoo: host probe at full speed {full_speed} us", file=sys.stderr, flush=True)
    records = []
    for n in names:
        done = sync / f"done.{n}.json"
        if done.exists():
            records.append(json.loads(done.read_text()))
        else:
            tail = (logs / f"{n}.log").read_text()[-3000:] if (logs / f"{n}.log").exists() else ""
            records.append({"case": n, "graphs": [], "errors": [f"worker died or timed out:\n{tail}"]})
    return records


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", nargs="*", help="case names (default: all)")
    parser.add_argument("--measure", action="store_true")
    parser.add_argument("--cudagraphs", action="store_true")
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    parser.add_argument("--compile-timeout", type=float, default=420)
    parser.add_argument("--measure-timeout", type=float, default=90)
    parser.add_argument("--wall-rounds", type=int, default=0,
                        help="with --measure: after every case is measured, this many more rounds of wall "
                             "samples, interleaved over the cases (the files' wall figures come from them)")
    parser.add_argument("--round-samples", type=int, default=20, help="wall samples per graph per round")
    parser.add_argument("--export-only", nargs="*", default=[],
                        help="cases compiled and exported beside the others but never measured (e.g. to "
                             "re-read graph fields of checked-in cases while new ones are measured)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--sync", help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=900, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.wall_rounds < 0:
        parser.error(f"--wall-rounds {args.wall_rounds}: expected 0 or more")
    if args.round_samples < 1:
        parser.error(f"--round-samples {args.round_samples}: expected 1 or more")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.worker:
        return worker(args.worker, out, Path(args.sync), args.measure, args.cudagraphs, args.timeout,
                      args.wall_rounds, args.round_samples)

    sys.path.insert(0, str(HERE))
    import cases  # noqa: E402 - torch imported only here, not in the workers' parent logic

    unknown = sorted(set(args.only or []) | set(args.export_only) - set(cases.KNOWN_CASES))
    unknown = [n for n in unknown if n not in cases.KNOWN_CASES]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    wanted = set(args.only or cases.ALL_CASES) | set(args.export_only)
    names = [n for n in cases.KNOWN_CASES if n in wanted]
    started = time.time()
    records = orchestrate(names, out, args.measure, args.cudagraphs, args.jobs,
                          args.compile_timeout, args.measure_timeout, args.wall_rounds,
                          args.round_samples, frozenset(args.export_only))
    import torch

    (out / "zoo_report.json").write_text(json.dumps(
        {"torch": torch.__version__,
         "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
         "seconds": round(time.time() - started, 1), "cases": records}, indent=1))
    for r in records:
        print(f"zoo: {r['case']}: {len(r['graphs'])} graph(s), "
              f"{sum(1 for g in r['graphs'] if g.get('measured'))} measured, {len(r['errors'])} error(s)",
              file=sys.stderr)
    return 1 if any(r["errors"] for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
