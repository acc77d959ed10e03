#!/usr/bin/env python3
"""Fits the collective-time curves and the contention law of a hardware
profile from python/dist/comm_sweep.py's sweeps (docs/cost-model.md,
"Collectives" and "Contention"). Standard library only; no GPU.

    python3 scripts/fit-comm.py SWEEP.json... -o SECTION.json [--report]
    python3 scripts/fit-comm.py SWEEP.json... --into profiles/h100-sxm.json
    python3 scripts/fit-comm.py RUN1_SWEEPS... -o /tmp/s.json --check RUN2_CONTENTION.json

Collective time of a point: the time per operation of the sweep's lockstep
loop (CUDA events; it holds the handoff between the compute and NCCL streams
a compiled graph pays), less, for the operations whose functional form
clones its input first (all_reduce, broadcast), that copy: Inductor's graphs
hold such a copy as a node of its own. The copy's cost is a line in bytes
fitted over the points whose NCCL kernel was profiled (events minus kernel).
Every (operation, world size) keeps the median over dtypes and runs at each
swept size: `collectives.curves.OP.N` = [[size_bytes, us], ...], with size
the rank's larger buffer (all_gather's output, reduce_scatter's input).
core/cost/collective_times.cpp interpolates them log-log (the one place
that does).

The host's cost to issue a collective and its wait: the median over the
points of each point's median host time per issue (`host_us_per_issue`).

Contention: for each compute class of the sweep, over its rows (messages
of 16 MiB and more, where a collective's start no longer dominates): the
NCCL kernel's time beside that compute as a line in its time alone
(`comm_slowdown` x alone + `comm_delay_us`; the median ratio and no delay
where the line has no positive intercept), the median of the compute
kernels' time while a collective runs against alone (`compute_slowdown`;
kernels more than half overlapped), and how far into a running kernel of
the class a collective that became ready beside it starts
(`start_fraction`: the NCCL kernel gets SMs only as the kernel's last wave
drains them; the median over the rows of each row's median, the first
round, where the ranks line up, left out). And one start latency
(`start_latency_us`): how long after it becomes ready an NCCL kernel starts
when no kernel holds the SMs (the 90th percentile over the sweep rounds);
a kernel that starts sooner takes the SMs first. core/cost's
contended_comm_slowdown applies the line (the one place that does).
`--check SWEEP...` fits the law on the inputs and prints its errors on
other contention sweeps (markdown).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

CLONING_OPS = ("all_reduce", "broadcast")
# The sweep's compute workloads by the time model's kernel class (core/cost/kernel_class.h).
WORKLOAD_CLASS = {"gemm": "gemm", "attention": "attention", "triton_pointwise": "triton_pointwise",
                  "triton_reduction": "triton_reduction", "convolution": "convolution"}
LARGE_MESSAGE = 16 << 20


def load(paths: list[str]) -> tuple[list[dict], list[dict]]:
    collectives, contention = [], []
    for p in paths:
        doc = json.loads(Path(p).read_text())
        if doc.get("format") != "schedlab-comm-sweep/1":
            raise SystemExit(f"fit-comm: {p}: format: expected \"schedlab-comm-sweep/1\"")
        world = doc["env"]["world_size"]
        if doc["what"] == "collectives":
            collectives += [dict(q, world=world, source=p) for q in doc["points"] if "error" not in q]
        elif doc["env"].get("knob", "none") == "none" and not doc["env"]["env"].get("NCCL_MAX_NCHANNELS"):
            contention += [dict(r, world=world, source=p) for r in doc["rows"] if "error" not in r]
    return collectives, contention


def fit_line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least squares y = a + b x, each point weighted by 1/y^2 (relative error)."""
    w = [1.0 / max(y, 1e-9) ** 2 for y in ys]
    sw = sum(w)
    sx = sum(wi * x for wi, x in zip(w, xs))
    sy = sum(wi * y for wi, y in zip(w, ys))
    sxx = sum(wi * x * x for wi, x in zip(w, xs))
    sxy = sum(wi * x * y for wi, x, y in zip(w, xs, ys))
    den = sw * sxx - sx * sx
    b = (sw * sxy - sx * sy) / den if den else 0.0
    return (sy - b * sx) / sw, b


def copy_line(points: list[dict]) -> tuple[float, float]:
    xs, ys = [], []
    for q in points:
        k = q.get("nccl_kernel_us_median")
        if q["op"] in CLONING_OPS and k and k <= q["per_op_us_median"]:
            xs.append(q["input_bytes"])
            ys.append(q["per_op_us_median"] - k)
    if len(xs) < 2:
        raise SystemExit("fit-comm: too few profiled all_reduce/broadcast points to price their input copy")
    return fit_line(xs, ys)


