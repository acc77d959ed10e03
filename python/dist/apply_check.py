"""One GPU: schedlab_export.apply runs real compiled steps in schedlab's
order, node for node, with results equal to Inductor's default order's.

    PYTHONPATH=python python3 python/dist/apply_check.py --schedlab build/schedlab --out out/apply

An fp32 transformer training step (forward and backward graphs) is compiled
with Inductor's default order, then under apply with each memory method alone
(bfs and dfs give orders other than Inductor's pick, so the step really runs
reordered) and with all four; then with a schedlab binary that does not exist
(the fallback). Every variant's outputs and gradients must equal the
default's bit for bit, and every graph's emitted order must equal the order
the pass returned. Writes OUT/apply_check.json; exit 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import torch
import torch.nn as nn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "zoo"))

import schedlab_export  # noqa: E402
from cases import Block  # noqa: E402 - the zoo's transformer block


def build():
    torch.manual_seed(0)
    model = nn.Sequential(*[Block(512, 8) for _ in range(2)]).cuda()
    x = torch.randn(4, 256, 512, device="cuda")
    return model, x


def step(model, x) -> list[torch.Tensor]:
    model.zero_grad(set_to_none=True)
    out = torch.compile(model)(x)
    out.pow(2).mean().backward()
    return [out.detach()] + [p.grad.detach().clone() for p in model.parameters()]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--schedlab", default=None)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch._dynamo.reset()
    model, x = build()
    reference = step(model, x)
    variants = {
        "bfs": dict(memory_methods=["bfs"], comm_passes=[]),
        "dfs": dict(memory_methods=["dfs"], comm_passes=[]),
        "all_methods_overlap": dict(memory_methods=["baseline", "lpmf", "bfs", "dfs"], comm_passes=["overlap_schedule"]),
        "missing_binary": dict(memory_methods=["dfs"], comm_passes=[], binary="/nonexistent/schedlab"),
    }
    report, ok = {}, True
    for name, kw in variants.items():
        kw.setdefault("binary", args.schedlab)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with schedlab_export.apply(out_dir=out / name, prefix=name, **kw) as session:
                values = step(model, x)
        torch._dynamo.reset()
        equal = all(torch.equal(a, b) for a, b in zip(values, reference))
        graphs = session.report()["graphs"]
        reordered = sum(g["applied"] and g["schedlab_order"] != g["inductor_order"] for g in graphs)
        row = {
            "graphs": len(graphs), "applied": sum(g["applied"] for g in graphs), "reordered_vs_inductor": reordered,
            "emitted_matches": all(g["emitted_matches"] for g in graphs), "results_bitwise_equal": equal,
            "warnings": [str(w.message) for w in caught if "schedlab" in str(w.message)],
            "per_graph": [{k: g[k] for k in ("name", "applied", "fallback_reason", "emitted_matches", "mismatch")}
                          | {"nodes": len(g["inductor_order"]),
                             "moved_vs_inductor": sum(a != b for a, b in zip(g["schedlab_order"] or [], g["inductor_order"]))}
                          for g in graphs],
        }
        want_applied = name != "missing_binary"
        row_ok = equal and row["emitted_matches"] and len(graphs) > 0 and (
            row["applied"] == len(graphs) if want_applied else (row["applied"] == 0 and row["warnings"]))
        row["ok"] = bool(row_ok)
        ok &= row["ok"]
        report[name] = row
        print(f"apply_check {name}: {row['applied']}/{row['graphs']} graphs in schedlab's order "
              f"({reordered} differ from Inductor's), emitted as planned: {row['emitted_matches']}, "
              f"bitwise equal: {equal} -> {'ok' if row['ok'] else 'FAIL'}", flush=True)
    report["device"] = torch.cuda.get_device_name()
    report["torch"] = torch.__version__
    (out / "apply_check.json").write_text(json.dumps(report, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
