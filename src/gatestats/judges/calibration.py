"""The versioned calibration artifact: labelled set + rubric + judge model + results -> a version id.

A calibration is content-addressed. Its ``version`` is ``judge-cal-`` followed by the first 16 hex
digits of the SHA-256 of the canonical JSON (sorted keys, no blanks) of everything it holds except
``version`` and ``sources`` (file names do not change what was measured): the digest of the
labelled set (sorted ``[item, label]`` pairs), the digest of the verdicts, the rubric digest, the
judge model, the options and every result. The same inputs give the same version on any machine;
a changed label, verdict, rubric or judge gives a new one; :func:`load_calibration` recomputes it
and refuses a file whose content no longer matches its version.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypedDict

import polars as pl

from gatestats._typing import JSONObject
from gatestats.errors import RecordFileError
from gatestats.io.digest import canonical_json, digest_text
from gatestats.io.jsonfile import read_json_file
from gatestats.io.limits import SMALL_JSON_MAX_BYTES
from gatestats.judges._frames import collect_checked, verdict_vocabulary
from gatestats.judges._resolve import CalibrationArguments, ResolvedArguments, resolve_arguments
from gatestats.judges._stats import Kappa, Proportion
from gatestats.judges._types import JUDGE_KINDS, JudgeKind, ProportionMethod, SwappedCoding
from gatestats.judges.inputs import JudgmentSet
from gatestats.judges.order import OrderSensitivity, PersuasionTest, order_sensitivity, persuasion_test
from gatestats.judges.rates import JudgeErrorRates, judge_error_rates
from gatestats.publish.notebook import Presentable
from gatestats.vocabulary import FrameLike, check_choice, check_confidence_level

if TYPE_CHECKING:
    from gatestats.publish import Labels, PublishedTable

__all__ = [
    "CALIBRATION_SCHEMA",
    "JudgeCalibration",
    "calibrate",
    "canonical_json",
    "content_version",
    "load_calibration",
    "write_calibration",
]

#: ``schema`` field of every calibration file.
CALIBRATION_SCHEMA: Final = "gatestats.judge_calibration.v1"
_VERSION_PREFIX: Final = "judge-cal-"
_UNHASHED = ("version", "sources")
#: Fields written to the document as they are: those before the headline statistics, and after.
_PLAIN_HEAD: Final = (
    "version",
    "judge_model",
    "rubric_digest",
    "rubric_version",
    "kind",
    "positive",
    "negative",
    "tie",
    "swapped_coding",
    "calibration_set_digest",
    "judgments_digest",
    "method",
    "confidence_level",
    "n_items",
    "n_unparseable",
    "n_labels_without_verdict",
)
_PLAIN_TAIL: Final = ("position_bias_pvalue", "persuasion_pvalue", "details")


def _sha256(text: str) -> str:
    return digest_text(text).removeprefix("sha256:")


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeCalibration(Presentable):
    """A judge's calibration: identity, the headline statistics, and every result in ``details``.

    ``flip_rate`` and ``position_bias_pvalue`` exist for pairwise judges judged in both orders,
    ``persuasion_pvalue`` when persuaded verdicts were given; otherwise ``None``. ``details`` holds
    the full results (``errors`` with the confusion matrix and the per-slice breakdown, ``order``,
    ``persuasion``) as plain JSON data.
    """

    version: str
    judge_model: str | None
    rubric_digest: str | None
    rubric_version: str | None
    kind: JudgeKind
    positive: str
    negative: str
    tie: str | None
    swapped_coding: SwappedCoding | None
    calibration_set_digest: str
    judgments_digest: str
    method: ProportionMethod
    confidence_level: float
    n_items: int
    n_unparseable: int
    n_labels_without_verdict: int
    false_pass_rate: Proportion
    false_fail_rate: Proportion
    kappa: Kappa
    flip_rate: Proportion | None
    position_bias_pvalue: float | None
    persuasion_pvalue: float | None
    details: dict[str, Any]
    sources: tuple[str, ...] = ()

    def to_dict(self) -> JSONObject:
        """The JSON document written by :func:`write_calibration`."""
        return {
            "schema": CALIBRATION_SCHEMA,
            **{name: getattr(self, name) for name in _PLAIN_HEAD},
            "false_pass_rate": self.false_pass_rate.to_dict(),
            "false_fail_rate": self.false_fail_rate.to_dict(),
            "kappa": self.kappa.to_dict(),
            "flip_rate": None if self.flip_rate is None else self.flip_rate.to_dict(),
            **{name: getattr(self, name) for name in _PLAIN_TAIL},
            "sources": list(self.sources),
        }

    def to_frame(self) -> pl.DataFrame:
        """One row per headline statistic: false_pass_rate, false_fail_rate, kappa, flip_rate."""
        rows = []
        for name in ("false_pass_rate", "false_fail_rate", "kappa", "flip_rate"):
            value = getattr(self, name)
            if value is None:
                continue
            rows.append(
                {
                    "statistic": name,
                    "estimate": value.estimate,
                    "ci_low": value.ci_low,
                    "ci_high": value.ci_high,
                    "numerator": getattr(value, "numerator", None),
                    "n": value.n,
                    "status": value.status,
                    "reason": value.reason,
                }
            )
        schema = {
            "statistic": pl.String,
            "estimate": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "numerator": pl.Int64,
            "n": pl.Int64,
            "status": pl.String,
            "reason": pl.String,
        }
        return pl.DataFrame(rows, schema=schema)

    def table(self, labels: Labels | None = None) -> PublishedTable:
        """The calibration as a published table (:func:`gatestats.judges.published.calibration_table`).

        Parameters
        ----------
        labels
            Display name of the judge model (None: its name).

        Returns
        -------
        PublishedTable
            The table (render it with :func:`gatestats.publish.render`).
        """
        from gatestats.judges.published import calibration_table  # noqa: PLC0415 - the tables on first use

        return calibration_table(self, labels)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeCalibration:
        """Rebuild from :meth:`to_dict` output (no integrity check: see :func:`load_calibration`).

        Parameters
        ----------
        data
            A :meth:`to_dict` result (or a calibration file's JSON).

        Returns
        -------
        JudgeCalibration
            The calibration.
        """
        flip = data.get("flip_rate")
        return cls(
            **{name: data[name] for name in _PLAIN_HEAD},
            false_pass_rate=Proportion.from_dict(data["false_pass_rate"]),
            false_fail_rate=Proportion.from_dict(data["false_fail_rate"]),
            kappa=Kappa.from_dict(data["kappa"]),
            flip_rate=None if flip is None else Proportion.from_dict(flip),
            **{name: data[name] for name in _PLAIN_TAIL},
            sources=tuple(data.get("sources", ())),
        )


def content_version(document: Mapping[str, object]) -> str:
    """The version id of a calibration document (its content digest, ``version`` and ``sources`` excluded).

    Parameters
    ----------
    document
        A calibration document (:meth:`JudgeCalibration.to_dict`).

    Returns
    -------
    str
        ``judge-cal-`` and the first 16 hex digits of the SHA-256 of its canonical JSON.
    """
    hashed = {key: value for key, value in document.items() if key not in _UNHASHED}
    return _VERSION_PREFIX + _sha256(canonical_json(hashed))[:16]


def calibrate(
    judgments: FrameLike | JudgmentSet,
    *,
    positive: str | None = None,
    negative: str | None = None,
    tie: str | None = None,
    kind: JudgeKind | None = None,
    swapped_coding: SwappedCoding = "original",
    judge_model: str | None = None,
    rubric_digest: str | None = None,
    rubric_version: str | None = None,
    method: ProportionMethod = "wilson",
    confidence_level: float = 0.95,
    n_labels_without_verdict: int | None = None,
    sources: Sequence[str] | None = None,
) -> JudgeCalibration:
    """Calibrate a judge against human labels: error rates, kappa, order and persuasion tests, version.

    Parameters
    ----------
    judgments
        The :class:`~gatestats.judges.JudgmentSet` that :func:`~gatestats.judges.read_judgments`
        returns — its values, kind, judge model, rubric version, unlabelled count and sources are
        used, nothing needs repeating — or a DataFrame / LazyFrame, one row per labelled item:
        ``item`` (unique), ``label``, ``verdict``; optional ``verdict_swapped`` (pairwise judges:
        the verdict with the presentation order swapped), ``verdict_persuaded`` (the verdict with
        self-advocating text), ``slice``.
    positive, negative, tie
        Label and verdict values (see :func:`~gatestats.judges.judge_error_rates`); required with a
        frame, read from a judgment set (given as well, they must equal the set's).
    kind
        ``pointwise`` (the default with a frame) or ``pairwise``; a ``verdict_swapped`` column
        needs ``pairwise``. A judgment set's kind is used.
    swapped_coding
        See :func:`~gatestats.judges.order_sensitivity`.
    judge_model, rubric_digest, rubric_version
        The judge's identity, bound into the version. A judgment set supplies the model and rubric
        version it read; the rubric digest defaults to the digest of the version's text (as the CLI).
    method, confidence_level
        Interval of every proportion (``wilson`` or ``clopper-pearson``).
    n_labels_without_verdict, sources
        Labelled items without a verdict row (recorded), file names (not part of the version).

    Returns
    -------
    JudgeCalibration
        Identity, headline statistics, full results, and the content version.

    Raises
    ------
    ValueError
        Unknown options, a tie with a pointwise judge, missing columns, values outside the declared
        ones, item ids that are null or repeated, a frame without ``positive`` and ``negative``, or
        a keyword that contradicts the judgment set (the message names both values).

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"item": [str(i) for i in range(8)], "label": ["pass"] * 4 + ["fail"] * 4,
    ...                       "verdict": ["pass", "pass", "pass", "fail", "pass", "fail", "fail", "fail"]})
    >>> cal = calibrate(frame, positive="pass", negative="fail", judge_model="gpt-4o", rubric_digest="sha256:ab")
    >>> cal.false_pass_rate.numerator, cal.false_pass_rate.n, cal.version.startswith("judge-cal-")
    (1, 4, True)
    """
    given = CalibrationArguments(
        positive=positive,
        negative=negative,
        tie=tie,
        kind=kind,
        judge_model=judge_model,
        rubric_digest=rubric_digest,
        rubric_version=rubric_version,
        n_labels_without_verdict=n_labels_without_verdict,
        sources=None if sources is None else tuple(sources),
    )
    frame_like, resolved = resolve_arguments(judgments, given)
    return _calibrated(
        frame_like, resolved, swapped_coding=swapped_coding, method=method, confidence_level=confidence_level
    )


def _calibrated(
    judgments: FrameLike,
    r: ResolvedArguments,
    *,
    swapped_coding: SwappedCoding,
    method: ProportionMethod,
    confidence_level: float,
) -> JudgeCalibration:
    """The calibration of a frame with the arguments resolved (see :func:`calibrate`)."""
    _check_options(r.kind, r.tie, r.n_labels_without_verdict, confidence_level)
    frame = _checked_frame(judgments, positive=r.positive, negative=r.negative, tie=r.tie, kind=r.kind)
    options = _RateOptions(
        positive=r.positive, negative=r.negative, tie=r.tie, method=method, confidence_level=confidence_level
    )
    document: JSONObject = {
        "schema": CALIBRATION_SCHEMA,
        "judge_model": r.judge_model,
        "rubric_digest": r.rubric_digest,
        "rubric_version": r.rubric_version,
        "kind": r.kind,
        "n_labels_without_verdict": int(r.n_labels_without_verdict),
        **_measured(frame, swapped_coding=swapped_coding, options=options),
    }
    return _sealed(document, r.sources)


def _sealed(document: JSONObject, sources: Sequence[str]) -> JudgeCalibration:
    """The calibration of a document: its content version stamped, the sources added."""
    # Round-trip through JSON so the in-memory result equals what a file holds (tuples -> lists).
    document = json.loads(canonical_json(document))
    document["version"] = content_version(document)
    document["sources"] = list(sources)
    return JudgeCalibration.from_dict(document)


def _check_options(kind: str, tie: str | None, n_labels_without_verdict: int, confidence_level: float) -> None:
    """Raise ``ValueError`` on an option :func:`calibrate` cannot use."""
    check_confidence_level(confidence_level)
    check_choice(kind, JUDGE_KINDS, "kind")
    if tie is not None and kind != "pairwise":
        msg = f"a tie value applies to pairwise judges only (got tie={tie!r} with kind={kind!r})"
        raise ValueError(msg)
    if n_labels_without_verdict < 0:
        msg = f"n_labels_without_verdict must be >= 0 (got {n_labels_without_verdict})"
        raise ValueError(msg)


class _RateOptions(TypedDict):
    """The values and the interval every statistic of a calibration is measured with."""

    positive: str
    negative: str
    tie: str | None
    method: ProportionMethod
    confidence_level: float


def _measured(frame: pl.DataFrame, *, swapped_coding: SwappedCoding, options: _RateOptions) -> JSONObject:
    """The document's fields measured on the calibration set, with the options they were measured with."""
    errors, order, persuasion = _measure(frame, swapped_coding=swapped_coding, options=options)
    return {
        "positive": options["positive"],
        "negative": options["negative"],
        "tie": options["tie"],
        "swapped_coding": swapped_coding if order is not None else None,
        **_digests(frame),
        "method": options["method"],
        "confidence_level": options["confidence_level"],
        "n_items": errors.n_items,
        "n_unparseable": errors.n_unparseable,
        **_headline(errors, order, persuasion),
    }


