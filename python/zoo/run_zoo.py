"""Export the model zoo (cases.py): one capture per case, prefix = case name.

    PYTHONPATH=python python3 python/zoo/run_zoo.py --out out/zoo [--only NAME ...]

A case that fails is reported and skipped; the exit status is non-zero if any
did. Single-GPU cases run first, then the fake process group is started for
the distributed ones (so the single-GPU graphs say world_size 1).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

import torch

import schedlab_export

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cases  # noqa: E402


def run_case(name: str, fn, out: Path) -> dict:
    started = time.time()
    record = {"case": name, "graphs": [], "errors": []}
    try:
        with schedlab_export.capture(out, prefix=name) as session:
            fn()
        record["graphs"] = [
            {"case": g.case, "kind": g.kind, "complete": g.has_post} for g in session.graphs
        ]
        record["errors"] = session.errors
    except Exception:  # noqa: BLE001 - the zoo goes on with the next case
        record["errors"].append(traceback.format_exc())
        print(f"zoo: case {name} failed:\n{record['errors'][-1]}", file=sys.stderr)
    record["seconds"] = round(time.time() - started, 1)
    print(f"zoo: {name}: {len(record['graphs'])} graph(s), {len(record['errors'])} error(s), "
          f"{record['seconds']} s", file=sys.stderr, flush=True)
    return record


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", nargs="*", help="case names (default: all)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    wanted = set(args.only) if args.only else None

    records = []
    for name, fn in cases.SINGLE_GPU_CASES.items():
        if wanted is None or name in wanted:
            records.append(run_case(name, fn, out))
    distributed = [(n, f) for n, f in cases.DISTRIBUTED_CASES.items() if wanted is None or n in wanted]
    if distributed:
        cases.init_fake_process_group()
        for name, fn in distributed:
            records.append(run_case(name, fn, out))
    (out / "zoo_report.json").write_text(json.dumps(
        {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "cases": records}, indent=1))
    return 1 if any(r["errors"] for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
