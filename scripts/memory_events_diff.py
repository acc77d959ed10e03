#!/usr/bin/env python3
"""Memory as executed against a measured call's allocator history, event by event.

    build/schedlab accuracy DIR --hardware h100-sxm --memory-events EV.json
    python3 scripts/memory_events_diff.py EV.json [--graph NAME] [--all]

For every graph of EV.json whose measured file holds `memory_events`
(measured with SCHEDLAB_MEMORY_EVENTS=1, docs/schedmeasured-1.md), it names
each measured request by the generated wrapper's line that made it (the
`<case>.wrapper.py` beside the measured file, when there: `bufN = ...`),
each free by the address of its allocation, aligns the two sequences as
(action, bytes rounded to 512) and prints where they differ, then where
the model's replay opens segments (its reserved total grows). Requests of
the measured call that started before it (its inputs) read "?" there.
The measured history is one more call than the one whose peaks the file
records; its requests are the same, its addresses another process state's.
docs/memory-as-executed.md, "Outside the zoo with the allocator's history".
"""
from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from pathlib import Path


def rounded(n: int) -> int:
    return max(512, (n + 511) // 512 * 512)


def measured_events(path: Path) -> list[tuple] | None:
    m = json.loads(path.read_text())
    events = m.get("memory_events")
    if not events:
        return None
    wrapper = path.with_name(path.name.replace(".measured.json", ".wrapper.py"))
    lines = wrapper.read_text().split("\n") if wrapper.exists() else []
    live: dict[int, str] = {}
    out = []
    for action, size, address, where in events:
        name = "?"
        if action == "a":
            line = int(where.split(":")[1]) if where and ":" in where else 0
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            found = re.match(r"(\w+) = ", text)
            name = found.group(1) if found else (f"line {line}" if line else "?")
            live[address] = name
        else:
            name = live.pop(address, "?")
        out.append((action, name, size))
    return out


def show(seq: list[tuple], lo: int, hi: int, limit: int = 6) -> str:
    items = [f"{a} {n} {s}" for a, n, s in seq[lo:hi]]
    more = f" ... (+{len(items) - limit})" if len(items) > limit else ""
    return "[" + ", ".join(items[:limit]) + more + "]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("events", help="the --memory-events output of schedlab accuracy")
    ap.add_argument("--graph", help="only the graph whose name contains this")
    ap.add_argument("--all", action="store_true", help="print every differing stretch (default: the first 30)")
    a = ap.parse_args()
    doc = json.loads(Path(a.events).read_text())
    for g in doc["graphs"]:
        if a.graph and a.graph not in g["graph"]:
            continue
        meas = measured_events(Path(g["measured"]))
        if meas is None:
            continue
        model = []
        for e in g["events"]:
            if e[0] == "r":
                continue  # a reuse allocates nothing
            model.append((e[0], e[1] or f"workspace of {e[2]}", e[3]))
        ms = [(x[0], rounded(x[2])) for x in meas]
        md = [(x[0], rounded(x[2])) for x in model]
        print(f"== {g['graph']} ({g['start']} start): {len(meas)} measured requests, {len(model)} in the model")
        ops = [o for o in difflib.SequenceMatcher(None, ms, md, autojunk=False).get_opcodes() if o[0] != "equal"]
        for tag, i1, i2, j1, j2 in ops if a.all else ops[:30]:
            print(f"  {tag:7s} measured[{i1}:{i2}] {show(meas, i1, i2)}\n          model[{j1}:{j2}] {show(model, j1, j2)}")
        if not a.all and len(ops) > 30:
            print(f"  ... {len(ops) - 30} more stretches (--all)")
        reserved = None
        for e in g["events"]:
            if reserved is not None and e[7] > reserved:
                print(f"  model opens {e[7] - reserved} bytes of segments at {e[0]} {e[1] or 'workspace'} ({e[2]}), {e[3]} bytes")
            reserved = e[7]
    return 0


if __name__ == "__main__":
    sys.exit(main())
