"""Checks of schedlab_export.apply's torch-free half (no torch, no GPU).

    PYTHONPATH=build/python SCHEDLAB_BIN=build/schedlab python3 -m unittest discover -s tests/exporter -p 'test_*.py'

Stand-in scheduler nodes (objects with a name) go through ApplySession as
Inductor's would: the order the pass returns, the fallbacks (binary missing,
graph refused, timeout, a plan that is no permutation), and the emitted-order
check. With SCHEDLAB_BIN set (ctest sets it to the built binary) the real
`schedlab plan` orders real exported graphs; with the bindings built
(PYTHONPATH=<build>/python; ctest sets it), apply plans in-process by
default, with the same plans, and falls back the same ways.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from schedlab_export.apply import (  # noqa: E402
    INDUCTOR_KEY,
    ApplySession,
    Gathered,
    OrderMismatch,
    PlanUnavailable,
    ScheduleWarning,
    find_bindings,
    find_schedlab,
    first_difference,
    nodes_in_order,
    plan_command,
    plan_in_process,
    peer_wait,
    plan_key,
    run_plan,
    uses_bindings,
    without_runtimes,
)

DATA = ROOT / "tests" / "data"


class Node:
    """A stand-in scheduler node: only its name matters to apply."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Node({self.name})"


def _names(nodes) -> list[str]:
    return [n.name for n in nodes]


