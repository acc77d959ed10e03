"""Measured beside simulated: schedlab's two-stream simulation of the exact
orders the real steps ran (run_steps.py's output), next to the measurements.
No torch and no GPU: runs where the schedlab binary is.

    python3 python/dist/compare.py RESULTS_DIR --schedlab build/schedlab \\
        --hardware profiles/measured-h200.json --out docs/data/dist [--markdown]

For every <step>/<schedule>/ in RESULTS_DIR: each compiled graph (its
post-fusion export) is rearranged into the order Inductor emitted, its
`runtime_us` dropped (PyTorch's matmul estimates are ~1000x off), and planned
with `--memory-methods baseline` and no comm passes, so schedlab simulates
that very order on the given hardware profile. With `--feed OTHER_RESULTS`
the measured traces of another run of the same step (the same schedule, or
`--feed-schedule S`'s: predicting one order from another's measurement) are
fed back (`schedlab plan --measured-trace`, with `--measured-trace-graph`
the graph in the order that run emitted). Graphs of one step add up
(forward, then backward). Writes OUT/<step>.<schedule>.simulated.trace.json
(core/sim's trace of the step's graphs, one after the other) beside the
measured trace of rank 0, and OUT/summary.json with both sides per run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from schedlab_export.apply import with_export_gaps_filled, without_runtimes  # noqa: E402
from schedules import SCHEDULES  # noqa: E402

SCHEDULE_ORDER = SCHEDULES


def measured_schedules(step_dir: Path) -> list[str]:
    """The schedules measured for a step (a rank0.json), run_steps.py's known
    ones in their table order, then any other in name order."""
    done = {p.parent.name for p in step_dir.glob("*/rank0.json")}
    return [s for s in SCHEDULE_ORDER if s in done] + sorted(done - set(SCHEDULE_ORDER))


def in_order(graph: dict, order: list[str]) -> dict:
    """The graph with its nodes listed in `order` (the order the scheduler
    emitted), so that schedlab's baseline is that order. Inductor's comm
    passes may move a collective above the producer of one of its `fake_weak`
    reads (an ordering hint that carries no data and keeps nothing alive):
    such reads are dropped, since the file format requires every read's
    producer to come first."""
    by_name = {n["name"]: n for n in graph["nodes"]}
    if sorted(by_name) != sorted(order):
        raise ValueError(f"{graph.get('name')}: the emitted order does not name the graph's nodes")
    producer = {o["name"]: n["name"] for n in graph["nodes"] for o in n["outputs"]}
    position = {name: i for i, name in enumerate(order)}
    nodes = []
    for name in order:
        node = by_name[name]
        reads = [r for r in node.get("reads", []) if not (
            r.get("dep") == "fake_weak" and position.get(producer.get(r["name"]), -1) > position[name])]
        nodes.append(dict(node, reads=reads) if len(reads) != len(node.get("reads", [])) else node)
    return dict(graph, nodes=nodes)


def simulate(graph: dict, schedlab: str, hardware: str, trace_path: Path | None, extra: list[str] = ()) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        g, p = Path(tmp) / "g.json", Path(tmp) / "p.json"
        g.write_text(json.dumps(graph))
        cmd = [schedlab, "plan", str(g), "-o", str(p), "--no-fuse", "--memory-methods", "baseline",
               "--comm-passes", "", "--hardware", hardware, *extra]
        if trace_path is not None:
            cmd += ["--trace", str(trace_path)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{graph.get('name')}: schedlab plan failed: {done.stderr.strip()}")
        return json.loads(p.read_text())


def concat_traces(traces: list[dict], process: str) -> dict:
    """The graphs' simulated traces one after the other (forward, backward)."""
    events, offset = [], 0.0
    for i, t in enumerate(traces):
        for e in t["traceEvents"]:
            if e["ph"] == "M":
                if i == 0:
                    events.append(dict(e, args={"name": process}) if e["name"] == "process_name" else e)
                continue
            events.append(dict(e, ts=e["ts"] + offset))
        offset += t["otherData"]["step_time_us"]
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"generator": "schedlab plan (python/dist/compare.py)", "step_time_us": offset}}


def rank_results(run_dir: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(run_dir.glob("rank*.json"))]


