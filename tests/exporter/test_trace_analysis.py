"""Checks of python/dist/trace_analysis.py (no torch): exposed communication
from profiler kernels, step splitting, and the measured Chrome trace's lanes."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "dist"))

from trace_analysis import (  # noqa: E402
    Kernel,
    analyse_step,
    gpu_events,
    measured_chrome_trace,
    split_steps,
    summarize_steps,
    uncovered,
)


def _event(name, ts, dur, stream, cat="kernel", corr=None):
    args = {"stream": stream}
    if corr is not None:
        args["correlation"] = corr
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "args": args}


class Exposure(unittest.TestCase):
    def test_uncovered_parts(self):
        self.assertEqual(uncovered(0, 10, [(2, 4), (6, 12)]), [(0, 2), (4, 6)])
        self.assertEqual(uncovered(0, 10, []), [(0, 10)])
        self.assertEqual(uncovered(3, 5, [(0, 10)]), [])

    def test_collective_exposed_where_no_compute_runs(self):
        kernels = [
            Kernel("gemm", 0, 100, 7),
            Kernel("ncclDevKernel_AllGather", 50, 150, 20),   # 50..100 hidden, 100..150 exposed
            Kernel("relu", 150, 160, 7),
            Kernel("ncclDevKernel_ReduceScatter", 155, 175, 20),  # 155..160 hidden
        ]
        step = analyse_step(kernels, ["ag", "rs"])
        self.assertEqual([c.name for c in step.collectives], ["ag", "rs"])
        self.assertEqual([c.exposed_us for c in step.collectives], [50, 15])
        self.assertEqual(step.exposed_comm_us, 65)
        self.assertEqual(step.span_us, 175)
        self.assertEqual(step.compute_busy_us, 110)
        self.assertEqual(step.collectives[0].exposed_spans, [(100, 150)])

    def test_summary_takes_medians_per_position(self):
        a = analyse_step([Kernel("k", 0, 10, 1), Kernel("nccl", 10, 20, 2)], ["c"])
        b = analyse_step([Kernel("k", 0, 10, 1), Kernel("nccl", 5, 25, 2)], ["c"])
        c = analyse_step([Kernel("k", 0, 10, 1), Kernel("nccl", 10, 40, 2)], ["c"])
        s = summarize_steps([a, b, c])
        self.assertEqual(s["exposed_comm_us"], 15)
        self.assertEqual(s["collectives"][0]["exposed_us"], 15)


class Steps(unittest.TestCase):
    def test_split_by_launch_time_inside_step_annotations(self):
        trace = {"traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": "schedlab_step_0", "ts": 0, "dur": 100},
            {"ph": "X", "cat": "user_annotation", "name": "schedlab_step_1", "ts": 200, "dur": 100},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 1, "args": {"correlation": 1}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 90, "dur": 1, "args": {"correlation": 2}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 210, "dur": 1, "args": {"correlation": 3}},
            _event("a", 20, 5, 7, corr=1),
            _event("b", 5000, 5, 7, corr=2),  # long after an idle gap, still step 0
            _event("c", 5100, 5, 7, corr=3),
        ]}
        kernels, marks, launches = gpu_events(trace)
        groups = split_steps(kernels, marks, launches)
        self.assertEqual([[k.name for k in g] for g in groups], [["a", "b"], ["c"]])

    def test_profiler_steps_where_the_runner_marked_none(self):
        # torch.profiler's ProfilerStep#N, as core/io/trace_reader.cpp splits them.
        trace = {"traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "ts": 0, "dur": 100},
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "ts": 200, "dur": 100},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 1, "args": {"correlation": 1}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 210, "dur": 1, "args": {"correlation": 2}},
            _event("a", 20, 5, 7, corr=1),
            _event("b", 220, 5, 7, corr=2),
        ]}
        kernels, marks, launches = gpu_events(trace)
        self.assertEqual([[k.name for k in g] for g in split_steps(kernels, marks, launches)], [["a"], ["b"]])

    def test_split_at_idle_gaps_without_annotations(self):
        kernels = [Kernel("a", 0, 10, 1), Kernel("b", 20, 30, 1), Kernel("c", 5000, 5010, 1)]
        self.assertEqual([[k.name for k in g] for g in split_steps(kernels)], [["a", "b"], ["c"]])


class MeasuredTrace(unittest.TestCase):
    def test_lanes_match_the_simulated_trace(self):
        step = analyse_step([Kernel("gemm", 100, 200, 7), Kernel("ncclAllReduce", 150, 260, 20)], ["op3"])
        trace = measured_chrome_trace(step, "measured x")
        meta = {(e["name"], e.get("tid")): e["args"] for e in trace["traceEvents"] if e["ph"] == "M"}
        self.assertEqual(meta[("thread_name", 1)], {"name": "compute"})
        self.assertEqual(meta[("thread_name", 2)], {"name": "comm"})
        spans = [(e["name"], e["tid"], e["ts"], e["dur"]) for e in trace["traceEvents"] if e["ph"] == "X"]
        self.assertIn(("gemm", 1, 0, 100), spans)
        self.assertIn(("op3", 2, 50, 110), spans)
        self.assertIn(("exposed op3", 1, 100, 60), spans)
        self.assertEqual(trace["otherData"]["exposed_comm_us"], 60)


if __name__ == "__main__":
    unittest.main()