def collective_us(q: dict, copy: tuple[float, float]) -> float:
    t = q["per_op_us_median"]
    if q["op"] in CLONING_OPS:
        t -= copy[0] + copy[1] * q["input_bytes"]
    return max(t, 0.5)


def curves(points: list[dict], copy) -> dict:
    by = {}
    for q in points:
        by.setdefault(q["op"], {}).setdefault(str(q["world"]), {}).setdefault(q["size_bytes"], []).append(
            collective_us(q, copy))
    return {op: {w: [[s, round(statistics.median(v), 3)] for s, v in sorted(sz.items())] for w, sz in ws.items()}
            for op, ws in sorted(by.items())}


def report_collectives(points: list[dict], copy, fitted: dict) -> list[str]:
    """Per operation and world size: how the sweep's points (each dtype and
    run) sit around the curve at their own sizes."""
    lines = ["| op | ranks | points within 10 % | median error |", "|---|---|---|---|"]
    for op, ws in fitted.items():
        for w, curve in ws.items():
            at = dict(curve)
            errs = sorted(abs(at[q["size_bytes"]] / collective_us(q, copy) - 1)
                          for q in points if q["op"] == op and str(q["world"]) == w and q["size_bytes"] in at)
            if not errs:  # a held-out sweep of other world sizes
                continue
            within = sum(e <= 0.10 for e in errs)
            lines.append(f"| {op} | {w} | {within} of {len(errs)} | {100 * statistics.median(errs):.1f} % |")
    return lines


def workload_class(name: str) -> str | None:
    for prefix, cls in WORKLOAD_CLASS.items():
        if name.startswith(prefix):
            return cls
    return None


def main_kernel_us(durations: list[float]) -> float:
    """The workload's own kernel time alone: the median of the kernels within
    a factor 3 of the longest but one (the spin that queues the work ahead
    and a library's tiny helper kernels aside)."""
    ds = sorted(durations)
    top = ds[-2] if len(ds) > 1 else ds[-1]
    return statistics.median([d for d in ds if top / 3 <= d <= top * 1.5])


def row_rounds(r: dict, rank: dict) -> list[tuple[float, list[list[float]], list[float]]]:
    """A rank's rounds of a sweep row after the first: (the time the round's
    collective became ready, the round's compute kernels, its NCCL kernel).
    Round i's collective is issued behind everything of round i-1 (its
    compute kernels and the wait for its collective), and so are round i's
    kernels: both become ready at once. [] when the rank's kernels do not
    split into the row's rounds."""
    n = r["compute_per_round"] * r["kernels_per_call"]
    ks, cs = rank["compute_intervals"][1:], rank["comm_intervals"]  # the first compute interval is the spin
    if len(ks) != n * r["rounds"] or len(cs) != r["rounds"]:
        return []
    return [(max(cs[i - 1][1], ks[i * n - 1][1]), ks[i * n:(i + 1) * n], cs[i]) for i in range(1, r["rounds"])]


def start_latency(rows: list[dict]) -> float:
    """How long after it becomes ready an NCCL kernel starts when no kernel
    holds the SMs: over the rounds of the operations that clone nothing
    (a clone runs first on the compute stream) where every compute kernel
    that started before the collective ended within 20 us of it becoming
    ready (none held the SMs: the collective's own latency shows), the 90th
    percentile of start - ready (a collective runs once its slowest rank
    starts it). A kernel that the compute stream starts sooner than this
    after the collective became ready takes the SMs first (core/sim: the
    collective is then ready beside that kernel)."""
    lat = []
    for r in rows:
        if r["op"] in CLONING_OPS:
            continue
        for rank in r["by_rank"]:
            for ready, kernels, (s, _) in row_rounds(r, rank):
                if s >= ready and all(e - ready <= 20 for b, e in kernels if b < s):
                    lat.append(s - ready)
    return statistics.quantiles(lat, n=10)[-1] if len(lat) >= 2 else 0.0


def comm_line(alone: list[float], contended: list[float]) -> tuple[float, float]:
    """contended = slowdown * alone + delay over a class's rows (relative
    least squares), delay >= 0: where the rows give a negative delay, the
    median ratio and no delay."""
    if len(set(alone)) >= 2:
        delay, slowdown = fit_line(alone, contended)
        if delay >= 0 and slowdown >= 1:
            return slowdown, delay
    return max(1.0, statistics.median(c / a for a, c in zip(alone, contended))), 0.0


