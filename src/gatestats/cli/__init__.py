"""The ``gatestats`` command line: one module per subcommand.

Exit codes: 0 success; 1 invalid input (the error names file, line or row, and field);
2 usage error (unknown option, bad argument; for ``gate`` and ``policy`` also an invalid policy
or a refused registration); ``run``: 3 incomplete run set; ``gate``: 10 warn, 11 fail,
12 insufficient evidence; ``verify``: 1 when any check fails.
"""

from __future__ import annotations

import typer

from gatestats.cli import analyze as _analyze
from gatestats.cli import calibrate as _calibrate
from gatestats.cli import cases as _cases
from gatestats.cli import compare as _compare
from gatestats.cli import correct as _correct
from gatestats.cli import cost as _cost
from gatestats.cli import drift as _drift
from gatestats.cli import gate as _gate
from gatestats.cli import importing as _importing
from gatestats.cli import key as _key
from gatestats.cli import plan as _plan
from gatestats.cli import policy as _policy
from gatestats.cli import promote as _promote
from gatestats.cli import recovery as _recovery
from gatestats.cli import report as _report
from gatestats.cli import run as _run
from gatestats.cli import validate as _validate
from gatestats.cli import verify as _verify
from gatestats.cli._help import use_plain_help

__all__ = ["app", "main"]

app = typer.Typer(
    name="gatestats",
    help="Decide, with statistics, whether a change to an AI agent may ship.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help and errors: flags shown as flags (see cli/_help.py)
)
app.command("run")(_run.run_command)
app.command("analyze")(_analyze.analyze_command)
app.command("validate")(_validate.validate_command)
app.command("compare")(_compare.compare_command)
app.command("plan")(_plan.plan_command)
app.command("calibrate")(_calibrate.calibrate_command)
app.command("cost")(_cost.cost_command)
app.command("gate")(_gate.gate_command)
app.command("report")(_report.report_command)
app.command("verify")(_verify.verify_command)
app.command("promote")(_promote.promote_command)
app.add_typer(_cases.app, name="cases")
app.command("correct")(_correct.correct_command)
app.command("drift")(_drift.drift_command)
app.command("recovery")(_recovery.recovery_command)
app.add_typer(_policy.app, name="policy")
app.add_typer(_importing.app, name="import")
app.add_typer(_key.app, name="key")
use_plain_help(app)


def main() -> None:
    """Console-script entry point."""
    app()
