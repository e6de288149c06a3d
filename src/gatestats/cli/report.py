"""``gatestats report``: the versioned release report of one verdict, ``OUT/<release>/<version>/``.

Exit codes: 0 the report was built (its directory and HTML page are printed); 1 bad input — the
verdict file is missing, not a verdict or edited after it was written, or a record file it names
is missing or changed since (file, expected and actual digest named) — or the render failed;
nothing is written then; 2 usage error (unknown option, a bad ``--release`` or ``--renderer``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gatestats.cli._common import fail
from gatestats.errors import GatestatsError

if TYPE_CHECKING:
    from gatestats.report.quarto import Renderer

__all__ = ["report_command"]

_RENDERERS = ("auto", "quarto", "jupyter")


def report_command(
    verdict: Annotated[Path, typer.Argument(help="Verdict file written by `gatestats gate -o`.")],
    release: Annotated[
        str | None,
        typer.Option(
            "--release",
            help="Release name, the directory under --out (default: slug of the policy name and the candidate system).",
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Root directory of the reports.")] = Path("reports"),
    renderer: Annotated[
        str, typer.Option("--renderer", help="auto (Quarto when installed, else Jupyter), quarto or jupyter.")
    ] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print the built report as one JSON object.")] = False,
    watch: Annotated[
        Path | None,
        typer.Option(
            "--watch",
            help="A rollout's observation log (gatestats watch init): its latest reading shown in 'After the gate'.",
        ),
    ] = None,
) -> None:
    """Build the release report of VERDICT as OUT/<release>/<next version>/ (never overwritten).

    \f
    Parameters
    ----------
    verdict
        The verdict file (``gatestats gate -o``).
    release
        The release's directory name under ``out`` (default: :func:`default_release_name`).
    out
        The root directory of the reports.
    renderer
        ``auto``, ``quarto`` or ``jupyter``.
    as_json
        Print the built report as one JSON object.
    watch
        The rollout's observation log; its latest reading (``gatestats watch status``) must follow VERDICT.

    Raises
    ------
    typer.BadParameter
        A usage error (exit 2): a bad ``--renderer`` or ``--release``.
    typer.Exit
        Exit 1: the verdict or a record file it names is invalid, or the render failed.
    """
    from gatestats.report.release import build_release_report, check_release_name

    if renderer not in _RENDERERS:
        msg = f"must be one of {', '.join(_RENDERERS)} (got {renderer!r})"
        raise typer.BadParameter(msg, param_hint="--renderer")
    if release is not None:
        try:
            check_release_name(release)
        except ValueError as exc:
            raise typer.BadParameter(str(exc).removeprefix("release: "), param_hint="--release") from None
    chosen: Renderer = renderer  # type: ignore[assignment]
    try:
        report = build_release_report(verdict, release=release, out=out, renderer=chosen, watch=watch)
    except (GatestatsError, ValueError, OSError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n")
        return
    print(f"report: {report.directory} (release {report.release}, version {report.version})")
    print(f"html: {report.html_path}")
    print(
        f"verdict: {report.verdict} ({report.verdict_digest}); rendered with {report.renderer} "
        f"({report.renderer_version}) in {report.seconds:.1f} s"
    )