def collective_waits(ranks: list[dict]) -> list[list[float]]:
    """Per rank, per collective (the k-th NCCL kernel of every rank is one
    collective; only as many as every rank profiled), the µs its kernel ran
    beyond the fastest rank's run of the same collective: the wait for a
    later peer that the one-rank simulation of equal ranks does not hold
    (arrival skew: host jitter, a kernel slowed on one rank)."""
    kernels = [r["profile"]["collectives"] for r in ranks]
    count = min((len(k) for k in kernels), default=0)
    fastest = [min(k[i]["dur_us"] for k in kernels) for i in range(count)]
    return [[k[i]["dur_us"] - fastest[i] for i in range(count)] for k in kernels]


def peer_waits(ranks: list[dict]) -> list[float]:
    """Per rank, its collectives' waits for later peers (collective_waits)
    summed. Not all of it is on the step's path: a wait under compute
    costs nothing."""
    return [sum(w) for w in collective_waits(ranks)]


def measured(ranks: list[dict]) -> dict:
    """One run's measurements over its ranks: medians of the ranks' step
    time (each itself a median of steps), GPU span, busy and exposed time
    and wait for later peers (peer_waits); the largest peak; and every
    rank's figures."""
    waits = peer_waits(ranks)
    by_rank = [{
        "rank": r["rank"], "step_us": r["step_us"]["median"], "cpu_step_us": r.get("cpu_step_us"),
        "gpu_span_us": r["profile"]["span_us"], "compute_busy_us": r["profile"]["compute_busy_us"],
        "exposed_comm_us": r["profile"]["exposed_comm_us"], "peer_wait_us": wait,
        "peak_above_inputs_bytes": r["memory"]["peak_above_inputs_bytes"],
        "collectives": r["profile"]["collectives"]} for r, wait in zip(ranks, waits)]
    return {
        "step_us": statistics.median(m["step_us"] for m in by_rank),
        "gpu_span_us": statistics.median(m["gpu_span_us"] for m in by_rank),
        "compute_busy_us": statistics.median(m["compute_busy_us"] for m in by_rank),
        "exposed_comm_us": statistics.median(m["exposed_comm_us"] for m in by_rank),
        "peer_wait_us": statistics.median(waits),
        "peak_above_inputs_bytes": max(m["peak_above_inputs_bytes"] for m in by_rank),
        "by_rank": by_rank}


def ordered_graph(run_dir: Path, g: dict) -> dict:
    """A graph of a run (rank0.json's `graphs` entry) in the order it ran, its runtime_us dropped."""
    return without_runtimes(in_order(json.loads((run_dir / g["graph"]).read_text()), g["emitted_order"]))


def feed_args(feed_dir: Path, graph_index: int, tmp: Path) -> list[str]:
    """`plan` options feeding back another run's measurement: its ranks'
    measured traces and its graph `graph_index` in the order it ran."""
    graphs = rank_results(feed_dir)[0]["graphs"]
    ran = tmp / f"ran{graph_index}.json"
    ran.write_text(json.dumps(ordered_graph(feed_dir, graphs[graph_index])))
    return ["--measured-trace", *map(str, sorted(feed_dir.glob("measured.rank*.trace.json"))), "--measured-trace-graph", str(ran)]


def outside_graphs_us(feed: Path, sims: list[dict]) -> float:
    """What the fed run's step spent outside its compiled graphs (eager
    kernels such as the loss, the host between forward and backward): its
    measured GPU span (the median over ranks) less each graph's measured
    span (plan's measured_costs.span_us). Part of the measured step that no
    graph's simulation holds; with feedback it is added to the simulated step."""
    span = statistics.median(r["profile"]["span_us"] for r in rank_results(feed))
    return max(0.0, span - sum(s["measured_costs"]["span_us"] for s in sims))


