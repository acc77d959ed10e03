"""Runs the real distributed steps (steps.py) under Inductor's and
schedlab's schedules and measures each on every rank. Launch with torchrun (any world size):

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \\
    PYTHONPATH=python torchrun --nproc-per-node 2 python/dist/run_steps.py --out out/dist \\
        --schedlab build/schedlab --hardware profiles/measured-h200.json

Schedules (schedules.py): `default` (Inductor's, no comm reordering),
`recommended` (Inductor's iterative pipeline:
reorder_communication_preserving_peak_memory, sink_waits_iterative,
reorder_communication_preserving_peak_memory) and `schedlab`
(schedlab_export.apply with overlap_schedule, or the passes `--comm-passes`
lists) run unless told; `fx_overlap`, `fx_overlap_bucket` and `fx_bucket`
(Inductor's FX-level overlap scheduling and bucketing), and
`fx_overlap_schedlab` (FX overlap scheduling timing nodes by schedlab's
model on `--hardware`; needs the bindings built) on request
(`--schedules`). `--reps N` runs the whole step x schedule matrix N times in
this one launch, into OUT/r1 .. OUT/rN (each laid out as a run of its own).
A step or schedule that fails on any rank is logged and skipped on every
rank (the ranks agree over a gloo group after each); a rank that does not
report within `--agree-timeout` seconds is stuck in a collective that a
failed peer never issued, and the failed rank then ends the launch with a
message saying so. Per step and
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
import datetime
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
import schedules as schedule_defs  # noqa: E402
import steps as step_defs  # noqa: E402
import trace_analysis  # noqa: E402
import pass_timing  # noqa: E402
from schedlab_export.outputs import write_atomically  # noqa: E402

RECOMMENDED = schedule_defs.RECOMMENDED
SCHEDULES = schedule_defs.SCHEDULES
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def _log(msg: str) -> None:
    if dist.get_rank() == 0:
        print(f"[dist {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def fx_changes(schedule: str) -> dict:
    """The Inductor config an FX schedule sets on the installed torch."""
    from torch._inductor import config

    return schedule_defs.fx_config(schedule, lambda field: schedule_defs.config_has(config, field), torch.__version__)


def schedlab_estimator(schedule: str, hardware: str | None):
    """The estimator of fx_overlap_schedlab (schedlab_export/fx_estimator.py);
    ScheduleUnavailable, in one line, where it cannot be built."""
    import schedlab
    from schedlab_export import fx_estimator

    try:
        return fx_estimator.make_estimator(hardware, log=_log)
    except (schedlab.BindingsUnavailable, schedlab.Error) as e:
        raise schedule_defs.ScheduleUnavailable(f"schedule {schedule}: {str(e).splitlines()[0]}") from e


@contextlib.contextmanager
def schedule_context(schedule: str, out: Path, prefix: str, args):
    """Yields (kind, session, estimator): a capture session for Inductor's
    schedules, the apply session for schedlab's; the schedlab estimator an
    FX schedule times nodes by, or None."""
    from torch._inductor import config

    if schedule in schedule_defs.INDUCTOR_FX:
        changes, estimator = schedule_defs.with_estimator(fx_changes(schedule),
                                                          lambda: schedlab_estimator(schedule, args.hardware))
        node_times = contextlib.nullcontext()
        if estimator is not None:
            from schedlab_export.fx_estimator import private_node_times

            node_times = private_node_times()
        # Inductor's comms.py passes stay off, as under `default`.
        with config.patch({"reorder_for_compute_comm_overlap": False, **changes}), node_times:
            with schedlab_export.capture(out, prefix=prefix, reset_dynamo=False) as session:
                yield "capture", session, estimator
        return
    if schedule in schedule_defs.APPLY_SCHEDULES:
        with schedlab_export.apply(memory_methods=args.memory_methods,
                                   comm_passes=schedule_defs.apply_comm_passes(schedule, args.comm_passes),
                                   binary=args.schedlab, hardware=args.hardware, out_dir=out, prefix=prefix,
                                   timeout_s=args.plan_timeout, fill_export_gaps=args.fill_export_gaps,
                                   bucket_collectives=schedule_defs.APPLY_SCHEDULES[schedule],
                                   reset_dynamo=False, quiet=True) as session:
            yield "apply", session, None
        return
    passes = RECOMMENDED if schedule == "recommended" else list(config.reorder_for_compute_comm_overlap_passes)
    with config.patch(reorder_for_compute_comm_overlap=schedule == "recommended",
                      reorder_for_compute_comm_overlap_passes=passes):
        with schedlab_export.capture(out, prefix=prefix, reset_dynamo=False) as session:
            yield "capture", session, None


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
        with pass_timing.timed_passes(pass_timing.INDUCTOR_PASSES.get(schedule, ())) as inductor_passes:
            with schedule_context(schedule, out, step.name, args) as (kind, session, estimator):
                with pass_timing.profiled(out / f"compile-profile.rank{dist.get_rank()}.txt" if args.profile_compile else None):
                    values = step.run()  # compiles the step's graphs
                torch.cuda.synchronize()
    compile_s = time.time() - started
    graphs = emitted_graphs(kind, session, out)
    result = {"step": step.name, "schedule": schedule, "rank": dist.get_rank(), "world_size": dist.get_world_size(),
              "comm_passes": (schedule_defs.apply_comm_passes(schedule, args.comm_passes)
                              if schedule in schedule_defs.APPLY_SCHEDULES else None),
              "inductor_config": fx_changes(schedule) if schedule in schedule_defs.INDUCTOR_FX else None,
              "sm_carveout": args.sm_carveout, "fill_export_gaps": args.fill_export_gaps,
              "describe": step.describe, "compile_s": round(compile_s, 1), "graphs": graphs,
              "warnings": [str(w.message) for w in caught if "schedlab" in str(w.message)]}
    if estimator is not None:
        # Per graph the FX scheduler compiled: nodes schedlab priced, nodes left to Inductor.
        result["estimator"] = {"hardware": args.hardware, "graphs": estimator.graph_stats}
    if kind == "apply":
        result["apply"] = {"applied": sum(g["applied"] for g in graphs), "graphs": len(graphs),
                           "emitted_matches": all(g["emitted_matches"] for g in graphs)}
        result["pass_seconds"] = pass_timing.schedlab_seconds([g.to_json() for g in session.graphs], session.bucketings)
        if session.bucketings:
            result["bucketings"] = session.bucketings
    elif schedule in pass_timing.INDUCTOR_PASSES:
        result["pass_seconds"] = inductor_passes.to_json()
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
    return reference, result


def record_result(result: dict, out: Path) -> None:
    """Written once every rank has measured the cell: a cell's rank files
    exist for all ranks or for none."""
    step, schedule, compile_s = result["step"], result["schedule"], result["compile_s"]
    write_atomically(out / f"rank{dist.get_rank()}.json", json.dumps(result, indent=1))
    _log(f"{step}/{schedule}: step {result['step_us']['median']:.0f} us, exposed "
         f"{result['profile']['exposed_comm_us']:.0f} us, peak {result['memory']['peak_above_inputs_bytes'] / 2**20:.0f} MiB, "
         f"equal {result['equal_to_default']}, compile {compile_s:.0f} s")


class Agreement:
    """After each step set-up and each cell, every rank says whether it
    succeeded, over a gloo group (CPU, so that it never queues behind an
    NCCL collective). All ranks then skip together. A rank that never
    reports is stuck in a collective that a failed rank never issued: the
    failed rank waits `timeout_s`, then ends the process (torchrun stops the
    others); nothing else ends a stuck NCCL collective."""

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        self.group = dist.new_group(backend="gloo", timeout=datetime.timedelta(seconds=timeout_s))

    def failed_ranks(self, ok: bool, what: str) -> list[int]:
        flags = torch.zeros(dist.get_world_size(), dtype=torch.int32)
        flags[dist.get_rank()] = 0 if ok else 1
        try:
            dist.all_reduce(flags, group=self.group)
        except Exception as e:  # noqa: BLE001 - a peer did not arrive: nothing to agree with
            print(f"run_steps: rank {dist.get_rank()}: {what}: {'ok' if ok else 'failed'} here, but not every rank "
                  f"reported within {self.timeout_s:.0f} s ({type(e).__name__}): a rank is stuck in a collective "
                  f"a failed rank never issued; ending the launch (results written so far are complete)",
                  file=sys.stderr, flush=True)
            os._exit(3)
        return [r for r, f in enumerate(flags.tolist()) if f]


def failure_note(out: Path, what: str) -> None:
    """The rank's traceback beside the cell's files (rank-named, atomic); a
    note that cannot be written must not keep the rank from agreeing."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_atomically(out / f"failed.rank{dist.get_rank()}.txt", f"{what}\n{traceback.format_exc()}")
    except OSError as e:
        print(f"run_steps: rank {dist.get_rank()}: {out}: cannot write the failure note: {e}", file=sys.stderr)


