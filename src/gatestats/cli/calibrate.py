"""``gatestats calibrate``: a judge's error rates, order and persuasion tests, and a versioned calibration."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.console import Console
from rich.table import Table

from gatestats.cli._calibrate_pairwise import pairwise_row_names, pvalue_cell, render_pairwise, term
from gatestats.cli._calibrate_pairwise import rate_cells as _rate
from gatestats.cli._common import ConfidenceLevelOption, checked_option, reports_errors
from gatestats.cli._publish import FormatOption, checked_publishing
from gatestats.io.digest import digest_file, digest_text
from gatestats.vocabulary import check_choice, check_confidence_level

if TYPE_CHECKING:
    from gatestats.cli._calibrate_classes import MulticlassInput
    from gatestats.cli._calibrate_ppi import PPIOutput
    from gatestats.judges import (
        AgreementConvention,
        JudgeCalibration,
        JudgeKind,
        JudgmentSet,
        PairwiseAgreement,
        ProportionMethod,
        SwappedCoding,
    )
    from gatestats.judges.clustered_correction import ClusteredCorrectedPassRate
    from gatestats.judges.covariates import CovariateBias
    from gatestats.vocabulary import OutputFormat

__all__ = ["calibrate_command", "render_calibration"]


#: The options of ``calibrate`` too long to stand in its signature.
_MapOption = Annotated[
    str,
    typer.Option(
        "--map",
        help=(
            "Field = column, comma-separated: item=COL,label=COL,verdict=COL[,verdict_swapped=COL,"
            "verdict_persuaded=COL,slice=COL,judge=COL,rubric=COL,reason=COL,score=COL]; item=COL1+COL2 joins."
        ),
    ),
]
_LabelsOption = Annotated[
    Path | None, typer.Option(help="Separate labelled set (item and label columns named by --map).")
]
_NegativeOption = Annotated[str | None, typer.Option(help="The failing value (default: the one other label value).")]
_SwappedCodingOption = Annotated[
    str, typer.Option(help="original (swapped verdict mapped back to A/B) or presented (as shown).")
]
_WhereOption = Annotated[
    list[str] | None, typer.Option("--where", help="Keep judgment rows with COLUMN=VALUE (repeatable).")
]
_UnparseableOption = Annotated[
    list[str] | None, typer.Option("--unparseable", help="Verdict value meaning 'could not parse' (repeatable).")
]
_OutputOption = Annotated[
    Path | None, typer.Option("--output", "-o", help="Calibration file to write (.json); never overwritten.")
]
_ClassesOption = Annotated[
    str | None, typer.Option(help="Label classes, comma-separated (scale order with --ordinal): multi-class mode.")
]
_OrdinalOption = Annotated[bool, typer.Option(help="The classes are an ordered scale; --positive is the lowest pass.")]
_AliasOption = Annotated[
    list[str] | None, typer.Option("--alias", help="Read VALUE as CLASS: VALUE=CLASS (repeatable).")
]
_CorrectOption = Annotated[
    Path | None, typer.Option(help="Production verdicts (same verdict column): print the corrected pass rate.")
]
_EstimatorOption = Annotated[
    str,
    typer.Option(
        help="With --correct: rogan-gladen (the corrected pass rate) or ppi (human-only, judge-only, "
        "Rogan-Gladen, PPI and PPI++ side by side; the calibration items are the labelled sample)."
    ),
]
_BudgetOption = Annotated[
    float | None,
    typer.Option(help="With --estimator ppi: print the labels a ±HALF_WIDTH interval needs (human, PPI, PPI++)."),
]
_AgreementOption = Annotated[
    str,
    typer.Option(
        "--positional-agreement",
        help=(
            "Pairwise judges in both orders: parseable-only (pairs unparseable in either order left out) or "
            "both-unparseable-agree (a pair unparseable in both orders agrees, as LLMBar counts)."
        ),
    ),
]
_CovariateOption = Annotated[
    list[str] | None,
    typer.Option(
        "--by-covariate",
        help="Judge bias: disagreement with people by this column's bins, tested, Holm across them (repeatable).",
    ),
]
_BinsOption = Annotated[int, typer.Option("--covariate-bins", help="Quantile bins of a numeric --by-covariate.")]
_CaseOption = Annotated[
    str | None, typer.Option(help="Case column of the --correct file (verdicts clustered by case).")
]


#: The error-rate rows of a pointwise judge (a pairwise judge's use pairwise words).
_POINTWISE_ROWS = (
    "false-pass rate P(judge passes | label fails)",
    "false-fail rate P(judge fails | label passes)",
    "accuracy (parseable verdicts)",
)


def _title(calibration: JudgeCalibration, errors: Mapping[str, Any]) -> str:
    """The summary's first line: the judge, the rubric, the items by label, the unparseable count."""
    return (
        f"judge {term(calibration.judge_model or '(unnamed)')}, rubric {term(calibration.rubric_version or '(none)')}: "
        f"{calibration.n_items} items ({errors['n_label_positive']} labelled {term(repr(calibration.positive))}, "
        f"{errors['n_label_negative']} labelled {term(repr(calibration.negative))}), "
        f"{calibration.n_unparseable} unparseable"
    )


