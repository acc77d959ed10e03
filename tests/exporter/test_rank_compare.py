"""Several ranks on the 4 x H100 run3 data (tests/data/dist4/steps/run3-reps.tgz;
no torch, no GPU): python/dist/rank_compare.py's table is the one
docs/simulation.md ("Several ranks") states, and so are its summary figures."""

from __future__ import annotations

import os
import re
import sys
import tarfile
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "dist"))
sys.path.insert(0, str(ROOT / "python"))

from rank_compare import compare_all, markdown  # noqa: E402

ARCHIVE = ROOT / "tests" / "data" / "dist4" / "steps" / "run3-reps.tgz"
DOC = ROOT / "docs" / "simulation.md"


def _schedlab() -> str | None:
    path = os.environ.get("SCHEDLAB_BIN") or str(ROOT / "build" / "schedlab")
    return path if Path(path).exists() else None


@unittest.skipUnless(_schedlab(), "needs the schedlab binary (SCHEDLAB_BIN or build/schedlab)")
class SeveralRanksOnRun3(unittest.TestCase):
    def test_the_documented_table_and_figures(self):
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(ARCHIVE) as tar:
                members = [m for m in tar.getmembers() if m.name.startswith("r1/") and m.isfile() and "/compare/" not in m.name
                           and not m.name.endswith(".pre.json") and not m.name.endswith(".trace.json")]
                tar.extractall(tmp, members=members)
            rows = compare_all(Path(tmp) / "r1", _schedlab(), "h100-sxm")
        self.assertEqual(len(rows), 15)
        doc = DOC.read_text()
        for line in markdown(rows).splitlines():
            self.assertIn(line, doc)
        # Alike graphs on every rank: no simulated skew of their own.
        for r in rows:
            self.assertTrue(all(s == r["simulated"]["by_rank_us"][0] for s in r["simulated"]["by_rank_us"]), r["step"])
        spread = [100 * r["measured"]["spread_us"] / r["measured"]["gpu_span_us"] for r in rows]
        ratio = [r["simulated"]["step_us"] / r["measured"]["gpu_span_us"] for r in rows]
        moved = [100 * (r["simulated_measured_skew"]["step_us"] / r["simulated"]["step_us"] - 1) for r in rows]
        agree = sum(r["simulated_measured_skew"]["slowest_rank"] == r["measured"]["slowest_rank"] for r in rows)
        text = " ".join(doc.split())
        self.assertIn(f"the measured ranks differ by {min(spread):.1f} to {max(spread):.1f} % of the step", text)
        self.assertIn(f"error ({min(ratio):.2f} to {max(ratio):.2f} of the measured slowest rank)", text)
        self.assertIn(f"moves every step up by {min(moved):.1f} to {max(moved):.1f} %", text)
        self.assertIn(f"is the measured slowest in {agree} of the 15 runs", text)
        self.assertTrue(re.search(r"6,716\.6 µs alone", text))


if __name__ == "__main__":
    unittest.main()
