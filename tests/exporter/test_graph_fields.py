"""Graph fields carried into checked-in graphs (python/zoo/check_in_graph_fields.py),
without torch: how a re-export's convolution geometry, input layouts and
buffer strides go into a checked-in graph, and that every convolution node
of every checked-in graph under tests/data carries its geometry (with
SCHEDLAB_BIN set, one the real loader accepts: ATen's rules)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "python" / "zoo"))

import check_in_graph_fields as fields  # noqa: E402

DATA = ROOT / "tests" / "data"

# Checked-in graphs whose convolutions have no geometry, and why: no
# re-export of them exists with the exporter that writes it.
WITHOUT_GEOMETRY = {
    # an earlier exporter's fixtures, of a model not kept in the zoo
    "inductor/convnet_2.pre.json", "inductor/convnet_2.post.json",
    # a CPU case, not in the H100 re-export the others came from
    "exported/cpu_convnet_0_inf.pre.json", "exported/cpu_convnet_0_inf.post.json",
}

# The "will it fit" validation's inference graphs (python/zoo/fit_validation.py),
# exported before the exporter chose a convolution node's own origin among
# all it lists (pricing.own_convolution: an inference graph's conv node lists
# every convolution inlined before it): 140 of their 720 convolutions have
# no geometry. Kept as exported, since the GPU measurements beside them are
# of these graphs; re-exported, vgg11, efficientnet_b0 and squeezenet1_1
# carry it on every convolution.
PARTIAL_GEOMETRY = ("fit/",)

REQUIRED = {"input", "weight", "output", "stride", "padding", "dilation", "groups", "transposed"}
OPTIONAL = {"output_padding", "memory_format", "output_mask"}

CONV = {"input": [2, 8, 10, 10], "weight": [16, 8, 3, 3], "output": [2, 16, 10, 10], "stride": [1, 1],
        "padding": [1, 1], "dilation": [1, 1], "output_padding": [0, 0], "groups": 1, "transposed": False,
        "memory_format": "channels_last"}


def checked_in_graphs():
    for path in sorted(DATA.rglob("*.json")):
        graph = json.loads(path.read_text())
        if isinstance(graph, dict) and graph.get("format") == "schedgraph/1":
            yield path, graph


def graph(nodes, inputs=None):
    return {"format": "schedgraph/1", "name": "g", "inputs": inputs or [{"name": "x", "bytes": 800, "freeable": True}],
            "outputs": [], "nodes": nodes}


def conv_node(name, read_bytes=800, **extra):
    return {"name": name, "kind": "extern", "kernel": "extern_kernels.convolution", "flops": 10, **extra,
            "runtime_us": 1.0, "outputs": [{"name": f"b{name}", "layout": "fixed", "dtype": "float32",
                                            "shape": [2, 16, 10, 10], "bytes": 6400}],
            "reads": [{"name": "x", "dep": "star", "bytes": read_bytes}], "writes": []}


def with_stride(node):
    node = copy.deepcopy(node)
    out = node["outputs"][0]
    node["outputs"][0] = {**{k: v for k, v in out.items() if k != "bytes"}, "stride": [1600, 1, 160, 16], "bytes": out["bytes"]}
    return node


class CarryGeometry(unittest.TestCase):
    def reexport(self):
        inputs = [{"name": "x", "bytes": 800, "freeable": True, "dtype": "float32", "shape": [2, 8, 10, 10],
                   "stride": [800, 1, 80, 8]}]
        return graph([with_stride(conv_node("op0", convolution=CONV)), with_stride(conv_node("op1", convolution=CONV))], inputs)

    def test_equal_graphs_get_every_field_where_a_fresh_export_has_it(self):
        new = self.reexport()
        old = graph([conv_node("op0"), conv_node("op1")])
        old["nodes"][1]["runtime_us"] = 2.0  # Inductor's estimate differs between GPUs: not a difference
        lines = fields.carry_geometry(new, old)
        self.assertIn("other fields unchanged", lines)
        self.assertIn("carried 2 convolutions, 0 attention calls, 3 input fields, 2 buffer strides, 0 reduction types",
                      lines)
        for node in old["nodes"]:
            node["runtime_us"] = 1.0
        self.assertEqual(json.dumps(old), json.dumps(new))  # key order too

    def test_other_graphs_match_convolutions_by_call_and_leave_buffers_alone(self):
        new = self.reexport()
        # one node more in front (pad_mm), the convolutions renamed
        old = graph([{"name": "pad", "kind": "pointwise", "outputs": [], "reads": [], "writes": []},
                     conv_node("op1"), conv_node("op2")])
        lines = fields.carry_geometry(new, old)
        self.assertTrue(lines[0].startswith("other fields differ"))
        self.assertIn("carried 2 convolutions, 0 attention calls, 3 input fields, 0 buffer strides, 0 reduction types",
                      lines)
        self.assertEqual([n.get("convolution") for n in old["nodes"]], [None, CONV, CONV])
        self.assertNotIn("stride", old["nodes"][1]["outputs"][0])
        self.assertEqual(old["inputs"][0]["shape"], [2, 8, 10, 10])

    def test_attention_calls_and_reduction_types(self):
        attention = {"query": [2, 4, 64, 32], "key": [2, 4, 64, 32], "value": [2, 4, 64, 32], "causal": True,
                     "bias": False, "dropout_p": 0.1}
        sdpa = {"name": "op0", "kind": "extern", "kernel": "torch.ops.aten._scaled_dot_product_cudnn_attention.default",
                "outputs": [], "reads": [{"name": "x", "dep": "star", "bytes": 800}], "writes": []}
        red = {"name": "op1", "kind": "reduction", "outputs": [], "reads": [], "writes": []}
        new = graph([{**sdpa, "attention": attention}, {**red, "reduction_types": ["online_softmax_reduce"]}])
        old = graph([copy.deepcopy(sdpa), copy.deepcopy(red)])
        lines = fields.carry_geometry(new, old)
        self.assertIn("carried 0 convolutions, 1 attention calls, 0 input fields, 0 buffer strides, 1 reduction types",
                      lines)
        self.assertEqual(json.dumps(old), json.dumps(new))
        # graphs that differ otherwise: the attention call by its call, reduction types by name never
        old = graph([{"name": "pad", "kind": "pointwise", "outputs": [], "reads": [], "writes": []},
                     copy.deepcopy(sdpa), copy.deepcopy(red)])
        lines = fields.carry_geometry(new, old)
        self.assertIn("carried 0 convolutions, 1 attention calls, 0 input fields, 0 buffer strides, 0 reduction types",
                      lines)
        self.assertEqual(old["nodes"][1]["attention"], attention)
        self.assertNotIn("reduction_types", old["nodes"][2])

    def test_other_calls_are_refused(self):
        old = graph([{"name": "pad", "kind": "pointwise", "outputs": [], "reads": [], "writes": []},
                     conv_node("op1", read_bytes=400), conv_node("op2")])
        with self.assertRaises(SystemExit):
            fields.carry_geometry(self.reexport(), old)

    def test_a_checked_in_value_is_kept_and_named_and_an_input_of_other_bytes_is_skipped(self):
        new = self.reexport()
        other = dict(CONV, groups=2, weight=[16, 4, 3, 3])
        old = graph([conv_node("op0", convolution=other), conv_node("op1")], [{"name": "x", "bytes": 400, "freeable": True}])
        lines = fields.carry_geometry(new, old)
        self.assertEqual(old["nodes"][0]["convolution"], other)
        self.assertIn("kept the checked-in value where the re-export's differs: op0.convolution", lines)
        self.assertNotIn("dtype", old["inputs"][0])

    def test_a_convolution_left_without_geometry_is_named(self):
        new = graph([conv_node("op0"), conv_node("op1", convolution=CONV)])
        old = graph([conv_node("op0"), conv_node("op1")])
        self.assertIn("convolution nodes without a geometry (not matched): op0", fields.carry_geometry(new, old))

    def test_convolution_nodes(self):
        self.assertTrue(fields.is_convolution({"name": "a", "kind": "extern", "kernel": "extern_kernels.convolution"}))
        self.assertTrue(fields.is_convolution({"name": "a", "kind": "extern",
                                               "kernel": "torch.ops.aten.convolution_backward.default"}))
        self.assertTrue(fields.is_convolution({"name": "triton_conv2d_0", "kind": "template"}))
        self.assertFalse(fields.is_convolution({"name": "a", "kind": "extern", "kernel": "extern_kernels.mm"}))
        self.assertFalse(fields.is_convolution({"name": "conv_relu", "kind": "pointwise"}))


class CheckedInGeometry(unittest.TestCase):
    def test_every_convolution_node_of_every_checked_in_graph_carries_its_geometry(self):
        checked = 0
        for path, g in checked_in_graphs():
            rel = str(path.relative_to(DATA))
            convolutions = [n for n in g["nodes"] if fields.is_convolution(n)]
            with self.subTest(graph=rel):
                if rel.startswith(PARTIAL_GEOMETRY):
                    self.assertTrue(any("convolution" in n for n in convolutions) or not convolutions)
                    continue
                if rel in WITHOUT_GEOMETRY:
                    self.assertTrue(convolutions)
                    self.assertFalse(any("convolution" in n for n in convolutions), "has it now: drop it from WITHOUT_GEOMETRY")
                    continue
                for n in convolutions:
                    self.assertIn("convolution", n, f"{rel}: {n['name']}")
                    c = n["convolution"]
                    self.assertLessEqual(REQUIRED, set(c), n["name"])
                    self.assertLessEqual(set(c), REQUIRED | OPTIONAL, n["name"])
                    self.assertEqual("output_mask" in c, "backward" in n["kernel"], n["name"])
                    checked += 1
        self.assertGreater(checked, 1500)  # 1536 convolution nodes in 80 graphs when written

    @unittest.skipUnless(os.environ.get("SCHEDLAB_BIN"), "SCHEDLAB_BIN (the built schedlab) not set")
    def test_the_loader_accepts_every_checked_in_geometry(self):
        paths = [str(p) for p, g in checked_in_graphs() if any("convolution" in n for n in g["nodes"])]
        self.assertGreater(len(paths), 75)
        for path in paths:
            with self.subTest(graph=path):
                run = subprocess.run([os.environ["SCHEDLAB_BIN"], "validate", path], capture_output=True, text=True)
                self.assertEqual(run.returncode, 0, run.stdout + run.stderr)


if __name__ == "__main__":
    unittest.main()
