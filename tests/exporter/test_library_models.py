"""Issue 27's real library models (tests/data/library_models: a DLRM-style
recommender, torch_geometric GAT, torchaudio Conformer, timm MLP-Mixer,
Hugging Face Whisper, Wav2Vec2 and T5, measured on an H100 and an H200),
checked against the built schedlab: Inductor's fusion groups and memory
orders exactly, memory as executed within 2 % of the measured peak, and
the estimates' figures that docs/cost-model.md states ("Real library
models")."""

from __future__ import annotations

import ast
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from archives import extracted  # noqa: E402

DATA = ROOT / "tests" / "data" / "library_models"
GPUS = {"h100": "h100-sxm", "h200": "h200"}


def _schedlab() -> str | None:
    path = os.environ.get("SCHEDLAB_BIN") or str(ROOT / "build" / "schedlab")
    return path if Path(path).is_file() else None


@functools.lru_cache(maxsize=None)
def accuracy_rows(gpu: str) -> dict[str, dict]:
    """`schedlab accuracy` on one GPU's archive under its built-in profile,
    per graph: measured kernel µs, kernel and wall ratios, peak and
    reserved ratios. Computed once per GPU for every test that reads it."""
    with extracted(DATA / f"{gpu}.tgz") as tmp:
        out = subprocess.run([_schedlab(), "accuracy", str(tmp / gpu), "--hardware", GPUS[gpu]],
                             capture_output=True, text=True, check=True).stdout
    graphs = {}
    for line in out.splitlines():
        cols = line.split()
        if len(cols) == 9 and cols[0].endswith(".post") and cols[8] in ("recorded", "cold", "replay"):
            graphs[cols[0][:-len(".post")]] = {"kernel_us": float(cols[1]), "kernel": float(cols[2]),
                                               "wall": float(cols[4]), "peak": float(cols[6]),
                                               "reserved": float(cols[7])}
    return graphs


@unittest.skipUnless(_schedlab(), "needs the schedlab binary (SCHEDLAB_BIN or build/schedlab)")
class InductorDecisions(unittest.TestCase):
    def test_fusion_groups_and_memory_orders_equal_inductors(self):
        for gpu in GPUS:
            with extracted(DATA / f"{gpu}.tgz") as unpacked, tempfile.TemporaryDirectory() as tmp:
                folder = unpacked / gpu
                groups = graphs = 0
                for expected_path in sorted(folder.glob("*.expected.json")):
                    base = str(expected_path)[:-len(".expected.json")]
                    expected = json.loads(expected_path.read_text())
                    with self.subTest(gpu=gpu, graph=Path(base).name):
                        fused = subprocess.run([_schedlab(), "fuse", base + ".pre.json", "--groups", "-o",
                                                f"{tmp}/post.json"], capture_output=True, text=True, check=True)
                        ours = {tuple(line.split()) for line in fused.stdout.splitlines() if line.strip()}
                        theirs = [tuple(g) for g in expected["fusion_groups"]]
                        self.assertEqual([g for g in theirs if g not in ours], [])
                        groups += len(theirs)
                        subprocess.run([_schedlab(), "plan", base + ".post.json", "-o", f"{tmp}/plan.json",
                                        "--memory-methods", "lpmf,bfs,dfs"], capture_output=True, check=True)
                        methods = json.loads(Path(f"{tmp}/plan.json").read_text())["memory"]["methods"]
                        for method in ("lpmf", "bfs", "dfs"):  # the baseline is the file's own order
                            self.assertEqual(methods[method]["order"], expected["memory"][method]["order"], method)
                            self.assertEqual(methods[method]["peak"], expected["memory"][method]["peak"], method)
                        graphs += 1
                self.assertGreaterEqual(graphs, 40, gpu)
                self.assertGreaterEqual(groups, 1900, gpu)  # 2,052 on the H100, 2,114 on the H200


@unittest.skipUnless(_schedlab(), "needs the schedlab binary (SCHEDLAB_BIN or build/schedlab)")
class PeaksAsExecuted(unittest.TestCase):
    # Every graph of both archives, the recommender's backward included: its
    # H200 export of session 15 predated the observed embedding-backward
    # workspaces (a 28 MB sort, 0.946 of the peak); re-exported in session 21.
    def test_every_peak_within_two_percent(self):
        for gpu in GPUS:
            graphs = accuracy_rows(gpu)
            self.assertGreaterEqual(len(graphs), 40, gpu)
            for name, row in graphs.items():
                with self.subTest(gpu=gpu, graph=name):
                    self.assertLessEqual(abs(row["peak"] - 1), 0.02)