def row_figures(r: dict) -> dict | None:
    """One sweep row's measured figures (None: not a class the law prices,
    or a message under 16 MiB, where a collective's start dominates): the
    collective's time alone and beside the compute (the median over ranks
    and rounds), the compute kernels' ratio beside a collective against
    alone (kernels more than half overlapped) and how far into a running
    kernel the collective started (the first round, where the ranks line
    up, left out), each the median over the row's kernels."""
    cls = workload_class(r["compute"])
    if cls is None or r["size_bytes"] < LARGE_MESSAGE:
        return None
    alone = main_kernel_us(r["compute_alone_kernels_us"])
    row_comm, row_compute, row_start = [], [], []
    for rank in r["by_rank"]:
        row_comm += [c / r["comm_alone_us"] for c in rank["comm_us"]]
        ci = rank["comm_intervals"]
        for s, e in rank["compute_intervals"][1:]:  # the first is the spin
            d = e - s
            if not (alone / 3 <= d <= alone * 5):
                continue
            ov = max((min(e, ce) - max(s, cs) for cs, ce in ci), default=0.0)
            if ov > 0.5 * d:
                row_compute.append(d / alone)
        kernels = [k for k in rank["compute_intervals"][1:] if k[1] > k[0]]
        for s, _ in ci[1:]:
            running = [k for k in kernels if k[0] <= s]
            if running:
                k = max(running, key=lambda k: k[0])
                row_start.append((s - k[0]) / (k[1] - k[0]))
    med = lambda v: statistics.median(v) if v else None  # noqa: E731
    comm = med(row_comm)
    return {"class": cls, "comm_alone_us": r["comm_alone_us"],
            "comm_us": comm * r["comm_alone_us"] if comm is not None else None,
            "compute_ratio": med(row_compute),
            "start_fraction": min(1.0, med(row_start)) if row_start else None}


def contention(rows: list[dict]) -> dict:
    """Per class, over its rows (row_figures; each row counts once, however
    many kernels it ran): the collective's time beside the class as a line
    in its time alone (`comm_slowdown` x alone + `comm_delay_us`: the
    channels that wait for SMs cost a fixed time, so short collectives slow
    more), and the median of the rows' compute ratios (`compute_slowdown`)
    and start fractions (`start_fraction`)."""
    comm, compute, start = {}, {}, {}
    for f in filter(None, map(row_figures, rows)):
        cls = f["class"]
        if f["comm_us"] is not None:
            comm.setdefault(cls, []).append((f["comm_alone_us"], f["comm_us"]))
        if f["compute_ratio"] is not None:
            compute.setdefault(cls, []).append(f["compute_ratio"])
        if f["start_fraction"] is not None:
            start.setdefault(cls, []).append(f["start_fraction"])
    out = {}
    for cls in sorted(set(comm) | set(compute)):
        slowdown, delay = comm_line(*map(list, zip(*comm[cls]))) if cls in comm else (1.0, 0.0)
        out[cls] = {"comm_slowdown": round(slowdown, 4), "comm_delay_us": round(delay, 2),
                    "compute_slowdown": round(statistics.median(compute[cls]), 4) if cls in compute else 1.0,
                    "start_fraction": round(statistics.median(start[cls]), 4) if cls in start else 0.0}
    return out


def races(rows: list[dict], latency_us: float) -> dict:
    """The start rule's race over the rounds of the operations that clone
    nothing, split by whether the round's first compute kernel started less
    than latency_us after the collective became ready on every rank (the
    rule: the kernel takes the SMs first): per side, its rounds and those
    where some rank's collective started only after a kernel that held the
    SMs for more than 20 us (the ranks of a group wait for the last)."""
    out = {"sooner": [0, 0], "later": [0, 0]}
    for r in rows:
        if r["op"] in CLONING_OPS:
            continue
        per_rank = [row_rounds(r, rank) for rank in r["by_rank"]]
        if not per_rank or any(len(x) != len(per_rank[0]) for x in per_rank):
            continue
        for i in range(len(per_rank[0])):
            rounds = [x[i] for x in per_rank]
            side = out["sooner" if all(ks and ks[0][0] - ready < latency_us for ready, ks, _ in rounds) else "later"]
            side[0] += 1
            side[1] += any(any(b < s and e - ready > 20 for b, e in ks) for ready, ks, (s, _) in rounds)
    return out


