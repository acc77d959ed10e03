"""Runs the real distributed steps (steps.py) under three schedules and
measures each on every rank. Launch with torchrun (any world size):

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \\
    PYTHONPATH=python torchrun --nproc-per-node 2 python/dist/run_steps.py --out out/dist \\
        --schedlab build/schedlab --hardware profiles/measured-h200.json

Schedules: `default` (Inductor's, no comm reordering), `recommended`
(Inductor's iterative pipeline: reorder_communication_preserving_peak_memory,
sink_waits_iterative, reorder_communication_preserving_peak_memory) and
`schedlab` (schedlab_export.apply with overlap_schedule, or the passes
`--comm-passes` lists). Per step and
schedule, OUT/<step>/<schedule>/ gets the compiled graphs (post-fusion
schedgraph/1, and for schedlab its plans), and OUT/<step>/<schedule>/rank<r>.json
the measurements: step time (CUDA events, median), peak memory above the
step's inputs, exposed communication per collective (torch.profiler, NCCL
kernels against the compute streams; trace_analysis.py), the emitted orders,
and whether the step's results equal the default schedule's bit for bit.
Rank 0 also writes the measured step as a Chrome trace (measured.trace.json).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import torch
import torch.distributed as dist

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import schedlab_export  # noqa: E402
import steps as step_defs  # noqa: E402
import trace_analysis  # noqa: E402
from schedlab_export.outputs import write_atomically  # noqa: E402

RECOMMENDED = [
    "reorder_communication_preserving_peak_memory",
    "sink_waits_iterative",
    "reorder_communication_preserving_peak_memory",
]
SCHEDULES = ("default", "recommended", "schedlab")
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def _log(msg: str) -> None:
    if dist.get_rank() == 0:
        print(f"[dist {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def schedule_context(schedule: str, out: Path, prefix: str, args):
    """Yields (kind, session): a capture session for Inductor's schedules,
    the apply session for schedlab's."""
    from torch._inductor import config

    if schedule == "schedlab":
        with schedlab_export.apply(memory_methods=args.memory_methods, comm_passes=args.comm_passes,
                                   binary=args.schedlab, hardware=args.hardware, out_dir=out, prefix=prefix,
                                   timeout_s=args.plan_timeout, fill_export_gaps=args.fill_export_gaps,
                                   reset_dynamo=False, quiet=True) as session:
            yield "apply", session
        return
    passes = RECOMMENDED if schedule == "recommended" else list(config.reorder_for_compute_comm_overlap_passes)
    with config.patch(reorder_for_compute_comm_overlap=schedule == "recommended",
                      reorder_for_compute_comm_overlap_passes=passes):
        with schedlab_export.capture(out, prefix=prefix, reset_dynamo=False) as session:
            yield "capture", session


def emitted_graphs(kind: str, session, out: Path) -> list[dict]:
    """Per compiled graph, in compile order: its file and the order emitted."""
    graphs = []
    if kind == "apply":
        for g in session.graphs:
            graphs.append({"graph": f"{g.name}.post.json", "plan": f"{g.name}.plan.json" if g.applied else None,
                           "emitted_order": g.emitted_order, "applied": g.applied,
                           "fallback_reason": g.fallback_reason, "emitted_matches": g.mismatch is None})
    else:
        for g in session.graphs:
            final = (g.expected or {}).get("final_order")
            graphs.append({"graph": f"{g.case}.post.json", "emitted_order": final})
    for g in graphs:
        path = out / g["graph"]
        post = json.loads(path.read_text()) if path.exists() else {"nodes": []}
        kinds = {n["name"]: n["kind"] for n in post["nodes"]}
        g["collectives"] = [n for n in (g["emitted_order"] or []) if kinds.get(n) == "collective"]
    return graphs


def align_ranks() -> None:
    """Every rank starts the next step at about the same time, so that a
    collective's kernel does not also hold the time its peer was late."""
    dist.barrier()
    torch.cuda.synchronize()


def time_steps(run, iters: int) -> tuple[list[float], list[float]]:
    """Per step: GPU time between events around it, and the CPU's time to
    issue it (when that is close to the GPU time, the step is CPU-bound)."""
    times, cpu = [], []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        align_ranks()
        start.record()
        t = time.perf_counter()
        run()
        cpu.append((time.perf_counter() - t) * 1e6)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return times, cpu


def peak_memory(run) -> dict:
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    run()
    torch.cuda.synchronize()
    return {"peak_above_inputs_bytes": torch.cuda.max_memory_allocated() - before,
            "peak_allocated_bytes": torch.cuda.max_memory_allocated()}


def profile_steps(run, count: int) -> dict:
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(count):
            torch.cuda.synchronize()
            time.sleep(0.005)  # an idle gap on the GPU between profiled steps
            align_ranks()  # its kernel is launched outside the step's annotation: not counted
            with record_function(f"{trace_analysis.STEP_MARK}_{i}"):
                run()
            torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        prof.export_chrome_trace(path)
        return json.loads(Path(path).read_text())
    finally:
        os.unlink(path)


