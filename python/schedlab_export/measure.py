"""Measure each exported graph's compiled call on the GPU -> `<case>.measured.json`
(schedmeasured/1, docs/schedmeasured-1.md).

How a graph's call is found: while Inductor generates code, `record_launch`
notes which scheduler node emitted which kernel call (Triton kernels by
name, extern calls by operator), `CompiledFxGraph.__init__` ties the compiled
artifact to the exported graph, and its first `__call__` keeps the inputs
(freeable ones copied: the real call frees them). Measurement runs later,
one graph at a time, on those inputs:

* memory: one call with fresh copies of the freeable inputs held only by the
  argument list (as AOTAutograd hands them over), peak statistics reset;
* wall time: CUDA events around the call from an idle GPU, median of
  `samples` calls after `warmup`; optionally the same call captured once in a
  CUDA graph and replayed;
* kernels: `profiled_calls` calls under torch.profiler; each GPU kernel is
  mapped to its launching top-level CPU operation (kineto correlation), then
  to the node that emitted that launch; the call with the median kernel time
  is written;
* data-dependent sizes: the `u<k>` locals of the generated `call` function
  when it returns (sys.setprofile during the memory call);
* kernel workspaces: each convolution (forward and backward) of the call run
  alone with the allocator's history on (workspaces.py), written into the
  post graph as its node's `workspace_bytes`.
"""

from __future__ import annotations

import gc
import json
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from . import pricing, scatter_index, workspaces
# How fast the host runs Python right now, so that a slow stretch of the
# machine shows in the data apart from the graph being measured.
from .host_probe import full_speed as _full_speed, probe_us as _host_probe_us, settle_at_full_speed
from .outputs import write_atomically

FORMAT = "schedmeasured/1"
MEMORY_CONVENTION = (
    "allocated_before_bytes = torch.cuda.memory_allocated() just before the call, every input live "
    "(freeable inputs are fresh copies held only by the argument list, so the graph's own frees "
    "release them as in training); peak_allocated_bytes = torch.cuda.max_memory_allocated() during "
    "the call - allocated_before_bytes + freeable_inputs_bytes, i.e. the peak of everything the graph "
    "allocates plus its freeable inputs, comparable with schedlab's peak (non-freeable inputs are "
    "counted by neither); sizes are the caching allocator's (rounded up to 512 bytes); "
    "peak_reserved_bytes = torch.cuda.max_memory_reserved() during the call after "
    "torch.cuda.empty_cache() (absolute, including the process's other live blocks: "
    "reserved_before_bytes)"
)
_UNBACKED = re.compile(r"^u\d+$")


class NotMeasurable(RuntimeError):
    """The graph's call cannot be repeated outside the program (reported as
    a note, not as an export error)."""


def _check_inputs_alive(call: "PendingCall") -> None:
    """Inputs whose storage was freed after the real call (FSDP2 reshards its
    parameters by resizing their storage to 0) cannot be called again."""
    for i, x in enumerate(call.inputs):
        if not isinstance(x, torch.Tensor) or x.numel() == 0:
            continue
        extent = x.storage_offset() + sum((n - 1) * st for n, st in zip(x.shape, x.stride())) + 1
        if x.untyped_storage().nbytes() < extent * x.element_size():
            name = call.graph.input_names[i] if i < len(call.graph.input_names) else f"#{i}"
            raise NotMeasurable(
                f"input {name} was freed after the call (its storage holds {x.untyped_storage().nbytes()} "
                f"bytes; FSDP2 frees unsharded parameters after use): the call cannot be repeated"
            )


@dataclass
class PendingCall:
    """A compiled graph's callable and the inputs of its first call."""

    graph: object  # session.ExportedGraph
    compiled: object  # CompiledFxGraph
    inputs: list
    freeable: list[bool]
    disabled_cudagraphs_reason: str | None = None


@dataclass
class LaunchPlan:
    """Kernel launches in generated-code order: (node name, kind, key) where
    kind is "triton" (key: kernel name) or "extern" (key: operator name)."""

    entries: list[tuple[str, str, str]] = field(default_factory=list)

    def add(self, node: str, kind: str, key: str) -> None:
        self.entries.append((node, kind, key))


