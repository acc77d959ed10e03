"""The host probe: how fast this machine runs Python right now
(docs/schedmeasured-1.md, `host_probe_us`). A launch-bound graph's wall time
follows its host's speed; the measured files record the probe beside every
sample, the fitted profiles the probe their host costs hold at
(`time_model.host_probe_us`), and `schedlab plan|simulate --host-probe-us`
restates those costs for another host. Standard library only."""

from __future__ import annotations

import time


def probe_us() -> float:
    """A fixed pure-Python workload (2000 multiply-adds), timed in µs."""
    t0 = time.perf_counter()
    acc = 0
    for i in range(2000):
        acc += i * i
    return (time.perf_counter() - t0) * 1e6


def full_speed_probe_us(samples: int = 400) -> float:
    """The host's full-speed probe: the 5th percentile of `samples` probes,
    as the zoo's runs define it over theirs (a host alternating between
    speeds reads its fast one)."""
    if samples < 20:
        raise ValueError(f"samples {samples}: at least 20")
    probes = sorted(probe_us() for _ in range(samples))
    return probes[len(probes) // 20]
