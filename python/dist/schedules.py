"""The schedules run_steps.py measures the real steps under, and where its
repetitions write, as data. No torch: compare.py reads the table,
tests/exporter/test_dist_steps.py checks it.

  default            Inductor's default: no comm reordering
  recommended        Inductor's iterative comms.py pipeline (RECOMMENDED)
  schedlab           schedlab_export.apply with `--comm-passes`
  schedlab_bucket    the same, with bucket_collectives: each graph's
                     collectives bucketed by Inductor's FX passes where
                     schedlab's simulation says it pays (fx_bucketing.py)
  schedlab_bucket_defer  schedlab_bucket with defer_stalled_compute after
                     `--comm-passes` (compute that waits on a late
                     collective moved past compute that does not)
  fx_overlap         Inductor's FX-level overlap scheduling
                     (aten_distributed_optimizations.enable_overlap_scheduling)
  fx_overlap_bucket  the same with its overlap-preserving collective bucketing
  fx_bucket          Inductor's standalone post-grad bucketing passes
                     (bucket_all_gathers_fx, bucket_reduce_scatters_fx, and
                     bucket_all_reduces_fx where the installed torch has it),
                     without FX overlap scheduling
  fx_overlap_schedlab  fx_overlap, its runtime estimator schedlab's
                     calibrated model on `--hardware`
                     (aten_distributed_optimizations.custom_runtime_estimation:
                     schedlab_export/fx_estimator.py)

The FX schedules are config changes (dotted names of torch._inductor.config)
that run_steps.py enters with config.patch, so they are undone after; a
field the installed torch lacks makes that schedule fail with one line
naming it (fx_config), and the run goes on with the others. A value
SCHEDLAB_ESTIMATOR stands for the estimator run_steps.py builds (a callable
cannot be written into the cell's JSON; this name is).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

RECOMMENDED = [
    "reorder_communication_preserving_peak_memory",
    "sink_waits_iterative",
    "reorder_communication_preserving_peak_memory",
]

_OVERLAP = ("aten_distributed_optimizations.enable_overlap_scheduling", True)
SCHEDLAB_ESTIMATOR = "schedlab_export.fx_estimator"
# Per FX schedule: the fields it needs, then fields it sets only where they
# exist (2.11 added bucket_all_reduces_fx beside the other two).
INDUCTOR_FX: dict[str, tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...]]] = {
    "fx_overlap": ((_OVERLAP,), ()),
    "fx_overlap_bucket": ((_OVERLAP, ("aten_distributed_optimizations.collective_bucketing", True)), ()),
    "fx_bucket": ((("bucket_all_gathers_fx", "all"), ("bucket_reduce_scatters_fx", "all")),
                  (("bucket_all_reduces_fx", "all"),)),
    "fx_overlap_schedlab": ((_OVERLAP, ("aten_distributed_optimizations.custom_runtime_estimation", SCHEDLAB_ESTIMATOR)),
                            ()),
}

# schedlab_export.apply's schedules, and their bucket_collectives.
APPLY_SCHEDULES = {"schedlab": False, "schedlab_bucket": True, "schedlab_bucket_defer": True}
# The comm passes an apply schedule runs after run_steps.py's `--comm-passes`.
APPLY_EXTRA_PASSES = {"schedlab_bucket_defer": ("defer_stalled_compute",)}
SCHEDULES = ("default", "recommended", *APPLY_SCHEDULES, *INDUCTOR_FX)
# The schedules schedlab's model decides: never "Inductor's best
# configuration" in a comparison with schedlab (reps.py --versus-best).
SCHEDLAB_DRIVEN = (*APPLY_SCHEDULES, "fx_overlap_schedlab")
DEFAULT_SCHEDULES = ("default", "recommended", "schedlab")  # what run_steps.py runs unless told


class ScheduleUnavailable(RuntimeError):
    """The installed torch cannot run this schedule (a missing config field)."""


def config_has(config: object, dotted: str) -> bool:
    """Whether `config` (torch._inductor.config, or any object) has the
    field `dotted` ("aten_distributed_optimizations.collective_bucketing")."""
    obj = config
    for part in dotted.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return False
    return True


def fx_config(schedule: str, has: Callable[[str], bool], torch_version: str = "?") -> dict[str, Any]:
    """The config changes of an FX schedule: every required field, and the
    optional fields `has` finds. Raises ScheduleUnavailable naming the first
    required field that `has` lacks."""
    if schedule not in INDUCTOR_FX:
        raise KeyError(f"schedule {schedule}: not an Inductor FX schedule ({', '.join(INDUCTOR_FX)})")
    required, optional = INDUCTOR_FX[schedule]
    for field, _ in required:
        if not has(field):
            raise ScheduleUnavailable(f"schedule {schedule}: torch._inductor.config has no field {field} "
                                      f"(torch {torch_version})")
    return {**dict(required), **{f: v for f, v in optional if has(f)}}


def with_estimator(changes: dict[str, Any], make: Callable[[], Any]) -> tuple[dict[str, Any], Any]:
    """`changes` with SCHEDLAB_ESTIMATOR replaced by make()'s estimator, and
    that estimator (None, and make not called, where no field names it)."""
    if SCHEDLAB_ESTIMATOR not in changes.values():
        return changes, None
    estimator = make()
    return {k: estimator if v == SCHEDLAB_ESTIMATOR else v for k, v in changes.items()}, estimator


def repetition_dirs(out: Path, reps: int, first_rep: int | None) -> list[Path]:
    """Where each repetition writes: OUT itself for a single unnumbered run,
    else OUT/r<k> (the layout of separate runs into OUT/r1, OUT/r2, ...)."""
    if reps == 1 and first_rep is None:
        return [out]
    first = first_rep or 1
    return [out / f"r{k}" for k in range(first, first + reps)]


def unknown(names: list[str], known) -> list[str]:
    return [n for n in names if n not in known]


def apply_comm_passes(schedule: str, comm_passes: list[str]) -> list[str]:
    """The comm passes apply runs under an apply schedule: `--comm-passes`,
    then the schedule's own (APPLY_EXTRA_PASSES) that are not among them."""
    extra = APPLY_EXTRA_PASSES.get(schedule, ())
    return [*comm_passes, *(p for p in extra if p not in comm_passes)]
