"""scripts/copy-scatter-indices.py: the exporter's observed `scatter_index`
marks copied into checked-in graphs of the same nodes, and only those."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("copy_scatter_indices", ROOT / "scripts" / "copy-scatter-indices.py")
copy_scatter_indices = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(copy_scatter_indices)

MARK = {"updates": 10, "rows": 4, "max_row_updates": 5, "mean_run": 1.5, "source": "observed"}


def graph(names: list[str], marked: str | None = None) -> dict:
    nodes = [{"name": n, "kind": "pointwise", "outputs": [{"name": f"b{i}", "bytes": 4}]} for i, n in enumerate(names)]
    for node in nodes:
        if node["name"] == marked:
            node["scatter_index"] = dict(MARK)
    return {"format": "schedgraph/1", "inputs": [], "outputs": [], "nodes": nodes}


class CopyScatterIndices(unittest.TestCase):
    def run_script(self, source: dict[str, dict], targets: dict[str, dict]) -> tuple[Path, str]:
        tmp = Path(self.enterContext(tempfile.TemporaryDirectory()))
        (tmp / "src").mkdir()
        (tmp / "dst").mkdir()
        for name, g in source.items():
            (tmp / "src" / name).write_text(json.dumps(g))
        for name, g in targets.items():
            (tmp / "dst" / name).write_text(json.dumps(g, separators=(",", ":")) + "\n")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(copy_scatter_indices.main([str(tmp / "src"), str(tmp / "dst")]), 0)
        return tmp / "dst", out.getvalue()

    def test_marks_go_to_the_same_nodes_and_nothing_else_changes(self):
        dst, said = self.run_script({"a.post.json": graph(["op0", "op1"], marked="op1")},
                                    {"a.post.json": graph(["op0", "op1"])})
        after = json.loads((dst / "a.post.json").read_text())
        self.assertEqual(after, graph(["op0", "op1"], marked="op1"))
        self.assertIn("1 nodes marked", said)

    def test_a_graph_of_other_nodes_is_left_and_named(self):
        target = graph(["op0", "op2"])
        dst, said = self.run_script({"a.post.json": graph(["op0", "op1"], marked="op1")}, {"a.post.json": target})
        self.assertEqual(json.loads((dst / "a.post.json").read_text()), target)
        self.assertIn("left as it is: its nodes differ", said)

    def test_an_export_without_marks_writes_nothing(self):
        dst, said = self.run_script({"a.post.json": graph(["op0"])}, {"a.post.json": graph(["op0"])})
        self.assertEqual(said, "")

    def test_a_target_that_is_no_graph_is_named_and_left(self):
        tmp = Path(self.enterContext(tempfile.TemporaryDirectory()))
        (tmp / "src").mkdir()
        (tmp / "dst").mkdir()
        (tmp / "src" / "a.post.json").write_text(json.dumps(graph(["op0"], marked="op0")))
        (tmp / "dst" / "a.post.json").write_text("{not json")
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            self.assertEqual(copy_scatter_indices.main([str(tmp / "src"), str(tmp / "dst")]), 1)
        self.assertIn("a.post.json: not a graph", err.getvalue())
        self.assertEqual((tmp / "dst" / "a.post.json").read_text(), "{not json")

    def test_a_missing_folder_is_a_usage_error(self):
        with self.assertRaises(SystemExit) as e, contextlib.redirect_stderr(io.StringIO()):
            copy_scatter_indices.main(["/nonexistent/folder", "/tmp"])
        self.assertEqual(e.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
