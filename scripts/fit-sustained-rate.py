#!/usr/bin/env python3
"""Fits the sustained tensor-core rate of long 16-bit matmuls from measured
real steps (docs/cost-model.md, "Sustained rate").

    scripts/fit-sustained-rate.py RESULTS_DIR... --schedlab build/schedlab \\
        --hardware PROFILE.json -o FIT.json [--source TEXT]

RESULTS_DIR is python/dist/run_steps.py's output (<step>/<schedule>/ with
rank*.json, the compiled graphs and every rank's measured trace). Each
graph of each run is planned in the order it ran with its own traces fed
back (`schedlab plan --measured-trace`, as python/dist/compare.py does), and
every mapped 16-bit matmul node (class `gemm` or `gemm_unaligned`; the f32
paths run on other units) gives its measured time alone, its FLOPs and the
time the profile's laws give it. PROFILE must be the fitted profile without
a sustained rate (scripts/fit-profiles.sh fits one first): the laws' own
times are what the rate caps.

The rate R is the one that minimizes, over those nodes, the squared relative
error of max(law time, FLOPs / R) weighted by the measured time (the
weighting of fit-profile's laws: a node counts by its time), searched on a
grid of 0.1 % steps between 100 and 2000 TFLOP/s; deterministic. Writes
{"sustained_tensor_flops_per_s", "source", "nodes", "runs", the error
before and after} for `schedlab fit-profile --sustained FIT.json`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python" / "dist"))

from compare import feed_args, ordered_graph, rank_results, simulate  # noqa: E402

TENSOR_GEMM_CLASSES = {"gemm", "gemm_unaligned"}


def gemm_samples(run_dir: Path, schedlab: str, hardware: str) -> list[dict]:
    """Every mapped 16-bit matmul of one run: measured µs alone, FLOPs, law µs."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, g in enumerate(rank_results(run_dir)[0]["graphs"]):
            graph = ordered_graph(run_dir, g)
            flops = {n["name"]: n.get("flops") or 0 for n in graph["nodes"]}
            plan = simulate(graph, schedlab, hardware, None, feed_args(run_dir, i, Path(tmp)))
            for n in plan["measured_costs"]["nodes"]:
                if n["class"] in TENSOR_GEMM_CLASSES and flops.get(n["name"], 0) > 0 and n["measured_us"] > 0:
                    out.append({"run": str(run_dir), "node": n["name"], "flops": flops[n["name"]],
                                "measured_us": n["measured_us"], "law_us": n["priced_us"]})
    return out


def priced_us(s: dict, rate: float | None) -> float:
    """A sample's price: its law's time, at least its FLOPs at `rate` (None: the law alone)."""
    return s["law_us"] if rate is None else max(s["law_us"], s["flops"] / rate * 1e6)


def weighted_error(samples: list[dict], rate: float | None) -> float:
    """Σ measured · ((priced − measured) / measured)² over the samples."""
    return sum(s["measured_us"] * ((priced_us(s, rate) - s["measured_us"]) / s["measured_us"]) ** 2 for s in samples)


def best_rate(samples: list[dict]) -> float:
    grid = [100e12 * 1.001 ** k for k in range(int(math.log(20) / math.log(1.001)) + 1)]
    return min(grid, key=lambda r: (weighted_error(samples, r), r))


def summed_ratio(samples: list[dict], rate: float | None) -> float:
    """Σ priced / Σ measured: what a graph's summed kernel time sees."""
    return sum(priced_us(s, rate) for s in samples) / sum(s["measured_us"] for s in samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", help="run_steps.py output folders (<step>/<schedule>/)")
    parser.add_argument("--schedlab", required=True)
    parser.add_argument("--hardware", required=True, help="the fitted profile without a sustained rate (a file)")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--source", default="", help="where the steps ran, in words")
    args = parser.parse_args()
    try:
        profile = json.loads(Path(args.hardware).read_text())
    except (OSError, ValueError) as e:
        print(f"fit-sustained-rate: {args.hardware}: {e}", file=sys.stderr)
        return 2
    if (profile.get("time_model") or {}).get("sustained_tensor_flops_per_s"):
        print(f"fit-sustained-rate: {args.hardware}: time_model.sustained_tensor_flops_per_s is set: "
              "give the profile the rate is fitted beside (without one)", file=sys.stderr)
        return 2
    samples, runs = [], []
    for results in map(Path, args.results):
        if not results.is_dir():
            print(f"fit-sustained-rate: {results}: not a directory", file=sys.stderr)
            return 2
        for run_dir in sorted(p.parent for p in results.glob("*/*/rank0.json")):
            try:
                found = gemm_samples(run_dir, args.schedlab, args.hardware)
            except (OSError, ValueError, KeyError, RuntimeError) as e:
                print(f"fit-sustained-rate: {run_dir}: {type(e).__name__}: {e}", file=sys.stderr)
                return 1
            samples += found
            runs.append(str(run_dir))
    if len(samples) < 5:
        print(f"fit-sustained-rate: {len(samples)} mapped 16-bit matmuls under {', '.join(args.results)}: "
              "too few to fit a rate (5 or more)", file=sys.stderr)
        return 1
    rate = best_rate(samples)
    fit = {
        "sustained_tensor_flops_per_s": round(rate, -9),
        "source": args.source,
        "fitted_on": f"{len(samples)} mapped 16-bit matmul nodes of {len(runs)} runs (measured alone, every rank's trace fed back)",
        "runs": runs,
        "summed_priced_over_measured": {"laws": round(summed_ratio(samples, None), 4),
                                        "laws_and_rate": round(summed_ratio(samples, rate), 4)},
    }
    out = Path(args.output)
    partial = out.with_name(out.name + ".partial")
    partial.write_text(json.dumps(fit, indent=1) + "\n")
    partial.replace(out)  # never a half-written file
    print(f"sustained tensor rate {rate / 1e12:.0f} TFLOP/s from {len(samples)} matmuls "
          f"(summed priced / measured {fit['summed_priced_over_measured']['laws']:.3f} -> "
          f"{fit['summed_priced_over_measured']['laws_and_rate']:.3f}); written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
