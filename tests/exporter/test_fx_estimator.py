"""schedlab's pricing offered to Inductor's FX overlap scheduler
(python/schedlab_export/fx_pricing.py), without torch: FX node records ->
schedgraph/1 nodes, the per-graph cache, the fallbacks and the units; with
the bindings built (schedlab.price), that an FX node is priced exactly as
the exporter's node of the same operation is.

FX nodes are faked as plain objects (a name and a graph); their records are
what fx_estimator.record_of reads off a real fx.Node.
"""

from __future__ import annotations

import json
import sys
import unittest
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import schedlab  # noqa: E402
from schedlab_export import fx_pricing  # noqa: E402

DATA = ROOT / "tests" / "data"


def bf16(shape):
    stride, step = [], 1
    for d in reversed(shape):
        stride.insert(0, step)
        step *= d
    n = 1
    for d in shape:
        n *= d
    return {"dtype": "bf16", "shape": list(shape), "stride": stride, "bytes": 2 * n}


# fsdp_1.post.json's op22 (extern_kernels.mm: [1024, 2048] x [2048, 1024] in bf16) as an FX node
MM = {"name": "mm_3", "target": "aten.mm.default", "args": {"self": [1024, 2048], "mat2": [2048, 1024]},
      "inputs": [bf16([1024, 2048]), bf16([2048, 1024])], "outputs": [bf16([1024, 1024])]}
# and its op0 (an all_gather of 8 ranks, 2 MiB out)
ALL_GATHER = {"name": "all_gather_into_tensor", "target": "_c10d_functional.all_gather_into_tensor.default",
              "args": {"input": [131072], "group_size": 8, "group_name": "0"},
              "inputs": [bf16([131072])], "outputs": [bf16([1048576])], "group_size": 8,
              "inductor_size": 262144 + 2097152}
WAIT = {"name": "wait_tensor", "target": "_c10d_functional.wait_tensor.default", "args": {},
        "inputs": [bf16([1048576])], "outputs": [bf16([1048576])]}
ADD = {"name": "add", "target": "aten.add.Tensor", "args": {"self": [1024, 1024], "other": [1024, 1024]},
       "inputs": [bf16([1024, 1024])] * 2, "outputs": [bf16([1024, 1024])]}
SDPA = {"name": "sdpa", "target": "aten._scaled_dot_product_flash_attention.default",
        "args": {"query": [2, 8, 512, 64], "key": [2, 8, 512, 64], "value": [2, 8, 512, 64], "is_causal": True,
                 "dropout_p": 0.0},
        "inputs": [bf16([2, 8, 512, 64])] * 3,
        "outputs": [bf16([2, 8, 512, 64]), {"dtype": "f32", "shape": [2, 8, 512], "stride": [4096, 512, 1],
                                             "bytes": 32768}]}


class Translation(unittest.TestCase):
    def test_a_matmul_becomes_an_extern_node_with_the_exporters_flops(self):
        graph, unpriced = fx_pricing.schedgraph_of([MM], world_size=1)
        self.assertEqual(unpriced, {})
        (node,) = graph["nodes"]
        self.assertEqual(node["kind"], "extern")
        self.assertEqual(node["kernel"], "torch.ops.aten.mm.default")
        self.assertEqual(node["flops"], 2 * 1024 * 2048 * 1024)
        self.assertEqual([b["bytes"] for b in node["outputs"]], [2 * 1024 * 1024])
        self.assertEqual([(r["dep"], r["bytes"]) for r in node["reads"]], [("star", 4194304), ("star", 4194304)])
        self.assertEqual([i["name"] for i in graph["inputs"]], ["mm_3.in0", "mm_3.in1"])
        self.assertNotIn("_inputs", node)

    def test_a_collective_carries_its_payload_group_and_op(self):
        graph, _ = fx_pricing.schedgraph_of([ALL_GATHER], world_size=8)
        (node,) = graph["nodes"]
        self.assertEqual(node["kind"], "collective")
        self.assertEqual(node["collective"], {"op": "_c10d_functional.all_gather_into_tensor.default",
                                              "group_size": 8, "bytes": 2097152})
        self.assertEqual(graph["world_size"], 8)

    def test_attention_carries_its_record(self):
        graph, _ = fx_pricing.schedgraph_of([SDPA])
        (node,) = graph["nodes"]
        self.assertEqual(node["attention"]["causal"], True)
        self.assertEqual(node["attention"]["query"], [2, 8, 512, 64])
        self.assertGreater(node["flops"], 0)

    def test_what_is_not_priced_says_why(self):
        no_group = {**ALL_GATHER, "name": "ag2", "group_size": None}
        no_args = {**MM, "name": "mm_x", "args": {}}
        graph, unpriced = fx_pricing.schedgraph_of([WAIT, ADD, no_group, no_args, MM])
        self.assertEqual([n["name"] for n in graph["nodes"]], ["mm_3"])
        self.assertEqual(set(unpriced), {"wait_tensor", "add", "ag2", "mm_x"})
        self.assertIn("not a collective", unpriced["wait_tensor"])
        self.assertIn("not a collective", unpriced["add"])
        self.assertIn("group size", unpriced["ag2"])
        self.assertIn("flops", unpriced["mm_x"])
        self.assertIsNone(fx_pricing.why_unpriced(MM))

    def test_override_size_scales_the_payload_by_inductors_own_size(self):
        self.assertEqual(fx_pricing.override_payload(ALL_GATHER, 0), 0)
        self.assertEqual(fx_pricing.override_payload(ALL_GATHER, ALL_GATHER["inductor_size"]), 2097152)
        self.assertEqual(fx_pricing.override_payload(ALL_GATHER, 2 * ALL_GATHER["inductor_size"]), 2 * 2097152)
        self.assertIsNone(fx_pricing.override_payload({**ALL_GATHER, "inductor_size": None}, 4096))


