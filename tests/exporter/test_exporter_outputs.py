"""Checks of the exporter's torch-free parts and of the files it checked in.

    python3 -m unittest discover -s tests/exporter -p 'test_*.py'

Runs without torch (as CI does): the peak estimator on hand-made graphs whose
answers follow from docs/schedgraph-1.md, and on every real case under
tests/data/{inductor,exported}, whose expected peaks it must reproduce; and
the exported cases' internal consistency (fusion groups vs post-fusion nodes
vs the operation skeleton).
"""

from __future__ import annotations

import json
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from schedlab_export.memory_estimate import (  # noqa: E402
    GraphError,
    estimate_peak_memory,
    memory_section,
)

DATA = ROOT / "tests" / "data"


def _cases(folder: str) -> list[str]:
    return sorted(p.name[: -len(".expected.json")] for p in (DATA / folder).glob("*.expected.json"))


def _load(folder: str, case: str, suffix: str) -> dict:
    return json.loads((DATA / folder / f"{case}.{suffix}.json").read_text())


def _node(name, outputs=(), reads=()):
    return {
        "name": name,
        "kind": "pointwise",
        "outputs": [dict(o) for o in outputs],
        "reads": [r if isinstance(r, dict) else {"name": r} for r in reads],
    }


class EstimatorSemantics(unittest.TestCase):
    def test_buffer_freed_after_last_reader_and_outputs_live_to_end(self):
        graph = {
            "inputs": [],
            "outputs": ["c"],
            "nodes": [
                _node("A", [{"name": "a", "bytes": 10}]),
                _node("B", [{"name": "b", "bytes": 20}], ["a"]),
                _node("C", [{"name": "c", "bytes": 5}], ["b"]),
            ],
        }
        result = estimate_peak_memory(graph, ["A", "B", "C"])
        self.assertEqual(result.curve, [10, 30, 25, 0])
        self.assertEqual(result.peak, 30)

    def test_fake_weak_orders_but_does_not_keep_alive(self):
        graph = {
            "inputs": [],
            "outputs": [],
            "nodes": [
                _node("A", [{"name": "a", "bytes": 100}]),
                _node("B", [{"name": "b", "bytes": 1}], ["a"]),
                _node("C", [{"name": "c", "bytes": 1}], [{"name": "a", "dep": "fake_weak"}]),
            ],
        }
        self.assertEqual(estimate_peak_memory(graph, ["A", "B", "C"]).curve, [100, 101, 1, 0])

    def test_mutation_readers_keep_the_mutated_buffer_alive(self):
        graph = {
            "inputs": [],
            "outputs": [],
            "nodes": [
                _node("A", [{"name": "a", "bytes": 100}]),
                _node("M", [{"name": "m", "bytes": 100, "layout": "none", "mutation_of": "a"}], ["a"]),
                _node("R", [{"name": "r", "bytes": 1}], ["m"]),
            ],
        }
        # a lives until R reads its mutation m; m itself costs nothing.
        self.assertEqual(estimate_peak_memory(graph, ["A", "M", "R"]).curve, [100, 100, 101, 0])

    def test_multi_output_allocates_its_items(self):
        graph = {
            "inputs": [],
            "outputs": ["i1"],
            "nodes": [
                _node("T", [{"name": "t", "bytes": 0, "layout": "multi_output"}]),
                _node("G0", [{"name": "i0", "bytes": 30, "layout": "multi_output_item"}], ["t"]),
                _node("G1", [{"name": "i1", "bytes": 12, "layout": "multi_output_item"}], ["t"]),
            ],
        }
        # All 42 bytes at the tuple's step; i0 (no reader) is freed after G0.
        self.assertEqual(estimate_peak_memory(graph, ["T", "G0", "G1"]).curve, [42, 42, 12, 0])

    def test_freeable_input_sized_by_its_last_dep_and_freed_after_last_reader(self):
        graph = {
            "inputs": [{"name": "x", "bytes": 999, "freeable": True}, {"name": "primals_1", "bytes": 7}],
            "outputs": [],
            "nodes": [
                _node("A", [{"name": "a", "bytes": 1}], [{"name": "x", "bytes": 50}, "primals_1"]),
                _node("B", [{"name": "b", "bytes": 1}], [{"name": "x", "bytes": 40}, "a"]),
            ],
        }
        self.assertEqual(estimate_peak_memory(graph, ["A", "B"]).curve, [41, 42, 0])

    def test_order_must_be_a_permutation(self):
        graph = {"inputs": [], "outputs": [], "nodes": [_node("A"), _node("B")]}
        with self.assertRaises(GraphError):
            estimate_peak_memory(graph, ["A", "A"])

    def test_chosen_is_first_lowest_peak(self):
        graph = {
            "inputs": [],
            "outputs": [],
            "nodes": [_node("A", [{"name": "a", "bytes": 10}]), _node("B", [{"name": "b", "bytes": 10}])],
        }
        section = memory_section(graph, {"baseline": ["A", "B"], "lpmf": ["B", "A"]})
        self.assertEqual(section["chosen"], "baseline")


