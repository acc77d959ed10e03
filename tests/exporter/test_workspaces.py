"""Observed kernel workspaces (schedlab_export/workspaces.py), without torch:
how a probed call's allocator events become a node's `workspace_bytes`, how
they go into a graph, and that the checked-in data carries them consistently
(tests/data/measured/<gpu>/*.measured.json `workspace_bytes`, the H100's also
in tests/data/exported)."""

from __future__ import annotations

import json
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "python" / "zoo"))

from schedlab_export import workspaces  # noqa: E402
import check_in_graph_fields  # noqa: E402

DATA = ROOT / "tests" / "data"


class CallsMatchLaunches(unittest.TestCase):
    """The i-th noted call is the i-th launch: a composite launch is noted as
    the operator it runs as (an embedding bag's dense backward)."""

    def test_a_composite_launch_runs_as_its_dense_operator(self):
        self.assertTrue(workspaces.calls_match_launches(
            ["convolution", "_embedding_bag_dense_backward", "convolution_backward"],
            ["convolution", "_embedding_bag_backward", "convolution_backward"]))
        self.assertTrue(workspaces.calls_match_launches(["embedding_dense_backward"], ["embedding_dense_backward"]))

    def test_order_count_and_unknown_launches_refuse(self):
        self.assertFalse(workspaces.calls_match_launches(["convolution_backward", "convolution"],
                                                         ["convolution", "convolution_backward"]))
        self.assertFalse(workspaces.calls_match_launches(["convolution"], ["convolution", "convolution"]))
        self.assertFalse(workspaces.calls_match_launches(["mm"], ["mm"]))
        self.assertFalse(workspaces.calls_match_launches(["_embedding_bag_dense_backward"], ["convolution"]))

    def test_every_launch_runs_as_itself_or_named_operators(self):
        for key, ops in workspaces.WORKSPACE_LAUNCHES.items():
            self.assertIn(key, workspaces.WORKSPACE_OPS)
            self.assertTrue(ops)


class TransientBytes(unittest.TestCase):
    def test_peak_above_the_outputs(self):
        # cuDNN's backward: grad_input, its workspace (freed), grad_weight, its workspace (freed)
        events = [["a", 4096], ["a", 10000], ["f", 10000], ["a", 512], ["a", 20000], ["f", 20000]]
        self.assertEqual(workspaces.transient_bytes(events, 4096 + 512), 20000)

    def test_a_transient_before_the_last_output_counts_at_its_own_peak(self):
        # the peak (4096 + 10000) comes before grad_weight; above both outputs it is 9488
        events = [["a", 4096], ["a", 10000], ["f", 10000], ["a", 512]]
        self.assertEqual(workspaces.transient_bytes(events, 4096 + 512), 9488)

    def test_no_workspace(self):
        self.assertEqual(workspaces.transient_bytes([["a", 4096]], 4096), 0)
        self.assertEqual(workspaces.transient_bytes([], 0), 0)

    def test_apply_workspaces(self):
        post = {"nodes": [{"name": "op0"}, {"name": "op1"}]}
        self.assertTrue(workspaces.apply_workspaces(post, {"op1": 0}))
        self.assertEqual(post["nodes"][1], {"name": "op1", "workspace_bytes": 0, "workspace_source": "observed"})
        self.assertNotIn("workspace_bytes", post["nodes"][0])
        self.assertFalse(workspaces.apply_workspaces(post, {}))


class CheckedInWorkspaces(unittest.TestCase):
    def graph_of(self, measured: Path) -> dict:
        beside = measured.with_name(measured.name.replace(".measured.json", ".post.json"))
        path = beside if beside.exists() else DATA / "exported" / beside.name
        return json.loads(path.read_text())

    def test_every_convolution_of_a_measured_graph_was_observed(self):
        for gpu in ("h100", "h200"):
            for path in sorted((DATA / "measured" / gpu).glob("*.measured.json")):
                measured = json.loads(path.read_text())
                graph = self.graph_of(path)
                conv = {n["name"] for n in graph["nodes"] if n.get("kind") == "extern"
                        and "convolution" in n.get("kernel", "")}
                with self.subTest(file=str(path.relative_to(DATA))):
                    self.assertEqual(set(measured.get("workspace_bytes", {})), conv)
                    for node, value in measured.get("workspace_bytes", {}).items():
                        self.assertIsInstance(value, int)
                        self.assertGreaterEqual(value, 0)

    def test_the_exported_graphs_hold_the_h100_observations(self):
        for path in sorted((DATA / "exported").glob("*.post.json")):
            graph = json.loads(path.read_text())
            in_graph = {n["name"]: n["workspace_bytes"] for n in graph["nodes"] if "workspace_bytes" in n}
            if not in_graph:
                continue
            with self.subTest(graph=path.name):
                for n in graph["nodes"]:
                    if "workspace_bytes" in n:
                        self.assertEqual(n["workspace_source"], "observed")
                name = path.name.replace(".post.json", ".measured.json")
                # conv_small_sweep is measured but kept out of the fit (its README)
                measured = next(f for f in (DATA / "measured" / "h100" / name, DATA / "conv_small_sweep" / "h100" / name)
                                if f.exists())
                self.assertEqual(json.loads(measured.read_text())["workspace_bytes"], in_graph)

    def test_the_pre_fusion_graphs_hold_the_same_observations(self):
        for folder in (DATA / "exported", DATA / "measured" / "h200"):
            for path in sorted(folder.glob("*.post.json")):
                post = json.loads(path.read_text())
                pre = json.loads(path.with_name(path.name.replace(".post.", ".pre.")).read_text())
                with self.subTest(graph=str(path.relative_to(DATA))):
                    self.assertEqual({n["name"]: n["workspace_bytes"] for n in pre["nodes"] if "workspace_bytes" in n},
                                     {n["name"]: n["workspace_bytes"] for n in post["nodes"] if "workspace_bytes" in n})

    def test_convolutions_are_found_by_their_call_when_node_names_differ(self):
        # convnet_bn's backward compiled with one operation more on the H200
        # (pad_mm): the same three convolution calls under other names
        ours = json.loads((DATA / "exported" / "convnet_bn_1_bwd.post.json").read_text())
        theirs = json.loads((DATA / "measured" / "h200" / "convnet_bn_1_bwd.post.json").read_text())
        self.assertTrue(check_in_graph_fields.differences(ours, theirs))
        names = check_in_graph_fields.carried_names(ours, theirs)
        self.assertEqual(len(names), 3)
        by_name = {n["name"]: n for n in theirs["nodes"]}
        for mine, other in names.items():
            self.assertEqual(check_in_graph_fields.call_signature(by_name[other]),
                             check_in_graph_fields.call_signature(next(n for n in ours["nodes"] if n["name"] == mine)))


if __name__ == "__main__":
    unittest.main()
