"""The tests' one way to open a checked-in archive of measurements
(tests/data/**/*.tgz): unpacked into a temporary folder, removed after."""

from __future__ import annotations

import contextlib
import tarfile
import tempfile
from pathlib import Path


@contextlib.contextmanager
def extracted(archive: Path):
    """The archive's contents in a temporary folder (yielded as a Path)."""
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(archive) as tgz:
            # the "data" filter where this Python has it (3.11.4+: refuses
            # links and paths out of tmp); the archive is the repository's own
            tgz.extractall(tmp, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        yield Path(tmp)
