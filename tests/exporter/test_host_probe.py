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
