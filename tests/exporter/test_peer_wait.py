"""scripts/fit-peer-waits.py (no torch, no GPU): the peer-wait law fitted
from the checked-in leases gives exactly the checked-in fit and the trial
profiles (profiles/*-peer-wait.json), and refuses bad input with one line."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "fit-peer-waits.py"
STEPS = ROOT / "tests" / "data" / "dist4" / "steps"
# The leases the law is fitted on; run10-h200-compile.tgz is held out.
FIT_LEASES = [STEPS / "run4-lease.tgz", STEPS / "run5-h200-lease.tgz", STEPS / "run8-h200-bucket.tgz"]
SOURCE = "4 x H100 (run4) and 4 x H200 (run5, run8): python/dist's real steps, every schedule, three runs each"


def fit(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, check=False)


class FitPeerWaits(unittest.TestCase):
    def test_a_refit_gives_the_checked_in_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            law = Path(tmp) / "fit.json"
            done = fit(*FIT_LEASES, "-o", law, "--source", SOURCE)
            self.assertEqual((done.returncode, done.stderr), (0, ""))
            self.assertEqual(law.read_text(), (ROOT / "tests" / "data" / "dist4" / "peer-wait-fit.json").read_text())
            fitted = json.loads(law.read_text())["peer_wait_us"]
            self.assertEqual(sorted(fitted), ["all_gather", "all_reduce", "reduce_scatter"])
            self.assertEqual({g for by in fitted.values() for g in by}, {"4"})
            for name in ("h200", "h100-sxm"):
                trial = Path(tmp) / f"{name}-peer-wait.json"
                done = fit(*FIT_LEASES, "--into", ROOT / "profiles" / f"{name}.json", "--name", f"{name}-peer-wait", "-o", trial)
                self.assertEqual((done.returncode, done.stderr), (0, ""))
                self.assertEqual(trial.read_text(), (ROOT / "profiles" / f"{name}-peer-wait.json").read_text())
                profile = json.loads(trial.read_text())
                self.assertEqual(profile["collectives"]["peer_wait_us"], fitted)
                self.assertEqual(profile["collectives"]["peer_wait_beside_us"], json.loads(law.read_text())["peer_wait_beside_us"])
                base = json.loads((ROOT / "profiles" / f"{name}.json").read_text())
                self.assertEqual(profile["collectives"]["curves"], base["collectives"]["curves"])
            self.assertEqual(sorted(p.name for p in Path(tmp).iterdir()),
                             ["fit.json", "h100-sxm-peer-wait.json", "h200-peer-wait.json"])  # no partial files

    def test_the_documented_law_is_the_fit(self):
        fitted = json.loads((ROOT / "tests" / "data" / "dist4" / "peer-wait-fit.json").read_text())
        doc = (ROOT / "docs" / "cost-model.md").read_text()
        samples = fitted["samples"]
        for op, by_group in fitted["peer_wait_us"].items():
            for group, us in by_group.items():
                beside = fitted["peer_wait_beside_us"][op][group]
                self.assertIn(f"| {op} | {group} | {us} | {samples['exposed'][op][group]} | {beside} "
                              f"| {samples['beside compute'][op][group]} |", doc)
                # Beside compute every operation waits longer, on both chips' leases.
                self.assertGreater(beside, 0)

    def test_one_place_alone_gives_its_mean_and_no_extra(self):
        # An operation seen only exposed (or only beside compute) gets the mean of what was seen, no extra.
        import importlib.util
        spec = importlib.util.spec_from_file_location("fit_peer_waits", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        pooled = {("all_gather", "exposed", 4): [10.0, 30.0], ("all_gather", "beside compute", 4): [50.0],
                  ("reduce_scatter", "beside compute", 4): [40.0, 60.0], ("all_reduce", "exposed", 2): [7.0]}
        module.lease_waits = lambda lease: pooled
        law = module.fit([Path("x")])
        self.assertEqual(law["peer_wait_us"], {"all_gather": {"4": 20.0}, "all_reduce": {"2": 7.0}, "reduce_scatter": {"4": 50.0}})
        self.assertEqual(law["peer_wait_beside_us"], {"all_gather": {"4": 30.0}, "all_reduce": {"2": 0.0}, "reduce_scatter": {"4": 0.0}})
        self.assertEqual(law["samples"]["beside compute"], {"all_gather": {"4": 1}, "reduce_scatter": {"4": 2}})

    def test_bad_input_is_refused_with_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "o.json"
            cases = [
                ((Path(tmp) / "absent", "-o", out), 2, "absent: not found"),
                ((FIT_LEASES[0], "-o", out, "--into", ROOT / "profiles" / "h200.json"), 2, "--into and --name go together"),
                ((Path(tmp), "-o", out), 1, "no repetitions"),
                ((FIT_LEASES[0], "-o", out, "--into", ROOT / "profiles" / "example-h100-pcie.json", "--name", "x"), 2,
                 "not a profile with collectives"),
                ((FIT_LEASES[0], "-o", Path(tmp) / "absent" / "o.json"), 2, "o.json: cannot write it"),
            ]
            for args, code, message in cases:
                done = fit(*args)
                self.assertEqual(done.returncode, code, (args, done.stderr))
                self.assertIn(message, done.stderr)
                self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
            self.assertEqual([p.name for p in Path(tmp).iterdir()], [])
            # A profile whose collectives name no source: the law's leases become it.
            bare = Path(tmp) / "bare.json"
            profile = json.loads((ROOT / "profiles" / "h200.json").read_text())
            del profile["collectives"]["source"]
            bare.write_text(json.dumps(profile))
            done = fit(FIT_LEASES[2], "--into", bare, "--name", "bare-peer-wait", "-o", out)
            self.assertEqual((done.returncode, done.stderr), (0, ""))
            self.assertEqual(json.loads(out.read_text())["collectives"]["source"], "peer wait: run8-h200-bucket.tgz")


if __name__ == "__main__":
    unittest.main()
