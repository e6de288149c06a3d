"""What :func:`~gatestats.judges.calibrate` is told and what a :class:`JudgmentSet` already knows, reconciled.

``read_judgments`` infers the negative value, checks the kind, reads the judge model and rubric
version, counts the labelled items without a verdict and names the files. :func:`resolve_arguments`
takes them from the set so that ``calibrate(judged)`` needs nothing repeated; a keyword given as
well must agree with the set, else the error names both values.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from gatestats.io.digest import digest_text
from gatestats.judges._types import JudgeKind
from gatestats.judges.inputs import JudgmentSet
from gatestats.vocabulary import FrameLike

__all__ = ["CalibrationArguments", "ResolvedArguments", "resolve_arguments"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationArguments:
    """The keywords of :func:`~gatestats.judges.calibrate` a judgment set can supply (``None``: not given)."""

    positive: str | None
    negative: str | None
    tie: str | None
    kind: JudgeKind | None
    judge_model: str | None
    rubric_digest: str | None
    rubric_version: str | None
    n_labels_without_verdict: int | None
    sources: tuple[str, ...] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedArguments:
    """The values a calibration is measured and identified with."""

    positive: str
    negative: str
    tie: str | None
    kind: JudgeKind
    judge_model: str | None
    rubric_digest: str | None
    rubric_version: str | None
    n_labels_without_verdict: int
    sources: tuple[str, ...]


#: Fields a judgment set always knows (a tie of ``None`` means "no tie value"): a keyword must equal them.
_KNOWN = ("positive", "negative", "tie", "kind", "n_labels_without_verdict", "sources")
#: Fields a judgment set knows when the files had the column: a keyword fills them in, or must equal them.
_WHEN_MAPPED = ("judge_model", "rubric_version")


def resolve_arguments(
    judgments: FrameLike | JudgmentSet, given: CalibrationArguments
) -> tuple[FrameLike, ResolvedArguments]:
    """The frame to calibrate and the arguments, from the judgment set and the keywords.

    Parameters
    ----------
    judgments
        A judgment set (from ``read_judgments``) or a frame.
    given
        The keywords given to ``calibrate``.

    Returns
    -------
    tuple
        The frame and the resolved arguments.

    Raises
    ------
    ValueError
        A frame without ``positive`` or ``negative``; a keyword that contradicts the set.
    """
    if not isinstance(judgments, JudgmentSet):
        if given.positive is None or given.negative is None:
            msg = "calibrate: positive= and negative= are required with a frame (a JudgmentSet carries them)"
            raise ValueError(msg)
        return judgments, ResolvedArguments(
            **{f.name: getattr(given, f.name) for f in fields(given)}
            | {
                "kind": given.kind or "pointwise",
                "n_labels_without_verdict": given.n_labels_without_verdict or 0,
                "sources": given.sources or (),
            }
        )
    values = {}
    for name in (*_KNOWN, *_WHEN_MAPPED):
        ours, theirs = getattr(judgments, name), getattr(given, name)
        if theirs is not None and theirs != ours and (ours is not None or name in _KNOWN):
            msg = (
                f"calibrate: {name}={theirs!r} contradicts the judgment set's {name}={ours!r} "
                "(read_judgments read or inferred it): leave the keyword out"
            )
            raise ValueError(msg)
        values[name] = ours if ours is not None else theirs
    resolved = ResolvedArguments(**values, rubric_digest=given.rubric_digest)
    if resolved.rubric_digest is None and resolved.rubric_version is not None:
        resolved = replace(resolved, rubric_digest=digest_text(resolved.rubric_version))
    return judgments.frame, resolved
