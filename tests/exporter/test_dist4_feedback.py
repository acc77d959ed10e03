"""Measured costs fed back on the real 4-GPU steps (tests/data/dist4, no
torch, no GPU): `schedlab plan --measured-trace` through compare.py's
`--feed`, judged on another run's measurement (docs/gpu-validation.md,
"Measured costs fed back"). Today's figures as a floor; the issue's target
is every step within 4 %."""

from __future__ import annotations

import statistics
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "dist"))
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from archives import extracted  # noqa: E402
from compare import compare_run  # noqa: E402
from test_dist4 import SCHEDULES, STEPS, _schedlab  # noqa: E402

RUNS = ROOT / "tests" / "data" / "dist4" / "steps"


@unittest.skipUnless(_schedlab(), "needs the schedlab binary (SCHEDLAB_BIN or build/schedlab)")
class FedBack(unittest.TestCase):
    def assert_errors(self, errors: list[float], median: float, worst: float, within_4_percent: int):
        """A column of |simulated / measured - 1|: its median and worst at
        most these, and at least this many rows within 4 %."""
        self.assertLessEqual(statistics.median(errors), median)
        self.assertLessEqual(max(errors), worst)
        self.assertGreaterEqual(sum(e <= 0.04 for e in errors), within_4_percent)

    def test_run1_fed_back_predicts_run2_at_todays_figures(self):
        errors = {"without": [], "same": [], "cross": []}
        with tempfile.TemporaryDirectory() as tmp:
            for step in STEPS:
                for schedule in SCHEDULES:
                    judged = RUNS / "run2" / step / schedule
                    measured = compare_run(judged, _schedlab(), "h100-sxm", Path(tmp))["measured"]["gpu_span_us"]
                    for key, fed in (("without", None), ("same", RUNS / "run1" / step / schedule),
                                     ("cross", RUNS / "run1" / step / "default")):
                        row = compare_run(judged, _schedlab(), "h100-sxm", Path(tmp), feed=fed)
                        errors[key].append(abs(row["simulated"]["step_us"] / measured - 1))
                        if fed is not None:
                            costs = row["feedback"]["measured_costs"]
                            # Every collective and compute node of these graphs maps.
                            self.assertTrue(all(c["mapped_compute_nodes"] == c["compute_nodes"] for c in costs), (step, schedule))
                            self.assertTrue(all(c["mapped_collectives"] == c["collectives"] for c in costs), (step, schedule))
        # Without: 0.860-0.965 of the measured span, median error 8.0 %
        # (0.865-0.969 and 7.9 % before session 22's call epilogue, which
        # took 24-27 µs of each graph's lead before its first kernel;
        # 0.776-0.896 before the sustained tensor-core rate, which was
        # fitted on these very runs' matmuls, and the contention law's
        # delay and start race: not a held-out figure).
        self.assertLessEqual(statistics.median(errors["without"]), 0.081)
        self.assertTrue(all(e <= 0.141 for e in errors["without"]))
        # Same schedule: median 1.6 %, worst 18.1 %, 12 of 15 within 4 %
        # (fsdp schedlab: run 2's order was planned on the h200 profile,
        # another order than run 1's, whose span was 18 % longer; and each
        # rank's collective kernel holds its wait for the rank that lost the
        # start race, which the simulation's race rule then adds again).
        self.assert_errors(errors["same"], median=0.02, worst=0.19, within_4_percent=11)
        # Default's trace predicting every schedule: median 1.8 %, worst 8.2 %,
        # 12 of 15 within 4 %.
        self.assert_errors(errors["cross"], median=0.02, worst=0.09, within_4_percent=12)

    def test_r1_fed_back_predicts_r2_and_r3_at_todays_figures(self):
        # issue 31's lease, three runs of every step x schedule (run3-reps.tgz):
        # r1's traces judged on r2 and r3, 30 rows.
        errors = {"same": [], "cross": []}
        with extracted(RUNS / "run3-reps.tgz") as runs:
            for step in STEPS:
                for schedule in SCHEDULES:
                    for judged_run in ("r2", "r3"):
                        judged = runs / judged_run / step / schedule
                        for key, fed in (("same", runs / "r1" / step / schedule), ("cross", runs / "r1" / step / "default")):
                            row = compare_run(judged, _schedlab(), "h100-sxm", runs, feed=fed)
                            errors[key].append(abs(row["simulated"]["step_us"] / row["measured"]["gpu_span_us"] - 1))
        # Same schedule: median 3.1 %, worst 20.4 %, 18 of 30 within 4 %;
        # default's trace: median 4.5 %, worst 21.4 %, 15 of 30 (r1's own
        # span was 14 % above r2's and r3's on fsdp_fwd_bwd default; 2.9 %
        # and 4.2 % before session 22's call epilogue).
        self.assert_errors(errors["same"], median=0.031, worst=0.21, within_4_percent=18)
        self.assert_errors(errors["cross"], median=0.045, worst=0.22, within_4_percent=15)


