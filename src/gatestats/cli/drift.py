"""``gatestats drift STORED RERUN``: did the stored baseline's outcomes move on its re-run?

``RERUN`` is made by ``gatestats run CASES --baseline-sample N --against STORED --out RERUN``. The
test is :func:`gatestats.gate.drift.drift_test` (exact paired test, the case as the unit). Exit
codes: 0 no drift shown; 12 the baseline moved (environment or evaluator drift: a gate against
this baseline must not blame the candidate) or drift cannot be tested (too few cases, an
incomplete re-run) — the status says which; 1 invalid input (a damaged run set, a re-run of
another baseline); 2 usage error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gatestats.cli._common import checked_option, echo_json, reports_errors
from gatestats.io.text import TEXT_LIMIT, visible
from gatestats.vocabulary import check_alpha

__all__ = ["EXIT_BLOCKED", "drift_command"]

#: The gate's "insufficient evidence" exit: blocked, without blaming the candidate.
EXIT_BLOCKED = 12


@reports_errors
def drift_command(
    stored: Annotated[Path, typer.Argument(help="The stored baseline run set directory.")],
    rerun: Annotated[
        Path, typer.Argument(help="Its re-run: `gatestats run CASES --baseline-sample N --against STORED --out DIR`.")
    ],
    alpha: Annotated[float, typer.Option("--alpha", help="Level of the two-sided exact paired test.")] = 0.05,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Test whether the stored baseline's outcomes moved on its re-run under today's infrastructure.

    \f
    Parameters
    ----------
    stored, rerun
        The stored baseline run set and its sampled re-run.
    alpha
        The test's level.
    as_json
        Print JSON instead of text.

    Raises
    ------
    typer.Exit
        12 when the baseline moved or drift cannot be tested; 1 on invalid input; 2 on a bad ``--alpha``.
    """
    checked_option(check_alpha, alpha, "--alpha")
    from gatestats.gate.drift import drift_test

    result = drift_test(stored, rerun, alpha=alpha)
    if as_json:
        echo_json(result.to_dict())
    else:
        typer.echo(f"baseline drift: {result.status} — {visible(result.reason, limit=TEXT_LIMIT)}")
    if result.status != "stable":
        raise typer.Exit(EXIT_BLOCKED)
