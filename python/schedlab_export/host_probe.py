"""The host probe: how fast this machine runs Python right now
(docs/schedmeasured-1.md, `host_probe_us`). A launch-bound graph's wall time
follows its host's speed; the measured files record the probe beside every
sample, the fitted profiles the probe their host costs hold at
(`time_model.host_probe_us`), and `schedlab plan|simulate --host-probe-us`
restates those costs for another host. Standard library only."""

from __future__ import annotations

import statistics
import time


def probe_us() -> float:
    """A fixed pure-Python workload (2000 multiply-adds), timed in µs."""
    t0 = time.perf_counter()
    acc = 0
    for i in range(2000):
        acc += i * i
    return (time.perf_counter() - t0) * 1e6


# A probe within this factor of the full-speed one counts as the host running
# at full speed; the lent machines' two speeds read about 1.8x apart.
FULL_SPEED_SLACK = 1.25
# A graph's wall figure keeps to its full-speed calls when at least this many were.
FULL_SPEED_MIN_SAMPLES = 20


def full_speed(probes: list[float]) -> float:
    """The full-speed probe of a set of probes: their 5th percentile."""
    ordered = sorted(probes)
    return ordered[len(ordered) // 20]


def running_speed(probes: list[float], full: float | None = None) -> float:
    """The host's speed while it ran at full speed: the median of the probes
    within FULL_SPEED_SLACK of the full-speed probe (`full`, else these
    probes' own). Within that band the probe still drifts by several per
    cent from one stretch of seconds to the next, and a launch-bound call's
    host time follows it, so a measured figure is stated at the median probe
    of the samples it was taken from, and a host is described to `schedlab
    plan|simulate --host-probe-us` by this same figure."""
    limit = (full if full is not None else full_speed(probes)) * FULL_SPEED_SLACK
    return statistics.median(x for x in probes if x <= limit)


def collect_probes(samples: int, seconds: float) -> list[float]:
    """`samples` probes spread over `seconds`. The lent machines' hosts
    alternate between two speeds over seconds (probes of about 85 and 150
    µs): a burst of probes can fall in a slow stretch, probes spread over a
    few seconds see the fast one."""
    if samples < 20:
        raise ValueError(f"samples {samples}: at least 20")
    if seconds < 0:
        raise ValueError(f"seconds {seconds}: at least 0")
    probes = []
    for _ in range(samples):
        probes.append(probe_us())
        if seconds:
            time.sleep(seconds / samples)
    return probes


def full_speed_probe_us(samples: int = 300, seconds: float = 3.0) -> float:
    """This host's full-speed probe: the 5th percentile of its probes, as the
    zoo's runs define it over theirs (`host_probe_full_speed_us`)."""
    return full_speed(collect_probes(samples, seconds))


def running_probe_us(samples: int = 300, seconds: float = 3.0) -> float:
    """This host's probe as the measured files' `host_probe_wall_us` and the
    profiles' `time_model.host_probe_us` state theirs: `running_speed` of
    its probes."""
    return running_speed(collect_probes(samples, seconds))


def wall_probe(probes: list[float], full: float) -> float:
    """The probe behind a wall figure taken from samples with these probes
    (`host_probe_wall_us`): `running_speed` when at least
    FULL_SPEED_MIN_SAMPLES ran within FULL_SPEED_SLACK of the run's
    full-speed probe `full` (the figure is their median), else the median
    of all (so is the figure)."""
    fast = sum(1 for x in probes if x <= full * FULL_SPEED_SLACK)
    return running_speed(probes, full) if fast >= FULL_SPEED_MIN_SAMPLES else statistics.median(probes)


def settle_at_full_speed(m: dict, full_speed: float) -> bool:
    """Restates one measured file's wall figures (`m`, schedmeasured/1, in
    place) at its run's full-speed probe `full_speed`: `wall_time_us` and
    `host_time_us` become the medians of the calls whose probe was within
    FULL_SPEED_SLACK of it, when at least FULL_SPEED_MIN_SAMPLES were (the
    medians over all calls stay as `..._all_samples`). Records as
    `host_probe_wall_us` the median probe of the calls behind those
    figures: the host's speed while they were taken. False when `m` has no
    probes beside its samples."""
    probe = m.get("host_probe_us", [])
    wall, host = m.get("wall_time_us_samples", []), m.get("host_time_us_samples", [])
    if not probe or len(probe) != len(wall) or len(host) != len(wall):
        return False
    fast = [i for i, x in enumerate(probe) if x <= full_speed * FULL_SPEED_SLACK]
    m["wall_time_us_all_samples"] = round(statistics.median(wall), 3)
    m["host_time_us_all_samples"] = round(statistics.median(host), 3)
    m["host_probe_full_speed_us"] = round(full_speed, 2)
    m["wall_full_speed_samples"] = len(fast)
    if len(fast) >= FULL_SPEED_MIN_SAMPLES:
        m["wall_time_us"] = round(statistics.median(wall[i] for i in fast), 3)
        m["host_time_us"] = round(statistics.median(host[i] for i in fast), 3)
        m["wall_method"] += (f"; wall_time_us and host_time_us: median of the {len(fast)} calls whose host "
                             f"probe was within {FULL_SPEED_SLACK}x of the run's full-speed probe "
                             f"({full_speed:.1f} us, its 5th percentile)")
    m["host_probe_wall_us"] = round(wall_probe(probe, full_speed), 2)
    return True