# The second lease's steps no fit has seen (run4-lease.tgz), and the five of the first.
NEW_STEPS = ("ddp_buckets", "fsdp_fwd_bwd_bucketed", "llama_fsdp", "llama_fsdp_per_param", "moe_a2a", "tp_sp_block")


def by_step_group(step: str, measured: dict) -> str:
    """The two groups of the H100 and H200 lease tables: steps no fit has seen, and the first lease's five."""
    return "the six new steps (no fit has seen them)" if step in NEW_STEPS else "the five steps of the first lease"


def by_profile(step: str, measured: dict) -> str:
    """A lease judged whole (no fit has seen any of it), its rows apart by
    whether the profiled steps ran as fast as the timed ones: a GPU span
    longer than the timed step (which holds the span) says the profiler
    slowed that run, and the span is then no measure of the step."""
    return ("rows whose profiled span is at most the timed step" if measured["gpu_span_us"] <= measured["step_us"]
            else "rows whose profiled span is longer than the timed step")


FEEDS = ("none", "same", "cross")  # no feedback; r1's traces of the same schedule; r1's default's


def lease_table_rows(runs: Path, schedlab: str, tmp: Path, hardware: str = "h100-sxm",
                     group_of=by_step_group, steps_out: list | None = None, feeds: tuple = FEEDS) -> list[str]:
    """docs/gpu-validation.md's tables "On the second lease" and after: r1's
    traces fed back and judged on r2 and r3 of every step x schedule;
    default's trace only for the schedules that keep Inductor's nodes (the
    FX passes rewrite the graph: its nodes are other nodes). Rows grouped
    by `group_of(step, the judged run's measurement)`, in the order met
    (by_step_group's new steps first). `steps_out`, given, gets (step,
    schedule, the judged run's timed step, the simulated step without
    feedback) of every judged run (schedule_pairs_ranked reads them).
    `feeds`: which of FEEDS to run and show."""
    rows = {}
    for step_dir in sorted(p for p in (runs / "r2").iterdir() if p.is_dir()):
        for schedule_dir in sorted(p for p in step_dir.iterdir() if (p / "rank0.json").exists()):
            step, schedule = step_dir.name, schedule_dir.name
            for judged_run in ("r2", "r3"):
                judged = runs / judged_run / step / schedule
                if not (judged / "rank0.json").exists():  # a repetition cut short (the H200 lease's r3)
                    continue
                for key, fed in (("none", None), ("same", runs / "r1" / step / schedule), ("cross", runs / "r1" / step / "default")):
                    if key not in feeds or (key == "cross" and schedule.startswith("fx_")):
                        continue
                    row = compare_run(judged, schedlab, hardware, tmp, feed=fed)
                    m, s = row["measured"], row["simulated"]
                    if key == "none" and steps_out is not None:
                        steps_out.append((step, schedule, m["step_us"], s["step_us"],
                                          s["compute_busy_us"] / m["compute_busy_us"], s["step_us"] < m["gpu_span_us"]))
                    exposed_ok = abs(s["exposed_comm_us"] - m["exposed_comm_us"]) <= max(150.0, 0.15 * m["exposed_comm_us"])
                    rows.setdefault((group_of(step, m), key), []).append((abs(s["step_us"] / m["gpu_span_us"] - 1), exposed_ok))
    own = f"built-in {hardware}" if not hardware.endswith(".json") else Path(hardware).name
    labels = {"none": f"none ({own})", "same": "r1, same schedule", "cross": "r1, default's trace (FX schedules left out)"}
    groups = sorted({g for g, _ in rows}, key=lambda g: (g != by_step_group(NEW_STEPS[0], {}), g))
    lines = []
    for group in groups:
        for key in (k for k in FEEDS if k in feeds):
            errors = [e for e, _ in rows[(group, key)]]
            lines.append(f"| {group} | r2, r3 | {labels[key]} | {len(errors)} | {100 * statistics.median(errors):.1f} % "
                         f"| {100 * max(errors):.1f} % | {sum(e <= 0.04 for e in errors)} | {sum(e <= 0.08 for e in errors)} "
                         f"| {sum(ok for _, ok in rows[(group, key)])} |")
    return lines