def render_calibration(
    calibration: JudgeCalibration, console: Console, *, pairwise: PairwiseAgreement | None = None
) -> None:
    """Print the human-readable summary of a calibration.

    Parameters
    ----------
    calibration
        The calibration.
    console
        Where to print (its width decides the table layout).
    pairwise
        A pairwise judge's agreement with people (:func:`gatestats.judges.pairwise_agreement`):
        printed after the summary, whose error-rate rows then use pairwise words.
    """
    details = calibration.details
    errors = details["errors"]
    level = f"{calibration.confidence_level:.0%}"
    names = pairwise_row_names(calibration) if calibration.kind == "pairwise" else _POINTWISE_ROWS
    console.print(_title(calibration, errors), highlight=False)
    table = Table()
    table.add_column("statistic")
    table.add_column(f"estimate [{level} CI]", justify="right", no_wrap=True)
    table.add_column("count", justify="right")
    table.add_row(names[0], *_rate(calibration.false_pass_rate))
    table.add_row(names[1], *_rate(calibration.false_fail_rate))
    table.add_row(names[2], *_rate(errors["accuracy"]))
    table.add_row("unparseable verdicts", *_rate(errors["unparseable_rate"]))
    kappa = calibration.kappa
    kappa_cell = (
        f"{kappa.estimate:.3f} [{kappa.ci_low:.3f}, {kappa.ci_high:.3f}]"
        if kappa.status == "ok"
        and kappa.estimate is not None
        and kappa.ci_low is not None
        and kappa.ci_high is not None
        else "insufficient evidence"
    )
    table.add_row("Cohen's kappa (asymptotic CI)", kappa_cell, str(kappa.n))
    order = details["order"]
    if order is not None:
        table.add_row("order-flip rate (both orders parseable)", *_rate(calibration.flip_rate))
        table.add_row(
            "position bias: first / second, exact sign test p",
            pvalue_cell(calibration.position_bias_pvalue),
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
            pvalue_cell(calibration.persuasion_pvalue),
            f"{persuasion['n_pass_with_text_only']} / {persuasion['n_pass_without_text_only']}",
        )
    console.print(table)
    if details["errors_by_slice"]:
        console.print(_slice_table(details["errors_by_slice"]))
    if pairwise is not None:
        render_pairwise(pairwise, calibration, console)
    for rate in (calibration.false_pass_rate, calibration.false_fail_rate):
        if rate.status != "ok":
            console.print(f"  insufficient evidence: {rate.reason}", highlight=False)
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


def _slice_table(slices: Sequence[Mapping[str, Any]]) -> Table:
    """The error rates of each slice."""
    by = Table(title="by slice", title_justify="left")
    for name in ("slice", "items", "false-pass rate", "n", "false-fail rate", "n", "unparseable"):
        by.add_column(name, justify="left" if name == "slice" else "right", no_wrap=name != "slice")
    for s in slices:
        fp, fp_n = _rate(s["false_pass_rate"])
        ff, ff_n = _rate(s["false_fail_rate"])
        by.add_row(term(s["slice"]), str(s["n_items"]), fp, fp_n, ff, ff_n, str(s["n_unparseable"]))
    return by