def library_cases() -> tuple[list[str], list[str]]:
    """cases.LIBRARY_CASES and cases.LIBRARY_FIT_CASES, read from cases.py
    without importing it (it imports torch)."""
    tree = ast.parse((ROOT / "python" / "zoo" / "cases.py").read_text())
    values = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
              for t in node.targets if isinstance(t, ast.Name)}
    return [k.value for k in values["LIBRARY_CASES"].keys], list(ast.literal_eval(values["LIBRARY_FIT_CASES"]))


def held_out_cases() -> list[str]:
    """cases.LIBRARY_CASES less cases.LIBRARY_FIT_CASES."""
    library, fitted = library_cases()
    return [c for c in library if c not in fitted]


@functools.lru_cache(maxsize=None)
def held_out_class_ratios(gpu: str) -> dict[str, float]:
    """`schedlab accuracy`'s kernel classes summed over the held-out models'
    graphs (every graph, the fit's models excluded): estimated / measured
    per class."""
    excluded = [arg for case in library_cases()[1] for arg in ("--exclude", f"/{case}_")]
    with extracted(DATA / f"{gpu}.tgz") as tmp:
        out = subprocess.run([_schedlab(), "accuracy", str(tmp / gpu), "--hardware", GPUS[gpu], *excluded],
                             capture_output=True, text=True, check=True).stdout
    ratios, in_table = {}, False
    for line in out.splitlines():
        cols = line.split()
        if line.startswith("per kernel class"):
            in_table = True
        elif in_table and len(cols) == 6 and cols[1].isdigit():
            ratios[cols[0]] = float(cols[4])
    return ratios


def error_figures(rows: dict[str, dict], key: str) -> tuple[float, float]:
    """Median and worst |ratio - 1| of one column over the given graphs."""
    errors = [abs(r[key] - 1) for r in rows.values()]
    return statistics.median(errors), max(errors)


@unittest.skipUnless(_schedlab(), "needs the schedlab binary (SCHEDLAB_BIN or build/schedlab)")
class HeldOutEstimates(unittest.TestCase):
    """The held-out library models' graphs with 50 µs of kernels or more
    under the built-in profiles: today's figures (docs/cost-model.md, "Real
    library models") as a floor. Issue 27's targets (kernel median 8 %,
    worst 25 %; wall 12 %, 30 %) are met for both kernel medians, the wall
    medians and worsts, and the H100's kernel worst (19.4 %, GAT's forward,
    since session 27's write-back term); the H200's kernel worst is GCN's
    small forward (1.261, its f32 matmul 1.42). GraphSAGE and GCN (H200
    only), measured after the fit, read 0.92-1.26 (kernel)."""

    # Walls since session 22's call epilogue (the lead before a device-bound
    # call's first kernel 2.7 µs on the H200, 0 on the H100, where all of
    # host_call_us came first): the H100's median 2.7 -> 5.0 % (Whisper's
    # device-bound graphs lose a lead that offset kernels priced 0.85-0.87
    # short), worst 49.3 -> 48.8 %; the H200's 3.5 -> 3.2 % and 50.7 ->
    # 42.6 % (GCN's 94 µs forward 1.507 -> 1.292; the recommender's forward,
    # launch-bound, 1.426, the worst).
    FLOORS = {  # gpu: (kernel median, kernel worst, wall median, wall worst)
        # Kernels since session 23's scatter refit (the observed index's chain,
        # lane and wide-run terms): the H100's median 6.8 -> 8.3 % (GAT's
        # backward, its median graph, 1.068 -> 1.084), worst 29.6 -> 28.8 %;
        # the H200's 6.6 -> 7.0 % and 28.4 -> 27.9 %. Since session 24's
        # strided reductions priced by their transposed operands (MLP-Mixer's
        # and the Conformer's norm backwards): medians 8.3 -> 5.8 % and 7.0 ->
        # 6.2 %, walls 5.0 -> 4.1 % and 3.2 -> 3.7 %; the worst graphs (GAT's)
        # move by the strided law's refit, 28.8 -> 28.9 % and 27.9 -> 28.0 %.
        # Walls since session 25's items timed, not fitted (fit-profile
        # --wrapper-costs) and attention calls' own host figure: the
        # recommender's forward, the worst, 1.488 -> 1.267 and 1.426 -> 1.272.
        # Kernels since session 25's embedding-bag walk terms: the H100's median
        # 5.8 -> 5.5 % (the recommender's forward 1.084 -> 0.979).
        # Kernels since session 26's convolution terms: the H100's median 5.5 -> 5.4 %.
        # Since session 27's write-back term (a scatter's DRAM writes priced
        # apart from its reads, fitted on the message-passing sweep): GAT's
        # forward 0.711 -> 0.806 and backward 1.084 -> 0.995 (H100), 0.886 ->
        # 0.973 and 1.280 -> 1.195 (H200); the worst graphs 28.9 -> 19.4 %
        # (GAT's forward) and 28.0 -> 26.1 % (now GCN's small forward, 1.199
        # -> 1.261: its f32 matmul reads 1.42); medians 5.4 -> 5.1 % and 6.2
        # -> 5.7 %, walls 4.0 -> 2.3 % and 3.6 -> 3.4 %, the H200's worst wall
        # 27.2 -> 27.6 % (GCN's small forward).
        "h100": (0.052, 0.195, 0.024, 0.27),  # 5.1 %, 19.4 %; 2.3 %, 26.7 %
        "h200": (0.058, 0.262, 0.035, 0.277),  # 5.7 %, 26.1 %; 3.4 %, 27.6 %
    }

    def test_todays_figures_as_a_floor(self):
        held_out = held_out_cases()
        self.assertEqual(len(held_out), 7)
        for gpu in GPUS:
            rows = {n: r for n, r in accuracy_rows(gpu).items()
                    if r["kernel_us"] >= 50 and any(n.startswith(c + "_") for c in held_out)}
            # GraphSAGE and GCN (session 16) were measured on the H200 only.
            self.assertEqual(len(rows), {"h100": 21, "h200": 27}[gpu], gpu)
            kernel, wall = error_figures(rows, "kernel"), error_figures(rows, "wall")
            floor = self.FLOORS[gpu]
            with self.subTest(gpu=gpu, kernel=kernel, wall=wall):
                self.assertLessEqual(kernel[0], floor[0])
                self.assertLessEqual(kernel[1], floor[1])
                self.assertLessEqual(wall[0], floor[2])
                self.assertLessEqual(wall[1], floor[3])


