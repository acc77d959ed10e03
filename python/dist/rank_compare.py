"""Every rank simulated beside every rank measured: schedlab's several-rank
simulation (`schedlab simulate` with one graph per rank) of the exact orders
each rank of a real step ran, next to the ranks' measured GPU spans. No
torch and no GPU: runs where the schedlab binary is.

    python3 python/dist/rank_compare.py RESULTS_DIR --schedlab build/schedlab \\
        --hardware h100-sxm [--markdown]

For every <step>/<schedule>/ in RESULTS_DIR (run_steps.py's output, as for
compare.py): each rank's graphs are rearranged into the order that rank
emitted and their `runtime_us` dropped (compare.py's in_order and
without_runtimes), then all ranks of one graph are simulated together
(`--no-fuse --memory-methods baseline --comm-passes ""`). Graphs of one step
add up per rank (forward, then backward); the step is the slowest rank's.
Simulated twice: the ranks' own graphs alone, and with each rank's compute
scaled by its measured compute busy time over the ranks' mean
(`--rank-skew`), the simplest measured per-rank factor. Prints JSON (or a
markdown table): per run the simulated slowest rank and step, and the
measured GPU span per rank, its slowest rank and spread.
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

from compare import SCHEDULE_ORDER, in_order, rank_results  # noqa: E402
from schedlab_export.apply import without_runtimes  # noqa: E402


def simulate_ranks(graphs: list[dict], schedlab: str, hardware: str, factors: list[float] | None) -> dict:
    """`schedlab simulate --format json` of one graph's ranks, rank 0 first."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for r, graph in enumerate(graphs):
            path = Path(tmp) / f"rank{r}.json"
            path.write_text(json.dumps(graph))
            paths.append(str(path))
        cmd = [schedlab, "simulate", *paths, "--ranks", str(len(paths)), "--no-fuse", "--memory-methods", "baseline",
               "--comm-passes", "", "--hardware", hardware, "--format", "json"]
        if factors:
            cmd += ["--rank-skew", ",".join(f"{r}:{f:.6f}" for r, f in enumerate(factors))]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{graphs[0].get('name')}: schedlab simulate failed: {done.stderr.strip()}")
        return json.loads(done.stdout)


def step_of(per_graph: list[dict]) -> dict:
    """Graphs of one step add up per rank; the step is the slowest rank's."""
    ranks = len(per_graph[0]["ranks"])
    per_rank = [sum(g["ranks"][r]["step_time_us"] for g in per_graph) for r in range(ranks)]
    slowest = max(range(ranks), key=lambda r: (per_rank[r], -r))
    skews = [c["skew_us"] for g in per_graph for c in g["collectives"]]
    return {"step_us": per_rank[slowest], "slowest_rank": slowest, "by_rank_us": per_rank,
            "largest_skew_us": max(skews, default=0.0)}


def compare_ranks(run_dir: Path, schedlab: str, hardware: str) -> dict:
    ranks = rank_results(run_dir)
    graphs = []
    for i in range(len(ranks[0]["graphs"])):
        graphs.append([without_runtimes(in_order(json.loads((run_dir / r["graphs"][i]["graph"]).read_text()),
                                                 r["graphs"][i]["emitted_order"])) for r in ranks])
    busy = [r["profile"]["compute_busy_us"] for r in ranks]
    factors = [b / statistics.mean(busy) for b in busy]
    own = step_of([simulate_ranks(g, schedlab, hardware, None) for g in graphs])
    skewed = step_of([simulate_ranks(g, schedlab, hardware, factors) for g in graphs])
    span = [r["profile"]["span_us"] for r in ranks]
    slowest = max(range(len(span)), key=lambda r: (span[r], -r))
    return {
        "step": ranks[0]["step"], "schedule": ranks[0]["schedule"], "world_size": ranks[0]["world_size"],
        "simulated": own,
        "simulated_measured_skew": dict(skewed, compute_factors=factors),
        "measured": {"gpu_span_us_by_rank": span, "slowest_rank": slowest, "gpu_span_us": span[slowest],
                     "spread_us": max(span) - min(span), "compute_busy_us_by_rank": busy},
    }


def markdown(rows: list[dict]) -> str:
    lines = [
        "| step | schedule | simulated slowest rank: step µs | with measured compute factors: step µs (rank) | "
        "largest simulated arrival skew µs | measured slowest GPU span µs (rank) | measured spread across ranks µs (%) | "
        "simulated / measured slowest |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s, k, m = r["simulated"], r["simulated_measured_skew"], r["measured"]
        lines.append(
            f"| {r['step']} | {r['schedule']} | {s['step_us']:.0f} | {k['step_us']:.0f} ({k['slowest_rank']}) | "
            f"{k['largest_skew_us']:.0f} | {m['gpu_span_us']:.0f} ({m['slowest_rank']}) | "
            f"{m['spread_us']:.0f} ({100 * m['spread_us'] / m['gpu_span_us']:.1f} %) | {s['step_us'] / m['gpu_span_us']:.2f} |")
    return "\n".join(lines)


def compare_all(results: Path, schedlab: str, hardware: str) -> list[dict]:
    rows = []
    for step_dir in sorted(p for p in results.iterdir() if p.is_dir()):
        for schedule in SCHEDULE_ORDER:
            if (step_dir / schedule / "rank0.json").exists():
                rows.append(compare_ranks(step_dir / schedule, schedlab, hardware))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--schedlab", required=True)
    parser.add_argument("--hardware", required=True)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    rows = compare_all(Path(args.results), args.schedlab, args.hardware)
    print(markdown(rows) if args.markdown else json.dumps({"hardware": args.hardware, "runs": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