@reports_errors
def calibrate_command(
    judgments: Annotated[Path, typer.Argument(help="Judge verdicts: .csv, .jsonl or .parquet, one row per item.")],
    mapping: _MapOption,
    positive: Annotated[str, typer.Option(help="The passing value (pairwise: 'output A is better').")],
    labels: _LabelsOption = None,
    negative: _NegativeOption = None,
    tie: Annotated[str | None, typer.Option(help="Tie verdict of a pairwise judge (counts as not passing).")] = None,
    kind: Annotated[str, typer.Option(help="pointwise or pairwise.")] = "pointwise",
    swapped_coding: _SwappedCodingOption = "original",
    where: _WhereOption = None,
    unparseable: _UnparseableOption = None,
    judge_model: Annotated[str | None, typer.Option(help="Judge model (instead of judge=COL).")] = None,
    rubric: Annotated[Path | None, typer.Option(help="Rubric / prompt file; its sha256 is the rubric digest.")] = None,
    rubric_version: Annotated[str | None, typer.Option(help="Rubric version label (instead of rubric=COL).")] = None,
    interval: Annotated[str, typer.Option(help="wilson or clopper-pearson.")] = "wilson",
    confidence_level: ConfidenceLevelOption = 0.95,
    as_json: Annotated[bool, typer.Option("--json", help="Print the calibration as one JSON object.")] = False,
    output: _OutputOption = None,
    classes: _ClassesOption = None,
    ordinal: _OrdinalOption = False,
    alias: _AliasOption = None,
    correct: _CorrectOption = None,
    case: _CaseOption = None,
    estimator: _EstimatorOption = "rogan-gladen",
    label_budget: _BudgetOption = None,
    fmt: FormatOption = "terminal",
    positional_agreement: _AgreementOption = "parseable-only",
    by_covariate: _CovariateOption = None,
    covariate_bins: _BinsOption = 4,
) -> None:
    """Calibrate an LLM judge against human labels; optionally write the versioned calibration.

    \f
    Parameters
    ----------
    judgments, labels
        The judge verdicts file and, optionally, a separate labelled set.
    mapping, where, unparseable
        ``--map`` (field = column), ``--where`` filters, unparseable values: :func:`gatestats.judges.read_judgments`.
    positive, negative, tie, kind, swapped_coding, interval, confidence_level
        The options of :func:`gatestats.judges.calibrate` (``interval``: its ``method``).
    judge_model, rubric, rubric_version, as_json, output, fmt
        The judge's identity (the rubric file's digest is the rubric digest); print JSON; the file to write;
        ``--format`` (terminal, json as ``--json``, or the calibration's table as markdown, latex, html, csv).
    positional_agreement, by_covariate, covariate_bins
        Pairwise agreement convention; judge bias by covariate columns, bins (:mod:`gatestats.judges`).
    classes, ordinal, alias
        Multi-class mode: the classes (comma-separated), an ordered scale, ``VALUE=CLASS`` aliases.
    correct, case, estimator, label_budget
        A production verdicts file to correct for the judge's errors, its case column, the estimator,
        and (``ppi``) the half-width whose label budget is printed.

    Raises
    ------
    typer.BadParameter
        A usage error (exit 2): an option outside its domain, options that contradict each other.
    """
    chosen_kind, coding, method = _checked_words(kind, swapped_coding, interval, confidence_level)
    _check_estimator(estimator, correct=correct, case=case, multiclass=classes is not None, budget=label_budget)
    shown = _checked_format(fmt, as_json=as_json, multiclass=classes is not None, correct=correct is not None)
    fields, filters = _parse_selection(mapping, where or [], kind=kind, tie=tie, case_without_file=case and not correct)
    multiclass = _multiclass_classes(classes, ordinal=ordinal, label=fields["label"], output=output)
    convention, covs = _checked_extras(positional_agreement, by_covariate, covariate_bins, fields, multiclass)
    reading = _reading(judgments, labels, fields, filters, unparseable or [], covs)
    judge = _checked_judge(fields, judge_model=judge_model, rubric_version=rubric_version, rubric=rubric, output=output)
    if multiclass is not None:
        _refuse_binary_only(negative=negative, swapped_coding=swapped_coding, kind=kind, tie=tie)
        words = _ClassWords(classes=multiclass, ordinal=ordinal, positive=positive, tie=tie, aliases=alias or [])
        given = _multiclass_input(reading, judge, words, method=method, confidence_level=confidence_level)
        _run_multiclass(given, as_json=shown == "json", correct=correct, case=case)
        return
    _refuse_unused_in_binary(fields, swapped_coding=swapped_coding, alias=alias or [], correct=correct)
    judged = _read_binary(reading, positive=positive, negative=negative, tie=tie, kind=chosen_kind)
    result = _calibrated(judged, coding=coding, method=method, confidence_level=confidence_level, judge=judge)
    correction = _production_correction(correct, reading, judged, result, aliases=alias or [], case=case)
    extra = _Extra(
        pairwise=_pairwise(judged, result, convention), bias=_covariate_bias(judged, result, covs, covariate_bins)
    )
    ppi = _ppi(correct, reading, judged, alias or [], (estimator, label_budget, confidence_level))
    _emit(result, output=output, fmt=shown, correction=correction, production=correct, ppi=ppi, extra=extra)


