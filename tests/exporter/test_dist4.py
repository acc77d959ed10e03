"""The 4 x H100 data (tests/data/dist4; no torch, no GPU): scripts/fit-comm.py
reproduces the checked-in fit from the checked-in sweeps, and the
simulation of the real 4-GPU steps with the built-in h100-sxm profile stays
at today's figures (docs/gpu-validation.md, "Four GPUs"). A floor, not the
target: the issue's target is every step within 8 %."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "dist"))
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from archives import extracted  # noqa: E402
from compare import compare_run  # noqa: E402

DATA = ROOT / "tests" / "data" / "dist4"
SCHEDULES = ("default", "recommended", "schedlab")
STEPS = ("tp_block", "fsdp", "ddp", "fsdp_fwd_bwd", "tp_microbatch")


def _schedlab() -> str | None:
    path = os.environ.get("SCHEDLAB_BIN") or str(ROOT / "build" / "schedlab")
    return path if Path(path).exists() else None


def fit_comm(*args: str) -> tuple[str, dict]:
    """scripts/fit-comm.py on `args` into a temporary file: what it printed
    and the fit it wrote."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "fit.json"
        done = subprocess.run([sys.executable, str(ROOT / "scripts" / "fit-comm.py"), *args, "-o", str(out)],
                              check=True, capture_output=True, text=True)
        return done.stdout, json.loads(out.read_text())


H100_COLLECTIVES = sorted(str(p) for p in DATA.glob("h100-run*/collectives-w*.json"))
H100_CONTENTION = sorted(str(p) for p in DATA.glob("h100-run*/contention-w4.json"))