# --- codegen side -------------------------------------------------------------
def record_node(graph, snode) -> None:
    """Scheduler.enter_context(snode): codegen of `snode` starts."""
    from torch._inductor.scheduler import ExternKernelSchedulerNode

    graph.codegen_node = snode.get_name()
    graph.codegen_members = [m.get_name() for m in snode.get_nodes()]
    if isinstance(snode, ExternKernelSchedulerNode):
        kernel = getattr(snode.node, "python_kernel_name", None) or ""
        op = pricing.operator_name(kernel) or ""
        if not op:
            overload = getattr(snode.node, "op_overload", None)
            op = pricing.operator_name(str(overload)) if overload is not None else type(snode.node).__name__
        graph.launch_plan.add(graph.codegen_node, "extern", op)


def record_launch(graph, kernel_name: str) -> None:
    """PythonWrapperCodegen.generate_kernel_call(kernel_name, ...)."""
    node = getattr(graph, "codegen_node", None)
    if node is not None:
        graph.launch_plan.add(node, "triton", str(kernel_name))


# --- environment ----------------------------------------------------------------
def _driver_version() -> str | None:
    try:
        import pynvml

        pynvml.nvmlInit()
        v = pynvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else str(v)
    except Exception:  # noqa: BLE001 - fall back to nvidia-smi
        pass
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=False,
        )
        return out.stdout.strip().splitlines()[0] if out.stdout.strip() else None
    except Exception:  # noqa: BLE001
        return None


def device_kind(name: str) -> str:
    """A short name for the hardware profile: h100-sxm, h100-pcie, h200, ..."""
    n = name.lower()
    if "h200" in n:
        return "h200"
    if "h100" in n:
        return "h100-pcie" if "pcie" in n else "h100-sxm"
    if "a100" in n:
        return "a100"
    return re.sub(r"[^a-z0-9]+", "-", n).strip("-")


_ENV: dict | None = None


def environment() -> dict:
    global _ENV
    if _ENV is None:
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        try:
            import triton

            triton_version = triton.__version__
        except Exception:  # noqa: BLE001
            triton_version = None
        _ENV = {
            "device": props.name,
            "device_kind": device_kind(props.name),
            "driver": _driver_version(),
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "triton": triton_version,
            "sm_count": props.multi_processor_count,
            "l2_cache_bytes": int(getattr(props, "L2_cache_size", 0)),
            "memory_bytes": int(props.total_memory),
        }
    return _ENV


# --- running one call -------------------------------------------------------------
def copy_inputs(values: list, freeable: list[bool]) -> list:
    """`values` with each freeable tensor replaced by a copy that keeps its
    storage layout: one new storage per distinct source storage (views of
    one buffer stay views of one copy), same offset, sizes and strides. The
    copies are held only by the returned list, so the graph's frees release
    them exactly as they release the originals in training."""
    storages: dict = {}
    out = []
    for x, f in zip(values, freeable):
        if not (f and isinstance(x, torch.Tensor)):
            out.append(x)
            continue
        source = x.untyped_storage()
        key = (source.data_ptr(), source.nbytes())
        if key not in storages:
            raw = torch.empty(0, dtype=torch.uint8, device=x.device).set_(source)
            storages[key] = raw.clone().untyped_storage()
        copy = torch.empty(0, dtype=x.dtype, device=x.device)
        copy.set_(storages[key], x.storage_offset(), x.size(), x.stride())
        out.append(copy)
    return out


def _fresh_args(call: PendingCall) -> list:
    """The call's arguments: freeable tensors copied (held by the list only)."""
    return copy_inputs(call.inputs, call.freeable)


def _freeable_bytes(args: list, call: PendingCall) -> int:
    """Bytes of the distinct storages behind the freeable inputs."""
    seen = {}
    for x, freeable in zip(args, call.freeable):
        if freeable and isinstance(x, torch.Tensor):
            st = x.untyped_storage()
            seen[st.data_ptr()] = st.nbytes()
    return sum(seen.values())


def _callable(call: PendingCall):
    fn = call.compiled.current_callable
    if fn is None:
        raise RuntimeError("compiled graph has no callable")
    return fn