_DOCUMENTED: dict = {}  # (archive, hardware, group_of, feeds) -> (lines, steps): tests share a lease's simulations


def documented_lease_rows(archive: str, hardware: str, group_of=by_step_group, steps_out: list | None = None,
                          feeds: tuple = FEEDS) -> list[str]:
    """lease_table_rows of one checked-in lease (tests/data/dist4/steps/ARCHIVE),
    computed once per process."""
    key = (archive, hardware, group_of.__name__, feeds)
    if key not in _DOCUMENTED:
        steps: list = []
        with extracted(RUNS / archive) as tmp:
            _DOCUMENTED[key] = (lease_table_rows(tmp / "steps", _schedlab(), tmp, hardware, group_of, steps, feeds), steps)
    lines, steps = _DOCUMENTED[key]
    if steps_out is not None:
        steps_out.extend(steps)
    return list(lines)


def schedule_pairs_ranked(steps: list) -> tuple[int, int]:
    """Of every step's pairs of schedules whose measured step medians (over
    the judged runs) differ by more than 1 %, how many the simulated
    steps' medians order as measured, and how many there are: what a
    scheduler that decides by the simulation needs of it."""
    by_step: dict = {}
    for step, schedule, measured_us, simulated_us, *_ in steps:
        by_step.setdefault(step, {}).setdefault(schedule, []).append((measured_us, simulated_us))
    agree = total = 0
    for schedules in by_step.values():
        med = {k: (statistics.median(m for m, _ in v), statistics.median(s for _, s in v)) for k, v in schedules.items()}
        names = sorted(med)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                (ma, sa), (mb, sb) = med[a], med[b]
                if abs(ma / mb - 1) <= 0.01:
                    continue
                total += 1
                agree += (ma < mb) == (sa < sb)
    return agree, total


def held_out_summary(lease: str, profile_label: str, line: str, pairs: tuple[int, int]) -> str:
    """docs/cost-model.md's row of a held-out lease (its unperturbed rows
    without feedback, lease_table_rows' first line) and the pairs ranked."""
    cells = [c.strip() for c in line.strip("|").split("|")]
    return f"| {lease} | {profile_label} | {' | '.join(cells[3:])} | {pairs[0]} / {pairs[1]} |"


