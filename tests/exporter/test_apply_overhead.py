"""The torch-free half of python/zoo/apply_overhead.py (the GPU measurement of
what apply adds per graph): its timers and its summary, on a fake clock.

    python3 -m unittest discover -s tests/exporter -p 'test_apply_overhead.py'
"""

from __future__ import annotations

import os
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "zoo"))
sys.path.insert(0, str(ROOT / "python"))

from apply_overhead import Recorder, overhead_table, planner_times, summarize  # noqa: E402
from schedlab_export.apply import find_bindings  # noqa: E402


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _pass(clock: FakeClock, seconds: float):
    def sink_waits(snodes):
        clock.now += seconds
        return list(reversed(snodes))

    return sink_waits


def _compile(rec: Recorder, clock: FakeClock, graphs: list[int], seconds: list[float]) -> None:
    """One compile: per graph, two timed passes (the first starts the graph)."""
    rec.start_compile()
    first = rec.timed("comm_passes", _pass(clock, seconds[0]), starts_graph=True)
    second = rec.timed("comm_passes", _pass(clock, seconds[1]))
    for nodes in graphs:
        second(first(list(range(nodes))))


class Timers(unittest.TestCase):
    def test_a_wrapped_pass_keeps_its_name_result_and_adds_its_time_to_the_graph(self):
        clock = FakeClock()
        rec = Recorder(clock)
        _compile(rec, clock, [3, 5], [0.002, 0.001])
        wrapped = rec.timed("comm_passes", _pass(clock, 0.0))
        self.assertEqual(wrapped.__name__, "sink_waits")
        self.assertEqual([g.nodes for g in rec.compiles[0]], [3, 5])
        self.assertAlmostEqual(rec.compiles[0][0].parts_ms["comm_passes"], 3.0)
        self.assertEqual(rec.compiles[0][0].parts_ms.keys(), {"comm_passes"})

    def test_a_failing_call_is_still_timed_and_raises(self):
        clock = FakeClock()
        rec = Recorder(clock)
        rec.start_compile()

        def broken(snodes):
            clock.now += 0.004
            raise RuntimeError("boom")

        with self.assertRaisesRegex(RuntimeError, "boom"):
            rec.timed("plan", broken, starts_graph=True)([1, 2])
        self.assertAlmostEqual(rec.compiles[0][0].parts_ms["plan"], 4.0)


class Summary(unittest.TestCase):
    def test_graphs_are_matched_across_modes_with_medians(self):
        clock = FakeClock()
        runs = {"inductor": Recorder(clock), "bindings": Recorder(clock)}
        for seconds in ([0.001, 0.001], [0.003, 0.001], [0.002, 0.001]):
            _compile(runs["inductor"], clock, [3, 5], seconds)
        for seconds in ([0.0005, 0.0], [0.0001, 0.0], [0.0002, 0.0]):
            _compile(runs["bindings"], clock, [3, 5], seconds)
        summary = summarize(runs, {"inductor": [1.0, 3.0, 2.0], "bindings": [1.5]})
        self.assertEqual([g["nodes"] for g in summary["graphs"]], [3, 5])
        first = summary["graphs"][0]
        self.assertAlmostEqual(first["inductor"]["comm_passes"]["median_ms"], 3.0)
        self.assertEqual(len(first["inductor"]["comm_passes"]["samples_ms"]), 3)
        self.assertAlmostEqual(first["bindings"]["comm_passes"]["median_ms"], 0.2)
        self.assertEqual(summary["compile_s"]["inductor"]["median_s"], 2.0)
        lines = overhead_table(summary)
        self.assertEqual(len(lines), 3)
        self.assertIn("3.00", lines[1])

    def test_modes_that_saw_other_graphs_are_refused(self):
        clock = FakeClock()
        runs = {"inductor": Recorder(clock), "cli": Recorder(clock)}
        _compile(runs["inductor"], clock, [3, 5], [0.0, 0.0])
        _compile(runs["cli"], clock, [3, 6], [0.0, 0.0])
        with self.assertRaisesRegex(ValueError, r"cli: compile 0 saw graphs of \[3, 6\] nodes"):
            summarize(runs, {})


@unittest.skipUnless(find_bindings() is not None and os.environ.get("SCHEDLAB_BIN"), "needs the bindings and SCHEDLAB_BIN")
class PlanOnly(unittest.TestCase):
    def test_both_planners_are_timed_on_each_graph(self):
        clock = FakeClock()

        def tick() -> float:
            clock.now += 0.5  # exact in binary: 500 ms from one reading to the next
            return clock.now

        files = [ROOT / "tests" / "data" / "inductor" / f"{case}.post.json" for case in ("mlp_2", "fsdp_1")]
        result = planner_times(files, 2, os.environ["SCHEDLAB_BIN"], clock=tick)
        self.assertEqual([g["graph"] for g in result["graphs"]], ["mlp_2.post.json", "fsdp_1.post.json"])
        for g in result["graphs"]:
            for mode in ("bindings", "cli"):
                self.assertEqual(g[mode]["samples_ms"], [500.0, 500.0])  # one tick from start to end of each plan


if __name__ == "__main__":
    unittest.main()
