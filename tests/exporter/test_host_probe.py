"""The host probe (python/schedlab_export/host_probe.py) and
`python -m schedlab_export --host-probe`, which needs no PyTorch: the number
`schedlab plan|simulate --host-probe-us` takes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from schedlab_export import host_probe  # noqa: E402


class HostProbe(unittest.TestCase):
    def test_full_speed_probe_is_a_low_percentile_of_probes(self):
        probe = host_probe.full_speed_probe_us(100, seconds=0.2)
        self.assertGreater(probe, 0)
        later = sorted(host_probe.probe_us() for _ in range(100))
        # The 5th percentile of one batch sits below the median of another
        # (the host's fast speed, not a slow stretch's).
        self.assertLess(probe, later[50] * 1.5)
        with self.assertRaises(ValueError):
            host_probe.full_speed_probe_us(5)
        with self.assertRaises(ValueError):
            host_probe.full_speed_probe_us(100, seconds=-1)

    def test_running_speed_is_the_median_of_the_full_speed_probes(self):
        # Two speeds, as on the lent hosts: 40 probes near 85 us, 20 near 150.
        fast = [80.0 + i * 0.25 for i in range(40)]
        probes = [x for pair in zip(fast[:20], [150.0] * 20) for x in pair] + fast[20:]
        self.assertEqual(host_probe.full_speed(probes), 80.75)  # the 5th percentile: 3rd of 60
        # The slow ones (over 1.25x the full speed) are left out: the median of the 40 fast.
        self.assertEqual(host_probe.running_speed(probes), 84.875)
        self.assertEqual(host_probe.running_speed(probes, full=70.0), 83.75)  # band up to 87.5: 31 probes
        self.assertGreater(host_probe.running_probe_us(40, seconds=0.1), 0)

    def test_settle_keeps_the_full_speed_calls_and_records_their_probe(self):
        probes = [84.0 + (i % 5) for i in range(30)] + [150.0] * 20
        m = {"wall_time_us_samples": [500.0 + (i % 5) for i in range(30)] + [900.0] * 20,
             "host_time_us_samples": [480.0] * 30 + [880.0] * 20, "host_probe_us": probes,
             "wall_time_us": 520.0, "host_time_us": 500.0, "wall_method": "one block"}
        self.assertTrue(host_probe.settle_at_full_speed(m, host_probe.full_speed(probes)))
        self.assertEqual(m["host_probe_full_speed_us"], 84.0)
        self.assertEqual(m["wall_full_speed_samples"], 30)
        self.assertEqual((m["wall_time_us"], m["host_time_us"]), (502.0, 480.0))
        self.assertEqual((m["wall_time_us_all_samples"], m["host_time_us_all_samples"]), (504.0, 480.0))
        self.assertEqual(m["host_probe_wall_us"], 86.0)
        self.assertIn("median of the 30 calls", m["wall_method"])
        # Too few calls at full speed: every figure over all calls, the probe too.
        slow = dict(m, host_probe_us=[84.0] * 10 + [150.0] * 40, wall_method="one block")
        self.assertTrue(host_probe.settle_at_full_speed(slow, 84.0))
        self.assertEqual(slow["wall_full_speed_samples"], 10)
        self.assertEqual(slow["host_probe_wall_us"], 150.0)
        self.assertEqual(slow["wall_method"], "one block")
        # No probes beside the samples: nothing to settle.
        self.assertFalse(host_probe.settle_at_full_speed({"wall_time_us_samples": [1.0]}, 84.0))

    def test_command_prints_the_probe_for_plan_and_simulate(self):
        env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
        r = subprocess.run([sys.executable, "-m", "schedlab_export", "--host-probe"], env=env, capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        m = re.fullmatch(r"schedlab_export: host probe at full speed (\d+\.\d\d) us "
                         r"\(schedlab plan\|simulate GRAPH --host-probe-us (\d+\.\d\d)\)\n", r.stdout)
        self.assertIsNotNone(m, r.stdout)
        self.assertEqual(m.group(1), m.group(2))
        self.assertGreater(float(m.group(1)), 0)


if __name__ == "__main__":
    unittest.main()