class RealCases(unittest.TestCase):
    def test_cases_exist(self):
        self.assertGreaterEqual(len(_cases("inductor")), 6)
        self.assertGreaterEqual(len(_cases("exported")), 10)

    def test_estimator_reproduces_every_expected_peak(self):
        for folder in ("inductor", "exported"):
            for case in _cases(folder):
                with self.subTest(case=f"{folder}/{case}"):
                    expected = _load(folder, case, "expected")["memory"]
                    post = _load(folder, case, "post")
                    methods = [m for m in ("baseline", "lpmf", "bfs", "dfs") if m in expected]
                    section = memory_section(post, {m: expected[m]["order"] for m in methods})
                    for m in methods:
                        self.assertEqual(section[m]["peak"], expected[m]["peak"], m)
                    self.assertEqual(section["chosen"], expected["chosen"])
                    self.assertEqual(section["baseline_curve"], expected["baseline_curve"])

    def test_exported_cases_are_consistent(self):
        for case in _cases("exported"):
            with self.subTest(case=case):
                pre = _load("exported", case, "pre")
                post = _load("exported", case, "post")
                expected = _load("exported", case, "expected")
                groups = expected["fusion_groups"]
                pre_names = [n["name"] for n in pre["nodes"]]
                # Every pre-fusion node lands in exactly one group.
                self.assertEqual(sorted(m for g in groups for m in g), sorted(pre_names))
                # Post-fusion nodes are the groups, in the same order, named by their members.
                self.assertEqual([n.get("members", [n["name"]]) for n in post["nodes"]], groups)
                self.assertEqual(expected["memory"]["baseline"]["order"], [n["name"] for n in post["nodes"]])
                self.assertEqual([op["name"] for op in post["operations"]], pre_names)
                for method in ("lpmf", "bfs", "dfs"):
                    self.assertEqual(
                        sorted(expected["memory"][method]["order"]), sorted(n["name"] for n in post["nodes"])
                    )
                if expected.get("fusion_input") is not None:
                    # Fusion starts from every pre-fusion node, foreach groups joined.
                    self.assertEqual(sorted(m for g in expected["fusion_input"] for m in g), sorted(pre_names))
                if "final_order" in expected:
                    # Inductor's final order is its memory pick, then the comm
                    # pipeline when one was enabled.
                    memory = expected["memory"]
                    comm = expected.get("comm", {})
                    if comm.get("configured_pipeline_enabled"):
                        want = comm["configured_pipeline_output"]
                    else:
                        want = memory[memory["inductor_pick"]]["order"]
                    self.assertEqual(expected["final_order"], want)
                if "comm" in expected:
                    self.assertTrue(any(n["kind"] == "collective" for n in post["nodes"]))
                    for key, order in expected["comm"].items():
                        if isinstance(order, list) and key != "configured_pipeline":
                            self.assertEqual(sorted(order), sorted(n["name"] for n in post["nodes"]), key)


if __name__ == "__main__":
    unittest.main()
