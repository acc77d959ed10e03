"""The `schedlab` command of the installed package: runs the binary the
wheel ships (schedlab/bin/schedlab) with the same arguments, so `schedlab
plan G -o P.json` behaves exactly as the CLI built from the checkout."""

from __future__ import annotations

import os
import sys


def main() -> int:
    from . import cli_path

    binary = cli_path()
    if binary is None:
        print("schedlab: this installation has no schedlab binary (schedlab/bin/schedlab); "
              "install the wheel, or build the CLI with CMake (cmake --build build --target schedlab)", file=sys.stderr)
        return 2
    os.execv(binary, [binary, *sys.argv[1:]])
    return 2  # not reached: execv replaces the process


if __name__ == "__main__":
    sys.exit(main())
