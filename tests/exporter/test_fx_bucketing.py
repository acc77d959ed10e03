"""Checks of apply's bucketing (schedlab_export/fx_bucketing.py, fx_graph.py)
without torch: stand-in FX records, as fx_estimator.record_of reads them,
of a small FSDP-like forward (per-layer all-gathers of 8 MiB shards, a
matmul and a ReLU per layer), through the schedgraph they become, the
candidates, the choice, and ApplySession.bucket with stand-in Inductor
hooks. With SCHEDLAB_BIN set (ctest sets it) the real `schedlab
bucket-caps` and `schedlab plan` take the decision.

    SCHEDLAB_BIN=build/schedlab python3 -m unittest tests/exporter/test_fx_bucketing.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from schedlab_export import fx_bucketing  # noqa: E402
from schedlab_export.apply import ApplySession, Gathered, PlanUnavailable, ScheduleWarning  # noqa: E402
from schedlab_export.fx_graph import connected_schedgraph  # noqa: E402

BINARY = os.environ.get("SCHEDLAB_BIN")
MiB = 1 << 20


def tensor(shape, dtype="bf16"):
    numel = 1
    for d in shape:
        numel *= d
    return {"dtype": dtype, "shape": list(shape), "stride": [], "bytes": numel * 2}


def fsdp_forward(layers=4, dim=2048, tokens=4096, world=4):
    """(placeholders, records, outputs): per layer an all-gather of a
    1/world shard, its wait, a view to the weight, a matmul and a ReLU."""
    shard = [dim * dim // world]
    placeholders = [{"name": "x", "outputs": [tensor([tokens, dim])]}]
    placeholders += [{"name": f"shard{i}", "outputs": [tensor(shard)]} for i in range(layers)]
    records, h = [], "x"
    for i in range(layers):
        ag, wait, w, mm, relu = f"ag{i}", f"wait{i}", f"w{i}", f"mm{i}", f"relu{i}"
        records += [
            {"name": ag, "target": "_c10d_functional.all_gather_into_tensor.default",
             "args": {"input": shard, "group_size": world, "group_name": "0"}, "inputs": [tensor(shard)],
             "outputs": [tensor([dim * dim])], "group_size": world, "inductor_size": dim * dim * 2,
             "input_names": [f"shard{i}"]},
            {"name": wait, "target": "_c10d_functional.wait_tensor.default", "args": {}, "inputs": [tensor([dim * dim])],
             "outputs": [tensor([dim * dim])], "input_names": [ag]},
            {"name": w, "target": "aten.view.default", "args": {}, "inputs": [tensor([dim * dim])],
             "outputs": [tensor([dim, dim])], "input_names": [wait]},
            {"name": mm, "target": "aten.mm.default", "args": {"self": [tokens, dim], "mat2": [dim, dim]},
             "inputs": [tensor([tokens, dim]), tensor([dim, dim])], "outputs": [tensor([tokens, dim])],
             "input_names": [h, w]},
            {"name": relu, "target": "aten.relu.default", "args": {}, "inputs": [tensor([tokens, dim])],
             "outputs": [tensor([tokens, dim])], "input_names": [mm]},
        ]
        h = relu
    return placeholders, records, [h]


def plan_stub(steps: dict):
    """A planner that returns a fixed step per candidate (keyed by the caps knobs)."""
    calls = []

    def plan(graph, passes, knobs):
        calls.append((passes, knobs))
        key = tuple(sorted((k, v) for k, v in knobs.items() if v > 0))
        return {"simulation": {"step_time_us": steps.get(key, 1000.0)}, "comm": {"passes": []}}

    return plan, calls


class ConnectedGraph(unittest.TestCase):
    def test_kinds_and_storage(self):
        graph = connected_schedgraph(*fsdp_forward(layers=2), world_size=4, name="t")
        kinds = {n["name"]: n["kind"] for n in graph["nodes"]}
        self.assertEqual(kinds, {"ag0": "collective", "wait0": "wait", "w0": "nop", "mm0": "extern", "relu0": "pointwise",
                                 "ag1": "collective", "wait1": "wait", "w1": "nop", "mm1": "extern", "relu1": "pointwise"})
        by = {n["name"]: n for n in graph["nodes"]}
        self.assertEqual(by["ag0"]["collective"], {"op": "_c10d_functional.all_gather_into_tensor.default",
                                                   "group_size": 4, "bytes": 2048 * 2048 * 2})
        self.assertEqual(by["mm0"]["flops"], 2 * 4096 * 2048 * 2048)
        # A wait's and a view's outputs stand for the collective's buffer: no storage of their own.
        self.assertEqual(by["wait0"]["outputs"][0]["mutation_of"], "ag0.out0")
        self.assertEqual(by["w0"]["outputs"][0]["mutation_of"], "ag0.out0")
        self.assertEqual(by["w0"]["outputs"][0]["bytes"], 0)
        self.assertEqual([r["name"] for r in by["mm0"]["reads"]], ["x", "w0.out0"])
        self.assertEqual(graph["outputs"], ["relu1.out0"])

    def test_unknown_input_is_named(self):
        placeholders, records, outputs = fsdp_forward(layers=1)
        records[3]["input_names"] = ["x", "nowhere"]
        with self.assertRaisesRegex(ValueError, "'mm0' reads 'nowhere'"):
            connected_schedgraph(placeholders, records, outputs)
        with self.assertRaisesRegex(ValueError, "'output' reads 'gone'"):
            connected_schedgraph(*fsdp_forward(layers=1)[:2], ["gone"])

    @unittest.skipUnless(BINARY, "SCHEDLAB_BIN not set")
    def test_schedlab_reads_it(self):
        graph = connected_schedgraph(*fsdp_forward(), world_size=4, name="fx")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "fx.json"
            path.write_text(json.dumps(graph))
            done = subprocess.run([BINARY, "validate", str(path)], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("20 nodes", done.stdout)


class Candidates(unittest.TestCase):
    CAPS = {"all_gather": 181.0, "reduce_scatter": 181.0, "all_reduce": 128.0}

    def test_only_kinds_present_twice_with_a_cap(self):
        self.assertEqual(fx_bucketing.candidates(self.CAPS, Counter(all_gather=4)), [{}, {"all_gather": 181.0}])
        self.assertEqual(fx_bucketing.candidates(self.CAPS, Counter(all_gather=4, reduce_scatter=4, all_reduce=1)),
                         [{}, {"all_gather": 181.0, "reduce_scatter": 181.0}, {"all_gather": 181.0},
                          {"reduce_scatter": 181.0}])
        self.assertEqual(fx_bucketing.candidates({**self.CAPS, "all_gather": 0.0}, Counter(all_gather=4)), [{}])
        self.assertEqual(fx_bucketing.candidates(self.CAPS, Counter(all_gather=1)), [{}])

    def test_plan_options(self):
        self.assertEqual(fx_bucketing.plan_options({}, ["overlap_schedule_step"]), (["overlap_schedule_step"], {}))
        passes, knobs = fx_bucketing.plan_options({"all_gather": 64.0}, ["overlap_schedule_step"])
        self.assertEqual(passes, ["bucket_collectives_inductor", "overlap_schedule_step"])
        self.assertEqual(knobs, {"bucket_all_gathers_fx_bucket_cap_mib": 64.0,
                                 "bucket_reduce_scatters_fx_bucket_cap_mib": 0.0,
                                 "bucket_all_reduces_fx_bucket_cap_mib": 0.0})

    def test_choice_is_the_lowest_step_and_ties_keep_less_bucketing(self):
        present = Counter(all_gather=4, reduce_scatter=4)
        plan, calls = plan_stub({(("bucket_all_gathers_fx_bucket_cap_mib", 181.0),): 900.0})
        decision = fx_bucketing.choose({}, self.CAPS, present, ["overlap_schedule_step"], plan)
        self.assertEqual(decision["chosen_mib"], {"all_gather": 181.0})
        self.assertEqual(len(calls), 4)
        self.assertEqual([c["step_time_us"] for c in decision["candidates"]], [1000.0, 1000.0, 900.0, 1000.0])
        plan, _ = plan_stub({})
        self.assertEqual(fx_bucketing.choose({}, self.CAPS, present, [], plan)["chosen_mib"], {})

    def test_a_plan_without_a_step_is_refused(self):
        with self.assertRaisesRegex(fx_bucketing.BucketingUnavailable, "step_time_us"):
            fx_bucketing.choose({}, self.CAPS, Counter(all_gather=2), [], lambda g, p, k: {"simulation": {}})

    def test_read_caps_names_the_field(self):
        good = {"format": "schedlab-bucket-caps/1",
                "caps": {k: {"inductor_mib": v} for k, v in self.CAPS.items()}}
        self.assertEqual(fx_bucketing.read_caps(good), self.CAPS)
        with self.assertRaisesRegex(fx_bucketing.BucketingUnavailable, "schedlab-bucket-caps/1"):
            fx_bucketing.read_caps({"format": "other"})
        for bad in (-1, "12", None, float("nan"), True):
            doc = json.loads(json.dumps(good))
            doc["caps"]["all_reduce"]["inductor_mib"] = bad
            with self.assertRaisesRegex(fx_bucketing.BucketingUnavailable, r"caps\.all_reduce\.inductor_mib"):
                fx_bucketing.read_caps(doc)

    def test_bucketable_kinds(self):
        self.assertEqual(fx_bucketing.bucketable_kind("_c10d_functional.all_gather_into_tensor.default"), "all_gather")
        self.assertEqual(fx_bucketing.bucketable_kind("_c10d_functional.reduce_scatter_tensor.default"), "reduce_scatter")
        self.assertEqual(fx_bucketing.bucketable_kind("_c10d_functional.all_reduce.default"), "all_reduce")
        self.assertIsNone(fx_bucketing.bucketable_kind("_c10d_functional.all_reduce_coalesced.default"))
        self.assertIsNone(fx_bucketing.bucketable_kind("_c10d_functional.all_to_all_single.default"))
        self.assertIsNone(fx_bucketing.bucketable_kind("aten.mm.default"))
        counts, group = fx_bucketing.bucketable_counts(fsdp_forward()[1])
        self.assertEqual((counts, group), (Counter(all_gather=4), 4))


def session(binary=None, **kw) -> ApplySession:
    bucketed = []
    s = ApplySession(memory_methods=["baseline"], comm_passes=["overlap_schedule_step"], export=lambda nodes: {},
                     name_of=str, binary=binary, hardware="h200", in_process=False, bucket_collectives=True,
                     fx_records=lambda graph: graph, fx_bucket=lambda graph, caps: bucketed.append(caps), **kw)
    s.bucketed = bucketed
    return s


class SessionBucketing(unittest.TestCase):
    def test_schedlab_missing_keeps_the_graph(self):
        s = session(binary="/nonexistent/schedlab")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s.bucket(fsdp_forward())
        self.assertEqual(s.bucketed, [])
        self.assertIn("not found", s.bucketings[0]["fallback_reason"])
        self.assertTrue(any(issubclass(w.category, ScheduleWarning) and "no bucketing" in str(w.message) for w in caught))
        with self.assertRaisesRegex(PlanUnavailable, "graph_fx0: .*no bucketing"):
            session(binary="/nonexistent/schedlab", strict=True).bucket(fsdp_forward())

    def test_a_graph_without_two_collectives_of_a_kind_is_left(self):
        placeholders, records, outputs = fsdp_forward(layers=1)
        s = session(binary="/nonexistent/schedlab")
        s.bucket((placeholders, records, outputs))
        self.assertEqual(s.bucketed, [])
        self.assertIsNone(s.bucketings[0]["fallback_reason"])
        self.assertEqual(s.bucketings[0]["why"], "no two bucketable collectives of one kind")

    @unittest.skipUnless(BINARY, "SCHEDLAB_BIN not set")
    def test_real_decision_and_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            s = session(binary=BINARY, out_dir=Path(tmp), rank=2)
            s.bucket(fsdp_forward())
            record = s.bucketings[0]
            self.assertIsNone(record["fallback_reason"])
            self.assertEqual(record["group_size"], 4)
            self.assertGreater(record["bucket_caps_mib"]["all_gather"], 0)
            self.assertEqual([c["caps_mib"] for c in record["candidates"]], [{}, {"all_gather": record["bucket_caps_mib"]["all_gather"]}])
            best = min(record["candidates"], key=lambda c: c["step_time_us"])
            self.assertEqual(record["chosen_mib"], best["caps_mib"])
            self.assertEqual(record["applied_mib"], best["caps_mib"])
            self.assertEqual(s.bucketed, [best["caps_mib"]] if best["caps_mib"] else [])
            self.assertEqual(sorted(p.name for p in Path(tmp).iterdir()), ["graph_fx0.rank2.buckets.json", "graph_fx0.rank2.fx.json"])
            self.assertIn("bucketing", s.summary())

    @unittest.skipUnless(BINARY, "SCHEDLAB_BIN not set")
    def test_ranks_that_differ_bucket_nothing(self):
        s = session(binary=BINARY, gather_keys=lambda key: Gathered([key, json.dumps({"all_gather": 1.0})]))
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            s.bucket(fsdp_forward())
        self.assertEqual(s.bucketed, [])
        self.assertIn("the ranks' bucketings differ (rank(s) 1 against rank 0)", s.bucketings[0]["fallback_reason"])
        # Both ranks choosing the same: the decision stands.
        s = session(binary=BINARY, gather_keys=lambda key: Gathered([key, key], peer_wait_s=0.5))
        s.bucket(fsdp_forward())
        self.assertIsNone(s.bucketings[0]["fallback_reason"])
        self.assertEqual(s.bucketings[0]["peer_wait_s"], 0.5)


if __name__ == "__main__":
    unittest.main()