def _measure(
    frame: pl.DataFrame, *, swapped_coding: SwappedCoding, options: _RateOptions
) -> tuple[JudgeErrorRates, OrderSensitivity | None, PersuasionTest | None]:
    """Error rates; order sensitivity when judged in both orders; the persuasion test when run."""
    errors = judge_error_rates(frame, **options)
    order = (
        order_sensitivity(frame, swapped_coding=swapped_coding, **options)
        if "verdict_swapped" in frame.columns
        else None
    )
    persuasion = persuasion_test(frame, **options) if "verdict_persuaded" in frame.columns else None
    return errors, order, persuasion


def _checked_frame(
    judgments: FrameLike, *, positive: str, negative: str, tie: str | None, kind: JudgeKind
) -> pl.DataFrame:
    """The calibration set collected and checked: values, unique item ids, order swaps only when pairwise."""
    values = verdict_vocabulary(positive, negative, tie)
    frame = collect_checked(
        judgments,
        required=("item", "label", "verdict"),
        optional=("verdict_swapped", "verdict_persuaded", "slice"),
        labels=(positive, negative),
        verdicts=values,
        verdict_columns=("verdict", "verdict_swapped", "verdict_persuaded"),
    )
    if frame["item"].null_count() or frame["item"].n_unique() != frame.height:
        dupes = frame.filter(pl.col("item").is_duplicated())["item"].head(5).to_list()
        nulls = frame["item"].null_count()
        msg = f"judgments: column 'item' must hold unique non-null ids (got {nulls} null, duplicates {dupes})"
        raise ValueError(msg)
    if "verdict_swapped" in frame.columns and kind != "pairwise":
        msg = "judgments: a 'verdict_swapped' column (order swaps) applies to pairwise judges: use kind='pairwise'"
        raise ValueError(msg)
    return frame