def _fake_binary(folder: Path, body: str) -> str:
    """An executable `schedlab` stand-in: a Python script with `body`."""
    path = folder / "schedlab"
    path.write_text(f"#!{sys.executable}\nimport sys, json, time\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


# Writes the given order as the plan (argv: plan GRAPH -o PLAN ...).
_WRITES_ORDER = "order = {order!r}\nopen(sys.argv[sys.argv.index('-o') + 1], 'w').write(json.dumps({{'order': order}}))"


def _session(graph: dict, binary: str | None, **kw) -> ApplySession:
    return ApplySession(memory_methods=["lpmf"], comm_passes=["overlap_schedule"],
                        export=lambda nodes: dict(graph, nodes=[n for g in [graph["nodes"]] for n in g]),
                        name_of=lambda n: n.name, binary=binary, **kw)


TINY = {"format": "schedgraph/1", "name": "tiny", "inputs": [], "outputs": [],
        "nodes": [{"name": "a", "kind": "pointwise", "runtime_us": 5.0}, {"name": "b", "kind": "pointwise"}]}


class NameMapping(unittest.TestCase):
    def test_nodes_follow_the_plan(self):
        nodes = [Node("a"), Node("b"), Node("c")]
        self.assertEqual(_names(nodes_in_order(["c", "a", "b"], nodes, lambda n: n.name)), ["c", "a", "b"])

    def test_unknown_duplicate_and_missing_names_are_refused(self):
        nodes = [Node("a"), Node("b")]
        with self.assertRaisesRegex(PlanUnavailable, "'x', which is no node"):
            nodes_in_order(["a", "x"], nodes, lambda n: n.name)
        with self.assertRaisesRegex(PlanUnavailable, "'a' twice"):
            nodes_in_order(["a", "a", "b"], nodes, lambda n: n.name)
        with self.assertRaisesRegex(PlanUnavailable, "leaves out 1 node"):
            nodes_in_order(["b"], nodes, lambda n: n.name)
        with self.assertRaisesRegex(PlanUnavailable, "two scheduler nodes"):
            nodes_in_order(["a"], [Node("a"), Node("a")], lambda n: n.name)

    def test_first_difference(self):
        self.assertIsNone(first_difference(["a", "b"], ["a", "b"]))
        self.assertEqual(first_difference(["a", "b"], ["b", "a"]), "step 0: schedlab has 'a', Inductor emitted 'b'")
        self.assertIn("ordered 2 nodes, Inductor emitted 3", first_difference(["a", "b"], ["a", "b", "c"]))


class PlanSubprocess(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_missing_binary(self):
        with self.assertRaisesRegex(PlanUnavailable, "not found"):
            find_schedlab(self.dir / "nothing-here")

    def test_refusal_carries_schedlab_error_line(self):
        binary = _fake_binary(self.dir, "sys.stderr.write('schedlab: nodes[1] \"b\": bad\\n'); sys.exit(1)")
        with self.assertRaisesRegex(PlanUnavailable, 'refused the graph: schedlab: nodes\\[1\\] "b": bad'):
            run_plan(TINY, binary=binary)

    def test_timeout(self):
        binary = _fake_binary(self.dir, "time.sleep(30)")
        with self.assertRaisesRegex(PlanUnavailable, "timed out after 0.5 s"):
            run_plan(TINY, binary=binary, timeout_s=0.5)

    def test_no_plan_written(self):
        binary = _fake_binary(self.dir, "sys.exit(0)")
        with self.assertRaisesRegex(PlanUnavailable, "no readable plan"):
            run_plan(TINY, binary=binary)

    def test_command_line(self):
        cmd = plan_command("sl", "g.json", "p.json", ["lpmf", "bfs"], ["overlap_schedule"], "h200",
                           {"reorder_iterative_peak_memory_budget": 0.1})
        self.assertEqual(cmd, ["sl", "plan", "g.json", "-o", "p.json", "--no-fuse", "--format", "json",
                               "--memory-methods", "lpmf,bfs", "--comm-passes", "overlap_schedule",
                               "--hardware", "h200", "--comm-knob", "reorder_iterative_peak_memory_budget=0.1"])

    def test_runtimes_are_dropped_for_the_cost_model(self):
        self.assertNotIn("runtime_us", without_runtimes(TINY)["nodes"][0])
        self.assertIn("runtime_us", TINY["nodes"][0])  # the input is left alone


class SessionFallbacks(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.nodes = [Node("a"), Node("b")]

    def tearDown(self):
        self.tmp.cleanup()

    def _reorder(self, session):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = session.reorder(self.nodes)
        return out, [str(w.message) for w in caught if issubclass(w.category, ScheduleWarning)]

    def test_applies_the_plan(self):
        session = _session(TINY, _fake_binary(self.dir, _WRITES_ORDER.format(order=["b", "a"])))
        out, warned = self._reorder(session)
        self.assertEqual(_names(out), ["b", "a"])
        self.assertEqual(warned, [])
        self.assertTrue(session.graphs[0].applied)
        session.record_emitted(out)
        self.assertIsNone(session.graphs[0].mismatch)

    def test_missing_binary_keeps_inductor_order_with_a_warning(self):
        session = _session(TINY, str(self.dir / "absent"))
        out, warned = self._reorder(session)
        self.assertIs(out[0], self.nodes[0])
        self.assertEqual(_names(out), ["a", "b"])
        self.assertEqual(len(warned), 1)
        self.assertIn("graph_0: schedlab binary not found", warned[0])
        self.assertIn("keeping Inductor's order", warned[0])
        self.assertFalse(session.graphs[0].applied)

    def test_refusal_and_timeout_and_bad_plan_fall_back(self):
        bodies = {  # reason: (script, timeout); a loaded CI box needs seconds to start Python
            "refused the graph": ("sys.stderr.write('bad graph\\n'); sys.exit(1)", 60),
            "timed out": ("time.sleep(30)", 0.5),
            "which is no node": (_WRITES_ORDER.format(order=["a", "zz"]), 60),
        }
        for reason, (body, timeout_s) in bodies.items():
            with self.subTest(reason=reason):
                folder = self.dir / reason.replace(" ", "_")
                folder.mkdir()
                session = _session(TINY, _fake_binary(folder, body), timeout_s=timeout_s)
                out, warned = self._reorder(session)
                self.assertEqual(_names(out), ["a", "b"])
                self.assertEqual(len(warned), 1)
                self.assertIn(reason, warned[0])

    def test_export_failure_falls_back(self):
        def broken(_nodes):
            raise ValueError("cannot export")

        session = ApplySession(["lpmf"], ["overlap_schedule"], export=broken, name_of=lambda n: n.name)
        out, warned = self._reorder(session)
        self.assertEqual(_names(out), ["a", "b"])
        self.assertIn("export failed: ValueError: cannot export", warned[0])

    def test_strict_raises(self):
        session = _session(TINY, str(self.dir / "absent"), strict=True)
        with self.assertRaises(PlanUnavailable):
            session.reorder(self.nodes)

    def test_emitted_order_is_checked(self):
        session = _session(TINY, _fake_binary(self.dir, _WRITES_ORDER.format(order=["b", "a"])))
        session.reorder(self.nodes)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            session.record_emitted(self.nodes)  # Inductor emitted a, b: not schedlab's b, a
        self.assertIn("emitted order differs: step 0: schedlab has 'b', Inductor emitted 'a'", str(caught[0].message))
        self.assertFalse(session.report()["graphs"][0]["emitted_matches"])
        strict = _session(TINY, _fake_binary(self.dir, _WRITES_ORDER.format(order=["b", "a"])), strict=True)
        strict.reorder(self.nodes)
        with self.assertRaises(OrderMismatch):
            strict.record_emitted(self.nodes)

    def test_ranks_that_disagree_all_keep_inductor_order(self):
        keys = []
        # Rank 1 of 3; rank 0 planned "a, b", rank 2 this rank's "b, a".
        other = plan_key({"order": ["a", "b"]})
        session = _session(TINY, _fake_binary(self.dir, _WRITES_ORDER.format(order=["b", "a"])),
                           gather_keys=lambda key: keys.append(key) or Gathered([other, key, key]))
        out, warned = self._reorder(session)
        self.assertEqual(_names(out), ["a", "b"])
        self.assertEqual(keys, [plan_key({"order": ["b", "a"]})])
        self.assertIn("the ranks' plans differ (ranks 1, 2 planned another order than rank 0; "
                      "all 3 ranks keep Inductor's order)", warned[0])
        self.assertFalse(session.graphs[0].applied)
        # A rank that fell back still takes part in the agreement, with its own key,
        # and its own reason comes first.
        missing = _session(TINY, str(self.dir / "absent"), gather_keys=lambda key: keys.append(key) or Gathered([key, other]))
        _, warned = self._reorder(missing)
        self.assertEqual(keys[-1], INDUCTOR_KEY)
        self.assertRegex(warned[0], "not found.*; the ranks' plans differ \\(rank 0 kept Inductor's order; "
                                    "rank 1 planned without rank 0")

    def test_ranks_that_agree_all_run_the_plan(self):
        def gather(key):  # this rank waited 0.2 s of the gather for a slower rank
            time.sleep(0.25)
            return Gathered([key] * 4, peer_wait_s=0.2)

        session = _session(TINY, _fake_binary(self.dir, _WRITES_ORDER.format(order=["b", "a"])), gather_keys=gather)
        out, warned = self._reorder(session)
        self.assertEqual((_names(out), warned), (["b", "a"], []))
        # The wait for the slower rank is recorded apart from the agreement's own time.
        seconds = session.graphs[0].seconds
        self.assertEqual(seconds["peer_wait"], 0.2)
        self.assertGreaterEqual(seconds["agree"] + seconds["peer_wait"], 0.25)  # together, the whole gather
        self.assertGreaterEqual(seconds["agree"], 0.05 - 1e-3)

    def test_peer_wait_is_the_wait_for_the_last_arrival_within_the_gather(self):
        self.assertEqual(peer_wait([10.0, 10.5, 10.25], own=10.0, elapsed=0.75), 0.5)
        self.assertEqual(peer_wait([10.0, 10.5], own=10.5, elapsed=0.01), 0.0)  # the last to arrive waits for nobody
        self.assertEqual(peer_wait([10.0, 13.0], own=10.0, elapsed=1.0), 1.0)  # clocks apart: never more than the gather took
        self.assertEqual(peer_wait([10.0, 9.0], own=10.0, elapsed=0.5), 0.0)

    def test_a_gather_that_raises_keeps_inductor_order(self):
        def gather(_key):
            raise RuntimeError("NCCL timeout")

        session = _session(TINY, _fake_binary(self.dir, _WRITES_ORDER.format(order=["b", "a"])), gather_keys=gather)
        out, warned = self._reorder(session)
        self.assertEqual(_names(out), ["a", "b"])
        self.assertIn("the ranks could not compare their plans: RuntimeError: NCCL timeout", warned[0])

    def test_files_of_a_rank_carry_its_rank(self):
        for rank, stem in ((None, "graph_0"), (3, "graph_0.rank3")):
            folder = self.dir / f"out{rank}"
            session = _session(TINY, _fake_binary(self.dir, _WRITES_ORDER.format(order=["b", "a"])),
                               out_dir=folder, rank=rank)
            session.reorder(self.nodes)
            self.assertEqual(sorted(p.name for p in folder.iterdir()), [f"{stem}.plan.json", f"{stem}.post.json"])
            self.assertEqual(json.loads((folder / f"{stem}.post.json").read_text())["name"], f"{stem}.post")

    def test_export_gaps_are_filled_before_planning_when_asked(self):
        sent = []
        ar = {"name": "a", "kind": "collective", "reads": [{"name": "x", "dep": "star", "bytes": 64}],
              "collective": {"op": "_c10d_functional.all_reduce_.default", "group_size": 2, "bytes": 0}}
        graph = dict(TINY, nodes=[ar, {"name": "b", "kind": "pointwise"}])
        body = ("g = json.load(open(sys.argv[2])); open(sys.argv[sys.argv.index('-o') + 1], 'w')"
                ".write(json.dumps({'order': ['a', 'b'], 'sent': g}))")
        for fill in (False, True):
            folder = self.dir / str(fill)
            folder.mkdir()
            session = ApplySession(["baseline"], [], export=lambda _n: dict(graph), name_of=lambda n: n.name,
                                   binary=_fake_binary(folder, body), fill_export_gaps=fill, out_dir=folder)
            session.reorder(self.nodes)
            plan = json.loads((folder / "graph_0.plan.json").read_text())
            sent.append(plan["sent"]["nodes"][0]["collective"]["bytes"])
        self.assertEqual(sent, [0, 64])

    def test_plans_from_the_post_fusion_order(self):
        seen = []

        def export(nodes):
            seen.append(_names(nodes))
            return dict(TINY)

        session = ApplySession(["baseline"], [], export=export, name_of=lambda n: n.name,
                               binary=_fake_binary(self.dir, _WRITES_ORDER.format(order=["a", "b"])))
        session.record_post_fusion([self.nodes[1], self.nodes[0]])
        session.reorder(self.nodes)  # Inductor's memory pass had moved a first
        self.assertEqual(seen, [["b", "a"]])
        self.assertEqual(session.graphs[0].baseline_order, ["b", "a"])
        self.assertEqual(session.graphs[0].inductor_order, ["a", "b"])


class EveryFailureFallsBack(unittest.TestCase):
    """Issue 30, class 5: each way apply failed (an exception into
    torch.compile, or a reason that blamed the wrong step) now falls back to
    Inductor's order with a reason naming the real cause."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.nodes = [Node("a"), Node("b")]

    def tearDown(self):
        self.tmp.cleanup()

    def _reason(self, session) -> str | None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = session.reorder(self.nodes)  # must not raise
        warned = [str(w.message) for w in caught if issubclass(w.category, ScheduleWarning)]
        if session.graphs[-1].applied:
            self.assertEqual(warned, [])
            return None
        self.assertEqual(_names(out), ["a", "b"])
        self.assertEqual(len(warned), 1)
        self.assertEqual(session.graphs[-1].fallback_reason, warned[0].split(": ", 2)[2].rsplit("; keeping", 1)[0])
        return session.graphs[-1].fallback_reason

    def _binary(self, name: str, body: str) -> str:
        folder = self.dir / name
        folder.mkdir()
        return _fake_binary(folder, body)

    def test_a_malformed_memory_section_is_named(self):
        body = "open(sys.argv[sys.argv.index('-o') + 1], 'w').write(json.dumps({'order': ['b', 'a'], 'memory': []}))"
        reason = self._reason(_session(TINY, self._binary("memory", body)))
        self.assertEqual(reason, "the plan's `memory` is not an object (a list)")

    def test_an_infinite_timeout_is_no_limit_and_a_nan_one_is_named(self):
        writes = _WRITES_ORDER.format(order=["b", "a"])
        self.assertIsNone(self._reason(_session(TINY, self._binary("inf", writes), timeout_s=float("inf"))))
        reason = self._reason(_session(TINY, self._binary("nan", writes), timeout_s=float("nan")))
        self.assertEqual(reason, "timeout_s=nan: expected a number of seconds > 0 (inf or None for no limit)")
        self.assertNotIn("export", reason)

    def test_a_zero_by_zero_matmul_is_left_unfilled(self):
        mm = {"name": "a", "kind": "extern", "kernel": "extern_kernels.mm",
              "outputs": [{"name": "o", "bytes": 0, "shape": [0, 0], "dtype": "f32"}],
              "reads": [{"name": "x", "dep": "star", "bytes": 0}, {"name": "y", "dep": "star", "bytes": 0}]}
        graph = dict(TINY, nodes=[mm, {"name": "b", "kind": "pointwise"}])
        body = ("g = json.load(open(sys.argv[2])); open(sys.argv[sys.argv.index('-o') + 1], 'w')"
                ".write(json.dumps({'order': ['a', 'b'], 'flops': g['nodes'][0].get('flops')}))")
        session = ApplySession(["baseline"], [], export=lambda _n: dict(graph), name_of=lambda n: n.name,
                               binary=self._binary("mm", body), fill_export_gaps=True, out_dir=self.dir / "out")
        self.assertIsNone(self._reason(session))
        self.assertIsNone(json.loads((self.dir / "out" / "graph_0.plan.json").read_text())["flops"])

    def test_an_empty_plan_is_not_blamed_on_the_export(self):
        for name, text in (("null", "null"), ("list", "[]"), ("empty", "{}")):
            with self.subTest(plan=name):
                body = f"open(sys.argv[sys.argv.index('-o') + 1], 'w').write({text!r})"
                reason = self._reason(_session(TINY, self._binary(name, body)))
                self.assertNotIn("export", reason)
                self.assertIn("the plan", reason)

    def test_stderr_that_is_not_utf8_is_still_a_reason(self):
        body = "sys.stderr.buffer.write(b'schedlab: g.json: bad name \\xff\\xfe\\n'); sys.exit(1)"
        reason = self._reason(_session(TINY, self._binary("bytes", body)))
        self.assertTrue(reason.startswith("schedlab refused the graph: schedlab: g.json: bad name"), reason)

    def test_an_export_that_is_no_graph_and_an_unwritable_out_dir_are_named(self):
        session = ApplySession(["lpmf"], [], export=lambda _n: None, name_of=lambda n: n.name)
        self.assertTrue(self._reason(session).startswith("export failed: TypeError: the export is not a schedgraph dict"))
        blocker = self.dir / "file"
        blocker.write_text("")
        session = _session(TINY, self._binary("out", _WRITES_ORDER.format(order=["b", "a"])), out_dir=blocker / "sub")
        self.assertTrue(self._reason(session).startswith("writing graph_0.post.json failed: "))


@unittest.skipUnless(os.environ.get("SCHEDLAB_BIN"), "SCHEDLAB_BIN (the built schedlab) not set")
class RealSchedlab(unittest.TestCase):
    """The real binary plans exported graphs; apply maps its order back."""

    def _graph_nodes(self, case: str):
        graph = json.loads((DATA / "inductor" / f"{case}.post.json").read_text())
        return graph, [Node(n["name"]) for n in graph["nodes"]]

    def test_overlap_schedule_order_is_applied_node_for_node(self):
        for case in ("fsdp_1", "ddp_1", "mlp_2"):
            with self.subTest(case=case):
                graph, nodes = self._graph_nodes(case)
                session = ApplySession(["baseline", "lpmf", "bfs", "dfs"], ["overlap_schedule"],
                                       export=lambda _n, g=graph: dict(g), name_of=lambda n: n.name,
                                       binary=os.environ["SCHEDLAB_BIN"])
                out = session.reorder(nodes)
                plan = run_plan(without_runtimes(graph), binary=os.environ["SCHEDLAB_BIN"],
                                memory_methods=["baseline", "lpmf", "bfs", "dfs"], comm_passes=["overlap_schedule"])
                self.assertEqual(_names(out), plan["order"])
                self.assertEqual(sorted(_names(out)), sorted(_names(nodes)))
                session.record_emitted(out)
                self.assertTrue(session.report()["graphs"][0]["emitted_matches"])

    def test_a_graph_schedlab_refuses_falls_back(self):
        graph, nodes = self._graph_nodes("mlp_2")
        broken = dict(graph, nodes=[dict(graph["nodes"][0], kind="nonsense")] + graph["nodes"][1:])
        session = ApplySession(["lpmf"], [], export=lambda _n: broken, name_of=lambda n: n.name,
                               binary=os.environ["SCHEDLAB_BIN"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = session.reorder(nodes)
        self.assertEqual(_names(out), _names(nodes))
        self.assertIn("refused the graph", str(caught[0].message))


class PlannerChoice(unittest.TestCase):
    def test_bindings_when_present_and_no_binary_named(self):
        self.assertTrue(uses_bindings(True, "some/schedlab"))
        self.assertFalse(uses_bindings(False, None))
        self.assertFalse(uses_bindings(None, "some/schedlab"))  # a named binary is what the caller asked for
        self.assertEqual(uses_bindings(None, None), find_bindings() is not None)

    def test_bindings_missing_falls_back_with_a_warning(self):
        if find_bindings() is not None:
            self.skipTest("bindings present")
        session = _session(TINY, None, in_process=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = session.reorder([Node("a"), Node("b")])
        self.assertEqual(_names(out), ["a", "b"])
        self.assertIn("in-process bindings (schedlab._core) are not available", str(caught[0].message))


@unittest.skipUnless(find_bindings() is not None, "schedlab's bindings not built (PYTHONPATH=<build>/python)")
class InProcess(unittest.TestCase):
    """apply through the bindings: the plans the CLI gives, the same fallbacks."""

    def _graph_nodes(self, case: str):
        graph = json.loads((DATA / "inductor" / f"{case}.post.json").read_text())
        return graph, [Node(n["name"]) for n in graph["nodes"]]

    @unittest.skipUnless(os.environ.get("SCHEDLAB_BIN"), "SCHEDLAB_BIN (the built schedlab) not set")
    def test_in_process_plans_are_the_cli_plans(self):
        options = dict(memory_methods=["baseline", "lpmf", "bfs", "dfs"], comm_passes=["overlap_schedule"],
                       hardware="h200", comm_knobs={"reorder_iterative_peak_memory_budget": 0.1})
        for case in ("fsdp_1", "ddp_1", "mlp_2", "gpt2_2"):
            with self.subTest(case=case):
                graph = without_runtimes(self._graph_nodes(case)[0])
                self.assertEqual(plan_in_process(graph, **options),
                                 run_plan(graph, binary=os.environ["SCHEDLAB_BIN"], **options))

    def test_session_plans_in_process_by_default(self):
        for case in ("fsdp_1", "mlp_2"):
            with self.subTest(case=case):
                graph, nodes = self._graph_nodes(case)
                session = ApplySession(["baseline", "lpmf"], ["overlap_schedule"], export=lambda _n, g=graph: dict(g),
                                       name_of=lambda n: n.name)
                out = session.reorder(nodes)
                record = session.graphs[0]
                self.assertEqual(record.planner, "bindings")
                self.assertTrue(record.applied)
                self.assertEqual(_names(out), record.schedlab_order)
                self.assertEqual(sorted(_names(out)), sorted(_names(nodes)))
                self.assertEqual(session.report()["graphs"][0]["planner"], "bindings")

    @unittest.skipUnless(os.environ.get("SCHEDLAB_BIN"), "SCHEDLAB_BIN (the built schedlab) not set")
    def test_the_cli_stays_the_fallback_planner(self):
        graph, nodes = self._graph_nodes("mlp_2")
        orders = {}
        for in_process in (True, False):
            session = ApplySession(["lpmf"], [], export=lambda _n: dict(graph), name_of=lambda n: n.name,
                                   in_process=in_process)
            orders[in_process] = _names(session.reorder(nodes))
            self.assertEqual(session.graphs[0].planner, "bindings" if in_process else "cli")
        self.assertEqual(orders[True], orders[False])

    def test_refused_graph_and_options_fall_back(self):
        graph, nodes = self._graph_nodes("mlp_2")
        broken = dict(graph, nodes=[dict(graph["nodes"][0], kind="nonsense")] + graph["nodes"][1:])
        cases = {"refused the graph: nodes[0]": (broken, {}),
                 "refused the options: options.comm.no_such_knob": (graph, {"comm_knobs": {"no_such_knob": 1}}),
                 "refused the options: ": (graph, {"hardware": "no-such-profile"})}
        for reason, (g, kw) in cases.items():
            with self.subTest(reason=reason):
                session = ApplySession(["lpmf"], [], export=lambda _n, g=g: dict(g), name_of=lambda n: n.name, **kw)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    out = session.reorder(nodes)
                self.assertEqual(_names(out), _names(nodes))
                self.assertIn(reason, str(caught[0].message))
                self.assertFalse(session.graphs[0].applied)

    @unittest.skipUnless(os.environ.get("SCHEDLAB_BIN"), "SCHEDLAB_BIN (the built schedlab) not set")
    def test_timeout(self):
        # 20,000 nodes take ~0.2 s of CPU to plan (more on a loaded machine): far past 10 ms.
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "layered.json"
            subprocess.run([os.environ["SCHEDLAB_BIN"], "gen", "layered", "--nodes", "20000", "-o", str(path)],
                           check=True, capture_output=True)
            graph = json.loads(path.read_text())
        with self.assertRaisesRegex(PlanUnavailable, "timed out after 0.01 s"):
            plan_in_process(graph, memory_methods=["baseline", "lpmf", "bfs", "dfs"], timeout_s=0.01)
        left = [t for t in threading.enumerate() if t.name == "schedlab-plan"]
        self.assertEqual(len(left), 1)  # the plan goes on, on its thread; wait for it, to load no later test
        left[0].join()


if __name__ == "__main__":
    unittest.main()
