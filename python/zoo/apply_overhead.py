"""What schedlab_export.apply adds to a real torch.compile, per graph, planned
in-process (the bindings) and by the CLI in a subprocess (apply's fallback,
and its only planner before the bindings), against what Inductor's own comm
passes take on the same graph. One GPU, PyTorch 2.11.

    python3 python/zoo/apply_overhead.py --out out/apply_overhead.json [--cases tp_block,fsdp_train,ddp_step]
        [--repeat 3] [--modes inductor,bindings,cli] [--schedlab build/schedlab]

Each case of the zoo (cases.py; the distributed ones on the fake process
group) is compiled `--repeat` times under each of three modes, dynamo reset
before each compile:

  inductor   reorder_for_compute_comm_overlap=True with Inductor's default
             passes, each wrapped by a timer: the time of Inductor's own comm
             passes on each graph;
  bindings   apply(in_process=True): the time of apply's pass on each graph
             (export, plan, mapping the order back), split into export and plan;
  cli        apply(in_process=False): the same through `schedlab plan` in a
             subprocess (the schedlab binary: --schedlab, else apply's search).

Graphs are matched across modes by their order of compilation (each mode
compiles the same graphs in the same order; the node counts are checked).
Writes OUT: per case and graph the samples and medians (ms), and the whole
compile's wall time per mode. The torch-free half (the timers, the summary)
is tested in CI (tests/exporter/test_apply_overhead.py). `--plan-only
GRAPH...` needs no torch: it times apply's planning step alone on exported
graphs, in-process and by subprocess.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE.parent))  # the checkout's packages, unless installed ones come first (pip install .)
sys.path.insert(0, str(HERE))      # cases.py

MODES = ("inductor", "bindings", "cli")
DEFAULT_CASES = ("tp_block", "fsdp_train", "ddp_step")


# --- torch-free half ---------------------------------------------------------
@dataclass
class GraphTimes:
    """One compiled graph in one mode: its node count and the milliseconds
    of each timed part (a part may be timed several times per graph: each
    of Inductor's passes)."""

    nodes: int
    parts_ms: dict[str, float] = field(default_factory=dict)

    def add(self, part: str, ms: float) -> None:
        self.parts_ms[part] = self.parts_ms.get(part, 0.0) + ms


class Recorder:
    """Per compile, the graphs in order; `timed` wraps a function so that
    each call adds its milliseconds to the current graph under `part`."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self.clock = clock
        self.compiles: list[list[GraphTimes]] = []

    def start_compile(self) -> None:
        self.compiles.append([])

    def start_graph(self, nodes: int) -> None:
        self.compiles[-1].append(GraphTimes(nodes=nodes))

    def timed(self, part: str, fn: Callable, starts_graph: bool = False, nodes_of: Callable = len) -> Callable:
        def wrapper(*args, **kwargs):
            if starts_graph:
                self.start_graph(nodes_of(args[0]))
            t0 = self.clock()
            try:
                return fn(*args, **kwargs)
            finally:
                self.compiles[-1][-1].add(part, (self.clock() - t0) * 1e3)

        wrapper.__name__ = getattr(fn, "__name__", part)  # Inductor logs a pass by its __name__
        return wrapper


def _median(samples: list[float]) -> float:
    return statistics.median(samples) if samples else float("nan")


def summarize(runs: dict[str, Recorder], compile_s: dict[str, list[float]]) -> dict:
    """Per graph (matched by compile order) each mode's samples and medians
    of each part; raises ValueError when the modes saw different graphs."""
    shapes = {mode: [[g.nodes for g in c] for c in rec.compiles] for mode, rec in runs.items()}
    reference = next(iter(shapes.values()))[0] if shapes else []
    for mode, compiles in shapes.items():
        for i, nodes in enumerate(compiles):
            if nodes != reference:
                raise ValueError(f"{mode}: compile {i} saw graphs of {nodes} nodes, the first compile {reference}")
    graphs = []
    for k, nodes in enumerate(reference):
        row: dict = {"graph": k, "nodes": nodes}
        for mode, rec in runs.items():
            parts: dict[str, list[float]] = {}
            for c in rec.compiles:
                for part, ms in c[k].parts_ms.items():
                    parts.setdefault(part, []).append(ms)
            row[mode] = {part: {"median_ms": _median(v), "samples_ms": v} for part, v in sorted(parts.items())}
        graphs.append(row)
    return {
        "graphs": graphs,
        "compile_s": {mode: {"median_s": _median(v), "samples_s": v} for mode, v in compile_s.items()},
    }


def overhead_table(summary: dict) -> list[str]:
    """Lines of a text table: per graph, apply's pass (bindings, CLI) and
    Inductor's comm passes, medians in ms."""

    def ms(row: dict, mode: str, part: str) -> str:
        value = row.get(mode, {}).get(part, {}).get("median_ms")
        return f"{value:9.2f}" if value is not None else f"{'-':>9}"

    lines = [f"{'graph':>5} {'nodes':>6} {'inductor':>9} {'bindings':>9} {'(plan)':>9} {'cli':>9} {'(plan)':>9}"]
    for row in summary["graphs"]:
        lines.append(f"{row['graph']:>5} {row['nodes']:>6} {ms(row, 'inductor', 'comm_passes')} {ms(row, 'bindings', 'apply_pass')}"
                     f" {ms(row, 'bindings', 'plan')} {ms(row, 'cli', 'apply_pass')} {ms(row, 'cli', 'plan')}")
    return lines


def planner_times(graph_files: list[Path], repeat: int, binary: str, clock: Callable[[], float] = time.perf_counter) -> dict:
    """Without torch: apply's planning step alone on exported graphs
    (`.post.json`), as apply runs it (runtimes dropped, --no-fuse, the
    default memory methods, overlap_schedule), in-process and by subprocess,
    `repeat` times each, interleaved; per graph the samples and medians (ms)."""
    from schedlab_export.apply import plan_in_process, run_plan, without_runtimes

    options = dict(memory_methods=["baseline", "lpmf", "bfs", "dfs"], comm_passes=["overlap_schedule"])
    graphs = []
    for path in graph_files:
        graph = without_runtimes(json.loads(path.read_text()))
        samples: dict[str, list[float]] = {"bindings": [], "cli": []}
        for _ in range(repeat):
            for mode, plan in (("bindings", lambda: plan_in_process(graph, **options)),
                               ("cli", lambda: run_plan(graph, binary=binary, **options))):
                t0 = clock()
                plan()
                samples[mode].append((clock() - t0) * 1e3)
        graphs.append({"graph": path.name, "nodes": len(graph["nodes"]),
                       **{mode: {"median_ms": _median(v), "samples_ms": v} for mode, v in samples.items()}})
    return {"graphs": graphs}


# --- on the GPU ----------------------------------------------------------------
def _compile_once(case: Callable, mode: str, recorder: Recorder, schedlab_binary: str | None) -> float:
    import torch
    import torch._inductor.comms as comms
    from torch._inductor import config as inductor_config

    import schedlab_export
    import importlib

    apply_module = importlib.import_module("schedlab_export.apply")  # the module: schedlab_export.apply is also the function

    recorder.start_compile()
    torch._dynamo.reset()
    t0 = time.perf_counter()
    if mode == "inductor":
        # Inductor's comm passes as python/dist runs them: its config's list,
        # or, where that is empty (2.11's default), the recommended pipeline.
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dist"))
        from run_steps import RECOMMENDED

        defaults = inductor_config.reorder_for_compute_comm_overlap_passes or RECOMMENDED
        passes = []
        for i, p in enumerate(defaults):
            fn = getattr(comms, p) if isinstance(p, str) else p
            passes.append(recorder.timed("comm_passes", fn, starts_graph=(i == 0)))
        with inductor_config.patch(reorder_for_compute_comm_overlap=True, reorder_for_compute_comm_overlap_passes=passes):
            case()
    else:
        in_process = mode == "bindings"
        saved = apply_module.ApplySession.reorder, apply_module.plan_in_process, apply_module.run_plan
        apply_module.ApplySession.reorder = recorder.timed("apply_pass", saved[0], starts_graph=True,
                                                           nodes_of=lambda self: 0)
        apply_module.plan_in_process = recorder.timed("plan", saved[1])
        apply_module.run_plan = recorder.timed("plan", saved[2])
        try:
            with schedlab_export.apply(comm_passes=["overlap_schedule"], in_process=in_process,
                                       binary=None if in_process else schedlab_binary, quiet=True) as session:
                # One process on the fake process group: its all_gather carries
                # nothing, so the ranks' agreement (apply's all_gather_object) is off.
                session.gather_keys = None
                case()
            for record, graph in zip(session.graphs, recorder.compiles[-1]):
                graph.nodes = len(record.inductor_order)
                if not record.applied:
                    raise RuntimeError(f"{mode}: graph {record.index} fell back: {record.fallback_reason}")
                if record.planner != mode:
                    raise RuntimeError(f"{mode}: graph {record.index} was planned by the {record.planner}")
        finally:
            apply_module.ApplySession.reorder, apply_module.plan_in_process, apply_module.run_plan = saved
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES), help="zoo cases (python/zoo/cases.py)")
    parser.add_argument("--repeat", type=int, default=3, help="compiles per case and mode (>= 1)")
    parser.add_argument("--schedlab", default=None, help="the CLI for the cli mode (default: apply's search)")
    parser.add_argument("--modes", default=",".join(MODES), help=f"which of {', '.join(MODES)} to run")
    parser.add_argument("--plan-only", metavar="GRAPH", nargs="+", type=Path,
                        help="no torch: time only apply's planning step on these exported .post.json files")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat: at least 1")
    modes = [m for m in args.modes.split(",") if m]
    if not modes or any(m not in MODES for m in modes):
        parser.error(f"--modes {args.modes}: choose from {', '.join(MODES)}")

    if args.plan_only:
        from schedlab_export.apply import find_bindings, find_schedlab

        if find_bindings() is None:
            parser.error("--plan-only: schedlab's bindings are not importable")
        result = planner_times(args.plan_only, args.repeat, find_schedlab(args.schedlab))
        for g in result["graphs"]:
            print(f"{g['graph']:>40} {g['nodes']:>6} nodes: bindings {g['bindings']['median_ms']:8.2f} ms, "
                  f"cli {g['cli']['median_ms']:8.2f} ms")
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
        return 0

    import torch

    import cases
    import schedlab
    from schedlab_export.apply import find_bindings, find_schedlab

    if not torch.cuda.is_available():
        print("apply_overhead: needs a CUDA GPU", file=sys.stderr)
        return 2
    if "bindings" in modes and find_bindings() is None:
        print("apply_overhead: schedlab's bindings are not importable (pip install . in the checkout, or "
              "PYTHONPATH=build/python:python after cmake --build build)", file=sys.stderr)
        return 2
    binary = find_schedlab(args.schedlab) if "cli" in modes else None
    cases.init_fake_process_group()
    result = {
        "torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "python": platform.python_version(),
        "schedlab_module": schedlab.__file__, "schedlab_binary": binary, "repeat": args.repeat, "modes": modes,
        "cases": {},
    }
    for name in args.cases.split(","):
        case = getattr(cases, name)
        runs = {mode: Recorder() for mode in modes}
        compile_s: dict[str, list[float]] = {mode: [] for mode in modes}
        _compile_once(case, "inductor", Recorder(), binary)  # warm: kernels' autotuning caches, imports
        for _ in range(args.repeat):
            for mode in modes:  # interleaved, so that drift hits every mode alike
                compile_s[mode].append(_compile_once(case, mode, runs[mode], binary))
        summary = summarize(runs, compile_s)
        result["cases"][name] = summary
        medians = ", ".join(f"{m} {summary['compile_s'][m]['median_s']:.2f} s" for m in modes)
        print(f"{name}: compile (median of {args.repeat}) {medians}")
        print("\n".join(overhead_table(summary)))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"apply_overhead: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