def _observe_unbacked(fn, args) -> tuple[object, dict]:
    """Runs fn(args), recording the int `u<k>` locals of the generated
    `call` frame when it returns."""
    seen: dict[str, int] = {}

    def profiler(frame, event, arg):
        if event == "return" and frame.f_code.co_name == "call":
            for k, v in frame.f_locals.items():
                if _UNBACKED.match(k) and isinstance(v, int):
                    seen[k] = int(v)

    previous = sys.getprofile()
    sys.setprofile(profiler)
    try:
        out = fn(args)
    finally:
        sys.setprofile(previous)
    return out, seen


def measure_memory(call: PendingCall) -> tuple[dict, dict]:
    fn = _callable(call)
    torch.cuda.synchronize()
    args = _fresh_args(call)
    freeable = _freeable_bytes(args, call)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    reserved_before = torch.cuda.memory_reserved()
    before = torch.cuda.memory_allocated()
    at_start = allocator_state()
    inputs_at_start = input_blocks(args, call.graph.input_names)
    torch.cuda.reset_peak_memory_stats()
    with torch.no_grad():
        out, unbacked = _observe_unbacked(fn, args)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    peak_reserved = torch.cuda.max_memory_reserved()
    del out, args
    memory = {
        "convention": MEMORY_CONVENTION,
        "allocated_before_bytes": before,
        "freeable_inputs_bytes": freeable,
        "peak_allocated_bytes": peak - before + freeable,
        "reserved_before_bytes": reserved_before,
        "peak_reserved_bytes": peak_reserved,
        "allocator_at_start": at_start,
        "inputs_at_start": inputs_at_start,
    }
    return memory, unbacked


def allocator_state() -> list[dict]:
    """The caching allocator's segments on this device, in address order, each
    {"pool": "small"|"large", "size": bytes, "blocks": [[bytes, 1 allocated | 0 free], ...]}
    with its blocks in address order. empty_cache() releases only segments
    without a live block: the free holes left inside the others are where the
    measured call's first requests land, which no graph can know, so the
    accuracy replay starts from this state (docs/memory-as-executed.md)."""
    device = torch.cuda.current_device()
    segments = sorted((s for s in torch.cuda.memory_snapshot() if s["device"] == device),
                      key=lambda s: s["address"])
    return [{"pool": "small" if s["segment_type"] == "small" else "large",
             "size": s["total_size"],
             "blocks": [[b["size"], 0 if b["state"] == "inactive" else 1]
                        for b in sorted(s["blocks"], key=lambda b: b.get("address", 0))]}
            for s in segments]


def input_blocks(args: list, names: list[str]) -> dict[str, list[int]]:
    """Where each graph input's storage starts among allocator_state()'s
    segments: {input name: [segment index, block index]}, for the inputs
    whose storage starts an allocated block (all of them, normally). Which
    block a freeable input holds is which hole the call opens when it frees
    it; the replay would otherwise have to guess (docs/memory-as-executed.md)."""
    device = torch.cuda.current_device()
    segments = sorted((s for s in torch.cuda.memory_snapshot() if s["device"] == device),
                      key=lambda s: s["address"])
    starts = {}
    for i, seg in enumerate(segments):
        address = seg["address"]
        for k, b in enumerate(sorted(seg["blocks"], key=lambda b: b.get("address", 0))):
            if b["state"] != "inactive":
                starts[address] = [i, k]
            address += b["size"]
    where = {}
    for name, x in zip(names, args):
        if isinstance(x, torch.Tensor) and x.is_cuda and x.untyped_storage().data_ptr() in starts:
            where[name] = starts[x.untyped_storage().data_ptr()]
    return where


def memory_events(call: PendingCall) -> list[list]:
    """One more call with the allocator's history on: every allocation and
    free request of the call as [action (a/f), bytes, address, the generated
    wrapper's function:line that made it], so that a model of the call's
    memory can be checked line by line (SCHEDLAB_MEMORY_EVENTS=1)."""
    fn = _callable(call)
    args = _fresh_args(call)
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(context="alloc", stacks="python", max_entries=200000)
    try:
        with torch.no_grad():
            out = fn(args)
        torch.cuda.synchronize()
        snapshot = torch.cuda.memory._snapshot()
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    del out, args
    events = []
    for e in snapshot["device_traces"][0] if snapshot["device_traces"] else []:
        if e["action"] not in ("alloc", "free_requested"):
            continue
        frame = next((f for f in e.get("frames", []) if "torchinductor_" in f.get("filename", "")), None)
        events.append([e["action"][0], e["size"], e["addr"], f"{frame['name']}:{frame['line']}" if frame else ""])
    return events


