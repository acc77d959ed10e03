"""The installed wheel, from outside the checkout (run by wheel-smoke.sh with
the venv's python): everything comes from the venv, the in-process bindings
give the CLI's plan, the exporter's torch-free parts work, and apply plans
through the bindings and, as its fallback, through the CLI the wheel ships.

    VENV/bin/python tests/package/installed.py --root ROOT --venv VENV --plan PLAN.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import warnings
from pathlib import Path


def check(condition: bool, what: str) -> None:
    if not condition:
        print(f"installed.py: FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {what}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--venv", required=True, type=Path)
    parser.add_argument("--plan", required=True, type=Path, help="the installed CLI's plan of fsdp_1.post.json")
    args = parser.parse_args()
    data = args.root / "tests" / "data" / "inductor"
    venv = args.venv.resolve()

    import schedlab
    import schedlab_export
    from schedlab_export.apply import ApplySession, find_schedlab, without_runtimes
    from schedlab_export.memory_estimate import estimate_peak_memory

    for module in (schedlab, schedlab_export):
        check(venv in Path(module.__file__).resolve().parents, f"{module.__name__} comes from the venv ({module.__file__})")
    check(schedlab.bindings_available(), "the bindings import")
    check(venv in Path(schedlab.cli_path()).resolve().parents, "the wheel ships the CLI")
    check(schedlab.__version__ not in ("0+checkout", ""), f"version {schedlab.__version__}")

    graph = json.loads((data / "fsdp_1.post.json").read_text())
    plan = schedlab.plan(graph, comm_passes=["overlap_schedule"])
    check(plan == json.loads(args.plan.read_text()), "schedlab.plan(dict) == the installed CLI's plan, value for value")

    # The exporter's torch-free parts, through the installed package.
    estimate = estimate_peak_memory(graph, plan["memory"]["methods"]["baseline"]["order"])
    check(estimate.peak == plan["memory"]["methods"]["baseline"]["peak"],
          f"schedlab_export's estimator agrees with the core's baseline peak ({estimate.peak} bytes)")
    done = subprocess.run([sys.executable, "-m", "schedlab_export", "--check"], capture_output=True, text=True)
    check(done.returncode in (0, 2) and "schedlab_export" in (done.stdout + done.stderr),
          f"python -m schedlab_export --check runs (exit {done.returncode}: {(done.stdout + done.stderr).strip()})")

    # apply's planning, with stand-in scheduler nodes, both planners.
    class Node:
        def __init__(self, name: str):
            self.name = name

    nodes = [Node(n["name"]) for n in graph["nodes"]]
    check(find_schedlab() == schedlab.cli_path(), "apply finds the shipped CLI")
    expected = schedlab.plan(without_runtimes(graph), memory_methods=["baseline", "lpmf"],
                             comm_passes=["overlap_schedule"], fuse=False)["order"]
    for in_process, planner in ((None, "bindings"), (False, "cli")):
        session = ApplySession(["baseline", "lpmf"], ["overlap_schedule"], export=lambda _n: dict(graph),
                               name_of=lambda n: n.name, in_process=in_process)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = session.reorder(nodes)
        record = session.graphs[0]
        check(record.planner == planner and record.applied and [n.name for n in out] == expected,
              f"apply plans through the {planner} and applies the plan's order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