class CommFit(unittest.TestCase):
    def test_the_checked_in_fit_is_the_fit_of_the_checked_in_sweeps(self):
        fitted = json.loads((DATA / "comm-fit.json").read_text())
        self.assertEqual(fit_comm(*H100_COLLECTIVES, *H100_CONTENTION, "--source", fitted["collectives"]["source"])[1], fitted)
        # What the fit says, in round figures: contention slows both sides, a
        # collective ready beside a GEMM starts in its last wave.
        gemm = fitted["contention"]["classes"]["gemm"]
        self.assertGreater(gemm["comm_slowdown"], 1.1)
        self.assertGreater(gemm["compute_slowdown"], 1.1)
        self.assertGreater(gemm["start_fraction"], 0.7)
        self.assertGreater(fitted["contention"]["classes"]["triton_pointwise"]["comm_slowdown"], 2.0)

    def test_the_h200s_curves_are_the_fit_of_their_sweeps(self):
        # scripts/fit-profiles.sh: the H200's own collective curves, the H100s' contention law.
        fitted = json.loads((DATA / "comm-fit-h200.json").read_text())
        sweeps = [str(DATA / "h200-run5" / "collectives-w4.json"), str(DATA / "h200-run7" / "collectives-w2.json")]
        self.assertEqual(fit_comm(*sweeps, *H100_CONTENTION, "--source", fitted["collectives"]["source"])[1], fitted)
        self.assertEqual(fitted["contention"], json.loads((DATA / "comm-fit.json").read_text())["contention"])
        profile = json.loads((ROOT / "profiles" / "h200.json").read_text())
        self.assertEqual(profile["collectives"]["curves"], fitted["collectives"]["curves"])

    def test_the_law_holds_on_the_run_it_was_not_fitted_on(self):
        # fit-comm.py --check: fitted on one run of the sweeps, its errors on
        # the other's rows (docs/cost-model.md, "Contention", held out).
        for fit, check in (("h100-run1", "h100-run2"), ("h100-run2", "h100-run1")):
            with self.subTest(fit=fit):
                stdout, _ = fit_comm(str(DATA / fit / "collectives-w4.json"), str(DATA / fit / "contention-w4.json"),
                                     "--check", str(DATA / check / "contention-w4.json"))
                rows = {line.split("|")[1].strip(): [float(c.strip().split(" ")[0]) for c in line.split("|")[3:7]]
                        for line in stdout.splitlines() if line.startswith("| ") and "%" in line}
                for cls in ("attention", "convolution"):  # the delay halves the collective's error or better
                    self.assertLess(rows[cls][0], 0.7 * rows[cls][1], cls)
                for cls, (law, ratio, compute, start) in rows.items():
                    self.assertLess(law, 12.0, cls)
                    self.assertLessEqual(law, ratio + 1e-9, cls)
                    self.assertLess(start, 0.1, cls)
                # The race: where every rank's kernel started sooner than the
                # latency, some rank's collective waited for a kernel's SMs in
                # nearly every round.
                race = re.search(r"of (\d+) rounds whose kernels started sooner .* in (\d+);", stdout)
                sooner, held = int(race.group(1)), int(race.group(2))
                self.assertGreater(sooner, 40)
                self.assertGreaterEqual(held, 0.9 * sooner)

    def test_the_h100_curves_on_the_h200_sweeps(self):
        # docs/gpu-validation.md, "On 4 x H200": fit-comm.py
        # --check-collectives on each held-out H200 sweep (4 ranks, session
        # 14; 2 ranks, session 17), table for table.
        doc = (ROOT / "docs" / "gpu-validation.md").read_text()
        for held in ("h200-run5/collectives-w4.json", "h200-run7/collectives-w2.json"):
            with self.subTest(held=held):
                stdout, _ = fit_comm(*H100_COLLECTIVES, "--check-collectives", str(DATA / held))
                table = [line for line in stdout.splitlines() if line.startswith("|")]
                self.assertEqual(len(table), 2 + 5)  # the five operations at one world size
                for line in table:
                    self.assertIn(line, doc)

    def test_the_h100_contention_law_on_the_h200s_at_2_ranks(self):
        # docs/gpu-validation.md: fit-comm.py --check on session 17's
        # 2-rank H200 contention sweep, row for row.
        doc = (ROOT / "docs" / "gpu-validation.md").read_text()
        stdout, _ = fit_comm(*H100_COLLECTIVES, *H100_CONTENTION, "--check", str(DATA / "h200-run7" / "contention-w2.json"))
        table = [line for line in stdout.splitlines() if line.startswith("|")]
        self.assertEqual(len(table), 2 + 5)  # the five compute classes
        for line in table:
            self.assertIn(line, doc)

    def test_the_docs_state_the_fitted_contention_law(self):
        # docs/cost-model.md, "Contention": each class's row and the start latency.
        fitted = json.loads((DATA / "comm-fit.json").read_text())["contention"]
        doc = (ROOT / "docs" / "cost-model.md").read_text()
        section = doc[doc.index("### Contention (a profile's `contention`)"):doc.index("## Checked arithmetic")]
        rows = {line.split("|")[1].strip().split(" ")[0]: [c.strip() for c in line.split("|")[2:5]]
                for line in section.splitlines() if line.startswith("| ") and "×" in line}
        for cls, share in fitted["classes"].items():
            with self.subTest(cls=cls):
                comm = f"× {share['comm_slowdown']:.2f} C" + (f" + {share['comm_delay_us']:.1f} µs" if share["comm_delay_us"] else "")
                self.assertEqual(rows[cls], [comm, f"× {share['compute_slowdown']:.2f}",
                                             f"{share['start_fraction']:.2f}" + (" into the kernel" if cls == "gemm" else "")])
        self.assertIn(f"starts {fitted['start_latency_us']:.2f} µs after", section.replace("\n", " "))


