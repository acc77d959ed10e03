"""Ranks that share a folder (no torch, no GPU): per-rank file names, atomic
writes that never collide between processes, and the decision that every
rank runs one plan (schedlab_export.outputs, apply.disagreement).

    python3 -m unittest discover -s tests/exporter -p 'test_outputs.py'
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from schedlab_export.apply import INDUCTOR_KEY, disagreement, plan_key  # noqa: E402
from schedlab_export.outputs import _env_rank, process_rank, ranked, temporary_path, write_atomically  # noqa: E402
from schedlab_export.session import CaptureSession, ExportedGraph  # noqa: E402


def _write_many(args) -> int:
    """One rank's writes: every rank writes the same names, as the exporter's
    ranks did into one out_dir; returns how many writes it made."""
    folder, rank, count = args
    for i in range(count):
        write_atomically(Path(folder) / f"graph_{i % 3}.expected.json", json.dumps({"rank": rank, "i": i}) + "\n")
    return count


class RankNames(unittest.TestCase):
    def test_a_single_process_keeps_todays_names(self):
        self.assertEqual(ranked("fsdp_1_bwd", None), "fsdp_1_bwd")
        self.assertEqual(ranked("fsdp_1_bwd", 0), "fsdp_1_bwd.rank0")
        self.assertEqual(ranked("graph_2", 3), "graph_2.rank3")

    def test_rank_from_the_launchers_environment(self):
        self.assertIsNone(_env_rank({}))
        self.assertEqual(_env_rank({"RANK": "2", "WORLD_SIZE": "4", "LOCAL_RANK": "1"}), 2)
        self.assertEqual(_env_rank({"LOCAL_RANK": "1"}), 1)
        self.assertIsNone(_env_rank({"RANK": "0", "WORLD_SIZE": "1"}))  # torchrun of one process
        self.assertIsNone(_env_rank({"RANK": "x"}))

    def test_without_torch_the_environment_decides(self):
        if "torch" in sys.modules:
            self.skipTest("torch is imported: its process group decides")
        self.assertEqual(process_rank({"RANK": "3", "WORLD_SIZE": "4"}), 3)
        self.assertIsNone(process_rank({}))

    def test_capture_writes_under_the_cases_name(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            session = CaptureSession(out_dir=out, prefix="fsdp", strict=True, torch_version="2.11", rank=1)
            graph = ExportedGraph(case=ranked("fsdp_1_bwd", session.rank), kind="backward")
            session._write(graph, "expected", {"a": 1}, compact=False)
            self.assertEqual([p.name for p in out.iterdir()], ["fsdp_1_bwd.rank1.expected.json"])
            self.assertEqual(graph.files, [out / "fsdp_1_bwd.rank1.expected.json"])


class AtomicWrites(unittest.TestCase):
    def test_the_temporary_carries_the_process_id(self):
        import os

        self.assertEqual(temporary_path(Path("/d/g.expected.json")).name, f"g.expected.json.{os.getpid()}.tmp")

    def test_processes_writing_one_folder_never_collide(self):
        # The failure of issue 31: four ranks, one `*.tmp` name, one rank's rename
        # found its temporary renamed away by another (FileNotFoundError).
        with tempfile.TemporaryDirectory() as tmp:
            with multiprocessing.get_context("fork").Pool(4) as pool:
                done = pool.map(_write_many, [(tmp, r, 200) for r in range(4)])
            self.assertEqual(done, [200] * 4)
            names = sorted(p.name for p in Path(tmp).iterdir())
            self.assertEqual(names, [f"graph_{i}.expected.json" for i in range(3)])
            for name in names:
                self.assertIn(json.loads((Path(tmp) / name).read_text())["rank"], range(4))

    def test_a_failed_write_leaves_no_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / "sub" / "x.json"  # no such folder: the write fails
            with self.assertRaises(OSError):
                write_atomically(target, "{}")
            (Path(tmp) / "y.json").mkdir()  # the target is a folder: the rename fails
            with self.assertRaises(OSError):
                write_atomically(Path(tmp) / "y.json", "{}")
            self.assertEqual(sorted(p.name for p in Path(tmp).iterdir()), ["y.json"])


class OnePlan(unittest.TestCase):
    A, B = plan_key({"order": ["a", "b"]}), plan_key({"order": ["b", "a"]})

    def test_one_order_everywhere_is_agreement(self):
        self.assertIsNone(disagreement([self.A] * 4))
        self.assertIsNone(disagreement([self.A]))

    def test_the_key_is_the_order(self):
        self.assertNotEqual(self.A, self.B)
        self.assertEqual(plan_key({"order": ["a", "b"], "memory": {}}), self.A)
        self.assertEqual(plan_key(None), INDUCTOR_KEY)
        # Names that would run together if joined plainly stay apart.
        self.assertNotEqual(plan_key({"order": ["a|b"]}), plan_key({"order": ["a", "b"]}))

    def test_every_kind_of_difference_names_its_ranks(self):
        self.assertEqual(disagreement([self.A, self.B, self.A, self.B]),
                         "the ranks' plans differ (ranks 1, 3 planned another order than rank 0; "
                         "all 4 ranks keep Inductor's order)")
        self.assertEqual(disagreement([self.A, INDUCTOR_KEY, self.B, self.A]),
                         "the ranks' plans differ (rank 1 kept Inductor's order; rank 2 planned another order "
                         "than rank 0; all 4 ranks keep Inductor's order)")
        self.assertEqual(disagreement([INDUCTOR_KEY, self.A]),
                         "the ranks' plans differ (rank 0 kept Inductor's order; rank 1 planned without rank 0; "
                         "all 2 ranks keep Inductor's order)")
        self.assertEqual(disagreement([INDUCTOR_KEY] * 2),
                         "the ranks' plans differ (ranks 0, 1 kept Inductor's order; all 2 ranks keep Inductor's order)")
        self.assertEqual(disagreement([]), "no rank's plan was gathered")

    def test_random_key_lists_agree_exactly_when_all_are_one_plan(self):
        import random

        rng = random.Random(31)
        for _ in range(500):
            keys = [rng.choice([self.A, self.B, INDUCTOR_KEY]) for _ in range(rng.randint(1, 8))]
            plain = len(set(keys)) == 1 and keys[0] != INDUCTOR_KEY
            self.assertEqual(disagreement(keys) is None, plain, keys)


if __name__ == "__main__":
    unittest.main()