def check_contention(fit_rows: list[dict], check_rows: list[dict]) -> list[str]:
    """The law fitted on some sweeps' rows against other sweeps' rows: per
    class, the median error of the collective's time beside the compute with
    the law (slowdown and delay) and with the median ratio of the fitted
    rows (the law before the delay), of the compute's slowdown, and the
    median distance of the start fraction; then the start rule's race."""
    law = contention(fit_rows)
    ratio = {}
    for f in filter(None, map(row_figures, fit_rows)):
        if f["comm_us"] is not None:
            ratio.setdefault(f["class"], []).append(f["comm_us"] / f["comm_alone_us"])
    by = {}
    for f in filter(None, map(row_figures, check_rows)):
        by.setdefault(f["class"], []).append(f)

    def err(pred, meas):
        return 100 * statistics.median(abs(p / m - 1) for p, m in zip(pred, meas))

    lines = ["| class | rows | collective beside it: law | : median ratio | the kernel beside a collective | start fraction (abs.) |",
             "|---|---|---|---|---|---|"]
    for cls, fs in sorted(by.items()):
        if cls not in law or cls not in ratio:
            continue
        share, flat = law[cls], statistics.median(ratio[cls])
        comm = [f for f in fs if f["comm_us"] is not None]
        measured = [f["comm_us"] for f in comm]
        comp = [f["compute_ratio"] for f in fs if f["compute_ratio"] is not None]
        start = [f["start_fraction"] for f in fs if f["start_fraction"] is not None]
        lines.append(f"| {cls} | {len(fs)} "
                     f"| {err([f['comm_alone_us'] * share['comm_slowdown'] + share['comm_delay_us'] for f in comm], measured):.1f} % "
                     f"| {err([f['comm_alone_us'] * flat for f in comm], measured):.1f} % "
                     f"| {err([share['compute_slowdown']] * len(comp), comp):.1f} % "
                     f"| {statistics.median(abs(share['start_fraction'] - x) for x in start):.3f} |")
    latency = start_latency(fit_rows)
    race = races(check_rows, latency)
    lines.append(f"start rule (latency {latency:.1f} us): of {race['sooner'][0]} rounds whose kernels started sooner on every "
                 f"rank, a kernel took the SMs first on some rank in {race['sooner'][1]}; of the {race['later'][0]} others, "
                 f"in {race['later'][1]}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweeps", nargs="+")
    dest = ap.add_mutually_exclusive_group(required=True)
    dest.add_argument("-o", "--out", help="write the profile section here")
    dest.add_argument("--into", help="set the section in this profile file")
    ap.add_argument("--source", default="", help="where the sweeps ran, recorded in the profile")
    ap.add_argument("--report", action="store_true", help="print the fit's error tables (markdown)")
    ap.add_argument("--check", nargs="+", default=[], metavar="SWEEP",
                    help="contention sweeps held out of the fit: print the law's errors on them (markdown)")
    ap.add_argument("--check-collectives", nargs="+", default=[], metavar="SWEEP",
                    help="collective sweeps held out of the fit (another machine, another GPU): print how their points "
                         "sit around the fitted curves (markdown; each point less its own sweep's input copy)")
    args = ap.parse_args()
    points, rows = load(args.sweeps)
    if not points:
        raise SystemExit("fit-comm: no collective sweep among the inputs")
    copy = copy_line(points)
    fitted = curves(points, copy)
    # The host's time per issue (a collective and its wait) while the GPU
    # runs behind: the median over the points of each point's median.
    host = statistics.median(statistics.median(q["host_us_per_issue"]) for q in points if q.get("host_us_per_issue"))
    section = {
        "collectives": {"source": args.source or ", ".join(sorted({Path(q["source"]).parent.name for q in points})),
                        "host_us_per_issue": round(host, 3), "curves": fitted},
    }
    if rows:
        section["contention"] = {"classes": contention(rows), "start_latency_us": round(start_latency(rows), 2)}
    if args.report:
        print(f"input copy of all_reduce/broadcast: {copy[0]:.2f} us + bytes / {1e-6 / copy[1]:.2f} TB/s")
        print(f"host per issue (collective and wait): {host:.1f} us")
        print("\n".join(report_collectives(points, copy, fitted)))
        for cls, v in section.get("contention", {}).get("classes", {}).items():
            print(f"contention {cls}: collective x{v['comm_slowdown']:.3f} + {v['comm_delay_us']:.1f} us, "
                  f"compute x{v['compute_slowdown']:.3f}, a collective ready beside it starts {v['start_fraction']:.2f} into it")
        if "contention" in section:
            print(f"contention: an NCCL kernel starts {section['contention']['start_latency_us']:.1f} us after it is ready")
    if args.check_collectives:
        held_points = load(args.check_collectives)[0]
        if not held_points:
            raise SystemExit("fit-comm: --check-collectives: no collective points in " + ", ".join(args.check_collectives))
        print("\n".join(report_collectives(held_points, copy_line(held_points), fitted)))
    if args.check:
        if not rows:
            raise SystemExit("fit-comm: --check: no contention sweep among the inputs to fit on")
        held = load(args.check)[1]
        if not held:
            raise SystemExit("fit-comm: --check: no contention rows in " + ", ".join(args.check))
        print("\n".join(check_contention(rows, held)))
    text = json.dumps(section, indent=1, sort_keys=True)
    if args.out:
        Path(args.out).write_text(text + "\n")
    else:
        profile = json.loads(Path(args.into).read_text())
        profile.update(section)
        Path(args.into).write_text(json.dumps(profile, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
