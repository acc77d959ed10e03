#!/usr/bin/env python3
"""Adds `host_probe_wall_us` (docs/schedmeasured-1.md) to measured files
written before the exporter recorded it, from the probes they already hold,
exactly as python/schedlab_export/host_probe.py `settle_at_full_speed` now
writes it (`wall_probe`): the median probe of the samples behind
`wall_time_us`. Files without probes, or
with the field already, are left as they are; the rest keep their layout
(compact or indented), byte for byte.

    python3 scripts/add-host-probe-wall.py FILE.measured.json...
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from schedlab_export.host_probe import wall_probe  # noqa: E402


def main(paths):
    for path in map(Path, paths):
        text = path.read_text()
        m = json.loads(text)
        probe, full = m.get("host_probe_us"), m.get("host_probe_full_speed_us")
        if not probe or full is None or "host_probe_wall_us" in m:
            continue
        m["host_probe_wall_us"] = round(wall_probe(probe, full), 2)
        # Insert the field after host_probe_full_speed_us in the text itself,
        # so that the file keeps its layout byte for byte otherwise.
        key = '"host_probe_full_speed_us":'
        at = text.index(key)
        end = text.index(",", at) + 1
        line_start = text.rfind("\n", 0, at) + 1
        indent = text[line_start:at] if "\n" in text.strip() else ""
        sep = "\n" if indent else ""
        space = " " if indent else ""
        added = f'{sep}{indent}"host_probe_wall_us":{space}{m["host_probe_wall_us"]},'
        out = text[:end] + added + text[end:]
        if json.loads(out) != m:
            raise SystemExit(f"{path}: the inserted field does not parse back as intended")
        path.write_text(out)
        print(f"{path}: host_probe_wall_us {m['host_probe_wall_us']} (run's full speed {full})")


if __name__ == "__main__":
    main(sys.argv[1:])
