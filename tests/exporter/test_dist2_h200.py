"""The 2 x H200 real steps of session 8 (docs/data/dist/runs and
runs-priced) simulated on today's built-in h200: docs/gpu-validation.md's
tables "The same runs on today's built-in h200" are the data's, row for
row, and the counts the text gives hold."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "docs" / "data" / "dist"


def _schedlab() -> str | None:
    path = os.environ.get("SCHEDLAB_BIN") or str(ROOT / "build" / "schedlab")
    return path if Path(path).exists() else None


def compare_rows(results: Path, *extra: str) -> list[str]:
    """compare.py's markdown rows (header and rule included) on the built-in h200."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, str(ROOT / "python" / "dist" / "compare.py"), str(results), "--schedlab", _schedlab(),
                               "--hardware", "h200", "--out", tmp, "--markdown", *extra], check=True, capture_output=True, text=True)
    return [line for line in done.stdout.splitlines() if line.startswith("|")]


def counts(rows: list[str]) -> tuple[int, int, int]:
    """(rows, simulated step within 8 % of the GPU span, exposed within 15 % or 150 us)."""
    body = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows[2:]]
    within = sum(abs(float(c[4]) / float(c[3]) - 1) <= 0.08 for c in body)
    exposed = sum(abs(float(c[7]) - float(c[6])) <= max(150.0, 0.15 * float(c[6])) for c in body)
    return len(body), within, exposed


@unittest.skipUnless(_schedlab(), "needs the schedlab binary (SCHEDLAB_BIN or build/schedlab)")
class TwoH200StepsToday(unittest.TestCase):
    def test_the_documented_tables_and_counts(self):
        doc = (ROOT / "docs" / "gpu-validation.md").read_text()
        section = doc[doc.index("**The same runs on today's built-in `h200`**"):]
        run3 = compare_rows(RUNS / "runs", "--fill-export-gaps")
        run4 = compare_rows(RUNS / "runs-priced")
        for line in run3 + run4:
            self.assertIn(line, section)
        self.assertEqual(counts(run3), (15, 11, 11))
        self.assertEqual(counts(run4), (9, 8, 9))
        text = " ".join(section.split())
        self.assertIn("run 4's nine step × schedule rows are within 8 % of the measured GPU span on 8", text)
        self.assertIn("run 3's fifteen on 11 and 11", text)


if __name__ == "__main__":
    unittest.main()
