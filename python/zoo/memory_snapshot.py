"""A real torch.cuda.memory._snapshot() beside its exported graph, for the
page's "Open measurement…" (tests/web/evidence.test.js opens every
tests/data/snapshots/<case>.snapshot.pickle beside <case>.post.json).

    PYTHONPATH=python python3 python/zoo/memory_snapshot.py --model resnet18 --out tests/data/snapshots

Compiles the model's inference call (python/zoo/fit_validation.py's MODELS:
random weights, no internet) under schedlab_export.capture, runs it once
more with the allocator's history recorded, and writes
OUT/<model>_0_inf.post.json and OUT/<model>_0_inf.snapshot.pickle
(torch.cuda.memory._dump_snapshot: a pickle of plain data).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main(argv=None) -> int:
    import fit_validation

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="resnet18", choices=sorted(fit_validation.MODELS))
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args(argv)

    import torch

    import schedlab_export

    torch.manual_seed(0)
    model, inputs = fit_validation.build(fit_validation.MODELS[args.model])
    compiled = torch.compile(model)
    with tempfile.TemporaryDirectory() as tmp:
        with schedlab_export.capture(tmp, prefix=args.model):
            with torch.no_grad():
                compiled(*inputs)
        posts = sorted(Path(tmp).glob(f"{args.model}_*.post.json"))
        if len(posts) != 1:
            print(f"memory_snapshot: {len(posts)} graphs exported for {args.model} (graph breaks?)", file=sys.stderr)
            return 1
        args.out.mkdir(parents=True, exist_ok=True)
        case = posts[0].name[: -len(".post.json")]
        shutil.copyfile(posts[0], args.out / posts[0].name)
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(max_entries=1_000_000)
    with torch.no_grad():
        compiled(*inputs)
    torch.cuda.synchronize()
    torch.cuda.memory._dump_snapshot(str(args.out / f"{case}.snapshot.pickle"))
    torch.cuda.memory._record_memory_history(enabled=None)
    print(f"memory_snapshot: wrote {args.out / (case + '.post.json')} and {args.out / (case + '.snapshot.pickle')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
