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


def full_speed_probe_us(samples: int = 300, seconds: float = 3.0) -> float:
    """The host's full-speed probe: the 5th percentile of `samples` probes
    spread over `seconds`, as the zoo's runs define it over theirs. The
    lent machines' hosts alternate between two speeds over seconds (probes
    of about 85 and 150 µs): a burst of probes can fall in a slow stretch,
    probes spread over a few seconds see the fast one."""
    if samples < 20:
        raise ValueError(f"samples {samples}: at least 20")
    if seconds < 0:
        raise ValueError(f"seconds {seconds}: at least 0")
    probes = []
    for _ in range(samples):
        probes.append(probe_us())
        if seconds:
            time.sleep(seconds / samples)
    probes.sort()
    return probes[len(probes) // 20]