@unittest.skipUnless(_schedlab(), "needs the schedlab binary (SCHEDLAB_BIN or build/schedlab)")
class HeldOutClasses(unittest.TestCase):
    """Issue 27's "every kernel class, summed, within 15 %" on the held-out
    models' graphs under the built-in profiles (docs/cost-model.md, "Real
    library models"): the classes within it kept there, the others no worse
    than today. Session 26 brought in ATen's own depthwise kernels (priced
    per element at the f32 peak: 1.20 / 1.16 -> 0.99 / 0.95, backward 1.33
    -> 1.11 / 1.11), the 1-D convolutions' permuted operands (the H200's
    backward 0.56 -> 1.00, the H100's 0.58 -> 0.86) and a narrow NCHW
    input's transpose priced per pixel (MLP-Mixer's patch stem, the
    convolution class, 0.64 -> 0.88 / 0.87)."""

    WITHIN = 0.15
    FLOORS = {  # gpu: {class: |ratio - 1| today, for the classes outside 15 %}
        # GAT's Triton scatters since session 27's write-back term: 0.653 -> 0.775
        # (H100), the scatter reductions 1.348 -> 1.227 (H200).
        "h100": {"attention": 0.21, "convolution_backward": 0.32, "scatter": 0.16, "triton_strided_pointwise": 0.20,
                 "gemm_unaligned": 0.23, "triton_scatter": 0.23},
        "h200": {"attention": 0.175, "convolution_backward": 0.34, "triton_strided_pointwise": 0.18,
                 "gemm_unaligned": 0.16, "triton_scatter_reduction": 0.235},
    }

    def test_classes_within_fifteen_percent_or_no_worse(self):
        for gpu in GPUS:
            ratios = held_out_class_ratios(gpu)
            self.assertGreaterEqual(len(ratios), 18, gpu)
            for cls in ("depthwise_convolution_native", "depthwise_convolution_backward_native", "convolution_1d",
                        "convolution_1d_backward", "indexing", "triton_strided_reduction"):
                self.assertIn(cls, ratios, gpu)
            for cls, ratio in ratios.items():
                with self.subTest(gpu=gpu, cls=cls, ratio=ratio):
                    self.assertLessEqual(abs(ratio - 1), self.FLOORS[gpu].get(cls, self.WITHIN))


if __name__ == "__main__":
    unittest.main()
