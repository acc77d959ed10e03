"""CPU-side checks of python/zoo/class_sweep.py (the GPU sweeps of the finer
kernel classes): its arguments, the run_zoo.py command it runs, the
manifest it writes from what the run left (the pairs the fit reads), and
the fit command it prints; with SCHEDLAB_BIN, that every class it names is
one schedlab's fit-profile --class-laws takes."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "zoo"))

import class_sweep as cs  # noqa: E402


class ClassSweep(unittest.TestCase):
    def test_every_finer_class_has_a_sweep(self):
        classes = {c for s in cs.SWEEPS.values() for c in s.classes}
        for c in ("indexing", "scatter", "depthwise_convolution", "depthwise_convolution_native", "depthwise_convolution_backward",
                  "depthwise_convolution_backward_native", "grouped_convolution", "grouped_convolution_backward", "convolution_1d",
                  "convolution_1d_backward", "triton_strided_pointwise", "triton_strided_reduction", "gemm_unaligned", "gemm_f32", "triton_scatter"):
            self.assertIn(c, classes)

    def test_arguments(self):
        a = cs.parse_args(["--out", "o"])
        self.assertEqual((a.out, a.only, a.jobs, a.dry_run), ("o", None, 6, False))
        a = cs.parse_args(["--out", "o", "--only", "scatter_sweep", "gemm_odd_sweep", "--jobs", "3"])
        self.assertEqual(a.only, ["scatter_sweep", "gemm_odd_sweep"])
        for bad, says in ((["--only", "nope_sweep"], "--only: unknown sweep(s) nope_sweep"), (["--jobs", "0"], "--jobs: 0 is below 1"),
                          ([], "--out")):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as e:
                cs.parse_args(bad if bad == [] else ["--out", "o", *bad])
            self.assertEqual(e.exception.code, 2)
            self.assertIn(says, err.getvalue())

    def test_the_zoo_command_measures_the_named_sweeps(self):
        cmd = cs.zoo_command(Path("out/x"), ["scatter_sweep"], 4)
        self.assertEqual(cmd[1:], [str(ROOT / "python" / "zoo" / "run_zoo.py"), "--out", "out/x", "--measure", "--jobs", "4", "--only",
                                   "scatter_sweep"])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(cs.main(["--out", "o", "--dry-run", "--only", "gemm_odd_sweep"]), 0)
        self.assertIn("run_zoo.py --out o --measure --jobs 6 --only gemm_odd_sweep", out.getvalue())

    def test_manifest_of_the_pairs_the_fit_reads(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            for stem in ("scatter_sweep_0_inf", "scatter_sweep_1_inf"):
                (out / f"{stem}.post.json").write_text("{}")
                (out / f"{stem}.measured.json").write_text(json.dumps({"kernels": [{}, {}, {}]}))
            m = cs.manifest(out, ["scatter_sweep"])
            self.assertEqual(m["format"], "class_sweep/1")
            self.assertEqual(m["cases"], [{"case": "scatter_sweep", "classes": ["triton_scatter", "scatter"], "graphs": [
                {"graph": "scatter_sweep_0_inf.post.json", "measured": "scatter_sweep_0_inf.measured.json", "kernels": 3},
                {"graph": "scatter_sweep_1_inf.post.json", "measured": "scatter_sweep_1_inf.measured.json", "kernels": 3}]}])
            # A graph without its measured file, a broken one, a case with no graph: one line naming the file.
            (out / "scatter_sweep_1_inf.measured.json").unlink()
            with self.assertRaisesRegex(cs.SweepError, r"scatter_sweep_1_inf\.measured\.json: missing"):
                cs.manifest(out, ["scatter_sweep"])
            (out / "scatter_sweep_1_inf.measured.json").write_text("{not json")
            with self.assertRaisesRegex(cs.SweepError, r"scatter_sweep_1_inf\.measured\.json: not a measured file"):
                cs.manifest(out, ["scatter_sweep"])
            with self.assertRaisesRegex(cs.SweepError, r"gemm_odd_sweep_\*\.post\.json: the sweep exported no graph"):
                cs.manifest(out, ["gemm_odd_sweep"])

    def test_fit_command(self):
        h100 = cs.fit_command(Path("OUT"), "h100")
        self.assertTrue(h100.startswith("build/schedlab fit-profile tests/data/measured/h100 --class-sweep OUT --graphs tests/data/exported"))
        self.assertIn("--class-laws all --sibling profiles/h200.json --name h100-sxm", h100)
        self.assertIn("--exclude /vit_", h100)
        self.assertNotIn("--sibling", cs.fit_command(Path("OUT"), "h200"))

    @unittest.skipUnless(os.environ.get("SCHEDLAB_BIN"), "SCHEDLAB_BIN (the built schedlab) not set")
    def test_schedlab_takes_every_class_named(self):
        # The attention grid sweep is for the attention laws themselves, which
        # a sweep's attention calls fit (core/measure/fit.cpp); the others
        # name finer classes, which --class-laws takes.
        classes = sorted({c for s in cs.SWEEPS.values() for c in s.classes} - {"attention", "attention_backward"})
        self.assertEqual(cs.SWEEPS["attention_grid_sweep"].classes, ("attention", "attention_backward"))
        with tempfile.TemporaryDirectory() as tmp:
            # No measured file under an empty folder: the classes are read (and
            # refused when unknown) before the folders are searched.
            bad = subprocess.run([os.environ["SCHEDLAB_BIN"], "fit-profile", tmp, "-o", str(Path(tmp) / "p.json"), "--class-laws", "nope"],
                                 capture_output=True, text=True)
            self.assertEqual(bad.returncode, 2)
            self.assertIn("--class-laws: \"nope\" is not one of the finer kernel classes", bad.stderr)
            good = subprocess.run([os.environ["SCHEDLAB_BIN"], "fit-profile", tmp, "-o", str(Path(tmp) / "p.json"), "--class-laws",
                                   ",".join(classes)], capture_output=True, text=True)
            self.assertNotIn("--class-laws", good.stderr)


if __name__ == "__main__":
    unittest.main()