WARMUP_SECONDS = 0.25


def _timed(run, samples: int, warmup: int, warmup_seconds: float = WARMUP_SECONDS,
           probe_us: list[float] | None = None) -> tuple[list[float], list[float]]:
    """Device (CUDA events) and host (perf_counter) microseconds of `run`,
    each sample started from an idle GPU, after `warmup` calls and at least
    `warmup_seconds` of calls (clocks and caches settle). The cyclic garbage
    collector is collected first and paused while sampling: a collection of
    the process's compiled artefacts inside one call is a spike of the
    measuring process, not of the wrapper."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    device_us, host_us = [], []
    settle_until = time.perf_counter() + warmup_seconds
    while warmup > 0 or time.perf_counter() < settle_until:
        prepared = run.prepare()
        out = run(prepared)
        torch.cuda.synchronize()
        del out, prepared
        warmup -= 1
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        _sample(run, samples, start, end, device_us, host_us, probe_us)
    finally:
        if gc_was_enabled:
            gc.enable()
    return device_us, host_us


def _sample(run, samples: int, start, end, device_us: list[float], host_us: list[float],
            probe_us: list[float] | None) -> None:
    """`probe_us`, when given, gets the host probe taken just before each sample."""
    for _ in range(samples):
        prepared = run.prepare()
        torch.cuda.synchronize()
        if probe_us is not None:
            probe_us.append(round(_host_probe_us(), 2))
        t0 = time.perf_counter()
        start.record()
        out = run(prepared)
        end.record()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        del out, prepared
        device_us.append(start.elapsed_time(end) * 1000.0)
        host_us.append((t1 - t0) * 1e6)


class _DefaultModeRun:
    def __init__(self, call: PendingCall):
        self.call, self.fn = call, _callable(call)

    def prepare(self):
        return _fresh_args(self.call)

    def __call__(self, args):
        return self.fn(args)


class _GraphReplayRun:
    """The graph's callable captured once in a CUDA graph (what
    mode="reduce-overhead" replays), replayed."""

    def __init__(self, call: PendingCall):
        fn = _callable(call)
        self.static = _fresh_args(call)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                fn(list(self.static))
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = fn(list(self.static))
        torch.cuda.synchronize()

    def prepare(self):
        return None

    def __call__(self, _):
        self.graph.replay()


WALL_METHOD_BLOCK = (
    "CUDA events around the call from an idle GPU; {samples} calls in one block after {warmup} warm-up "
    "calls and {warmup_seconds} s of calls; the garbage collector collected before and paused during "
    "the block; median over the calls; host_probe_us: a fixed Python loop timed just before each call"
)


def measure_wall(call: PendingCall, samples: int, warmup: int) -> dict:
    """The wall figures of one block of calls, with the host probe before
    each (settle_at_full_speed then keeps to the calls at the block's full speed)."""
    probes: list[float] = []
    with torch.no_grad():
        device_us, host_us = _timed(_DefaultModeRun(call), samples, warmup, probe_us=probes)
    return {
        "wall_time_us": round(statistics.median(device_us), 3),
        "wall_time_us_min": round(min(device_us), 3),
        "wall_samples": len(device_us),
        "wall_time_us_samples": [round(x, 2) for x in device_us],
        "host_time_us": round(statistics.median(host_us), 3),
        "host_time_us_samples": [round(x, 2) for x in host_us],
        "host_probe_us": probes,
        "wall_method": WALL_METHOD_BLOCK.format(samples=samples, warmup=warmup, warmup_seconds=WARMUP_SECONDS),
    }


@dataclass
class WallRounds:
    """Wall samples of one graph taken in rounds interleaved with the other
    graphs and cases of the run (run_zoo.py --wall-rounds): a slow stretch of
    the shared host then falls on every graph alike instead of on whichever
    graph was being measured during it."""

    device_us: list[float] = field(default_factory=list)
    host_us: list[float] = field(default_factory=list)
    probe_us: list[float] = field(default_factory=list)
    rounds: int = 0


def measure_wall_round(call: PendingCall, rounds: WallRounds, samples: int, warmup: int = 3,
                       warmup_seconds: float = 0.05) -> None:
    with torch.no_grad():
        device_us, host_us = _timed(_DefaultModeRun(call), samples, warmup, warmup_seconds, rounds.probe_us)
    rounds.device_us += device_us
    rounds.host_us += host_us
    rounds.rounds += 1


WALL_METHOD_ROUNDS = (
    "CUDA events around the call from an idle GPU; {rounds} rounds of {per_round} calls, each round "
    "after 3 warm-up calls and 0.05 s of calls, the rounds interleaved with every other graph of the "
    "run so that slow stretches of the host fall on all graphs alike; the garbage collector collected "
    "before and paused during each round; median over all rounds' calls; host_probe_us: a fixed Python "
    "loop timed just before each call"
)


def write_wall_rounds(path: Path, rounds: WallRounds) -> None:
    """Replaces the wall figures of a measured file by the rounds' figures
    (the first pass's median is kept as `wall_time_us_first_pass`)."""
    measured = json.loads(path.read_text())
    per_round = len(rounds.device_us) // max(1, rounds.rounds)
    measured["wall_time_us_first_pass"] = measured["wall_time_us"]
    measured["wall_time_us"] = round(statistics.median(rounds.device_us), 3)
    measured["wall_time_us_min"] = round(min(rounds.device_us), 3)
    measured["wall_samples"] = len(rounds.device_us)
    measured["wall_time_us_samples"] = [round(x, 2) for x in rounds.device_us]
    measured["host_time_us"] = round(statistics.median(rounds.host_us), 3)
    measured["host_time_us_samples"] = [round(x, 2) for x in rounds.host_us]
    measured["wall_rounds"] = rounds.rounds
    measured["host_probe_us"] = rounds.probe_us
    measured["wall_method"] = WALL_METHOD_ROUNDS.format(rounds=rounds.rounds, per_round=per_round)
    _write_json(path, measured, compact=False)


def settle_wall_at_full_host_speed(paths: list[Path]) -> float | None:
    """The shared virtual machines' host runs at two speeds that alternate
    over seconds (the host probe, a fixed Python loop timed before each
    call, reads about 1.8x apart; the call's wall time follows it when the
    call is launch-bound). Over all files of one run: the full-speed probe
    is the 5th percentile of every probe, and each graph's `wall_time_us`
    and `host_time_us` become the medians of its calls whose probe was
    within FULL_SPEED_SLACK of it (when at least FULL_SPEED_MIN_SAMPLES
    were), the figure a model of the host can be fitted to; the median
    over all calls stays as `wall_time_us_all_samples`. Returns the
    full-speed probe (µs), None when no file has probes."""
    files = [(p, json.loads(p.read_text())) for p in paths]
    probes = [x for _, m in files for x in m.get("host_probe_us", [])]
    if not probes:
        return None
    full_speed = _full_speed(probes)
    for path, m in files:
        if settle_at_full_speed(m, full_speed):
            _write_json(path, m, compact=False)
    return full_speed


def measure_cudagraphs(call: PendingCall, samples: int, warmup: int) -> tuple[float | None, str | None]:
    if call.disabled_cudagraphs_reason:
        return None, f"Inductor disables CUDA graphs here: {call.disabled_cudagraphs_reason}"
    if call.graph.data_dependent:
        return None, "data-dependent sizes (the call synchronizes with the host)"
    try:
        with torch.no_grad():
            replay = _GraphReplayRun(call)
            device_us, _ = _timed(replay, samples, warmup)
        del replay
        return statistics.median(device_us), None
    except Exception as e:  # noqa: BLE001 - recorded, the other figures stand
        torch.cuda.synchronize()
        return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


# --- kernels ----------------------------------------------------------------------
def _ns(ev, what: str) -> int:
    fn = getattr(ev, f"{what}_ns", None)
    if fn is not None:
        return int(fn())
    return int(getattr(ev, f"{what}_us")() * 1000)


def _end_ns(ev) -> int:
    if hasattr(ev, "end_ns"):
        return int(ev.end_ns())
    return _ns(ev, "start") + _ns(ev, "duration")


def _kernel_class(gpu_name: str, unit_name: str | None, node_kind: str | None) -> str:
    lowered = gpu_name.lower()
    if node_kind == "collective" or "nccl" in lowered:
        return "collective"
    triton = unit_name if unit_name and unit_name.startswith("triton_") else gpu_name
    if triton.startswith("triton_"):
        prefix = triton.split("_")[1] if "_" in triton else ""
        return {
            "poi": "triton_pointwise",
            "red": "triton_reduction",
            "per": "triton_persistent_reduction",
            "tem": "triton_template",
            "for": "triton_pointwise",
        }.get(prefix, "triton_pointwise")
    if lowered.startswith("memcpy") or lowered.startswith("memset"):
        return "copy"
    cls = pricing.op_class(pricing.operator_name(unit_name)) if unit_name else None
    if cls is not None:
        return cls
    if "gemm" in lowered or "nvjet" in lowered or "cutlass" in lowered and "conv" not in lowered:
        return "gemm"
    if "flash" in lowered or "fmha" in lowered or "attention" in lowered:
        return "attention"
    if "conv" in lowered or "wgrad" in lowered or "dgrad" in lowered:
        return "convolution"
    return "extern" if node_kind in ("extern", "wait") else "other"


@dataclass
class _Unit:
    name: str  # top-level CPU op name, or the kernel's own name
    start: int
    end: int


def _calls_from_profile(prof, call_marker: str) -> list[list[tuple[object, _Unit | None]]]:
    """Per profiled call (record_function ranges named call_marker + index),
    its GPU activities in device order, each with its top-level launching unit."""
    import bisect

    from torch.autograd import DeviceType

    events = list(prof.profiler.kineto_results.events())
    every_cpu = [e for e in events if e.device_type() == DeviceType.CPU]
    # frontend operations (runtime API events link to one, like kernels do)
    cpu = [e for e in every_cpu if e.linked_correlation_id() == 0]
    gpu = [e for e in events if e.device_type() == DeviceType.CUDA]
    by_corr = {e.correlation_id(): e for e in cpu}
    by_corr.update({e.correlation_id(): e for e in every_cpu if e.correlation_id() not in by_corr})
    markers = sorted(
        (e for e in cpu if e.name().startswith(call_marker)), key=lambda e: int(e.name()[len(call_marker):])
    )
    calls: list[list[tuple[object, _Unit | None]]] = []
    for marker in markers:
        lo, hi = _ns(marker, "start"), _end_ns(marker)
        inside = sorted(
            (e for e in cpu if e is not marker and lo <= _ns(e, "start") and _end_ns(e) <= hi),
            key=lambda e: (_ns(e, "start"), -_end_ns(e)),
        )
        tops: list[_Unit] = []
        for e in inside:
            s, t = _ns(e, "start"), _end_ns(e)
            if tops and s >= tops[-1].start and t <= tops[-1].end:
                continue  # nested in the previous top-level op
            tops.append(_Unit(e.name(), s, t))
        starts = [u.start for u in tops]
        kernels = []
        for k in gpu:
            launcher = by_corr.get(k.linked_correlation_id())
            if launcher is None:
                continue
            ls = _ns(launcher, "start")
            if not (lo <= ls <= hi):
                continue
            unit = None
            if launcher is not marker:
                i = bisect.bisect_right(starts, ls) - 1
                if i >= 0 and tops[i].start <= ls and _end_ns(launcher) <= tops[i].end:
                    unit = tops[i]
            kernels.append((k, unit))
        kernels.sort(key=lambda ku: _ns(ku[0], "start"))
        calls.append(kernels)
    return calls


def map_kernels(kernels, plan: LaunchPlan, post_nodes: dict[str, dict]) -> list[dict]:
    """Assigns each GPU activity of one call to the node whose launch it is:
    launching units in device order are matched with the launch plan in
    generated-code order (Triton kernels by name, extern calls by operator)."""
    entries = plan.entries
    member_to_post = {m: name for name, n in post_nodes.items() for m in n.get("members", [name])}
    position = 0
    unit_node: dict[int, str | None] = {}
    out = []
    t0 = _ns(kernels[0][0], "start") if kernels else 0
    for k, unit in kernels:
        gpu_name = k.name()
        unit_name = unit.name if unit is not None else gpu_name
        if gpu_name.startswith("triton_"):
            # Inductor names each Triton kernel's function after the kernel
            node, position = _match(entries, position, "triton", gpu_name)
        elif unit is not None and id(unit) in unit_node:
            node = unit_node[id(unit)]  # another kernel of the same extern call
        elif unit is not None and not unit.name.startswith("triton_"):
            node, position = _match(entries, position, "extern", pricing.operator_name(unit.name))
            unit_node[id(unit)] = node
        else:
            node = None
        post = node if node in post_nodes else member_to_post.get(node) if node else None
        kind = post_nodes[post]["kind"] if post else None
        out.append(
            {
                "name": gpu_name,
                "node": post,
                "class": _kernel_class(gpu_name, unit_name, kind),
                "launcher": unit_name,
                "start_us": round((_ns(k, "start") - t0) / 1000.0, 3),
                "duration_us": round(_ns(k, "duration") / 1000.0, 3),
                "stream": int(k.device_resource_id()) if hasattr(k, "device_resource_id") else None,
            }
        )
    return out


def _match(entries, position: int, kind: str, key: str | None) -> tuple[str | None, int]:
    """The next plan entry of (kind, key) from `position` (else from the
    start), and the position after it; (None, position) when there is none."""
    found = _find(entries, position, kind, key)
    if found is None:
        found = _find(entries, 0, kind, key)
    if found is None:
        return None, position
    return entries[found][0], found + 1


def _find(entries, start: int, kind: str, key: str | None) -> int | None:
    for j in range(start, len(entries)):
        if entries[j][1] == kind and entries[j][2] == key:
            return j
    return None


def measure_kernels(call: PendingCall, post_nodes: dict[str, dict], calls: int) -> dict:
    from torch.profiler import ProfilerActivity, profile, record_function

    fn = _callable(call)
    marker = "schedlab_measured_call_"
    with torch.no_grad():
        for _ in range(2):
            fn(_fresh_args(call))
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for i in range(calls):
                args = _fresh_args(call)
                torch.cuda.synchronize()
                with record_function(f"{marker}{i}"):
                    out = fn(args)
                torch.cuda.synchronize()
                del out, args
    per_call = [map_kernels(k, call.graph.launch_plan, post_nodes) for k in _calls_from_profile(prof, marker)]
    if not per_call:
        raise RuntimeError("the profiler recorded no call of the graph")
    sums = [sum(k["duration_us"] for k in ks) for ks in per_call]
    median_index = sorted(range(len(sums)), key=lambda i: sums[i])[len(sums) // 2]
    kernels = per_call[median_index]
    return {
        "kernels": kernels,
        "kernel_time_us": round(sums[median_index], 3),
        "kernel_time_us_calls": [round(s, 3) for s in sums],
        "unmapped_kernels": sum(1 for k in kernels if k["node"] is None),
    }


# --- one graph ---------------------------------------------------------------------
def apply_observed(post: dict, unbacked: dict[str, int]) -> bool:
    """Sets `hint_bytes` of data-dependent buffers and deps from observed
    symbol values (hint_source "observed"). Returns whether anything changed."""
    if not unbacked:
        return False
    import sympy

    symbols = {sympy.Symbol(k, integer=True): v for k, v in unbacked.items()}
    plain = {sympy.Symbol(k): v for k, v in unbacked.items()}
    changed = False
    for node in post.get("nodes", []):
        for item in node.get("outputs", []) + node.get("reads", []) + node.get("writes", []):
            expr = item.get("bytes_expr")
            if not item.get("size_hint") or not expr:
                continue
            value = sympy.sympify(expr).subs(symbols).subs(plain)
            if value.is_number:
                item["hint_bytes"] = int(value)
                item["hint_source"] = "observed"
                changed = True
    return changed


def _write_json(path: Path, data: dict, compact: bool) -> None:
    """Writes through a temporary file, so a reader never sees half a file."""
    write_atomically(path, (json.dumps(data, separators=(",", ":")) if compact else _indented(data)) + "\n")


def _indented(data: dict) -> str:
    """json.dumps(indent=1), except that each allocator segment's blocks
    (memory.allocator_at_start, up to hundreds of [bytes, state] pairs) and
    each input's [segment, block] (memory.inputs_at_start) stay on one line."""
    memory = data.get("memory") or {}
    segments = memory.get("allocator_at_start")
    if not segments:
        return json.dumps(data, indent=1)
    compact = {}
    for i, seg in enumerate(segments):
        token = f"@@blocks{i}@@"
        compact[json.dumps(token)] = json.dumps(seg["blocks"], separators=(",", ":"))
    inputs = {}
    for name, where in (memory.get("inputs_at_start") or {}).items():
        inputs[name] = f"@@input:{name}@@"
        compact[json.dumps(inputs[name])] = json.dumps(where, separators=(",", ":"))
    shown_memory = dict(memory, allocator_at_start=[dict(seg, blocks=f"@@blocks{i}@@") for i, seg in enumerate(segments)])
    if "inputs_at_start" in memory:
        shown_memory["inputs_at_start"] = inputs
    shown = dict(data, memory=shown_memory)
    text = json.dumps(shown, indent=1)
    for token, blocks in compact.items():
        text = text.replace(token, blocks)
    return text


def measure_graph(call: PendingCall, out_dir: Path, samples: int = 50, warmup: int = 10,
                  cudagraphs: bool = False, profiled_calls: int = 5) -> Path:
    graph = call.graph
    post_path = out_dir / f"{graph.case}.post.json"
    post = json.loads(post_path.read_text())
    post_nodes = {n["name"]: n for n in post["nodes"]}
    _check_inputs_alive(call)
    memory, unbacked = measure_memory(call)
    wall = measure_wall(call, samples, warmup)
    cudagraph_us, cudagraph_note = (None, "not asked (--cudagraphs)")
    if cudagraphs:
        cudagraph_us, cudagraph_note = measure_cudagraphs(call, samples, warmup)
    kernels = measure_kernels(call, post_nodes, profiled_calls)
    observed_workspaces = workspaces.observe_workspaces(_callable(call), _fresh_args(call), call.graph.launch_plan,
                                                        post_nodes)
    observed_indices = scatter_index.observe(graph.fx_module, call.inputs, graph.scatter_origins)
    graph.fx_module = None  # the module holds the graph's constants: not kept past its measurement
    measured = {
        "format": FORMAT,
        "graph": post.get("name", f"{graph.case}.post"),
        "env": environment(),
        "memory": memory,
        "kernel_time_us": kernels["kernel_time_us"],
        "wall_time_us": wall["wall_time_us"],
        "wall_time_us_cudagraphs": round(cudagraph_us, 3) if cudagraph_us is not None else None,
        "wall_samples": wall["wall_samples"],
        "wall_time_us_min": wall["wall_time_us_min"],
        "host_time_us": wall["host_time_us"],
        "unbacked": unbacked,
        "kernels": kernels["kernels"],
        "kernel_time_us_calls": kernels["kernel_time_us_calls"],
        "wall_time_us_samples": wall["wall_time_us_samples"],
        "host_time_us_samples": wall["host_time_us_samples"],
        "host_probe_us": wall["host_probe_us"],
        "wall_method": wall["wall_method"],
        "unmapped_kernels": kernels["unmapped_kernels"],
    }
    # The block's own full speed; a zoo run with --wall-rounds settles again
    # over all of its graphs' rounds (settle_wall_at_full_host_speed).
    settle_at_full_speed(measured, _full_speed(measured["host_probe_us"]))
    if observed_workspaces:
        measured["workspace_bytes"] = observed_workspaces
    if cudagraph_us is None:
        measured["cudagraphs_note"] = cudagraph_note
    if os.environ.get("SCHEDLAB_MEMORY_EVENTS"):
        measured["memory_events"] = memory_events(call)
        source = getattr(call.compiled, "source_code", None)
        if source:
            write_atomically(out_dir / f"{graph.case}.wrapper.py", source)
    if (apply_observed(post, unbacked) | workspaces.apply_workspaces(post, observed_workspaces)
            | scatter_index.apply_scatter_indices(post, observed_indices)):
        _write_json(post_path, post, compact=True)
    pre_path = out_dir / f"{graph.case}.pre.json"
    if observed_workspaces and pre_path.exists():
        # an extern node keeps its name through fusion: `plan PRE.json` prices it the same way
        pre = json.loads(pre_path.read_text())
        if workspaces.apply_workspaces(pre, observed_workspaces):
            _write_json(pre_path, pre, compact=True)
    path = out_dir / f"{graph.case}.measured.json"
    _write_json(path, measured, compact=False)
    return path