def _run_multiclass(given: MulticlassInput, *, as_json: bool, correct: Path | None, case: str | None) -> None:
    """The multi-class mode (:func:`gatestats.cli._calibrate_classes.run_multiclass`, imported only for it)."""
    from gatestats.cli._calibrate_classes import run_multiclass

    run_multiclass(given, as_json=as_json, correct=correct, case=case)


def _reading(
    judgments: Path,
    labels: Path | None,
    fields: dict[str, str],
    filters: dict[str, str],
    unparseable: list[str],
    covariates: list[str],
) -> _Reading:
    """What to read: the files, the field mapping, the filters, the unparseable values, the covariate columns."""
    return _Reading(
        judgments=judgments,
        labels=labels,
        fields=fields,
        filters=filters,
        unparseable=unparseable,
        covariates=covariates,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Extra:
    """What the binary mode prints after the calibration: pairwise agreement, judge bias by covariate."""

    pairwise: PairwiseAgreement | None = None
    bias: CovariateBias | None = None


def _checked_extras(
    convention: str, names: list[str] | None, bins: int, fields: dict[str, str], multiclass: list[str] | None
) -> tuple[AgreementConvention, list[str]]:
    """``--positional-agreement`` and the ``--by-covariate`` columns, checked (usage errors name the option)."""
    several = multiclass is not None
    return _checked_convention(convention, fields, multiclass=several), _checked_covariates(
        names or [], bins, multiclass=several
    )


def _checked_covariates(names: list[str], bins: int, *, multiclass: bool) -> list[str]:
    """The ``--by-covariate`` columns, checked (usage errors name the option)."""
    if bins < 2:
        raise typer.BadParameter(f"expected an integer >= 2 (got {bins})", param_hint="--covariate-bins")
    if bins != 4 and not names:
        raise typer.BadParameter(
            "--covariate-bins bins the --by-covariate columns: give one", param_hint="--covariate-bins"
        )
    if names and multiclass:
        raise typer.BadParameter(
            "--by-covariate works in the binary mode (without --classes)", param_hint="--by-covariate"
        )
    stripped = [n.strip() for n in names]
    if any(not n for n in stripped) or len(set(stripped)) != len(stripped):
        raise typer.BadParameter(f"each column once, non-empty (got {names!r})", param_hint="--by-covariate")
    return stripped


def _covariate_bias(
    judged: JudgmentSet, calibration: JudgeCalibration, covariates: list[str], bins: int
) -> CovariateBias | None:
    """Judge bias by the covariates, measured as the calibration was (``None`` without covariates)."""
    if not covariates:
        return None  # judges.covariates (and the multiple-testing module it brings) is imported only when asked
    from gatestats.judges.covariates import judge_bias_by_covariate

    return judge_bias_by_covariate(
        judged, covariates, bins=bins, method=calibration.method, confidence_level=calibration.confidence_level
    )


def _checked_convention(value: str, fields: dict[str, str], *, multiclass: bool) -> AgreementConvention:
    """``--positional-agreement``, checked; a usage error when it would change nothing."""
    from gatestats.judges import AGREEMENT_CONVENTIONS

    convention = cast(
        "AgreementConvention", checked_option(check_choice, value, "--positional-agreement", AGREEMENT_CONVENTIONS)
    )
    if convention != "parseable-only" and (multiclass or "verdict_swapped" not in fields):
        raise typer.BadParameter(
            "positional agreement compares the two orders: map verdict_swapped=COL (binary mode, --kind pairwise)",
            param_hint="--positional-agreement",
        )
    return convention


def _pairwise(
    judged: JudgmentSet, calibration: JudgeCalibration, convention: AgreementConvention
) -> PairwiseAgreement | None:
    """A pairwise judge's agreement with people, measured as the calibration was (``None``: pointwise)."""
    from gatestats.judges import pairwise_agreement

    if judged.kind != "pairwise":
        return None
    return pairwise_agreement(
        judged.frame,
        positive=judged.positive,
        negative=judged.negative,
        tie=judged.tie,
        swapped_coding=calibration.swapped_coding or "original",
        convention=convention,
        method=calibration.method,
        confidence_level=calibration.confidence_level,
    )


def _check_estimator(
    estimator: str, *, correct: Path | None, case: str | None, multiclass: bool, budget: float | None
) -> None:
    """``--estimator`` is a known word; ``ppi`` needs ``--correct``, and takes neither ``--case`` nor ``--classes``."""
    from gatestats.cli._calibrate_ppi import ESTIMATORS

    checked_option(check_choice, estimator, "--estimator", ESTIMATORS)
    if budget is not None and (estimator != "ppi" or not 0.0 < budget < 1.0):
        raise typer.BadParameter(
            f"--label-budget is a half-width in (0, 1) and needs --estimator ppi (got {budget!r})",
            param_hint="--label-budget",
        )
    if estimator == "ppi" and (correct is None or case is not None or multiclass):
        raise typer.BadParameter(
            "--estimator ppi needs --correct PRODUCTION (the unlabelled verdicts), in the binary mode, without --case "
            "(clustered production verdicts are not supported by PPI here)",
            param_hint="--estimator",
        )


def _ppi(
    production: Path | None,
    reading: _Reading,
    judged: JudgmentSet,
    aliases: list[str],
    options: tuple[str, float | None, float],
) -> PPIOutput | None:
    """The ``--estimator ppi`` comparison (the calibration set as the labelled sample of the production verdicts).

    ``options`` is (estimator, label budget, confidence level); ``None`` unless the estimator is ``ppi``.
    """
    estimator, budget, level = options
    if production is None or estimator != "ppi":
        return None
    from gatestats.cli._calibrate_classes import parse_aliases
    from gatestats.cli._calibrate_ppi import ppi_production

    return ppi_production(
        production,
        judged,
        verdict=reading.fields["verdict"],
        aliases=parse_aliases(aliases),
        unparseable=reading.unparseable,
        half_width=budget,
        confidence_level=level,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Reading:
    """Where the verdicts are read from and how: the files, the ``--map`` columns, the filters, unparseable values."""

    judgments: Path
    labels: Path | None
    fields: dict[str, str]
    filters: dict[str, str]
    unparseable: list[str]
    covariates: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Judge:
    """The judge's identity given as options: its model, its rubric file and the rubric's version label."""

    model: str | None
    rubric: Path | None
    rubric_version: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class _ClassWords:
    """The classes of the multi-class mode: their order, the (lowest) passing class, the tie, the ``--alias`` items."""

    classes: list[str]
    ordinal: bool
    positive: str
    tie: str | None
    aliases: list[str]


def _multiclass_input(
    reading: _Reading, judge: _Judge, words: _ClassWords, *, method: ProportionMethod, confidence_level: float
) -> MulticlassInput:
    """What the multi-class mode reads and how, from the command's options."""
    from gatestats.cli._calibrate_classes import MulticlassInput, parse_aliases

    return MulticlassInput(
        judgments=reading.judgments,
        fields=reading.fields,
        filters=reading.filters,
        classes=words.classes,
        ordinal=words.ordinal,
        positive=words.positive,
        tie=words.tie,
        aliases=parse_aliases(words.aliases),
        unparseable=reading.unparseable,
        method=method,
        confidence_level=confidence_level,
        labels=reading.labels,
        judge_model=judge.model,
        rubric_digest=_rubric_digest(judge.rubric, judge.rubric_version),
        rubric_version=judge.rubric_version,
    )


def _read_binary(
    reading: _Reading, *, positive: str, negative: str | None, tie: str | None, kind: JudgeKind
) -> JudgmentSet:
    """The binary mode's judgments (and labels), read as the options say."""
    from gatestats.judges import read_judgments

    return read_judgments(
        reading.judgments,
        reading.fields,
        positive=positive,
        negative=negative,
        tie=tie,
        kind=kind,
        labels=reading.labels,
        where=reading.filters,
        unparseable=reading.unparseable,
        covariates=reading.covariates,
    )


def _production_correction(
    production: Path | None,
    reading: _Reading,
    judged: JudgmentSet,
    calibration: JudgeCalibration,
    *,
    aliases: list[str],
    case: str | None,
) -> ClusteredCorrectedPassRate | None:
    """The ``--correct`` file's pass rate corrected for the errors of the judge just calibrated (``None``: no file)."""
    if production is None:
        return None
    from gatestats.cli._calibrate_classes import correct_production, parse_aliases

    return correct_production(
        production,
        verdict=reading.fields["verdict"],
        case=case,
        calibration=calibration,
        classes=[c for c in (judged.positive, judged.negative, judged.tie) if c is not None],
        passing={judged.positive},
        aliases=parse_aliases(aliases),
        unparseable=reading.unparseable,
        confidence_level=calibration.confidence_level,
    )


def _multiclass_classes(classes: str | None, *, ordinal: bool, label: str, output: Path | None) -> list[str] | None:
    """The ``--classes`` of the multi-class mode, or ``None`` in the binary mode (a usage error when incomplete)."""
    if classes is None and not ordinal and "+" not in label:
        return None
    if classes is None or output is not None:
        raise typer.BadParameter("several label columns or --ordinal need --classes; -o is not written in this mode")
    return [c.strip() for c in classes.split(",")]


def _refuse_binary_only(*, negative: str | None, swapped_coding: str, kind: str, tie: str | None) -> None:
    """Options that mean nothing with --classes are usage errors, never silently dropped."""
    if kind == "pairwise" and tie is None:
        raise typer.BadParameter(
            "with --classes, --kind pairwise only declares a tie class: give --tie TIE (or leave --kind out)",
            param_hint="--kind",
        )
    if negative is not None:
        raise typer.BadParameter(
            "--negative names the failing value of a pass/fail label; with --classes every class not passing "
            "(--positive, and above it with --ordinal) fails",
            param_hint="--negative",
        )
    if swapped_coding != "original":
        raise typer.BadParameter(
            "--swapped-coding reads verdict_swapped (order swaps), which --classes does not read",
            param_hint="--swapped-coding",
        )


def _refuse_unused_in_binary(
    fields: dict[str, str], *, swapped_coding: str, alias: list[str], correct: Path | None
) -> None:
    """Binary-mode options that would change nothing without the input they act on are usage errors."""
    if swapped_coding != "original" and "verdict_swapped" not in fields:
        raise typer.BadParameter(
            "--swapped-coding says how verdict_swapped is coded: map verdict_swapped=COL", param_hint="--swapped-coding"
        )
    if alias and correct is None:
        raise typer.BadParameter(
            "--alias reads production verdicts of --correct (or class values with --classes)", param_hint="--alias"
        )


def _calibrated(
    judged: JudgmentSet,
    *,
    coding: SwappedCoding,
    method: ProportionMethod,
    confidence_level: float,
    judge: _Judge,
) -> JudgeCalibration:
    """The calibration of the judgments read (the judge and rubric options fill in what the columns do not give)."""
    from gatestats.judges import calibrate

    version_label = judge.rubric_version if judge.rubric_version is not None else judged.rubric_version
    return calibrate(
        judged,
        swapped_coding=coding,
        judge_model=judge.model,
        rubric_digest=_rubric_digest(judge.rubric, version_label),
        rubric_version=judge.rubric_version,
        method=method,
        confidence_level=confidence_level,
    )


def _checked_words(
    kind: str, swapped_coding: str, interval: str, confidence_level: float
) -> tuple[JudgeKind, SwappedCoding, ProportionMethod]:
    """The word options and the confidence level, checked (a usage error names the flag)."""
    from gatestats.judges import JUDGE_KINDS, PROPORTION_METHODS, SWAPPED_CODINGS

    chosen_kind = cast("JudgeKind", checked_option(check_choice, kind, "--kind", JUDGE_KINDS))
    coding = cast("SwappedCoding", checked_option(check_choice, swapped_coding, "--swapped-coding", SWAPPED_CODINGS))
    method = cast("ProportionMethod", checked_option(check_choice, interval, "--interval", PROPORTION_METHODS))
    checked_option(check_confidence_level, confidence_level, "--confidence-level")
    return chosen_kind, coding, method


def _rubric_digest(rubric: Path | None, version_label: str | None) -> str | None:
    """The rubric file's digest; without a file, the digest of the rubric version label (if any)."""
    if rubric is not None:
        return digest_file(rubric)
    return None if version_label is None else digest_text(version_label)


def _parse_selection(
    mapping: str, where: list[str], *, kind: str, tie: str | None, case_without_file: object = False
) -> tuple[dict[str, str], dict[str, str]]:
    """The ``--map`` fields and ``--where`` filters, checked against ``--kind`` (and ``--case`` needs ``--correct``)."""
    from gatestats.judges import parse_judgment_mapping, parse_where

    if case_without_file:
        raise typer.BadParameter("--case names a column of the --correct file", param_hint="--case")

    try:
        fields = parse_judgment_mapping(mapping)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--map: "), param_hint="--map") from None
    try:
        filters = parse_where(where)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--where: "), param_hint="--where") from None
    if tie is not None and kind != "pairwise":
        raise typer.BadParameter("a tie value needs --kind pairwise", param_hint="--tie")
    if "verdict_swapped" in fields and kind != "pairwise":
        raise typer.BadParameter("verdict_swapped (order swaps) needs --kind pairwise", param_hint="--map")
    return fields, filters


def _checked_judge(
    fields: dict[str, str],
    *,
    judge_model: str | None,
    rubric_version: str | None,
    rubric: Path | None,
    output: Path | None,
) -> _Judge:
    """The judge's identity options, checked with the output file (:func:`_check_sources`)."""
    _check_sources(fields, judge_model=judge_model, rubric_version=rubric_version, rubric=rubric, output=output)
    return _Judge(model=judge_model, rubric=rubric, rubric_version=rubric_version)


def _check_sources(
    fields: dict[str, str],
    *,
    judge_model: str | None,
    rubric_version: str | None,
    rubric: Path | None,
    output: Path | None,
) -> None:
    """The judge identity is given once; the rubric file exists; the output file does not."""
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


def _checked_format(fmt: str, *, as_json: bool, multiclass: bool, correct: bool) -> OutputFormat:
    """``--format`` checked (with ``--json``); the multi-class calibration and ``--correct`` have no table yet."""
    shown = checked_publishing(fmt=fmt, as_json=as_json, output=None, label=None, labels_file=None, inputs=()).fmt
    for refused, what in ((multiclass, "the multi-class calibration"), (correct, "--correct's corrected pass rate")):
        if refused and shown not in ("terminal", "json"):
            msg = f"{what} prints as terminal or json only (got {shown})"
            raise typer.BadParameter(msg, param_hint="--format")
    return shown


def _emit(
    result: JudgeCalibration,
    *,
    output: Path | None,
    fmt: OutputFormat,
    correction: ClusteredCorrectedPassRate | None = None,
    production: Path | None = None,
    ppi: PPIOutput | None = None,
    extra: _Extra | None = None,
) -> None:
    """Write the calibration file (when asked), then print the JSON or the summary."""
    from gatestats.judges import write_calibration

    if output is not None:
        write_calibration(result, output)
    if fmt == "json":
        more = {} if correction is None else {"correction": correction.to_dict()}
        more |= {} if ppi is None else {"ppi": ppi.to_dict()}
        if extra is not None and extra.pairwise is not None:
            more["pairwise"] = extra.pairwise.to_dict()
        if extra is not None and extra.bias is not None:
            more["covariates"] = extra.bias.to_dict()
        typer.echo(json.dumps({**result.to_dict(), **more}, allow_nan=False))
    elif fmt != "terminal":
        from gatestats.publish.formats import render

        typer.echo(render(result.table(), fmt), nl=False)
    else:
        console = Console(emoji=False)
        wide = Console(emoji=False, width=max(console.width, 120))
        render_calibration(result, wide, pairwise=None if extra is None else extra.pairwise)
        if extra is not None and extra.bias is not None:
            from gatestats.cli._calibrate_covariates import render_covariates

            render_covariates(extra.bias, wide, confidence_level=result.confidence_level)
        if ppi is not None and production is not None:
            from gatestats.cli._calibrate_ppi import render_ppi

            render_ppi(ppi, wide, production)
        elif correction is not None and production is not None:
            from gatestats.cli._calibrate_classes import render_correction

            render_correction(correction, Console(emoji=False, width=max(console.width, 120)), production)
    if output is not None:
        typer.echo(f"wrote calibration {result.version} to {output}", err=True)
