#!/usr/bin/env python3
"""Fits the peer wait of a hardware profile's collectives from real steps
(docs/cost-model.md, "Peer wait").

    scripts/fit-peer-waits.py LEASE... -o FIT.json [--source TEXT]
    scripts/fit-peer-waits.py LEASE... --into PROFILE.json --name NAME -o PROFILE_OUT.json

LEASE is python/dist/run_steps.py's output holding r1, r2, ... (a folder, or
a .tgz of one with the repetitions under steps/, as tests/data/dist4/steps
keeps them). Every collective of every run, step, schedule and rank gives
the rank's wait for a later peer (reps.py --peer-waits: its kernel's time
beyond the fastest rank's run of the same collective) and where it ran:
exposed, or beside compute. Per operation and group size the law has two
figures:
- peer_wait_us, the mean wait of the exposed collectives: what every
  collective waits;
- peer_wait_beside_us, the mean wait of those beside compute less that,
  never below 0: what a collective that starts beside a kernel waits on
  top (the contended simulation adds it, core/sim).
Only the operations NCCL names (all_gather, reduce_scatter, all_reduce) get
them. Deterministic: a refit of the same leases gives the same file.

Without --into, writes {"peer_wait_us": {OP: {GROUP_SIZE: us}},
"peer_wait_beside_us": {OP: {GROUP_SIZE: us}}, "samples": {"exposed" |
"beside compute": {OP: {GROUP_SIZE: n}}}, "source", "leases"}; with --into,
the profile with that law as its collectives' peer_wait_us and
peer_wait_beside_us and NAME as its name (a trial profile beside the
built-in one: `--hardware PROFILE_OUT.json`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python" / "dist"))
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE.parent / "tests" / "exporter"))

from archives import extracted  # noqa: E402
from reps import NCCL_KINDS, run_dirs, wait_samples  # noqa: E402
from schedlab_export.outputs import write_atomically  # noqa: E402

FITTED = {kind for _, kind in NCCL_KINDS}


EXPOSED, BESIDE = "exposed", "beside compute"  # reps.wait_samples' places


def lease_waits(lease: Path) -> dict[tuple[str, str, int], list[float]]:
    """(operation, where it ran, group size) -> every rank's wait in one lease."""
    waits: dict[tuple[str, str, int], list[float]] = {}

    def collect(root: Path) -> None:
        if not run_dirs(root):
            raise ValueError(f"{lease}: no repetitions (r1, r2, ...) in it")
        for kind, where, group, wait in wait_samples(root):
            if kind in FITTED:
                waits.setdefault((kind, where, group), []).append(wait)

    if lease.is_dir():
        collect(lease)
    else:
        with extracted(lease) as tmp:
            collect(tmp / "steps")
    return waits


def fit(leases: list[Path]) -> dict:
    pooled: dict[tuple[str, str, int], list[float]] = {}
    for lease in leases:
        for key, values in lease_waits(lease).items():
            pooled.setdefault(key, []).extend(values)
    law: dict[str, dict[str, float]] = {}
    beside: dict[str, dict[str, float]] = {}
    samples: dict[str, dict[str, dict[str, int]]] = {EXPOSED: {}, BESIDE: {}}
    for (op, where, group), values in sorted(pooled.items()):
        samples[where].setdefault(op, {})[str(group)] = len(values)
    # Both places are needed for the two figures: an operation seen only one
    # way gets the mean of what was seen as its wait, and no extra.
    for op, group in sorted({(op, group) for op, _, group in pooled}):
        exposed, aside = pooled.get((op, EXPOSED, group)), pooled.get((op, BESIDE, group))
        base = statistics.mean(exposed or aside)
        law.setdefault(op, {})[str(group)] = round(base, 1)
        beside.setdefault(op, {})[str(group)] = round(max(0.0, statistics.mean(aside) - base), 1) if exposed and aside else 0.0
    return {"peer_wait_us": law, "peer_wait_beside_us": beside, "samples": samples}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("leases", nargs="+", help="run_steps.py outputs (r1, r2, ...) or .tgz archives of them")
    parser.add_argument("-o", "--out", required=True)
    parser.add_argument("--source", default="", help="where the leases ran")
    parser.add_argument("--into", help="a profile to write with the fitted law (a trial beside it)")
    parser.add_argument("--name", help="the written profile's name (with --into)")
    args = parser.parse_args()
    if bool(args.into) != bool(args.name):
        print("fit-peer-waits: --into and --name go together", file=sys.stderr)
        return 2
    leases = [Path(p) for p in args.leases]
    for lease in leases:
        if not lease.exists():
            print(f"fit-peer-waits: {lease}: not found", file=sys.stderr)
            return 2
    try:
        fitted = fit(leases)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"fit-peer-waits: {e}", file=sys.stderr)
        return 1
    if not fitted["peer_wait_us"]:
        print("fit-peer-waits: no collective in the leases", file=sys.stderr)
        return 1
    names = [lease.name for lease in leases]
    if args.into:
        try:
            profile = json.loads(Path(args.into).read_text())
            profile["collectives"]["peer_wait_us"] = fitted["peer_wait_us"]
            profile["collectives"]["peer_wait_beside_us"] = fitted["peer_wait_beside_us"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"fit-peer-waits: {args.into}: not a profile with collectives ({type(e).__name__}: {e})", file=sys.stderr)
            return 2
        profile["name"] = args.name
        source = profile["collectives"].get("source")
        profile["collectives"]["source"] = "; ".join(filter(None, [source, f"peer wait: {', '.join(names)}"]))
        out = profile
    else:
        out = dict(fitted, source=args.source, leases=names)
    try:
        write_atomically(Path(args.out), json.dumps(out, indent=1) + "\n")
    except OSError as e:
        print(f"fit-peer-waits: {args.out}: cannot write it: {e.strerror or e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
