"""Checks of the in-process bindings (pybind/, `import schedlab`), torch-free.

    PYTHONPATH=build/python SCHEDLAB_BIN=build/schedlab python3 -m unittest discover -s tests/exporter -p 'test_*.py'

`schedlab.plan` must give, value for value, what `schedlab plan G -o P.json`
writes (json.load of it) on every real fixture, from a dict and from a file;
a graph or option it refuses must raise with the CLI's message. ctest sets
SCHEDLAB_EXPECT_BINDINGS=1 where CMake built them: then their absence fails.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import schedlab  # noqa: E402

DATA = ROOT / "tests" / "data"
CLI = os.environ.get("SCHEDLAB_BIN")


class Presence(unittest.TestCase):
    def test_bindings_present_where_built(self):
        if os.environ.get("SCHEDLAB_EXPECT_BINDINGS"):
            self.assertTrue(schedlab.bindings_available(), "CMake built schedlab._core but it does not import")

    def test_without_bindings_the_error_says_how_to_get_them(self):
        if schedlab.bindings_available():
            self.skipTest("bindings present")
        with self.assertRaisesRegex(schedlab.BindingsUnavailable, "pip install"):
            schedlab.plan({"format": "schedgraph/1"})


def _cli_plan(graph: Path, *args: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "plan.json"
        subprocess.run([CLI, "plan", str(graph), "-o", str(out), *args], check=True, capture_output=True)
        return json.loads(out.read_text())


@unittest.skipUnless(schedlab.bindings_available(), "schedlab._core not built")
class Bindings(unittest.TestCase):
    @unittest.skipUnless(CLI, "SCHEDLAB_BIN (the built schedlab) not set")
    def test_plan_equals_the_cli_plan_on_every_fixture(self):
        cases = sorted(DATA.glob("inductor/*.pre.json")) + sorted(DATA.glob("inductor/*.post.json"))
        self.assertGreaterEqual(len(cases), 12)
        for path in cases:
            with self.subTest(graph=path.name):
                graph = json.loads(path.read_text())
                self.assertEqual(schedlab.plan(graph), _cli_plan(path))
        path = DATA / "inductor" / "fsdp_1.post.json"
        options = dict(memory_methods=["lpmf", "bfs"], comm_passes=["sink_waits", "overlap_schedule"],
                       comm_knobs={"reorder_iterative_peak_memory_budget": 0.1}, fuse=False, hardware="h100-sxm")
        cli_args = ["--memory-methods", "lpmf,bfs", "--comm-passes", "sink_waits,overlap_schedule",
                    "--comm-knob", "reorder_iterative_peak_memory_budget=0.1", "--no-fuse", "--hardware", "h100-sxm"]
        expected = _cli_plan(path, *cli_args)
        self.assertEqual(schedlab.plan(json.loads(path.read_text()), **options), expected)
        self.assertEqual(schedlab.plan(path, **options), expected)  # a path, as the CLI reads it
        self.assertEqual(schedlab.plan(str(path), **options), expected)
        profile = ROOT / "profiles" / "example-h100-pcie.json"
        self.assertEqual(schedlab.plan(path, hardware=profile), _cli_plan(path, "--hardware", str(profile)))

    def test_the_plan_is_python_objects(self):
        plan = schedlab.plan(DATA / "inductor" / "mlp_2.post.json")
        self.assertEqual(plan["format"], "schedplan/1")
        self.assertIsInstance(plan["order"], list)
        self.assertIsInstance(plan["memory"]["peak"], int)
        self.assertIsInstance(plan["simulation"]["step_time_us"], float)
        self.assertEqual(len(plan["order"]), plan["nodes"])

    def test_graph_errors_name_their_place(self):
        graph = json.loads((DATA / "inductor" / "mlp_2.post.json").read_text())
        bad_kind = dict(graph, nodes=[dict(graph["nodes"][0], kind="nonsense")] + graph["nodes"][1:])
        with self.assertRaisesRegex(schedlab.Error, r'^nodes\[0\] "[^"]+": kind: unknown value "nonsense"'):
            schedlab.plan(bad_kind)
        not_json = dict(graph, nodes=[dict(graph["nodes"][0], flops=math.nan)] + graph["nodes"][1:])
        with self.assertRaisesRegex(schedlab.Error, r"^graph\.nodes\[0\]\.flops: nan is no JSON number$"):
            schedlab.plan(not_json)
        with self.assertRaisesRegex(schedlab.Error, r"^graph\.nodes\[1\]: a set is no JSON value"):
            schedlab.plan(dict(graph, nodes=[graph["nodes"][0], {"x"}]))
        with self.assertRaisesRegex(schedlab.Error, r"^graph: key 3 is not a string$"):
            schedlab.plan({3: "x"})
        deep: list = []
        for _ in range(100):
            deep = [deep]
        with self.assertRaisesRegex(schedlab.Error, r"nested deeper than 64 levels"):
            schedlab.plan({"format": "schedgraph/1", "x": deep})
        with self.assertRaisesRegex(schedlab.Error, r"^graph: expected a schedgraph/1 dict or a file path, got a int$"):
            schedlab.plan(3)
        missing = DATA / "no-such-graph.json"
        with self.assertRaisesRegex(schedlab.Error, "^" + str(missing).replace(".", r"\.") + ": "):
            schedlab.plan(missing)

    def test_option_errors(self):
        graph = DATA / "inductor" / "mlp_2.post.json"
        with self.assertRaisesRegex(schedlab.OptionError, "nonsense"):
            schedlab.plan(graph, memory_methods=["nonsense"])
        with self.assertRaisesRegex(schedlab.OptionError, r"^options\.comm\.no_such_knob: unknown knob"):
            schedlab.plan(graph, comm_knobs={"no_such_knob": 1})
        with self.assertRaisesRegex(schedlab.OptionError, "no-such-profile"):
            schedlab.plan(graph, hardware="no-such-profile")
        self.assertTrue(issubclass(schedlab.OptionError, schedlab.Error))
        self.assertTrue(issubclass(schedlab.Error, ValueError))

    def test_validate_and_registries(self):
        counts = schedlab.validate(DATA / "inductor" / "mlp_2.pre.json")
        self.assertEqual(counts["fused"], False)
        self.assertGreater(counts["nodes"], 0)
        methods = {m["name"]: m for m in schedlab.memory_methods()}
        self.assertEqual(set(methods), {"baseline", "lpmf", "bfs", "dfs"})
        self.assertIn("overlap_schedule", [p["name"] for p in schedlab.comm_passes()])
        self.assertIn("h200", schedlab.hardware_profiles())
        self.assertIn("h100-sxm", schedlab.hardware_profiles())


if __name__ == "__main__":
    unittest.main()