class FakePricer:
    """schedlab.price's shape: 1 µs per 1e9 flops, 1 µs per KiB of collective payload."""

    def __init__(self):
        self.graphs = []

    def __call__(self, graph):
        self.graphs.append(graph)
        us = [n["flops"] / 1e9 if n["kind"] == "extern" else n["collective"]["bytes"] / 1024 for n in graph["nodes"]]
        return {"nodes": [n["name"] for n in graph["nodes"]], "calibrated_us": us}


class FakeGraph:
    """Hashed by identity, as an fx.Graph is."""

    def __init__(self, records):
        self.records = records


def fake_graph(records):
    g = FakeGraph(records)
    nodes = {r["name"]: SimpleNamespace(name=r["name"], graph=g, record=r) for r in records}
    return g, nodes


def estimator(pricer, fallback=lambda node: None, log=None):
    return fx_pricing.Estimator(record_of=lambda node: node.record, graph_of=lambda node: node.graph,
                                records_of=lambda g: (g.records, 8), price=pricer, fallback=fallback,
                                log=log or (lambda line: None))


class EstimatorCache(unittest.TestCase):
    def test_a_graph_is_priced_once_and_answers_in_milliseconds(self):
        pricer, lines = FakePricer(), []
        g, nodes = fake_graph([ALL_GATHER, WAIT, MM, ADD])
        est = estimator(pricer, log=lines.append)
        for _ in range(3):
            self.assertAlmostEqual(est(nodes["mm_3"], None), 2 * 1024 * 2048 * 1024 / 1e9 / 1000)
            self.assertAlmostEqual(est(nodes["all_gather_into_tensor"], None), 2048 / 1000)
        self.assertEqual(len(pricer.graphs), 1)
        self.assertEqual([n["name"] for n in pricer.graphs[0]["nodes"]], ["all_gather_into_tensor", "mm_3"])
        self.assertEqual(lines, ["schedlab estimator: graph 0: 4 nodes, schedlab prices 1 compute and 1 collectives, "
                                 "2 left to Inductor"])
        self.assertEqual(est.graph_stats[0]["asked"], 6)

    def test_older_releases_call_with_the_node_alone(self):
        g, nodes = fake_graph([MM])
        self.assertIsNotNone(estimator(FakePricer())(nodes["mm_3"]))

    def test_unpriced_nodes_get_the_fallback_and_are_counted(self):
        g, nodes = fake_graph([ALL_GATHER, WAIT, MM, ADD])
        est = estimator(FakePricer(), fallback=lambda node: 0.5 if node.name == "add" else None)
        self.assertIsNone(est(nodes["wait_tensor"], None))
        self.assertEqual(est(nodes["add"], None), 0.5)
        stats = est.graph_stats[0]
        self.assertEqual((stats["unpriced"], stats["asked_unpriced"], stats["asked"]), (2, 2, 2))

    def test_a_node_made_after_pricing_is_priced_alone_once(self):
        pricer = FakePricer()
        g, nodes = fake_graph([MM])
        est = estimator(pricer)
        est(nodes["mm_3"], None)
        late = SimpleNamespace(name="mm_9", graph=g, record={**MM, "name": "mm_9"})
        self.assertAlmostEqual(est(late, None), est(nodes["mm_3"], None))
        est(late, None)
        self.assertEqual(len(pricer.graphs), 2)
        self.assertEqual(est.graph_stats[0]["priced_later"], 1)
        odd = SimpleNamespace(name="add_9", graph=g, record={**ADD, "name": "add_9"})
        self.assertIsNone(est(odd, None))
        self.assertEqual(len(pricer.graphs), 2)

    def test_override_size_prices_the_collective_at_that_size_and_caches_it(self):
        pricer = FakePricer()
        g, nodes = fake_graph([ALL_GATHER, MM])
        est = estimator(pricer)
        ag = nodes["all_gather_into_tensor"]
        self.assertEqual(est(ag, 0), 0.0)
        self.assertAlmostEqual(est(ag, 2 * ALL_GATHER["inductor_size"]), 4096 / 1000)
        est(ag, 2 * ALL_GATHER["inductor_size"])
        self.assertEqual(len(pricer.graphs), 3)  # the graph, size 0, twice the size
        resized = pricer.graphs[2]["nodes"][0]
        self.assertEqual(resized["collective"]["bytes"], 2 * 2097152)
        self.assertEqual([b["bytes"] for b in resized["outputs"]], [2 * 2097152])  # the buffers scaled with it
        self.assertEqual([b["bytes"] for b in pricer.graphs[1]["nodes"][0]["outputs"]], [0])
        self.assertEqual([g["world_size"] for g in pricer.graphs], [8, 8, 8])  # alone, in its graph's world
        self.assertIsNone(est(nodes["mm_3"], 4096))  # a compute node has no size to override

    def test_graphs_are_kept_apart(self):
        pricer = FakePricer()
        _, first = fake_graph([MM])
        _, second = fake_graph([{**MM, "args": {"self": [1024, 4096], "mat2": [4096, 1024]}}])
        est = estimator(pricer)
        self.assertAlmostEqual(est(second["mm_3"], None), 2 * est(first["mm_3"], None))
        self.assertEqual([s["graph"] for s in est.graph_stats], [0, 1])


