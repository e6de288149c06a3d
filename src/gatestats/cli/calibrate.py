"""``gatestats calibrate``: a judge's error rates, order and persuasion tests, and a versioned calibration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from gatestats._digest import digest_file, digest_text
from gatestats.cli._common import reports_errors
from gatestats.judges import (
    JudgeCalibration,
    JudgeKind,
    ProportionMethod,
    SwappedCoding,
    calibrate,
    parse_judgment_mapping,
    parse_where,
    read_judgments,
    write_calibration,
)

__all__ = ["calibrate_command", "render_calibration"]


def _rate(value: dict[str, Any] | None) -> tuple[str, str]:
    if value is None:
        return "not measured", "—"
    counts = f"{value['numerator']}/{value['n']}"
    if value["status"] != "ok":
        return "insufficient evidence", counts
    return f"{value['estimate']:.3f} [{value['ci_low']:.3f}, {value['ci_high']:.3f}]", counts


def _pvalue(value: float | None) -> str:
    return "—" if value is None else (f"{value:.2e}" if value < 1e-3 else f"{value:.4f}")


def render_calibration(calibration: JudgeCalibration, console: Console) -> None:
    """Print the human-readable summary of a calibration."""
    d = calibration.to_dict()
    details = d["details"]
    errors = details["errors"]
    level = f"{calibration.confidence_level:.0%}"
    title = (
        f"judge {calibration.judge_model or '(unnamed)'}, rubric {calibration.rubric_version or '(none)'}: "
        f"{calibration.n_items} items ({errors['n_label_positive']} labelled {calibration.positive!r}, "
        f"{errors['n_label_negative']} labelled {calibration.negative!r}), {calibration.n_unparseable} unparseable"
    )
    console.print(title, highlight=False)
    table = Table()
    table.add_column("statistic")
    table.add_column(f"estimate [{level} CI]", justify="right", no_wrap=True)
    table.add_column("count", justify="right")
    table.add_row("false-pass rate P(judge passes | label fails)", *_rate(d["false_pass_rate"]))
    table.add_row("false-fail rate P(judge fails | label passes)", *_rate(d["false_fail_rate"]))
    table.add_row("accuracy (parseable verdicts)", *_rate(errors["accuracy"]))
    table.add_row("unparseable verdicts", *_rate(errors["unparseable_rate"]))
    kappa = d["kappa"]
    kappa_cell = (
        f"{kappa['estimate']:.3f} [{kappa['ci_low']:.3f}, {kappa['ci_high']:.3f}]"
        if kappa["status"] == "ok"
        else "insufficient evidence"
    )
    table.add_row("Cohen's kappa (asymptotic CI)", kappa_cell, str(kappa["n"]))
    order = details["order"]
    if order is not None:
        table.add_row("order-flip rate (both orders parseable)", *_rate(d["flip_rate"]))
        table.add_row(
            "position bias: first / second, exact sign test p",
            _pvalue(d["position_bias_pvalue"]),
            f"{order['n_biased_first']} / {order['n_biased_second']}",
        )
    persuasion = details["persuasion"]
    if persuasion is not None:
        diff = persuasion["difference"]
        cell = (
            f"{diff['estimate']:+.3f} [{diff['ci_low']:+.3f}, {diff['ci_high']:+.3f}]"
            if diff["status"] == "ok"
            else "insufficient evidence"
        )
        table.add_row("persuasion: pass-rate change with self-advocacy", cell, f"n={persuasion['n_pairs']}")
        table.add_row(
            "persuasion: exact McNemar p (+ / -)",
            _pvalue(d["persuasion_pvalue"]),
            f"{persuasion['n_pass_with_text_only']} / {persuasion['n_pass_without_text_only']}",
        )
    console.print(table)
    slices = details["errors_by_slice"]
    if slices:
        by = Table(title="by slice", title_justify="left")
        for name in ("slice", "items", "false-pass rate", "n", "false-fail rate", "n", "unparseable"):
            by.add_column(name, justify="left" if name == "slice" else "right", no_wrap=name != "slice")
        for s in slices:
            fp, fp_n = _rate(s["false_pass_rate"])
            ff, ff_n = _rate(s["false_fail_rate"])
            by.add_row(s["slice"], str(s["n_items"]), fp, fp_n, ff, ff_n, str(s["n_unparseable"]))
        console.print(by)
    for name in ("false_pass_rate", "false_fail_rate"):
        if d[name]["status"] != "ok":
            console.print(f"  insufficient evidence: {d[name]['reason']}", highlight=False)
    if calibration.n_labels_without_verdict:
        console.print(
            f"  note: {calibration.n_labels_without_verdict} labelled item(s) have no verdict row (not judged)",
            highlight=False,
        )
    if calibration.rubric_digest is None:
        console.print(
            "  note: no rubric given: a release gate cannot match this calibration to a rubric", highlight=False
        )
    console.print(f"  version {calibration.version}", highlight=False)


@reports_errors
def calibrate_command(
    judgments: Annotated[Path, typer.Argument(help="Judge verdicts: .csv, .jsonl or .parquet, one row per item.")],
    mapping: Annotated[
        str,
        typer.Option(
            "--map",
            help=(
                "Field = column, comma-separated: item=COL,label=COL,verdict=COL[,verdict_swapped=COL,"
                "verdict_persuaded=COL,slice=COL,judge=COL,rubric=COL,reason=COL,score=COL]; item=COL1+COL2 joins."
            ),
        ),
    ],
    positive: Annotated[str, typer.Option(help="The passing value (pairwise: 'output A is better').")],
    labels: Annotated[
        Path | None, typer.Option(help="Separate labelled set (item and label columns named by --map).")
    ] = None,
    negative: Annotated[
        str | None, typer.Option(help="The failing value (default: the one other label value).")
    ] = None,
    tie: Annotated[str | None, typer.Option(help="Tie verdict of a pairwise judge (counts as not passing).")] = None,
    kind: Annotated[str, typer.Option(help="pointwise or pairwise.")] = "pointwise",
    swapped_coding: Annotated[
        str, typer.Option(help="original (swapped verdict mapped back to A/B) or presented (as shown).")
    ] = "original",
    where: Annotated[
        list[str] | None, typer.Option("--where", help="Keep judgment rows with COLUMN=VALUE (repeatable).")
    ] = None,
    unparseable: Annotated[
        list[str] | None, typer.Option("--unparseable", help="Verdict value meaning 'could not parse' (repeatable).")
    ] = None,
    judge_model: Annotated[str | None, typer.Option(help="Judge model (instead of judge=COL).")] = None,
    rubric: Annotated[Path | None, typer.Option(help="Rubric / prompt file; its sha256 is the rubric digest.")] = None,
    rubric_version: Annotated[str | None, typer.Option(help="Rubric version label (instead of rubric=COL).")] = None,
    interval: Annotated[str, typer.Option(help="wilson or clopper-pearson.")] = "wilson",
    confidence_level: Annotated[float, typer.Option(help="Two-sided confidence level.")] = 0.95,
    as_json: Annotated[bool, typer.Option("--json", help="Print the calibration as one JSON object.")] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Calibration file to write (.json); never overwritten.")
    ] = None,
) -> None:
    """Calibrate an LLM judge against human labels; optionally write the versioned calibration."""
    if kind not in ("pointwise", "pairwise"):
        raise typer.BadParameter(f"must be pointwise or pairwise (got {kind!r})", param_hint="--kind")
    if swapped_coding not in ("original", "presented"):
        raise typer.BadParameter(
            f"must be original or presented (got {swapped_coding!r})", param_hint="--swapped-coding"
        )
    if interval not in ("wilson", "clopper-pearson"):
        raise typer.BadParameter(f"must be wilson or clopper-pearson (got {interval!r})", param_hint="--interval")
    if not 0 < confidence_level < 1:
        msg = f"must lie strictly between 0 and 1 (got {confidence_level})"
        raise typer.BadParameter(msg, param_hint="--confidence-level")
    try:
        fields = parse_judgment_mapping(mapping)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--map: "), param_hint="--map") from None
    try:
        filters = parse_where(where or [])
    except ValueError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--where: "), param_hint="--where") from None
    if tie is not None and kind != "pairwise":
        raise typer.BadParameter("a tie value needs --kind pairwise", param_hint="--tie")
    for field in ("verdict_swapped",):
        if field in fields and kind != "pairwise":
            raise typer.BadParameter(f"{field} (order swaps) needs --kind pairwise", param_hint="--map")
    if judge_model is not None and "judge" in fields:
        raise typer.BadParameter("give the judge model as a column (judge=COL) or as --judge-model, not both")
    if rubric_version is not None and "rubric" in fields:
        raise typer.BadParameter("give the rubric version as a column (rubric=COL) or as --rubric-version, not both")
    if output is not None and output.exists():
        msg = f"{output}: calibration file already exists (calibrations are immutable; choose a new name)"
        raise FileExistsError(msg)
    if rubric is not None and not rubric.is_file():
        msg = f"{rubric}: no such rubric file"
        raise FileNotFoundError(msg)
    chosen_kind: JudgeKind = kind  # type: ignore[assignment]
    judged = read_judgments(
        judgments,
        fields,
        positive=positive,
        negative=negative,
        tie=tie,
        kind=chosen_kind,
        labels=labels,
        where=filters,
        unparseable=unparseable or [],
    )
    version_label = rubric_version if rubric_version is not None else judged.rubric_version
    if rubric is not None:
        rubric_digest: str | None = digest_file(rubric)
    else:
        rubric_digest = None if version_label is None else digest_text(version_label)
    coding: SwappedCoding = swapped_coding  # type: ignore[assignment]
    method: ProportionMethod = interval  # type: ignore[assignment]
    result = calibrate(
        judged.frame,
        positive=judged.positive,
        negative=judged.negative,
        tie=judged.tie,
        kind=chosen_kind,
        swapped_coding=coding,
        judge_model=judge_model if judge_model is not None else judged.judge_model,
        rubric_digest=rubric_digest,
        rubric_version=version_label,
        method=method,
        confidence_level=confidence_level,
        n_labels_without_verdict=judged.n_labels_without_verdict,
        sources=judged.sources,
    )
    if output is not None:
        write_calibration(result, output)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), allow_nan=False))
    else:
        console = Console()
        render_calibration(result, Console(width=max(console.width, 120)))
    if output is not None:
        typer.echo(f"wrote calibration {result.version} to {output}", err=True)
