"""What a zoo case's Triton kernels move to and from DRAM and the L2, as
Nsight Compute counts it (docs/cost-model.md, "Scatter traffic"): the
bytes the laws price are a model of this traffic, and where a law errs
these counts tell whether its traffic or its rate is wrong.

    PYTHONPATH=python python3 python/zoo/ncu_traffic.py --out OUT.json CASE [CASE ...]

Each case (cases.KNOWN_CASES) runs twice in one process under `ncu
--profile-from-start off`: the first call compiles and autotunes, the second
runs between cudaProfilerStart and cudaProfilerStop, so only its Triton
kernels are profiled, each once, with the caches flushed before it (ncu's
default). OUT.json lists them in launch order, per case: the kernel's name,
its DRAM bytes read and written, its L2 sectors and their hit rate, and its
duration (under ncu's locked base clocks: slower than a timed run).
ncu's own report is kept beside it, OUT.json.CASE.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
NCU = os.environ.get("NCU", "/usr/local/cuda/bin/ncu")
# Nsight Compute metric -> the field OUT.json names it
METRICS = {
    "dram__bytes_read.sum": "dram_read_bytes",
    "dram__bytes_write.sum": "dram_write_bytes",
    "lts__t_sectors.sum": "l2_sectors",
    "lts__t_sector_hit_rate.pct": "l2_hit_pct",
    "gpu__time_duration.sum": "duration_ns",
}
# ncu's units (they differ between versions), scaled to bytes, sectors,
# percent and ns; a value in another unit is kept as written, with its unit
UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9,
         "sector": 1, "Ksector": 1e3, "Msector": 1e6, "Gsector": 1e9, "%": 1, "": 1,
         "nsecond": 1, "usecond": 1e3, "msecond": 1e6, "ns": 1, "us": 1e3, "ms": 1e6}


def run_cases(names: list[str]) -> None:
    """The profiled process (it imports torch, which the outer one needs
    not): each case once to compile, once profiled."""
    import torch

    sys.path.insert(0, str(HERE))
    import cases

    unknown = [n for n in names if n not in cases.KNOWN_CASES]
    if unknown:
        print(f"ncu_traffic: unknown case(s) {', '.join(unknown)}", file=sys.stderr)
        sys.exit(2)
    for name in names:
        cases.KNOWN_CASES[name]()
        torch.cuda.synchronize()
        print(f"ncu_traffic: case {name}", flush=True)
        torch.cuda.cudart().cudaProfilerStart()
        cases.KNOWN_CASES[name]()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()


def parse_report(text: str) -> list[dict]:
    """ncu's CSV (one row a kernel and metric) as one record a kernel, in
    launch order. Raises ValueError naming a row without a column or a
    number."""
    kernels: dict[str, dict] = {}
    for i, row in enumerate(csv.DictReader(line for line in text.splitlines() if line.startswith('"'))):
        try:
            launch, name, metric, unit, value = row["ID"], row["Kernel Name"], row["Metric Name"], row["Metric Unit"], row["Metric Value"]
        except KeyError as e:
            raise ValueError(f"ncu report row {i + 1}: no column {e}") from None
        if metric not in METRICS:
            continue
        record = kernels.setdefault(launch, {"kernel": name})
        try:
            number = float(value.replace(",", ""))
        except ValueError:
            raise ValueError(f"ncu report row {i + 1}: {metric} is {value!r}, not a number") from None
        record[METRICS[metric]] = number * UNITS.get(unit, 1)
        if unit not in UNITS:
            record[METRICS[metric] + "_unit"] = unit
    return [kernels[k] for k in sorted(kernels, key=int)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="+", metavar="CASE", help="zoo cases (cases.py), each profiled in its own ncu run")
    ap.add_argument("--out", help="the JSON file the counts go to (required)")
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)  # the profiled process itself
    args = ap.parse_args(argv)
    if args.inner:
        run_cases(args.cases)
        return 0
    if not args.out:
        ap.error("--out is required")
    out = Path(args.out)
    if not out.parent.is_dir():
        ap.error(f"--out: {out.parent} is not a folder")
    if not Path(NCU).is_file():
        ap.error(f"{NCU}: no Nsight Compute there (set NCU to its ncu)")
    result = {"format": "ncu_traffic/1", "metrics": METRICS, "cases": {}}
    for name in args.cases:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "ncu.csv"
            cmd = [NCU, "--profile-from-start", "off", "--target-processes", "all", "--kernel-name", "regex:triton_",
                   "--metrics", ",".join(METRICS), "--csv", "--log-file", str(log),
                   sys.executable, str(Path(__file__).resolve()), "--inner", name]
            rc = subprocess.call(cmd)
            if rc != 0 or not log.is_file():
                print(f"ncu_traffic: {name}: ncu exited {rc}" + ("" if log.is_file() else " and wrote no report"), file=sys.stderr)
                return 1
            report = log.read_text()
            out.with_name(f"{out.name}.{name}.csv").write_text(report)
            try:
                result["cases"][name] = parse_report(report)
            except ValueError as e:
                print(f"ncu_traffic: {name}: {e}", file=sys.stderr)
                return 1
    tmp_out = out.with_name(out.name + ".tmp")
    tmp_out.write_text(json.dumps(result, indent=1) + "\n")
    tmp_out.replace(out)
    print(f"ncu_traffic: {sum(len(k) for k in result['cases'].values())} kernels of {len(result['cases'])} case(s) in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
