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

    def test_caps_lie_half_the_margin_outside_it(self):
        caps = fv.caps_for({"allocator_need_bytes": 1000, "uncertainty_bytes": 100})
        self.assertEqual(caps, {"under": 850, "over": 1150})

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
        self.assertIn("| a | 1000 (±100) | 990 | 850: does_not_fit, OOM | 1150: fits, ran | yes |", text)
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
