"""The bundled sequential example (examples/sequential), run by the controller without a sandbox (fast, anywhere)."""

from __future__ import annotations

from pathlib import Path

from gatestats.sequential.run import SequentialRunOptions, SequentialRunResult, run_until_decided

#: Not through tests.conftest's ROOT: test_controller's killed child imports this module, and tests.conftest
#: would bring hypothesis and the suite's fixtures into it (issue 28, item 3).
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sequential"


def example_options(out: Path, **changes: object) -> SequentialRunOptions:
    """The example's run into ``out``, without isolation (its verifier reads answer.txt only)."""
    given: dict[str, object] = {
        "policy": EXAMPLE / "policy.toml",
        "cases": EXAMPLE / "cases",
        "baseline": EXAMPLE / "candidates" / "baseline",
        "candidate": EXAMPLE / "candidates" / "candidate",
        "out": out,
        "isolation": "none",
        "workspace": "dir-copy",
    }
    return SequentialRunOptions(**(given | changes))  # type: ignore[arg-type]


def run_example(out: Path, **changes: object) -> SequentialRunResult:
    """Run the example until decided."""
    return run_until_decided(example_options(out, **changes))