@unittest.skipUnless(_schedlab(), "needs the schedlab binary (SCHEDLAB_BIN or build/schedlab)")
class DocumentedLeases(unittest.TestCase):
    """docs/gpu-validation.md's tables "On the second lease" (4 x H100,
    built-in h100-sxm) and "On 4 x H200" (built-in h200, which no H200 step
    or sweep was fitted on) are the data's, row for row."""

    def test_the_second_lease(self):
        doc = (ROOT / "docs" / "gpu-validation.md").read_text()
        for line in documented_lease_rows("run4-lease.tgz", "h100-sxm"):
            self.assertIn(line, doc)

    def test_the_h200_lease(self):
        doc = (ROOT / "docs" / "gpu-validation.md").read_text()
        for line in documented_lease_rows("run5-h200-lease.tgz", "h200"):
            self.assertIn(line, doc)

    def test_the_peer_wait_trial(self):
        # The trial profiles (profiles/*-peer-wait.json: the built-in ones with the peer wait fitted on
        # run4, run5 and run8) on the two held-out leases and on two of the leases the wait was fitted on;
        # docs/cost-model.md's summary of the held-out ones beside the built-in h200.
        doc = (ROOT / "docs" / "gpu-validation.md").read_text()
        cost_model = (ROOT / "docs" / "cost-model.md").read_text()
        h200, h100 = (str(ROOT / "profiles" / f"{name}-peer-wait.json") for name in ("h200", "h100-sxm"))
        summaries, within_8 = [], {}
        for lease in ("run10-h200-compile", "run11-h200-defer"):
            # The trial's tables without feedback (fed back, a trace times every collective it maps).
            for label, hardware, feeds in (("built-in h200", "h200", FEEDS), ("h200-peer-wait (both figures)", h200, ("none",))):
                steps: list = []
                table = documented_lease_rows(f"{lease}.tgz", hardware, by_profile, steps, feeds)
                for line in table:
                    self.assertIn(line, doc)
                summaries.append(held_out_summary(lease, label, table[0], schedule_pairs_ranked(steps)))
                within_8[(lease, label)] = int(table[0].split(" | ")[-2])
                if hardware == "h200":
                    # What the built-in profile misses (docs/gpu-validation.md, "On session 20's lease"): per
                    # step the simulated compute stream busy 4-14 % less than measured; on run11 every step short.
                    busy: dict = {}
                    for step, _, _, _, ratio, _ in steps:
                        busy.setdefault(step, []).append(ratio)
                    self.assertTrue(all(0.85 <= statistics.median(v) <= 0.96 for v in busy.values()), (lease, busy))
                    if lease == "run11-h200-defer":
                        self.assertTrue(all(short for *_, short in steps))
        for line in summaries:
            self.assertIn(line, cost_model)
        for table in (documented_lease_rows("run4-lease.tgz", h100, feeds=("none",)),
                      documented_lease_rows("run5-h200-lease.tgz", h200, feeds=("none",))):
            for line in table:
                self.assertIn(line, doc)
        # Of the unperturbed held-out rows: 77 of 83 and 77 of 87 with the trial, 50 and 39 with the built-in
        # h200 (77, 79, 52 and 43 before session 22's call epilogue shortened each graph's lead by 24-27 µs).
        self.assertGreaterEqual(within_8[("run10-h200-compile", "h200-peer-wait (both figures)")], 77)
        self.assertGreaterEqual(within_8[("run11-h200-defer", "h200-peer-wait (both figures)")], 77)

    def test_the_fsdp_lease(self):
        # Session 20's second lease (run12-h200-fsdp.tgz), judged whole: no fit has seen it.
        doc = (ROOT / "docs" / "gpu-validation.md").read_text()
        for line in documented_lease_rows("run12-h200-fsdp.tgz", "h200", by_profile):
            self.assertIn(line, doc)

    def test_the_compile_lease(self):
        # Session 19's lease (run10-h200-compile.tgz), judged whole: no fit has seen it.
        doc = (ROOT / "docs" / "gpu-validation.md").read_text()
        lines = documented_lease_rows("run10-h200-compile.tgz", "h200", by_profile)
        self.assertEqual(len(lines), 6)
        for line in lines:
            self.assertIn(line, doc)


if __name__ == "__main__":
    unittest.main()