def parse_args(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", nargs="*", default=list(step_defs.DEFAULT_STEPS),
                        help=f"any of {', '.join(step_defs.STEPS)} (default: {' '.join(step_defs.DEFAULT_STEPS)})")
    parser.add_argument("--schedules", nargs="*", default=list(schedule_defs.DEFAULT_SCHEDULES),
                        help=f"any of {', '.join(SCHEDULES)}")
    parser.add_argument("--reps", type=int, default=1,
                        help="run the whole matrix this many times, into OUT/r1 .. OUT/rN (1: into OUT)")
    parser.add_argument("--first-rep", type=int, default=None,
                        help="number the repetitions from this one (OUT/rK ..), to split repetitions over launches; "
                             "given, even one repetition goes into OUT/rK")
    parser.add_argument("--schedlab", default=None, help="schedlab binary (default: apply's search)")
    parser.add_argument("--hardware", default=None, help="profile for schedlab's cost model")
    parser.add_argument("--memory-methods", nargs="*", default=["baseline", "lpmf", "bfs", "dfs"])
    parser.add_argument("--comm-passes", nargs="*", default=["overlap_schedule"],
                        help="the comm passes of the `schedlab` schedule (e.g. overlap_schedule bucket_collectives)")
    parser.add_argument("--plan-timeout", type=float, default=120.0)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--profile-steps", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: 1 warm-up step, 3 timed, 1 profiled (overrides those three)")
    parser.add_argument("--agree-timeout", type=float, default=300.0,
                        help="seconds a rank waits for the others to report a cell before ending the launch")
    parser.add_argument("--fill-export-gaps", action="store_true",
                        help="apply plans with the export's missing matmul flops and all-reduce payloads filled in")
    parser.add_argument("--profile-compile", action="store_true",
                        help="profile each compile (cProfile; the compile and pass seconds, slowed, are then no figures to report): "
                             "the top functions by cumulative time in OUT/<step>/<schedule>/compile-profile.rank<r>.txt")
    parser.add_argument("--sm-carveout", type=int, default=0,
                        help="SMs cuBLAS leaves free for NCCL (torch._C._set_sm_carveout_experimental)")
    args = parser.parse_args(argv)
    if args.quick:
        args.warmup, args.iters, args.profile_steps = 1, 3, 1
    for flag, names, known in (("--steps", args.steps, step_defs.STEPS), ("--schedules", args.schedules, SCHEDULES)):
        bad = schedule_defs.unknown(names, known)
        if bad:
            parser.error(f"{flag}: unknown {', '.join(bad)} (known: {', '.join(known)})")
    if min(args.reps, args.iters, args.profile_steps, args.first_rep or 1) < 1 or args.warmup < 0:
        parser.error("--reps, --first-rep, --iters and --profile-steps must be at least 1, --warmup at least 0")
    return args