def compare_run(run_dir: Path, schedlab: str, hardware: str, out: Path, fill_gaps: bool = False,
                feed: Path | None = None) -> dict:
    ranks = rank_results(run_dir)
    r0 = ranks[0]
    sims, traces, filled = [], [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, g in enumerate(r0["graphs"]):
            ordered = ordered_graph(run_dir, g)
            if fill_gaps:
                ordered, count = with_export_gaps_filled(ordered)
                filled = {k: filled.get(k, 0) + v for k, v in count.items()}
            trace_path = Path(tmp) / f"t{i}.json"
            sims.append(simulate(ordered, schedlab, hardware, trace_path,
                                 feed_args(feed, i, Path(tmp)) if feed is not None else []))
            traces.append(json.loads(trace_path.read_text()))
    name = f"{r0['step']}.{r0['schedule']}"
    (out / f"{name}.simulated.trace.json").write_text(json.dumps(
        concat_traces(traces, f"schedlab simulated {r0['step']} {r0['schedule']}")))
    measured_trace = run_dir / "measured.rank0.trace.json"
    if measured_trace.exists():
        (out / f"{name}.measured.trace.json").write_text(measured_trace.read_text())
    sim_collectives = [c for s in sims for c in s["simulation"]["collectives"]]
    return {
        "step": r0["step"], "schedule": r0["schedule"], "world_size": r0["world_size"], "describe": r0["describe"],
        "equal_to_default": all(r["equal_to_default"] for r in ranks),
        "deterministic": all(r.get("repeat_equal_to_first", True) for r in ranks),
        "max_abs_diff_to_default": max(r["max_abs_diff_to_default"] for r in ranks),
        "apply": r0.get("apply"),
        "measured": measured(ranks),
        "feedback": None if feed is None else {
            "from": str(feed), "outside_graphs_us": outside_graphs_us(feed, sims),
            "measured_costs": [s["measured_costs"] for s in sims]},
        "simulated": {
            "export_gaps_filled": filled,
            "step_us": sum(s["simulation"]["step_time_us"] for s in sims) + (
                outside_graphs_us(feed, sims) if feed is not None else 0.0),
            "compute_busy_us": sum(s["simulation"]["compute_busy_us"] for s in sims),
            "exposed_comm_us": sum(s["simulation"]["exposed_comm_us"] for s in sims),
            "peak_bytes_per_graph": [s["memory"]["peak"] for s in sims],
            "collectives": [{"name": c["collective"], "exposed_us": c["exposed_us"],
                             "dur_us": c["end_us"] - c["start_us"]} for c in sim_collectives]},
    }


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "—"


def markdown(rows: list[dict]) -> str:
    lines = [
        "| step | schedule | measured step µs | measured GPU span µs | simulated step µs | sim / GPU span | "
        "measured exposed µs | simulated exposed µs | measured peak MiB | results = default |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        m, s = r["measured"], r["simulated"]
        lines.append(
            f"| {r['step']} | {r['schedule']} | {m['step_us']:.0f} | {m['gpu_span_us']:.0f} | {s['step_us']:.0f} | "
            f"{ratio(s['step_us'], m['gpu_span_us'])} | {m['exposed_comm_us']:.0f} | {s['exposed_comm_us']:.0f} | "
            f"{m['peak_above_inputs_bytes'] / 2**20:.0f} | "
            f"{'bitwise' if r['equal_to_default'] else ('no (step not deterministic)' if not r['deterministic'] else 'NO')} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--schedlab", required=True)
    parser.add_argument("--hardware", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--fill-export-gaps", action="store_true",
                        help="fill mm flops and in-place all_reduce_ payloads the export lacks (a diagnostic: "
                             "what the model predicts once the export carries them)")
    parser.add_argument("--feed", help="another results folder of the same steps (another run): feed its measured "
                        "traces back (plan --measured-trace) and judge against this folder's measurements")
    parser.add_argument("--feed-schedule", help="feed the --feed run's traces of this schedule (e.g. default) to every "
                        "schedule: predict an order from another order's measurement")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = Path(args.results)
    if not results.is_dir():
        print(f"compare: {results}: not a directory", file=sys.stderr)
        return 2
    rows, status = [], 0
    for step_dir in sorted(p for p in results.iterdir() if p.is_dir()):
        for schedule in measured_schedules(step_dir):
            run_dir = step_dir / schedule
            try:
                feed = Path(args.feed) / step_dir.name / (args.feed_schedule or schedule) if args.feed else None
                rows.append(compare_run(run_dir, args.schedlab, args.hardware, out, args.fill_export_gaps, feed))
            except (OSError, ValueError, KeyError, TypeError, RuntimeError) as e:  # one bad run: report, go on
                print(f"compare: {run_dir}: {type(e).__name__}: {e}", file=sys.stderr)
                status = 1
    (out / "summary.json").write_text(json.dumps(
        {"hardware": args.hardware, "fill_export_gaps": args.fill_export_gaps, "feed": args.feed,
         "feed_schedule": args.feed_schedule, "runs": rows}, indent=1))
    if args.markdown:
        print(markdown(rows))
    return status


if __name__ == "__main__":
    sys.exit(main())
