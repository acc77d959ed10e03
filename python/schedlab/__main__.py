"""python -m schedlab ARGS...: the shipped `schedlab` command line (_cli.py)."""

import sys

from ._cli import main

sys.exit(main())