@unittest.skipUnless(schedlab.bindings_available(), "schedlab._core not built")
class PricedByTheCore(unittest.TestCase):
    """schedlab.price (pybind/module.cpp's price) and the FX translation
    priced by it: an FX node's time is the exporter's node's, to the bit."""

    @classmethod
    def setUpClass(cls):
        fixture = json.loads((DATA / "inductor" / "fsdp_1.post.json").read_text())
        priced = schedlab.price(fixture, hardware="h100-sxm")
        cls.exported = dict(zip(priced["nodes"], priced["calibrated_us"]))
        cls.fixture_priced = priced

    def test_price_lists_every_node_in_order(self):
        p = self.fixture_priced
        self.assertEqual((p["hardware"], p["model"]), ("h100-sxm", "calibrated"))
        n = len(p["nodes"])
        self.assertEqual([len(p[k]) for k in ("calibrated_us", "pass_us", "pass_sources", "classes")], [n] * 4)
        self.assertEqual(p["classes"][p["nodes"].index("op7")], "gemm")
        self.assertEqual(p["classes"][p["nodes"].index("op0")], "collective")

    def test_an_fx_matmul_and_collective_price_as_the_exported_nodes(self):
        graph, _ = fx_pricing.schedgraph_of([MM, ALL_GATHER], world_size=8)
        fx = dict(zip(*(lambda p: (p["nodes"], p["calibrated_us"]))(schedlab.price(graph, hardware="h100-sxm"))))
        self.assertEqual(fx["mm_3"], self.exported["op22"])
        self.assertEqual(fx["all_gather_into_tensor"], self.exported["op0"])
        self.assertGreater(fx["mm_3"], 0)

    def test_the_estimator_answers_the_cores_time_in_ms(self):
        _, nodes = fake_graph([ALL_GATHER, MM, WAIT])
        est = estimator(lambda graph: schedlab.price(graph, hardware="h100-sxm"))
        self.assertEqual(est(nodes["mm_3"], None), self.exported["op22"] / 1000.0)
        self.assertIsNone(est(nodes["wait_tensor"], None))
        full = est(nodes["all_gather_into_tensor"], None)
        self.assertEqual(full, self.exported["op0"] / 1000.0)
        self.assertLess(est(nodes["all_gather_into_tensor"], 0), full)  # the latency alone
        self.assertLess(full, est(nodes["all_gather_into_tensor"], 4 * ALL_GATHER["inductor_size"]))

    def test_a_bad_profile_or_graph_is_refused_naming_it(self):
        with self.assertRaisesRegex(schedlab.Error, "no-such-profile"):
            schedlab.price({"format": "schedgraph/1", "inputs": [], "outputs": [], "nodes": []},
                           hardware="no-such-profile")
        with self.assertRaisesRegex(schedlab.Error, "nodes"):
            schedlab.price({"format": "schedgraph/1", "inputs": [], "outputs": []})


if __name__ == "__main__":
    unittest.main()
