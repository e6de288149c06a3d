"""The ``gatestats`` command line: one module per subcommand.

Exit codes: 0 success; 1 invalid input (the error names file, line or row, and field);
2 usage error (unknown option, bad argument; for ``gate`` and ``policy`` also an invalid policy
or a refused registration); ``run``: 3 incomplete run set; ``gate``: 10 warn, 11 fail,
12 insufficient evidence; ``verify``: 1 when any check fails.

Each subcommand's module is imported only when that command is used (:mod:`gatestats.cli._lazy`):
``gatestats --help`` imports none of them, and ``gatestats validate`` imports the record reader
but not the statistics or the report stack (tests/cli/test_import_discipline.py).
"""

from __future__ import annotations

import gc
import os
from collections.abc import MutableMapping
from typing import Final, Literal, TypedDict

import typer

from gatestats.cli._lazy import LazyCommand, LazyGroup

__all__ = ["BLAS_THREAD_VARIABLES", "COMMANDS", "GC_YOUNG_THRESHOLD", "app", "main", "one_blas_thread"]


def _command(target: str, summary: str) -> LazyCommand:
    """The subcommand at ``target``, ``module:attribute`` below ``gatestats.cli`` (entry-point notation)."""
    module, _, attribute = target.partition(":")
    return LazyCommand(module=f"gatestats.cli.{module}", attribute=attribute, summary=summary)


#: Every subcommand in the order ``--help`` lists it: where it lives (``module:attribute``) and the
#: first paragraph of its help (a command's docstring, a group's ``help``), which the listing shows
#: without importing it.
COMMANDS: dict[str, LazyCommand] = {
    "run": _command(
        "run:run_command",
        "Run every case TRIALS times against the candidate in fresh, isolated, bounded sandboxes.",
    ),
    "analyze": _command(
        "analyze:analyze_command",
        "pass^k (all k trials pass) and pass@k (at least one passes) per system, case-level intervals.",
    ),
    "validate": _command(
        "validate:validate_command",
        "Check record files (types, values, cross-field rules, duplicate keys); exit 1 on any defect.",
    ),
    "compare": _command(
        "compare:compare_command",
        "Paired comparison on shared cases: flips, exact and mid-p McNemar, interval, non-inferiority.",
    ),
    "rank": _command(
        "rank:rank_command",
        "Rank systems on the cases all of them ran: rank intervals and tie groups from adjusted pairwise tests.",
    ),
    "plan": _command(
        "plan:plan_command",
        "Plan a decision: cases needed, minimum detectable effect, false-block risk of all-k rules, cases or trials.",
    ),
    "calibrate": _command(
        "calibrate:calibrate_command",
        "Calibrate an LLM judge against human labels; optionally write the versioned calibration.",
    ),
    "cost": _command(
        "cost:cost_command",
        "Cost per accepted outcome: spend of every attempt plus review time, over accepted outcomes.",
    ),
    "gate": _command(
        "gate:gate_command",
        "Decide pass / warn / fail / insufficient_evidence for CANDIDATE against BASELINE under POLICY.",
    ),
    "report": _command(
        "report:report_command",
        "Build the release report of VERDICT as OUT/<release>/<next version>/ (never overwritten).",
    ),
    "verify": _command(
        "verify:verify_command",
        "Re-check VERDICT: its digest, signature, policy, registration and every record file it names.",
    ),
    "promote": _command(
        "promote:promote_command",
        "Write a proposed case from TRACE into SET/proposed/ (a person approves it with `gatestats cases approve`).",
    ),
    "correct": _command(
        "correct:correct_command",
        "Run each case; on failure, give the reviser the deployable feedback and run its revision, until a stop.",
    ),
    "drift": _command(
        "drift:drift_command",
        "Test whether the stored baseline's outcomes moved on its re-run under today's infrastructure.",
    ),
    "recovery": _command(
        "recovery:recovery_command",
        "Print recovery within r rounds, rounds and cost per accepted outcome of a correction loop.",
    ),
    "cases": _command(
        "cases:app",
        "The protected golden set: approvals, splits, versions.",
    ),
    "policy": _command(
        "policy:app",
        "Check and register gate policies.",
    ),
    "import": _command(
        "importing:app",
        "Import trial outcomes from other tools as run records (JSONL).",
    ),
    "key": _command(
        "key:app",
        "Make signing keys (Ed25519, PEM).",
    ),
    "watch": _command(
        "watch:app",
        "Watch a release after the gate: register its rollout plan, add observations and late labels.",
    ),
}


