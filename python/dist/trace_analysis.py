"""Exposed communication from a profiler trace, and the measured Chrome trace
with the simulated trace's lanes (core/sim's chrome_trace). No torch needed:
tests/exporter/test_trace_analysis.py runs it in CI on hand-made kernels.

Exposed time of a collective = the part of its NCCL kernel during which no
kernel of the compute streams runs on that GPU (the compute streams idle,
or wait, while it communicates). An NCCL kernel's span also holds the time it
waits for the slowest peer to arrive, which the simulation models as the
peer's compute; launch gaps of the compute stream during a collective count
as exposed too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median
from typing import Iterable, Sequence

GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
STEP_MARK = "schedlab_step"
PROFILER_STEP_MARK = "ProfilerStep#"  # torch.profiler's schedule steps (prof.step())


@dataclass(frozen=True)
class Kernel:
    name: str
    start_us: float
    end_us: float
    stream: int

    @property
    def is_comm(self) -> bool:
        return self.name.lower().startswith("nccl")

    @property
    def dur_us(self) -> float:
        return self.end_us - self.start_us


@dataclass
class CollectiveExposure:
    position: int          # k-th collective of the step, in launch order
    name: str              # the graph's collective node, when known
    kernel: str
    start_us: float        # relative to the step's first kernel
    dur_us: float
    exposed_us: float
    exposed_spans: list = field(default_factory=list)  # [(start, end)] relative


@dataclass
class StepAnalysis:
    span_us: float
    compute_busy_us: float
    comm_busy_us: float
    exposed_comm_us: float
    collectives: list[CollectiveExposure]
    kernels: list[Kernel]
    origin_us: float


def gpu_events(trace: dict) -> tuple[list[Kernel], list[tuple[float, float]]]:
    """Kernels (and copies) of a torch.profiler Chrome trace, by start time,
    each with the CPU time of its launch, and the CPU spans of the
    `schedlab_step` annotations (else of torch.profiler's `ProfilerStep#N`).
    The twins: web/js/measured.js rawSteps, core/io/trace_reader.cpp."""
    kernels, steps, profiler_steps, launched_at, correlation = [], [], [], {}, {}
    for e in trace.get("traceEvents", []):
        if e.get("ph") != "X":
            continue
        cat, args = e.get("cat", ""), e.get("args") or {}
        if cat in GPU_CATEGORIES:
            start = float(e["ts"])
            kernel = Kernel(e.get("name", "?"), start, start + float(e.get("dur", 0.0)),
                            int(args.get("stream", e.get("tid", 0))))
            kernels.append(kernel)
            if "correlation" in args:
                correlation[kernel] = args["correlation"]
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            launched_at[args["correlation"]] = float(e["ts"])
        elif cat == "user_annotation" and str(e.get("name", "")).startswith(STEP_MARK):
            steps.append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0.0))))
        elif cat in ("user_annotation", "cpu_op") and str(e.get("name", "")).startswith(PROFILER_STEP_MARK):
            profiler_steps.append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0.0))))
    kernels.sort(key=lambda k: (k.start_us, k.end_us))
    steps = steps or profiler_steps  # torch.profiler's own step marks where the runner set none
    steps.sort()
    launches = {k: launched_at.get(correlation.get(k)) for k in kernels}
    return kernels, steps, launches


def split_steps(kernels: Sequence[Kernel], marks: Sequence[tuple[float, float]] = (),
                launches: dict | None = None, gap_us: float = 1000.0) -> list[list[Kernel]]:
    """Kernels grouped per step: by the CPU time of each kernel's launch
    within the step annotations' CPU spans when the trace has both (a step
    can leave the GPU idle for a while), else at idle gaps longer than
    `gap_us` (the runner sleeps between profiled steps)."""
    if marks and launches and any(v is not None for v in launches.values()):
        groups = [[k for k in kernels if launches.get(k) is not None and a <= launches[k] <= b] for a, b in marks]
        return [g for g in groups if g]
    groups: list[list[Kernel]] = []
    last_end = None
    for k in kernels:
        if last_end is None or k.start_us - last_end > gap_us:
            groups.append([])
        groups[-1].append(k)
        last_end = k.end_us if last_end is None else max(last_end, k.end_us)
    return groups


def merge_intervals(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[list[float]] = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def uncovered(a: float, b: float, merged: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The parts of [a, b) that no interval of `merged` (sorted, disjoint) covers."""
    out, cursor = [], a
    for s, e in merged:
        if e <= cursor:
            continue
        if s >= b:
            break
        if s > cursor:
            out.append((cursor, min(s, b)))
        cursor = max(cursor, e)
        if cursor >= b:
            break
    if cursor < b:
        out.append((cursor, b))
    return out


