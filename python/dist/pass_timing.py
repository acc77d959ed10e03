"""How long the scheduling passes take inside a compile (issue 31: "the time
schedlab adds to a compile is measured against the time Inductor's own
passes take on the same graph").

Inductor's passes are timed by wrapping their entry functions for the
duration of a schedule: every loaded module that holds the function (the
defining module, and any that imported it by name) gets the timed wrapper,
and gets the original back after. Entry points the installed torch lacks
are skipped and named in the result, so a renamed function reads as
"not found", never as zero seconds. schedlab's side is what apply() records
per graph (its export, plan and rank agreement: GraphRecord.seconds).

No torch here: the wrapping works on any modules (tests use stand-ins).
"""

from __future__ import annotations

import contextlib
import cProfile
import functools
import importlib
import io
import pstats
import sys
import time
from pathlib import Path
from typing import Iterator

# Per schedule: the entry points of the passes that schedule runs, as
# "module:function". The FX schedules' entry changed names across releases,
# so both spellings are listed; whichever exists is timed.
INDUCTOR_PASSES: dict[str, tuple[str, ...]] = {
    "recommended": ("torch._inductor.comms:reorder_compute_and_comm_for_overlap",),
    "fx_overlap": ("torch._inductor.fx_passes.overlap_scheduling:schedule_overlap_bucketing_from_inductor_configs",
                   "torch._inductor.fx_passes.overlap_scheduling:schedule_overlap_bucketing"),
    "fx_overlap_bucket": ("torch._inductor.fx_passes.overlap_scheduling:schedule_overlap_bucketing_from_inductor_configs",
                          "torch._inductor.fx_passes.overlap_scheduling:schedule_overlap_bucketing"),
    "fx_overlap_schedlab": ("torch._inductor.fx_passes.overlap_scheduling:schedule_overlap_bucketing_from_inductor_configs",
                            "torch._inductor.fx_passes.overlap_scheduling:schedule_overlap_bucketing"),
    "fx_bucket": ("torch._inductor.fx_passes.bucketing:bucket_all_gather",
                  "torch._inductor.fx_passes.bucketing:bucket_reduce_scatter",
                  "torch._inductor.fx_passes.bucketing:bucket_all_reduce"),
}


class PassTimes:
    """Seconds and calls per timed entry point, outermost calls only (a pass
    that calls another timed pass is not counted twice)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.not_found: list[str] = []
        self._depth = 0

    def wrap(self, name: str, fn):
        def timed(*args, **kwargs):
            outermost = self._depth == 0
            self._depth += 1
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth -= 1
                if outermost:
                    self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
                    self.calls[name] = self.calls.get(name, 0) + 1

        # Inductor logs and compares passes by __name__ (apply_overhead.py's
        # Recorder.timed keeps it too): the wrapper carries fn's name and
        # __wrapped__.
        return functools.update_wrapper(timed, fn)

    def to_json(self) -> dict:
        return {"total_s": round(sum(self.seconds.values()), 6),
                "per_pass": {k: {"seconds": round(v, 6), "calls": self.calls[k]} for k, v in sorted(self.seconds.items())},
                "not_found": list(self.not_found)}


def _holders(original, prefix: str) -> list[tuple[object, str]]:
    """Every loaded module under `prefix` with an attribute that is `original`."""
    found = []
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith(prefix):
            continue
        for attr, value in list(vars(module).items()):
            if value is original:
                found.append((module, attr))
    return found


@contextlib.contextmanager
def timed_passes(entry_points: tuple[str, ...] | list[str], prefix: str = "torch") -> Iterator[PassTimes]:
    """Wraps each "module:function" in `entry_points` while the block runs."""
    times = PassTimes()
    patched: list[tuple[object, str, object]] = []
    try:
        for entry in entry_points:
            module_name, _, function = entry.partition(":")
            try:
                module = importlib.import_module(module_name)
                original = getattr(module, function)
            except (ImportError, AttributeError):
                times.not_found.append(entry)
                continue
            wrapper = times.wrap(entry, original)
            for holder, attr in _holders(original, prefix):
                patched.append((holder, attr, original))
                setattr(holder, attr, wrapper)
        yield times
    finally:
        for holder, attr, original in reversed(patched):
            setattr(holder, attr, original)


@contextlib.contextmanager
def profiled(path: Path | None, top: int = 60) -> Iterator[None]:
    """With a path: the block under cProfile, its `top` functions by
    cumulative time written to `path` (run_steps.py --profile-compile: where
    a compile's seconds go, Inductor's and apply()'s alike). Without: the
    block as it is."""
    if path is None:
        yield
        return
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(top)
        path.write_text(text.getvalue())


def schedlab_seconds(graph_records: list[dict], bucketings: list[dict] = ()) -> dict:
    """apply()'s own time over a schedule's graphs (GraphRecord.to_json's
    `seconds`; with bucket_collectives, its post-grad bucketing's too), the
    same shape as PassTimes.to_json. The agreements' wait for slower ranks
    (apply.Gathered) is `peer_wait_s`, outside `total_s`: the ranks' compiles
    differing in speed, which the step's first collective would wait out
    without schedlab."""
    per = {}
    for part in ("export", "plan", "agree"):
        total = sum((g.get("seconds") or {}).get(part, 0.0) for g in graph_records)
        per[part] = {"seconds": round(total, 6), "calls": len(graph_records)}
    if bucketings:
        per["bucket"] = {"seconds": round(sum(b.get("seconds", 0.0) for b in bucketings), 6), "calls": len(bucketings)}
    waited = sum((g.get("seconds") or {}).get("peer_wait", 0.0) for g in graph_records) + sum(
        b.get("peer_wait_s", 0.0) for b in bucketings)
    return {"total_s": round(sum(p["seconds"] for p in per.values()), 6), "per_pass": per, "not_found": [],
            "peer_wait_s": round(waited, 6)}
