"""Medians over repeated runs of the real steps, with their spread: what
issue 31 compares schedules by (one run moves by 2-4 %). No torch, no GPU,
no schedlab binary.

    python3 python/dist/reps.py OUT [--markdown | --versus-best | --versus A B | --compile-seconds | --peer-waits]
        [--json FILE]

OUT holds run_steps.py's repetitions, OUT/r1, OUT/r2, ... (`--reps N`, or
separate runs into OUT/r<k>). Per step and schedule measured in every rank's
file, one figure per run (compare.measured: the median over the ranks of
each rank's median step), then over the runs: the median, min and max step
time, the median against the default schedule's median, the median exposed
communication and the largest peak, and whether every run's results equalled
the default's bit for bit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from compare import collective_waits, measured, measured_schedules, rank_results  # noqa: E402
from schedules import APPLY_SCHEDULES, SCHEDLAB_DRIVEN, SCHEDULES  # noqa: E402


def run_dirs(root: Path) -> list[Path]:
    """OUT/r1, OUT/r2, ... in number order."""
    runs = [p for p in root.iterdir() if p.is_dir() and p.name[:1] == "r" and p.name[1:].isdigit()]
    return sorted(runs, key=lambda p: int(p.name[1:]))


def measured_cells(root: Path):
    """Every run, step and schedule measured in OUT, in run, step and the
    schedules' order, as (run name, step folder, schedule, its ranks' results)."""
    for run in run_dirs(root):
        for step_dir in sorted(p for p in run.iterdir() if p.is_dir()):
            for schedule in measured_schedules(step_dir):
                yield run.name, step_dir, schedule, rank_results(step_dir / schedule)


def collect(root: Path) -> dict[tuple[str, str], list[dict]]:
    """Per (step, schedule), one entry per run that measured it."""
    cells: dict[tuple[str, str], list[dict]] = {}
    for run, step_dir, schedule, ranks in measured_cells(root):
        try:
            m = measured(ranks)
        except (KeyError, TypeError) as e:
            raise ValueError(f"{step_dir / schedule}: a rank file lacks {e}") from None
        cells.setdefault((step_dir.name, schedule), []).append({
            "run": run, "step_us": m["step_us"], "exposed_comm_us": m["exposed_comm_us"],
            "peak_above_inputs_bytes": m["peak_above_inputs_bytes"],
            "equal_to_default": all(r.get("equal_to_default", False) for r in ranks),
            "deterministic": all(r.get("repeat_equal_to_first", True) for r in ranks),
            # the scheduling passes' seconds in the compile (pass_timing.py), rank 0's,
            # apply's wait for slower ranks apart, and the graphs compiled
            "pass_s": (ranks[0].get("pass_seconds") or {}).get("total_s") if ranks else None,
            "peer_wait_s": (ranks[0].get("pass_seconds") or {}).get("peer_wait_s") if ranks else None,
            "graphs": len(ranks[0].get("graphs") or []) if ranks else 0})
    return cells


def _median_or_none(values: list) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def summarize(cells: dict[tuple[str, str], list[dict]]) -> list[dict]:
    rows = []
    for (step, schedule), runs in cells.items():
        times = [r["step_us"] for r in runs]
        rows.append({"step": step, "schedule": schedule, "runs": [r["run"] for r in runs],
                     "step_us": {"median": statistics.median(times), "min": min(times), "max": max(times),
                                 "all": times},
                     "exposed_comm_us": statistics.median(r["exposed_comm_us"] for r in runs),
                     "peak_above_inputs_bytes": max(r["peak_above_inputs_bytes"] for r in runs),
                     "equal_to_default": all(r["equal_to_default"] for r in runs),
                     "deterministic": all(r["deterministic"] for r in runs),
                     "pass_s": _median_or_none([r["pass_s"] for r in runs]),
                     "peer_wait_s": _median_or_none([r["peer_wait_s"] for r in runs]),
                     "graphs": max(r["graphs"] for r in runs)})
    default = {r["step"]: r["step_us"]["median"] for r in rows if r["schedule"] == "default"}
    for r in rows:
        base = default.get(r["step"])
        r["vs_default"] = r["step_us"]["median"] / base - 1 if base else None
    known = {s: i for i, s in enumerate(SCHEDULES)}  # compare.py's order, then others by name
    return sorted(rows, key=lambda r: (r["step"], known.get(r["schedule"], len(known)), r["schedule"]))


def markdown(rows: list[dict]) -> str:
    lines = ["| step | schedule | runs | step µs median (min–max) | vs default | exposed µs | peak MiB | results = default "
             "| passes' s in compile |",
             "|---|---|---|---|---|---|---|---|---|"]
    # A result that differs from the default's is a real difference only
    # where both the schedule's and the default's runs repeat bit for bit.
    default_repeats = {r["step"]: r["deterministic"] for r in rows if r["schedule"] == "default"}
    for r in rows:
        t = r["step_us"]
        vs = "—" if r["vs_default"] is None else f"{100 * r['vs_default']:+.1f} %"
        repeats = r["deterministic"] and default_repeats.get(r["step"], True)
        equal = "bitwise" if r["equal_to_default"] else ("no (step not deterministic)" if not repeats else "NO")
        lines.append(f"| {r['step']} | {r['schedule']} | {len(r['runs'])} | {t['median']:.0f} ({t['min']:.0f}–{t['max']:.0f}) "
                     f"| {vs} | {r['exposed_comm_us']:.0f} | {r['peak_above_inputs_bytes'] / 2**20:.0f} | {equal} "
                     f"| {'—' if r['pass_s'] is None else format(r['pass_s'], '.3f')} |")
    return "\n".join(lines)


def by_step(rows: list[dict]) -> dict[str, dict[str, dict]]:
    """The rows per step, then per schedule."""
    out: dict[str, dict[str, dict]] = {}
    for r in rows:
        out.setdefault(r["step"], {})[r["schedule"]] = r
    return out


def step_cell(r: dict) -> str:
    """A row's step time: the median, with the runs' range."""
    t = r["step_us"]
    return f"{t['median']:.0f} ({t['min']:.0f}–{t['max']:.0f})"


def verdict(mine: dict, other: dict) -> str:
    """Beyond the spread: `mine`'s slowest run beats `other`'s fastest (or,
    slower, the reverse)."""
    if mine["step_us"]["max"] < other["step_us"]["min"]:
        return "yes, faster"
    if mine["step_us"]["min"] > other["step_us"]["max"]:
        return "no, slower"
    return "no (ranges overlap)"


def versus_best(rows: list[dict], candidate: str = "schedlab") -> str:
    """Per step: the default, the fastest other configuration of Inductor's
    (by median; the schedules schedlab's model decides left out), and
    `candidate` against it (verdict); the peaks; the passes' seconds in a
    compile."""

    def vs(r: dict) -> str:
        return f"{100 * r['vs_default']:+.1f} %"

    def passes(cells: dict, schedule: str) -> str:
        r = cells.get(schedule)
        return "—" if r is None or r["pass_s"] is None else f"{r['pass_s']:.2f}"

    lines = [f"| step | default µs | best other configuration | {candidate} | {candidate} beyond the spread? "
             f"| peak MiB: that configuration / {candidate} | passes' s in a compile: recommended / fx_overlap / {candidate} |",
             "|---|---|---|---|---|---|---|"]
    for step, cells in by_step(rows).items():
        if candidate not in cells or "default" not in cells:
            continue
        mine = cells[candidate]
        best_name = min((s for s in cells if s != candidate and s not in SCHEDLAB_DRIVEN),
                        key=lambda s: cells[s]["step_us"]["median"])
        best = cells[best_name]
        shown = f"default, {step_cell(best)}" if best_name == "default" else f"{best_name}: {vs(best)}, {step_cell(best)}"
        lines.append(f"| {step} | {step_cell(cells['default'])} | {shown} | {vs(mine)}, {step_cell(mine)} | {verdict(mine, best)} "
                     f"| {best['peak_above_inputs_bytes'] / 2**20:.0f} / {mine['peak_above_inputs_bytes'] / 2**20:.0f} "
                     f"| {passes(cells, 'recommended')} / {passes(cells, 'fx_overlap')} / {passes(cells, candidate)} |")
    return "\n".join(lines)


def versus(rows: list[dict], candidate: str, baseline: str) -> str:
    """Per step measured under both: `candidate` against `baseline` (the
    medians with the runs' range, the difference, the verdict)."""
    lines = [f"| step | {baseline} µs | {candidate} µs | {candidate} vs {baseline} | beyond the spread? |", "|---|---|---|---|---|"]
    for step, cells in by_step(rows).items():
        if candidate in cells and baseline in cells:
            a, b = cells[candidate], cells[baseline]
            lines.append(f"| {step} | {step_cell(b)} | {step_cell(a)} "
                         f"| {100 * (a['step_us']['median'] / b['step_us']['median'] - 1):+.1f} % | {verdict(a, b)} |")
    return "\n".join(lines)


NCCL_KINDS = (("AllGather", "all_gather"), ("ReduceScatter", "reduce_scatter"), ("AllReduce", "all_reduce"))


def wait_samples(root: Path):
    """Every collective of every run, step and schedule in OUT, every rank's
    wait for a later peer (compare.collective_waits), as (kind, where,
    group size, µs): the kind from the NCCL kernel's name ("other" for any
    but NCCL_KINDS), "exposed" when on average over the ranks at least half
    its kernel was exposed (the compute stream waited on it), else "beside
    compute"; the group size is the world's (python/dist's collectives span
    every rank)."""
    for _, step_dir, schedule, ranks in measured_cells(root):
        try:
            waits = collective_waits(ranks)
            cell = []
            for i in range(len(waits[0]) if waits else 0):
                kernels = [r["profile"]["collectives"][i] for r in ranks]
                kind = next((k for marker, k in NCCL_KINDS if marker in kernels[0]["kernel"]), "other")
                share = statistics.mean(k["exposed_us"] / k["dur_us"] if k["dur_us"] > 0 else 1.0 for k in kernels)
                where = "exposed" if share >= 0.5 else "beside compute"
                cell += [(kind, where, len(ranks), w[i]) for w in waits]
        except (KeyError, TypeError) as e:
            raise ValueError(f"{step_dir / schedule}: a rank file lacks {e}") from None
        yield from cell


def peer_wait_table(root: Path) -> str:
    """wait_samples by kind and where the collective ran: how many, their
    mean, median and 90th percentile."""
    groups: dict[tuple[str, str], list[float]] = {}
    for kind, where, _, wait in wait_samples(root):
        groups.setdefault((kind, where), []).append(wait)
    lines = ["| collective | ran | collectives × ranks | mean wait µs | median µs | 90th percentile µs |",
             "|---|---|---|---|---|---|"]
    order = [k for _, k in NCCL_KINDS] + ["other"]
    for (kind, where), values in sorted(groups.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1] != "exposed")):
        values = sorted(values)
        lines.append(f"| {kind} | {where} | {len(values)} | {statistics.mean(values):.0f} | {statistics.median(values):.0f} "
                     f"| {values[int(0.9 * len(values))]:.0f} |")
    return "\n".join(lines)