def analyse_step(kernels: Sequence[Kernel], collective_names: Sequence[str] = ()) -> StepAnalysis:
    """Exposed time per collective of one step's kernels; the k-th NCCL kernel
    is named after collective_names[k] when given."""
    if not kernels:
        raise ValueError("a step without kernels")
    origin = min(k.start_us for k in kernels)
    compute = merge_intervals((k.start_us, k.end_us) for k in kernels if not k.is_comm)
    comm = [k for k in kernels if k.is_comm]
    collectives = []
    for i, k in enumerate(comm):
        gaps = uncovered(k.start_us, k.end_us, compute)
        collectives.append(CollectiveExposure(
            position=i, name=collective_names[i] if i < len(collective_names) else f"collective_{i}",
            kernel=k.name, start_us=k.start_us - origin, dur_us=k.dur_us,
            exposed_us=sum(e - s for s, e in gaps), exposed_spans=[(s - origin, e - origin) for s, e in gaps]))
    end = max(k.end_us for k in kernels)
    return StepAnalysis(
        span_us=end - origin, compute_busy_us=sum(e - s for s, e in compute),
        comm_busy_us=sum(e - s for s, e in merge_intervals((k.start_us, k.end_us) for k in comm)),
        exposed_comm_us=sum(c.exposed_us for c in collectives), collectives=collectives,
        kernels=list(kernels), origin_us=origin)


def summarize_steps(steps: Sequence[StepAnalysis]) -> dict:
    """Medians over profiled steps: totals, and per collective position."""
    counts = {len(s.collectives) for s in steps}
    per_collective = []
    if len(counts) == 1:
        for i in range(counts.pop()):
            per_collective.append({
                "position": i, "name": steps[0].collectives[i].name, "kernel": steps[0].collectives[i].kernel,
                "dur_us": median(s.collectives[i].dur_us for s in steps),
                "exposed_us": median(s.collectives[i].exposed_us for s in steps)})
    return {
        "steps_profiled": len(steps),
        "span_us": median(s.span_us for s in steps),
        "compute_busy_us": median(s.compute_busy_us for s in steps),
        "comm_busy_us": median(s.comm_busy_us for s in steps),
        "exposed_comm_us": median(s.exposed_comm_us for s in steps),
        "collectives_per_step": sorted({len(s.collectives) for s in steps}),
        "collectives": per_collective,
    }


def measured_chrome_trace(step: StepAnalysis, process: str, other: dict | None = None) -> dict:
    """One measured step as Chrome trace events with core/sim's lanes: pid 1,
    tid 1 `compute`, tid 2 `comm`, one X event per kernel (collectives named
    after their graph node, the kernel in args) and `exposed <collective>`
    events on the compute lane."""
    pid, compute_lane, comm_lane = 1, 1, 2
    events = [
        {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": process}},
        {"name": "thread_name", "ph": "M", "pid": pid, "tid": compute_lane, "args": {"name": "compute"}},
        {"name": "thread_name", "ph": "M", "pid": pid, "tid": comm_lane, "args": {"name": "comm"}},
        {"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": compute_lane, "args": {"sort_index": 0}},
        {"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": comm_lane, "args": {"sort_index": 1}},
    ]
    by_start = {c.start_us: c for c in step.collectives}
    for k in step.kernels:
        start = k.start_us - step.origin_us
        if k.is_comm:
            c = by_start.get(start)
            events.append({"name": c.name if c else k.name, "cat": "comm", "ph": "X", "pid": pid, "tid": comm_lane,
                           "ts": start, "dur": k.dur_us,
                           "args": {"kind": "collective", "kernel": k.name, "stream": k.stream,
                                    "exposed_us": c.exposed_us if c else None}})
        else:
            events.append({"name": k.name, "cat": "compute", "ph": "X", "pid": pid, "tid": compute_lane,
                           "ts": start, "dur": k.dur_us, "args": {"kernel": k.name, "stream": k.stream}})
    for c in step.collectives:
        for s, e in c.exposed_spans:
            events.append({"name": f"exposed {c.name}", "cat": "exposed", "ph": "X", "pid": pid, "tid": compute_lane,
                           "ts": s, "dur": e - s, "args": {"collective": c.name}})
    data = {"generator": "schedlab python/dist (torch.profiler)", "step_time_us": step.span_us,
            "exposed_comm_us": step.exposed_comm_us}
    data.update(other or {})
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": data}