def _digests(frame: pl.DataFrame) -> dict[str, str]:
    """Content digests of the labelled set (sorted ``[item, label]`` pairs) and of the verdicts."""
    verdict_cols = [c for c in ("verdict", "verdict_swapped", "verdict_persuaded", "slice") if c in frame.columns]
    labelled = sorted(frame.select("item", "label").rows())
    judged = sorted(frame.select("item", *verdict_cols).rows(), key=lambda r: r[0])
    return {
        "calibration_set_digest": "sha256:" + _sha256(canonical_json(labelled)),
        "judgments_digest": "sha256:" + _sha256(canonical_json({"columns": ["item", *verdict_cols], "rows": judged})),
    }


def _headline(errors: JudgeErrorRates, order: OrderSensitivity | None, persuasion: PersuasionTest | None) -> JSONObject:
    """The headline statistics and the full results (``details``) of a calibration document."""
    return {
        "false_pass_rate": errors.false_pass_rate.to_dict(),
        "false_fail_rate": errors.false_fail_rate.to_dict(),
        "kappa": errors.kappa.to_dict(),
        "flip_rate": None if order is None else order.flip_rate.to_dict(),
        "position_bias_pvalue": None if order is None else order.position_bias.pvalue,
        "persuasion_pvalue": None if persuasion is None else persuasion.test.pvalue,
        "details": {
            "errors": errors.to_dict(),
            "errors_by_slice": [s.to_dict() for s in errors.by_slice],
            "order": None if order is None else order.to_dict(),
            "order_by_slice": [] if order is None else [s.to_dict() for s in order.by_slice],
            "persuasion": None if persuasion is None else persuasion.to_dict(),
        },
    }


