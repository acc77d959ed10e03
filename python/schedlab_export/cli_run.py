"""One way to run the schedlab CLI in a subprocess (apply's plans,
fx_bucketing's caps): a timeout, a binary that cannot start and a non-zero
exit each become one exception naming the command and the reason."""

from __future__ import annotations

import subprocess
from typing import Sequence


def run_cli(cmd: Sequence[str], what: str, timeout_s: float | None, error: type[Exception]) -> subprocess.CompletedProcess:
    """The finished `cmd` (`what` names it in messages: "schedlab plan").
    Raises `error`: timed out, could not be started, or "schedlab refused
    the graph / the options: <its first error line>" (exit 1 / 2; other
    codes by number)."""
    try:
        done = subprocess.run(list(cmd), capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as e:
        raise error(f"{what} timed out after {timeout_s:g} s") from e
    except OSError as e:
        raise error(f"schedlab could not be started: {e}") from e
    if done.returncode != 0:
        # Bytes, not text: an error line that is not UTF-8 is still a reason.
        lines = [ln for ln in done.stderr.decode("utf-8", errors="replace").splitlines() if ln.strip()]
        refused = {1: "refused the graph", 2: "refused the options"}.get(done.returncode, f"exited {done.returncode}")
        raise error(f"schedlab {refused}: {lines[0] if lines else '(no message)'}")
    return done
