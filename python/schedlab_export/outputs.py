"""Where the exporter's and apply's files go when several processes share a
folder (torchrun: every rank compiles the same graphs into one `out_dir`).

* `process_rank()`: this process's rank in a job of two or more ranks, else
  None. torch.distributed's when a process group is initialized, else the
  launcher's environment (RANK, else LOCAL_RANK; WORLD_SIZE=1 means one
  process). torch is only asked when it is already imported.
* `ranked(case, rank)`: a file stem that carries the rank (`fsdp_1_bwd` ->
  `fsdp_1_bwd.rank2`), so that ranks never write the same file; a single
  process (rank None) keeps the stem as it is, byte for byte.
* `write_atomically(path, text)`: through a temporary file named after the
  target and this process's id, renamed over the target: a reader never sees
  half a file, and two processes writing into one folder never rename each
  other's temporary. The temporary is removed when the write fails.

No torch needed: tested in CI (tests/exporter/test_outputs.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _env_rank(environ) -> int | None:
    world = environ.get("WORLD_SIZE")
    if world is not None and world.strip() == "1":
        return None
    for name in ("RANK", "LOCAL_RANK"):
        value = environ.get(name)
        if value is not None and value.strip().isdigit():
            return int(value)
    return None


def process_rank(environ=None) -> int | None:
    """This process's rank when it is one of two or more, else None."""
    dist = getattr(sys.modules.get("torch"), "distributed", None)
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank() if dist.get_world_size() > 1 else None
    return _env_rank(os.environ if environ is None else environ)


def ranked(case: str, rank: int | None) -> str:
    """`case` with the rank in it; `case` itself for a single process."""
    return case if rank is None else f"{case}.rank{rank}"


def temporary_path(path: Path) -> Path:
    """The temporary beside `path` that this process writes it through."""
    return path.with_name(f"{path.name}.{os.getpid()}.tmp")


def write_atomically(path: Path, text: str) -> None:
    path = Path(path)
    tmp = temporary_path(path)
    try:
        tmp.write_text(text)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
