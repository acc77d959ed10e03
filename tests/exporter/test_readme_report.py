"""The README's "Reading the report" example is what the built schedlab
prints: each shown line, in order (`  ...` stands for lines left out)."""

from __future__ import annotations

import os
import shlex
import subprocess
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _schedlab() -> str | None:
    path = os.environ.get("SCHEDLAB_BIN") or str(ROOT / "build" / "schedlab")
    return path if Path(path).is_file() else None


def readme_example() -> tuple[list[str], list[str]]:
    """The example's command (after `$ build/schedlab`) and its shown lines."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## Reading the report", 1)[1].split("```", 2)[1].strip("\n").splitlines()
    command = block[0]
    if not command.startswith("$ build/schedlab "):
        raise AssertionError(f"README.md, Reading the report: the block starts with {command!r}, not a schedlab command")
    return shlex.split(command[len("$ build/schedlab "):]), block[1:]


@unittest.skipUnless(_schedlab(), "needs the schedlab binary (SCHEDLAB_BIN or build/schedlab)")
class ReadmeReport(unittest.TestCase):
    def test_the_example_is_what_plan_prints(self):
        args, shown = readme_example()
        printed = subprocess.run([_schedlab(), *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
        at = 0
        for line in shown:
            if line.strip() == "...":
                continue
            with self.subTest(line=line):
                self.assertIn(line, printed[at:], "README.md's example line is not printed (in this order)")
                at = printed.index(line, at) + 1


if __name__ == "__main__":
    unittest.main()