def exposed_agreement(runs: Path, schedlab: str, hardware: str, tmp: Path) -> tuple[int, int, int, int]:
    """Over every step x schedule of one repetition: how many simulated
    exposed times are within 15 % or 150 us of the measured (of how many),
    and of the schedule pairs of a step whose measured exposed times differ
    by more than 10 %, how many the simulation orders alike (of how many)."""
    by_step = {}
    for step_dir in sorted(p for p in runs.iterdir() if p.is_dir()):
        for schedule_dir in sorted(p for p in step_dir.iterdir() if (p / "rank0.json").exists()):
            row = compare_run(schedule_dir, schedlab, hardware, tmp)
            by_step.setdefault(step_dir.name, []).append((row["measured"]["exposed_comm_us"], row["simulated"]["exposed_comm_us"]))
    rows = [r for rs in by_step.values() for r in rs]
    within = sum(abs(s - m) <= max(150.0, 0.15 * m) for m, s in rows)
    pairs = [(a, b) for rs in by_step.values() for i, a in enumerate(rs) for b in rs[i + 1:]
             if abs(a[0] - b[0]) > 0.1 * max(a[0], b[0])]
    alike = sum((a[0] - b[0]) * (a[1] - b[1]) > 0 for a, b in pairs)
    return within, len(rows), alike, len(pairs)


@unittest.skipUnless(_schedlab(), "needs the schedlab binary (SCHEDLAB_BIN or build/schedlab)")
class ContentionOnRealSteps(unittest.TestCase):
    def test_the_documented_table_is_the_data(self):
        # docs/cost-model.md, "Contention": run4's three repetitions on
        # profiles/h100-sxm.json with comm-fit.json's law, and without its
        # delay and start latency.
        law = json.loads((DATA / "comm-fit.json").read_text())["contention"]
        before = {"classes": {c: {k: v for k, v in s.items() if k != "comm_delay_us"} for c, s in law["classes"].items()}}
        profile = json.loads((ROOT / "profiles" / "h100-sxm.json").read_text())
        doc = (ROOT / "docs" / "cost-model.md").read_text()
        with extracted(DATA / "steps" / "run4-lease.tgz") as tmp:
            paths = {}
            for name, section in (("now", law), ("before", before)):
                paths[name] = tmp / f"{name}.json"
                paths[name].write_text(json.dumps(dict(profile, contention=section)))
            for rep in ("r1", "r2", "r3"):
                b = exposed_agreement(tmp / "steps" / rep, _schedlab(), str(paths["before"]), tmp)
                n = exposed_agreement(tmp / "steps" / rep, _schedlab(), str(paths["now"]), tmp)
                line = f"| {rep} | {b[0]} → {n[0]} of {n[1]} | {b[2]} → {n[2]} of {n[3]} |"
                self.assertTrue(line in doc, f"docs/cost-model.md, 'Contention', lacks the row {line}")


@unittest.skipUnless(_schedlab(), "needs the schedlab binary (SCHEDLAB_BIN or build/schedlab)")
class FourGpuSteps(unittest.TestCase):
    def test_simulated_steps_and_exposed_comm_at_todays_figures(self):
        ratios, exposed = [], []
        with tempfile.TemporaryDirectory() as tmp:
            for run in ("run1", "run2"):
                for step in STEPS:
                    for schedule in SCHEDULES:
                        r = compare_run(DATA / "steps" / run / step / schedule, _schedlab(), "h100-sxm", Path(tmp))
                        m, s = r["measured"], r["simulated"]
                        ratios.append((s["step_us"] / m["gpu_span_us"], run, step, schedule))
                        if schedule == "default" and step != "ddp":  # nothing overlaps: every collective exposed
                            exposed.append((s["exposed_comm_us"] / m["exposed_comm_us"], run, step))
        # Simulated over measured GPU span: 0.59-0.80 with the datasheet's
        # collectives and free overlap; 0.69-0.90 with the measured curves and
        # contention; 0.77-0.97 with the sustained tensor-core rate (fitted on
        # these runs' matmuls) and the contention law's delay and start race.
        for ratio, *where in ratios:
            with self.subTest(where=where):
                self.assertGreaterEqual(ratio, 0.76)
                self.assertLessEqual(ratio, 1.08)
        # Exposed time where nothing overlaps: within 30 % on every step (fsdp 0.74).
        for ratio, *where in exposed:
            with self.subTest(where=where):
                self.assertGreater(ratio, 0.70)
                self.assertLess(ratio, 1.30)


if __name__ == "__main__":
    unittest.main()
