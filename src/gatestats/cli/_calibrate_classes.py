"""The multi-class / multi-rater mode of ``gatestats calibrate`` and ``--correct PRODUCTION``.

``--classes`` (or ``label=COL1+COL2+...``) switches ``calibrate`` to this mode: labels from one or
several rater columns (majority label; rater ties counted and left out), the judge's multi-class
agreement, inter-rater agreement and the judge against each rater, and the binary false-pass /
false-fail view of the pass/fail decision. ``--correct`` corrects a production sample's pass rate
for the judge's errors (clustered by ``--case``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from gatestats._typing import JSONObject
from gatestats.cli._common import echo_json

if TYPE_CHECKING:
    from gatestats.judges import Proportion
    from gatestats.judges.clustered_correction import ClusteredCorrectedPassRate
    from gatestats.judges.correction import HasErrorRates
    from gatestats.judges.multiclass import MulticlassAgreement
    from gatestats.judges.rated_inputs import RatedJudgments

__all__ = ["BinaryView", "MulticlassInput", "correct_production", "parse_aliases", "pass_classes", "run_multiclass"]


@dataclass(frozen=True, slots=True, kw_only=True)
class BinaryView:
    """The pass/fail reading of a multi-class calibration (labels with the tie class left out)."""

    false_pass_rate: Proportion
    false_fail_rate: Proportion
    n_label_tie: int

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict."""
        return {
            "false_pass_rate": self.false_pass_rate.to_dict(),
            "false_fail_rate": self.false_fail_rate.to_dict(),
            "n_label_tie_excluded": self.n_label_tie,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class MulticlassInput:
    """What the multi-class mode reads and how: the judgments file, its columns, the classes, the interval.

    Attributes
    ----------
    judgments
        The judge verdicts file.
    fields, filters
        The ``--map`` fields (``label=COL1+COL2``: one column per rater) and the ``--where`` filters.
    classes, ordinal, positive, tie
        The classes in order, an ordered scale, the (lowest) passing class and the tie class.
    aliases, unparseable
        Values read as a class, and verdict values meaning "could not parse".
    method, confidence_level
        The interval of the proportions and its level.
    labels
        A separate labels file (``--labels``): item and rater columns; the judgments file then
        holds item and verdict.
    judge_model
        ``--judge-model``: the judge's name when the file has no judge column.
    rubric_digest, rubric_version
        ``--rubric`` (its file's digest) and ``--rubric-version``.
    """

    judgments: Path
    fields: dict[str, str]
    filters: dict[str, str]
    classes: Sequence[str]
    ordinal: bool
    positive: str
    tie: str | None
    aliases: dict[str, str]
    unparseable: Sequence[str]
    method: Any
    confidence_level: float
    labels: Path | None = None
    judge_model: str | None = None
    rubric_digest: str | None = None
    rubric_version: str | None = None


def parse_aliases(items: Sequence[str]) -> dict[str, str]:
    """``VALUE=CLASS`` items (``--alias``) as a dict.

    Parameters
    ----------
    items
        The ``--alias`` values, each ``VALUE=CLASS`` (the option is repeatable).

    Returns
    -------
    dict[str, str]
        Value -> the class it is read as (blanks stripped).

    Raises
    ------
    typer.BadParameter
        An item that is not ``VALUE=CLASS`` with both sides non-empty.
    """
    aliases: dict[str, str] = {}
    for item in items:
        value, sep, target = item.partition("=")
        if not sep or not value.strip() or not target.strip():
            raise typer.BadParameter(f"expected VALUE=CLASS (got {item!r})", param_hint="--alias")
        aliases[value.strip()] = target.strip()
    return aliases


def pass_classes(classes: Sequence[str], positive: str, *, ordinal: bool) -> set[str]:
    """The passing classes: ``positive`` (or, on an ordinal scale, it and every class after it).

    Parameters
    ----------
    classes
        Every class, in order (scale order when ``ordinal``).
    positive
        The (lowest) passing class, matched case-insensitively.
    ordinal
        The classes are an ordered scale.

    Returns
    -------
    set[str]
        The passing classes.

    Raises
    ------
    typer.BadParameter
        ``positive`` is not one of ``classes``.
    """
    lowered = [c.lower() for c in classes]
    if positive.strip().lower() not in lowered:
        raise typer.BadParameter(f"{positive!r} is not one of --classes {list(classes)!r}", param_hint="--positive")
    at = lowered.index(positive.strip().lower())
    return set(classes[at:]) if ordinal else {classes[at]}


def _binary(
    labels: Sequence[str | None],
    verdicts: Sequence[str | None],
    passing: set[str],
    tie: str | None,
    confidence_level: float,
    method: Any,
) -> BinaryView:
    from gatestats.judges import proportion

    fp = fail = ff = ok_pass = ties = 0
    for label, verdict in zip(labels, verdicts, strict=True):
        if label is None or verdict is None:
            continue
        if tie is not None and label == tie:
            ties += 1
        elif label in passing:
            ok_pass += 1
            ff += verdict not in passing
        else:
            fail += 1
            fp += verdict in passing
    return BinaryView(
        false_pass_rate=proportion(
            fp, fail, undefined_reason="no item is labelled fail", method=method, confidence_level=confidence_level
        ),
        false_fail_rate=proportion(
            ff, ok_pass, undefined_reason="no item is labelled pass", method=method, confidence_level=confidence_level
        ),
        n_label_tie=ties,
    )


def correct_production(
    production: Path,
    *,
    verdict: str,
    case: str | None,
    calibration: HasErrorRates,
    classes: Sequence[str],
    passing: set[str],
    aliases: dict[str, str],
    unparseable: Sequence[str],
    confidence_level: float,
) -> ClusteredCorrectedPassRate:
    """The production sample's corrected pass rate (cases as clusters when ``case`` is given).

    Parameters
    ----------
    production
        The production verdicts file (``--correct``).
    verdict, case
        Its verdict column and, optionally, its case column (verdicts of one case are one cluster).
    calibration
        The judge's false-pass and false-fail rates.
    classes, passing
        The verdict classes and those that pass.
    aliases, unparseable
        As in :func:`gatestats.judges.rated_inputs.read_production_verdicts`.
    confidence_level
        In (0, 1).

    Returns
    -------
    ClusteredCorrectedPassRate
        Without ``case``, every verdict is its own cluster (design effect 1).

    Raises
    ------
    RecordFileError
        A defect in the production file (file, line, field).
    """
    import numpy as np

    from gatestats.judges.clustered_correction import ClusteredCorrectedPassRate, corrected_pass_rate_clustered
    from gatestats.judges.rated_inputs import read_production_verdicts

    read = read_production_verdicts(
        production, verdict=verdict, classes=classes, case=case, aliases=aliases, unparseable=unparseable
    )
    keys = read.cases if read.cases is not None else tuple(str(i) for i in range(len(read.verdicts)))
    order = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    passes, totals = np.zeros(len(order), dtype=np.int64), np.zeros(len(order), dtype=np.int64)
    for key, said in zip(keys, read.verdicts, strict=True):
        if said is not None:
            totals[order[key]] += 1
            passes[order[key]] += said in passing
    keep = totals > 0
    result = corrected_pass_rate_clustered(
        passes[keep].tolist(), totals[keep].tolist(), calibration=calibration, confidence_level=confidence_level
    )
    return (
        result
        if read.cases is not None
        else ClusteredCorrectedPassRate(
            corrected=result.corrected, n_cases=None, design_effect=1.0, effective_n=float(totals.sum())
        )
    )


def render_correction(result: ClusteredCorrectedPassRate, console: Console, production: Path) -> None:
    """Print the corrected pass rate."""
    c = result.corrected
    cell = (
        f"{c.estimate:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}]"
        if c.status == "ok" and c.ci_low is not None and c.ci_high is not None and c.estimate is not None
        else f"insufficient evidence: {c.reason}"
    )
    cases = "" if result.n_cases is None else f", {result.n_cases} cases, design effect {result.design_effect:.2f}"
    console.print(
        f"corrected pass rate of {production} (Rogan-Gladen, Lang-Reiczigel interval): {cell}; "
        f"judge passed {c.n_pass}/{c.n}{cases}",
        highlight=False,
    )


def _cell(d: Mapping[str, object]) -> str:
    if d.get("status") != "ok" or d.get("estimate") is None:
        return "insufficient evidence"
    return f"{d['estimate']:.4f} [{d['ci_low']:.4f}, {d['ci_high']:.4f}]"


def _check_multiclass_options(
    fields: dict[str, str], classes: Sequence[str], tie: str | None, unparseable: Sequence[str] = ()
) -> None:
    """Only the fields this mode reads are mapped; the tie value is a class; an unparseable value is not."""
    lowered = {c.strip().lower() for c in classes}
    clash = [u for u in unparseable if u.strip().lower() in lowered]
    if clash:
        raise typer.BadParameter(
            f"{clash[0]!r} is one of --classes {list(classes)!r}: a class cannot also mean 'could not parse'",
            param_hint="--unparseable",
        )
    unknown = set(fields) - {"item", "label", "verdict", "judge"}
    if unknown:
        raise typer.BadParameter(
            f"with --classes or several label columns, map only item, label, verdict, judge (got {sorted(unknown)})",
            param_hint="--map",
        )
    if tie is not None and tie not in classes:
        raise typer.BadParameter(
            f"the tie value {tie!r} must be one of --classes {list(classes)!r}", param_hint="--tie"
        )


def _rater_docs(read: RatedJudgments, *, classes: Sequence[str], ordinal: bool, confidence_level: float) -> JSONObject:
    """The ``raters`` (inter-rater agreement) and ``judge_vs_raters`` entries of the JSON document (one rater: None)."""
    from gatestats.judges.raters import judge_vs_raters, rater_agreement

    raters = read.raters
    if len(raters) < 2:
        return {"raters": None, "judge_vs_raters": None}
    judged = judge_vs_raters(
        read.ratings, read.verdicts, classes=classes, raters=raters, ordinal=ordinal, confidence_level=confidence_level
    )
    agreement = rater_agreement(
        read.ratings, classes=classes, raters=raters, ordinal=ordinal, confidence_level=confidence_level
    )
    return {"raters": agreement.to_dict(), "judge_vs_raters": [p.to_dict() for p in judged]}


def _read_labelled(given: MulticlassInput) -> tuple[RatedJudgments, list[str | None]]:
    """The judgments read and each item's label (several raters: the majority label, ``None`` on a tie)."""
    from gatestats.judges.rated_inputs import read_rated_judgments
    from gatestats.judges.raters import rater_agreement

    fields, classes = given.fields, given.classes
    raters = fields["label"].split("+")
    hint = (
        ""
        if given.tie is not None or given.ordinal
        else " (a tie label needs a tie class: --classes ...,TIE --tie TIE --kind pairwise)"
    )
    read = read_rated_judgments(
        given.judgments,
        item=fields["item"],
        raters=raters,
        verdict=fields["verdict"],
        classes=classes,
        judge=fields.get("judge"),
        aliases=given.aliases,
        unparseable=given.unparseable,
        where=given.filters,
        hint=hint,
        labels=given.labels,
    )
    if len(raters) > 1:
        return read, list(
            rater_agreement(read.ratings, classes=classes, raters=raters, ordinal=given.ordinal).majority.labels
        )
    return read, [r[0] for r in read.ratings]


def _judge_agreement(
    labels: Sequence[str | None],
    verdicts: Sequence[str | None],
    *,
    classes: Sequence[str],
    ordinal: bool,
    method: Any,
    level: float,
) -> MulticlassAgreement:
    """The judge's multi-class agreement with the items that have a label."""
    from gatestats.judges.multiclass import multiclass_agreement

    kept = [i for i, label in enumerate(labels) if label is not None]
    return multiclass_agreement(
        [str(labels[i]) for i in kept],
        [verdicts[i] for i in kept],
        classes=classes,
        ordinal=ordinal,
        method=method,
        confidence_level=level,
    )


def run_multiclass(given: MulticlassInput, *, as_json: bool, correct: Path | None, case: str | None) -> None:
    """Read, compute and print the multi-class calibration (and the correction).

    Parameters
    ----------
    given
        The judgments file and how to read it.
    as_json
        Print one JSON object instead of tables.
    correct, case
        Production verdicts to correct for the judge's errors, and their case column.

    Raises
    ------
    typer.BadParameter
        A ``--map`` field this mode does not read, a tie class outside ``classes``, an unknown ``positive``.
    RecordFileError
        A defect in an input file (file, line, field).
    """
    classes, ordinal, tie, level = given.classes, given.ordinal, given.tie, given.confidence_level
    _check_multiclass_options(given.fields, classes, tie, given.unparseable)
    passing = pass_classes(classes, given.positive, ordinal=ordinal)
    read, labels = _read_labelled(given)
    agreement = _judge_agreement(
        labels, read.verdicts, classes=classes, ordinal=ordinal, method=given.method, level=level
    )
    binary = _binary(labels, read.verdicts, passing, tie, level, given.method)
    correction = (
        None
        if correct is None
        else correct_production(
            correct,
            verdict=given.fields["verdict"],
            case=case,
            calibration=binary,
            classes=classes,
            passing=passing,
            aliases=given.aliases,
            unparseable=given.unparseable,
            confidence_level=level,
        )
    )
    doc: JSONObject = {
        "schema": "gatestats.judge_multiclass.v1",
        "judge_model": given.judge_model if given.judge_model is not None else read.judge_model,
        "classes": list(classes),
        "ordinal": ordinal,
        "positive": given.positive,
        "pass_classes": [c for c in classes if c in passing],
        "tie": tie,
        "aliases": given.aliases,
        "n_items": len(labels),
        "n_without_majority": sum(label is None for label in labels),
        "binary": binary.to_dict(),
        "multiclass": agreement.to_dict(),
        **_rater_docs(read, classes=classes, ordinal=ordinal, confidence_level=level),
        "correction": None if correction is None else correction.to_dict(),
        "sources": [read.source, *([read.label_source] if read.label_source is not None else [])],
        "rubric_digest": given.rubric_digest,
        "rubric_version": given.rubric_version,
        "n_labels_without_verdict": read.n_labels_without_verdict,
    }
    if as_json:
        echo_json(doc)
        return
    console = Console(emoji=False, width=max(Console(emoji=False).width, 120))
    _render(doc, console)
    if correction is not None and correct is not None:
        render_correction(correction, console, correct)


def _render(doc: Mapping[str, Any], console: Console) -> None:
    """The multi-class calibration document as a summary line, a table of statistics and notes."""
    m = doc["multiclass"]
    rubric = "" if doc["rubric_digest"] is None else f", rubric {doc['rubric_version'] or doc['rubric_digest']}"
    console.print(
        f"judge {doc['judge_model'] or '(unnamed)'}{rubric}: {doc['n_items']} items, classes {doc['classes']}, "
        f"{doc['n_without_majority']} without a majority label (rater ties, left out), "
        f"{m['n_unparseable']} unparseable verdicts",
        highlight=False,
    )
    table = Table()
    for name in ("statistic", "estimate [CI]", "count"):
        table.add_column(name, justify="left" if name == "statistic" else "right")
    b = doc["binary"]
    for key, text in (
        ("false_pass_rate", "false-pass rate P(judge passes | label fails)"),
        ("false_fail_rate", "false-fail rate P(judge fails | label passes)"),
    ):
        table.add_row(text, _cell(b[key]), f"{b[key]['numerator']}/{b[key]['n']}")
    table.add_row(
        "accuracy (parseable verdicts)", _cell(m["accuracy"]), f"{m['accuracy']['numerator']}/{m['accuracy']['n']}"
    )
    for key in ("macro_precision", "macro_recall", "macro_f1"):
        table.add_row(key.replace("_", " ") + " (bootstrap CI)", _cell(m[key]), str(m[key]["n"]))
    table.add_row("Cohen's kappa", _cell(m["kappa"]), str(m["kappa"]["n"]))
    for key in ("weighted_kappa_linear", "weighted_kappa_quadratic"):
        if m[key] is not None:
            table.add_row(key.replace("_", " "), _cell(m[key]), str(m[key]["n"]))
    for c in m["per_class"]:
        for stat in ("precision", "recall", "f1"):
            count = f"{c[stat]['numerator']}/{c[stat]['n']}" if stat != "f1" else str(c["f1"]["n"])
            table.add_row(f"  class {c['label']!r}: {stat}", _cell(c[stat]), count)
    _rater_rows(table, doc)
    console.print(table)
    if b["n_label_tie_excluded"]:
        console.print(
            f"  note: {b['n_label_tie_excluded']} items labelled {doc['tie']!r} are left out of the "
            "false-pass and false-fail rates",
            highlight=False,
        )
    if doc["n_labels_without_verdict"]:
        console.print(
            f"  note: {doc['n_labels_without_verdict']} labelled item(s) have no verdict row (not judged)",
            highlight=False,
        )


def _rater_rows(table: Table, doc: Mapping[str, Any]) -> None:
    """The inter-rater and judge-vs-rater rows."""
    raters = doc["raters"]
    if raters is None:
        return
    table.add_row("raters: Fleiss' kappa (bootstrap CI)", _cell(raters["fleiss_kappa"]), str(raters["n_complete"]))
    table.add_row(
        f"raters: Krippendorff's alpha ({raters['krippendorff_level']})",
        _cell(raters["krippendorff_alpha"]),
        str(raters["krippendorff_alpha"]["n"]),
    )
    for p in raters["pairwise"]:
        table.add_row(f"  kappa {p['first']} vs {p['second']}", _cell(p["kappa"]), str(p["n"]))
    for p in doc["judge_vs_raters"]:
        table.add_row(f"  kappa {p['first']} vs judge", _cell(p["kappa"]), str(p["n"]))