COMPILE_COLUMNS = ("recommended", "fx_overlap", "fx_overlap_bucket")


def compile_seconds(rows: list[dict], candidates: tuple[str, ...] = tuple(APPLY_SCHEDULES)) -> str:
    """Per step: what each scheduling pass adds to a compile, in ms per
    graph (rank 0's pass seconds over the graphs compiled, the median over
    the runs): Inductor's comm passes (comms.py's pipeline, its FX overlap
    scheduling alone and with bucketing) and each candidate, apply()'s
    wait for slower ranks apart (not counted: the step's first collective
    waits it out without schedlab), and whether the candidate took less
    than each of Inductor's."""

    def per_graph(r: dict | None, field: str = "pass_s") -> float | None:
        if r is None or r.get(field) is None or not r["graphs"]:
            return None
        return 1000.0 * r[field] / r["graphs"]

    def ms(v: float | None) -> str:
        return "—" if v is None else f"{v:.0f}"

    shown = [c for c in candidates if any(r["schedule"] == c for r in rows)]
    lines = ["| step | graphs | " + " | ".join(f"{s} ms" for s in (*COMPILE_COLUMNS, *shown)) + " | "
             + " | ".join(f"{c}: wait for peers ms" for c in shown) + " | "
             + " | ".join(f"{c} below every one of Inductor's?" for c in shown) + " |",
             "|" + "---|" * (2 + len(COMPILE_COLUMNS) + 3 * len(shown))]
    for step, cells in by_step(rows).items():
        mine = [c for c in shown if c in cells]
        if not mine:
            continue
        theirs = [per_graph(cells.get(s)) for s in COMPILE_COLUMNS]
        known = [t for t in theirs if t is not None]
        below = []
        for c in shown:
            own = per_graph(cells.get(c))
            below.append("—" if own is None or not known else ("yes" if all(own < t for t in known) else
                         "no: " + ", ".join(s for s, t in zip(COMPILE_COLUMNS, theirs) if t is not None and own >= t)))
        graphs = max(cells[c]["graphs"] for c in mine)
        lines.append(f"| {step} | {graphs} | " + " | ".join(ms(t) for t in theirs) + " | "
                     + " | ".join(ms(per_graph(cells.get(c))) for c in shown) + " | "
                     + " | ".join(ms(per_graph(cells.get(c), "peer_wait_s")) for c in shown) + " | "
                     + " | ".join(below) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", help="run_steps.py's OUT, holding r1, r2, ...")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--versus-best", nargs="?", const="schedlab", default=None, metavar="CANDIDATE",
                        help="per step, CANDIDATE (default schedlab) against the fastest configuration of "
                             "Inductor's (markdown)")
    parser.add_argument("--compile-seconds", action="store_true",
                        help="per step, what each scheduling pass adds to a compile, ms per graph (markdown)")
    parser.add_argument("--peer-waits", action="store_true",
                        help="every collective's wait for a later peer, by kind and by whether it was exposed (markdown)")
    parser.add_argument("--versus", nargs=2, metavar=("CANDIDATE", "BASELINE"),
                        help="per step, one schedule against another (markdown): fx_overlap_schedlab fx_overlap")
    args = parser.parse_args()
    root = Path(args.results)
    if not root.is_dir() or not run_dirs(root):
        print(f"reps: {root}: no repetitions (r1, r2, ...) in it", file=sys.stderr)
        return 2
    try:
        rows = summarize(collect(root))
    except (OSError, ValueError) as e:
        print(f"reps: {e}", file=sys.stderr)
        return 1
    if args.json:
        Path(args.json).write_text(json.dumps({"results": str(root), "rows": rows}, indent=1))
    measured = {r["schedule"] for r in rows}
    if args.versus_best:
        if args.versus_best not in measured:
            print(f"reps: --versus-best: {args.versus_best}: not measured in {root} (measured: {', '.join(sorted(measured))})",
                  file=sys.stderr)
            return 2
        print(versus_best(rows, args.versus_best))
    elif args.versus:
        missing = [s for s in args.versus if s not in measured]
        if missing:
            print(f"reps: --versus: {', '.join(missing)}: not measured in {root} (measured: {', '.join(sorted(measured))})",
                  file=sys.stderr)
            return 2
        print(versus(rows, *args.versus))
    elif args.compile_seconds:
        print(compile_seconds(rows))
    elif args.peer_waits:
        try:
            print(peer_wait_table(root))
        except ValueError as e:
            print(f"reps: {e}", file=sys.stderr)
            return 1
    elif args.markdown or not args.json:
        print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