def measure_schedule(step, schedule: str, out: Path, args, reference):
    step_defs.reset_compiled()
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with schedule_context(schedule, out, step.name, args) as (kind, session):
            values = step.run()  # compiles the step's graphs
            torch.cuda.synchronize()
    compile_s = time.time() - started
    graphs = emitted_graphs(kind, session, out)
    result = {"step": step.name, "schedule": schedule, "rank": dist.get_rank(), "world_size": dist.get_world_size(),
              "comm_passes": args.comm_passes if schedule == "schedlab" else None,
              "sm_carveout": args.sm_carveout, "fill_export_gaps": args.fill_export_gaps,
              "describe": step.describe, "compile_s": round(compile_s, 1), "graphs": graphs,
              "warnings": [str(w.message) for w in caught if "schedlab" in str(w.message)]}
    if kind == "apply":
        result["apply"] = {"applied": sum(g["applied"] for g in graphs), "graphs": len(graphs),
                           "emitted_matches": all(g["emitted_matches"] for g in graphs)}
    first = [v.detach().clone() for v in values]
    if reference is None:
        reference = first
    result["equal_to_default"] = len(values) == len(reference) and all(
        torch.equal(a, b) for a, b in zip(values, reference))
    result["max_abs_diff_to_default"] = max(
        ((a.float() - b.float()).abs().max().item() for a, b in zip(values, reference)), default=0.0)
    del values
    for _ in range(args.warmup):
        step.run()
    torch.cuda.synchronize()
    times, cpu_times = time_steps(step.run, args.iters)
    repeat = step.run()  # the same schedule again: is the step itself deterministic?
    result["repeat_equal_to_first"] = all(torch.equal(a, b) for a, b in zip(repeat, first))
    result["repeat_max_abs_diff"] = max(((a.float() - b.float()).abs().max().item() for a, b in zip(repeat, first)), default=0.0)
    del repeat, first
    result["cpu_step_us"] = sorted(cpu_times)[len(cpu_times) // 2]
    result["step_us"] = {"median": sorted(times)[len(times) // 2], "min": min(times), "max": max(times), "all": times}
    result["memory"] = peak_memory(step.run)
    trace = profile_steps(step.run, args.profile_steps)
    if dist.get_rank() == 0:  # the raw profile of rank 0, to check the analysis against
        with gzip.open(out / "profile.rank0.json.gz", "wt") as f:
            json.dump(trace, f)
    kernels, marks, launches = trace_analysis.gpu_events(trace)
    names = [c for g in graphs for c in g["collectives"]]
    analysed = [trace_analysis.analyse_step(ks, names) for ks in trace_analysis.split_steps(kernels, marks, launches)]
    result["profile"] = trace_analysis.summarize_steps(analysed)
    result["profile"]["collectives_in_graphs"] = len(names)
    if analysed:
        mid = analysed[len(analysed) // 2]
        measured = trace_analysis.measured_chrome_trace(
            mid, f"measured {step.name} {schedule} rank {dist.get_rank()}",
            {"step": step.name, "schedule": schedule, "rank": dist.get_rank(), "world_size": dist.get_world_size()})
        write_atomically(out / f"measured.rank{dist.get_rank()}.trace.json", json.dumps(measured))
    write_atomically(out / f"rank{dist.get_rank()}.json", json.dumps(result, indent=1))
    _log(f"{step.name}/{schedule}: step {result['step_us']['median']:.0f} us, exposed "
         f"{result['profile']['exposed_comm_us']:.0f} us, peak {result['memory']['peak_above_inputs_bytes'] / 2**20:.0f} MiB, "
         f"equal {result['equal_to_default']}, compile {compile_s:.0f} s")
    return reference, result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", nargs="*", default=list(step_defs.STEPS))
    parser.add_argument("--schedules", nargs="*", default=list(SCHEDULES))
    parser.add_argument("--schedlab", default=None, help="schedlab binary (default: apply's search)")
    parser.add_argument("--hardware", default=None, help="profile for schedlab's cost model")
    parser.add_argument("--memory-methods", nargs="*", default=["baseline", "lpmf", "bfs", "dfs"])
    parser.add_argument("--comm-passes", nargs="*", default=["overlap_schedule"],
                        help="the comm passes of the `schedlab` schedule (e.g. overlap_schedule bucket_collectives)")
    parser.add_argument("--plan-timeout", type=float, default=120.0)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--profile-steps", type=int, default=5)
    parser.add_argument("--fill-export-gaps", action="store_true",
                        help="apply plans with the export's missing matmul flops and all-reduce payloads filled in")
    parser.add_argument("--sm-carveout", type=int, default=0,
                        help="SMs cuBLAS leaves free for NCCL (torch._C._set_sm_carveout_experimental)")
    args = parser.parse_args()
    missing = {k: v for k, v in MULTICAST_OFF.items() if os.environ.get(k) != v}
    if missing:
        print(f"run_steps: set {missing} (NVLink multicast must stay off)", file=sys.stderr)
        return 2

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    world = dist.get_world_size()
    if args.sm_carveout:
        # cuBLAS's persistent Hopper GEMMs take every SM: an NCCL kernel
        # issued while one runs starts only as it drains (docs/gpu-validation.md).
        torch._C._set_sm_carveout_experimental(args.sm_carveout)
    out = Path(args.out)
    status = 0
    summary = []
    for name in args.steps:
        try:
            step = step_defs.STEPS[name](world)
        except Exception:  # noqa: BLE001 - report and go on with the next step
            _log(f"{name}: setup failed:\n{traceback.format_exc()}")
            status = 1
            continue
        reference = None
        for schedule in args.schedules:
            try:
                reference, result = measure_schedule(step, schedule, out / name / schedule, args, reference)
                summary.append({k: result[k] for k in ("step", "schedule", "equal_to_default")})
            except Exception:  # noqa: BLE001
                _log(f"{name}/{schedule} failed:\n{traceback.format_exc()}")
                status = 1
        del step
        step_defs.reset_compiled()
        torch.cuda.empty_cache()
    dist.barrier()
    dist.destroy_process_group()
    if local_rank == 0:
        print(json.dumps(summary), file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
