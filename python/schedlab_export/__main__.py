"""python -m schedlab_export --script FILE --out DIR [--prefix NAME] [--strict] [--measure [--cudagraphs]] [-- ARGS...]

Runs FILE as __main__ (with ARGS as its sys.argv[1:]) inside capture(DIR) and
exits non-zero if any graph failed to export. `--check` only reports whether
this PyTorch has the Inductor internals the exporter needs. `--host-probe`
only prints this host's full-speed host probe (host_probe.py), for `schedlab
plan|simulate --host-probe-us`.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

from . import capture
from .compat import UnsupportedTorch, check_torch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m schedlab_export", description=__doc__.splitlines()[0])
    parser.add_argument("--script", help="Python file that compiles and runs the model")
    parser.add_argument("--out", help="directory for <prefix>_<k>_<fwd|bwd|inf>.{pre,post,expected}.json")
    parser.add_argument("--prefix", help="case name prefix (default: the script's file name)")
    parser.add_argument("--strict", action="store_true", help="stop at the first export failure")
    parser.add_argument("--check", action="store_true", help="only check this PyTorch and exit")
    parser.add_argument("--host-probe", action="store_true",
                        help="only print this host's probe (µs, its running speed at full speed) for schedlab plan|simulate --host-probe-us")
    parser.add_argument("--measure", action="store_true",
                        help="also measure each GPU graph's call -> <case>.measured.json (docs/schedmeasured-1.md)")
    parser.add_argument("--cudagraphs", action="store_true", help="with --measure: also time CUDA-graph replay")
    parser.add_argument("--samples", type=int, default=50, help="with --measure: timed calls per figure (>= 20)")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script (after --)")
    args = parser.parse_args(argv)

    if args.host_probe:
        from .host_probe import running_probe_us

        probe = running_probe_us()
        print(f"schedlab_export: host probe at full speed {probe:.2f} us "
              f"(schedlab plan|simulate GRAPH --host-probe-us {probe:.2f})")
        return 0
    try:
        version = check_torch()
    except UnsupportedTorch as e:
        print(f"schedlab_export: {e}", file=sys.stderr)
        return 2
    if args.check:
        print(f"schedlab_export: PyTorch {version}: every Inductor internal the exporter uses is present")
        return 0
    if not args.script or not args.out:
        parser.error("--script and --out are required (or --check)")
    if args.cudagraphs and not args.measure:
        parser.error("--cudagraphs needs --measure")
    if args.samples < 20:
        parser.error(f"--samples {args.samples}: at least 20")
    if args.measure:
        import torch

        if not torch.cuda.is_available():
            print("schedlab_export: --measure needs a CUDA GPU; none is available", file=sys.stderr)
            return 2
    script = Path(args.script)
    if not script.is_file():
        parser.error(f"--script {script}: no such file")
    script_args = args.script_args[1:] if args.script_args[:1] == ["--"] else args.script_args

    sys.argv = [str(script), *script_args]
    sys.path.insert(0, str(script.resolve().parent))
    with capture(args.out, prefix=args.prefix or script.stem, strict=args.strict, measure=args.measure,
                 cudagraphs=args.cudagraphs, samples=args.samples) as session:
        runpy.run_path(str(script), run_name="__main__")
    exported = sum(1 for g in session.graphs if g.has_post)
    if session.errors or exported == 0:
        for message in session.errors:
            print(f"schedlab_export: {first_line(message)}", file=sys.stderr)
        if not session.graphs:
            print("schedlab_export: the script compiled no graph with Inductor (torch.compile ran nothing?)",
                  file=sys.stderr)
        print(f"schedlab_export: {len(session.errors)} error(s), {exported} complete graph(s)", file=sys.stderr)
        return 1
    return 0


def first_line(message: str) -> str:
    """`what: ExceptionType: text` from a guarded error's traceback."""
    lines = [line for line in message.splitlines() if line.strip()]
    last = lines[-1].strip() if lines else message
    return f"{lines[0].rstrip(':')} -> {last}" if lines else message


if __name__ == "__main__":
    sys.exit(main())
