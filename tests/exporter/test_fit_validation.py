"""CPU-side checks of python/zoo/fit_validation.py (the GPU run of "will it
fit?"): the caps around schedlab's need, the pass rule, the summary and the
table, and schedlab's answer read from a real plan (with SCHEDLAB_BIN)."""

from __future__ import annotations

import os
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "zoo"))

import fit_validation as fv  # noqa: E402


def _row(name, under, over):
    return {"name": name, "need_bytes": 1000 << 20, "uncertainty_bytes": 100 << 20, "measured_reserved_bytes": 990 << 20,
            "caps": {"under": dict(cap_bytes=850 << 20, **under), "over": dict(cap_bytes=1150 << 20, **over)}}


class FitValidation(unittest.TestCase):
    def test_at_least_twenty_models_from_the_three_libraries(self):
        self.assertGreaterEqual(len(fv.MODELS), 20)
        self.assertEqual({m["library"] for m in fv.MODELS.values()}, {"torchvision", "timm", "transformers"})

    def test_caps_lie_half_the_margin_outside_the_band(self):
        caps = fv.caps_for({"allocator_need_bytes": 1000, "uncertainty_bytes": 100})
        self.assertEqual(caps, {"under": 850, "over": 1150})
        caps = fv.caps_for({"allocator_need_bytes": 1000, "allocator_need_low_bytes": 800, "uncertainty_bytes": 100})
        self.assertEqual(caps, {"under": 650, "over": 1150})

    def test_bisection_finds_the_threshold(self):
        unit = 2 << 20
        threshold = 301 * unit
        calls = []

        def runs_at(cap):
            calls.append(cap)
            return cap >= threshold, {"cap_bytes": cap, "oom": cap < threshold}

        t = fv.bisect_threshold(runs_at, 250 * unit, 400 * unit, steps=10)
        self.assertEqual((t["oom_at"], t["ran_at"]), (300 * unit, 301 * unit))
        self.assertEqual(len(t["runs"]), len(calls))
        short = fv.bisect_threshold(runs_at, 250 * unit, 400 * unit, steps=2)
        self.assertLess(short["oom_at"], short["ran_at"])
        self.assertLessEqual(short["oom_at"], 300 * unit)
        self.assertGreaterEqual(short["ran_at"], 301 * unit)
        self.assertEqual(fv.bisect_threshold(runs_at, 302 * unit, 400 * unit, 5)["oom_at"], None)  # runs at the bottom
        self.assertEqual(fv.bisect_threshold(runs_at, 1, 200 * unit, 5)["ran_at"], None)          # never runs

    def test_threshold_in_band(self):
        row = {"need_bytes": 1000, "need_low_bytes": 800, "uncertainty_bytes": 100}
        self.assertIsNone(fv.threshold_in_band(row))
        self.assertTrue(fv.threshold_in_band(dict(row, threshold={"oom_at": 700, "ran_at": 702})))
        self.assertTrue(fv.threshold_in_band(dict(row, threshold={"oom_at": 1098, "ran_at": 1100})))
        self.assertFalse(fv.threshold_in_band(dict(row, threshold={"oom_at": 1100, "ran_at": 1102})))
        self.assertFalse(fv.threshold_in_band(dict(row, threshold={"oom_at": 600, "ran_at": 602})))

    def test_pass_rule(self):
        self.assertTrue(fv.judge("does_not_fit", True))
        self.assertTrue(fv.judge("fits", False))
        self.assertFalse(fv.judge("fits", True))            # an OOM nobody predicted
        self.assertFalse(fv.judge("does_not_fit", False))   # a false alarm outside the margin
        self.assertTrue(fv.judge("within_margin", True))
        self.assertTrue(fv.judge("within_margin", False))

    def test_summary_and_table(self):
        good = _row("a", {"oom": True, "verdict": "does_not_fit", "pass": True}, {"oom": False, "verdict": "fits", "pass": True})
        bad = _row("b", {"oom": False, "verdict": "does_not_fit", "pass": False}, {"oom": True, "verdict": "fits", "pass": False})
        s = fv.summarize([good, bad, {"name": "c", "error": "Traceback\nImportError: no timm"}])
        self.assertEqual((s["models"], s["graphs_run"], s["caps_run"], s["ooms"], s["ooms_predicted"], s["false_alarms"]), (3, 2, 4, 2, 1, 1))
        self.assertEqual(s["failures"], ["b under", "b over"])
        self.assertEqual(s["errors"], ["c"])
        text = fv.table([good, bad, {"name": "c", "error": "Traceback\nImportError: no timm"}])
        self.assertIn("| a | 1000 (±100) |  |  | 990 | 850: does_not_fit, OOM | 1150: fits, ran | yes |", text)
        self.assertIn("| b |", text)
        self.assertIn("**no**", text)
        self.assertIn("error: ImportError: no timm", text)

    @unittest.skipUnless(os.environ.get("SCHEDLAB_BIN"), "SCHEDLAB_BIN (the built schedlab) not set")
    def test_schedlab_answers_for_a_cap(self):
        graph = ROOT / "tests" / "data" / "exported" / "vit_0_fwd.post.json"
        with tempfile.TemporaryDirectory() as tmp:
            fit = fv.predicted_fit(os.environ["SCHEDLAB_BIN"], graph, 80 << 30, Path(tmp) / "p.json", "h100-sxm")
            self.assertEqual(fit["device_bytes"], 80 << 30)
            self.assertEqual(fit["allocator_verdict"], "fits")
            caps = fv.caps_for(fit)
            under = fv.predicted_fit(os.environ["SCHEDLAB_BIN"], graph, caps["under"], Path(tmp) / "u.json", "h100-sxm")
            over = fv.predicted_fit(os.environ["SCHEDLAB_BIN"], graph, caps["over"], Path(tmp) / "o.json", "h100-sxm")
            self.assertEqual(under["allocator_verdict"], "does_not_fit")
            self.assertEqual(over["allocator_verdict"], "fits")
            with self.assertRaises(RuntimeError):
                fv.predicted_fit(os.environ["SCHEDLAB_BIN"], graph, 0, Path(tmp) / "z.json", "h100-sxm")


if __name__ == "__main__":
    unittest.main()