def run_matrix(args, out: Path, world: int, agreement: Agreement, summary: list) -> int:
    """Every step under every schedule, once; returns 1 if any failed."""
    status = 0
    for name in args.steps:
        step, ok = None, True
        try:
            step = step_defs.STEPS[name](world)
        except Exception:  # noqa: BLE001 - report and go on with the next step
            ok = False
            print(f"[dist rank {dist.get_rank()}] {name}: setup failed:\n{traceback.format_exc()}",
                  file=sys.stderr, flush=True)
            failure_note(out / name, f"{name}: setup failed")
        failed = agreement.failed_ranks(ok, f"{name} setup")
        if failed:
            _log(f"{name}: setup failed on ranks {failed}; step skipped")
            status = 1
            del step
            step_defs.reset_compiled()
            torch.cuda.empty_cache()
            continue
        reference = None
        for schedule in args.schedules:
            cell = out / name / schedule
            ok, result, new_reference = True, None, reference
            try:
                new_reference, result = measure_schedule(step, schedule, cell, args, reference)
            except schedule_defs.ScheduleUnavailable as e:
                ok = False
                _log(f"{name}/{schedule}: skipped: {e}")
                failure_note(cell, str(e))
            except Exception:  # noqa: BLE001
                ok = False
                print(f"[dist rank {dist.get_rank()}] {name}/{schedule} failed:\n{traceback.format_exc()}",
                      file=sys.stderr, flush=True)
                failure_note(cell, f"{name}/{schedule} failed")
            failed = agreement.failed_ranks(ok, f"{name}/{schedule}")
            if failed:
                _log(f"{name}/{schedule}: failed on ranks {failed}; skipped on every rank")
                status = 1
                continue
            reference = new_reference
            record_result(result, cell)
            summary.append({"out": str(out), **{k: result[k] for k in ("step", "schedule", "equal_to_default")}})
        del step
        step_defs.reset_compiled()
        torch.cuda.empty_cache()
    return status


def main() -> int:
    args = parse_args()
    missing = {k: v for k, v in MULTICAST_OFF.items() if os.environ.get(k) != v}
    if missing:
        print(f"run_steps: set {missing} (NVLink multicast must stay off)", file=sys.stderr)
        return 2

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    world = dist.get_world_size()
    agreement = Agreement(args.agree_timeout)
    if args.sm_carveout:
        # cuBLAS's persistent Hopper GEMMs take every SM: an NCCL kernel
        # issued while one runs starts only as it drains (docs/gpu-validation.md).
        torch._C._set_sm_carveout_experimental(args.sm_carveout)
    out = Path(args.out)
    status = 0
    summary = []
    for rep_out in schedule_defs.repetition_dirs(out, args.reps, args.first_rep):
        if rep_out != out:
            _log(f"repetition -> {rep_out}")
        status |= run_matrix(args, rep_out, world, agreement, summary)
    dist.barrier()
    dist.destroy_process_group()
    if local_rank == 0:
        print(json.dumps(summary), file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