def write_calibration(calibration: JudgeCalibration, path: str | os.PathLike[str]) -> Path:
    """Write the calibration as JSON atomically; an existing file is never replaced.

    Parameters
    ----------
    calibration
        The calibration.
    path
        The file to create (its folder is created when missing).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    FileExistsError
        When ``path`` exists (calibrations are immutable: choose a new name).
    """
    target = Path(path)
    if target.exists():
        msg = f"{target}: calibration file already exists (calibrations are immutable; choose a new name)"
        raise FileExistsError(msg)
    text = json.dumps(calibration.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, target)  # atomic, and fails instead of replacing a file that appeared meanwhile
        except FileExistsError:
            msg = f"{target}: calibration file already exists (calibrations are immutable; choose a new name)"
            raise FileExistsError(msg) from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    return target


def load_calibration(path: str | os.PathLike[str]) -> JudgeCalibration:
    """Read a calibration file and check that its content still matches its version.

    Parameters
    ----------
    path
        A file written by :func:`write_calibration`.

    Returns
    -------
    JudgeCalibration
        The calibration.

    Raises
    ------
    RecordFileError
        Unreadable JSON, a wrong ``schema``, missing fields, or a ``version`` that does not match
        the content's digest (the file was edited after it was written).
    """
    file = Path(path)
    document = read_json_file(file, limit=SMALL_JSON_MAX_BYTES, what="calibration")
    if not isinstance(document, dict) or document.get("schema") != CALIBRATION_SCHEMA:
        got = document.get("schema") if isinstance(document, dict) else type(document).__name__
        raise RecordFileError.single(file, "schema", f"expected {CALIBRATION_SCHEMA!r} (got {got!r})")
    expected = content_version(document)
    if document.get("version") != expected:
        msg = (
            f"expected {expected!r}, the digest of the file's content (got {document.get('version')!r}): "
            "the calibration was edited after it was written"
        )
        raise RecordFileError.single(file, "version", msg)
    try:
        return JudgeCalibration.from_dict(document)
    except (KeyError, TypeError) as exc:
        raise RecordFileError.single(file, "<file>", f"incomplete calibration: missing or invalid {exc}") from None