class _Settings(TypedDict):
    """The :class:`typer.Typer` options the application sets."""

    add_completion: bool
    pretty_exceptions_enable: bool
    rich_markup_mode: Literal["markdown", "rich"] | None


#: The application's settings, which typer passes down to every command.
_SETTINGS: _Settings = {
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,  # plain help and errors: flags shown as flags (see cli/_help.py)
}


class _Group(LazyGroup):
    table = COMMANDS
    settings = _SETTINGS


app = typer.Typer(
    name="gatestats",
    help="Decide, with statistics, whether a change to an AI agent may ship.",
    no_args_is_help=True,
    cls=_Group,
    **_SETTINGS,
)


@app.callback()
def _group() -> None:
    # A callback makes typer build a group although no command is registered eagerly.
    pass


#: The variables that size a BLAS thread pool: when the user sets none, the command line runs BLAS
#: on one thread (:func:`one_blas_thread`).
BLAS_THREAD_VARIABLES: Final = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread(environ: MutableMapping[str, str]) -> bool:
    """Ask BLAS for one thread (numpy reads it when it loads), unless the user has sized the pool.

    The command line's arithmetic is vectorised element-wise work and small products, not large
    linear algebra, and a product's rounding can depend on its thread count (statsmodels' fits):
    on one thread every machine prints the same digits, the ones the test suite checks (it runs one
    thread), and a command starts ≈0.1 CPU-s sooner (OpenBLAS starts no thread pool). A user who
    sets any of :data:`BLAS_THREAD_VARIABLES` keeps their setting; child processes (the report's
    kernel, Ray workers) inherit the environment either way.

    Parameters
    ----------
    environ
        The environment to complete (``os.environ`` at start-up).

    Returns
    -------
    bool
        Whether it set anything.
    """
    if any(name in environ for name in BLAS_THREAD_VARIABLES):
        return False
    environ["OPENBLAS_NUM_THREADS"] = "1"
    environ["MKL_NUM_THREADS"] = "1"
    return True


#: The garbage collector's young-generation threshold while a command runs (Python's default: 700).
#: A command's start allocates some 50,000-100,000 objects that live to its end (modules, functions,
#: classes, polars' and numpy's tables): at 700 the collector ran ~135 times during ``gatestats
#: compare``'s start (one full collection), traversing the same survivors again and again, 20-35 ms of
#: CPU for no garbage (issue 28 item 2). At 100,000 the start runs no collection; a long run still
#: collects, every 100,000 net allocations (mypy sets 200,000). No value depends on when the collector runs.
GC_YOUNG_THRESHOLD: Final = 100_000


def main() -> None:
    """Console-script entry point (BLAS on one thread unless the user says otherwise: :func:`one_blas_thread`).

    The command runs with the garbage collector's young generation at :data:`GC_YOUNG_THRESHOLD`
    (at least); the thresholds before are restored when it ends, so a caller in the same process (a
    test, the demo) keeps its own, and the objects still alive then are moved to the oldest generation
    (``gc.freeze``, ``gc.unfreeze``), where they are collected as any old object.
    """
    one_blas_thread(os.environ)
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], GC_YOUNG_THRESHOLD), *threshold[1:])
    try:
        app()
    finally:
        if not gc.get_freeze_count():  # what the command left is old now: no collection of it at once when
            gc.freeze()  # the threshold drops (~100,000 young objects, ~17 ms); unfrozen into the oldest
            gc.unfreeze()  # generation, it is collected at the next full collection, as any old object
        gc.set_threshold(*threshold)
