"""A check run in a child interpreter with a deadline: for readers that must take linear time on hostile input.

A regular expression that backtracks catastrophically cannot be interrupted from Python once it runs, so the check
runs in a child that :func:`subprocess.run` kills at the deadline (set far above what the check takes: a pattern
that goes superlinear again fails the test, it does not hang the suite).
"""

from __future__ import annotations

import subprocess
import sys


def passes_within(script: str, seconds: float = 60) -> None:
    """Run ``script`` (Python source) in a fresh interpreter; fail unless it exits 0 within ``seconds``.

    Parameters
    ----------
    script
        The check: Python source whose assertions decide.
    seconds
        The deadline (``subprocess.TimeoutExpired`` past it, which fails the test).
    """
    done = subprocess.run([sys.executable, "-c", script], timeout=seconds, check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
