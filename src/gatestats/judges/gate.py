"""May a judge vote in a release gate? The check the gate calls before it counts judge verdicts.

A judge grader in the run records (``graders[*]`` with ``kind == "judge"``) may vote only when

1. its records name a ``calibration_version``,
2. that calibration is among those given (and, when read with :func:`load_calibrations`, its content
   still matches its version),
3. the policy has an entry for the grader's name,
4. the calibration's judge model and rubric digest equal the policy's (otherwise it is stale: it
   measured another judge or another prompt),
5. its false-pass rate (and, when the policy limits them, false-fail and order-flip rates) meet the
   policy's limits. By default the *upper confidence bound* must be within the limit: a calibration
   too small to show the judge is good enough does not let it vote. A rate the calibration could
   not estimate (e.g. no labelled fails) never meets a limit.

Every failed condition is reported, not just the first.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from gatestats._typing import JSONObject
from gatestats.judges._stats import Proportion
from gatestats.judges._types import LIMIT_CRITERIA, LimitCriterion
from gatestats.judges.calibration import JudgeCalibration, load_calibration
from gatestats.vocabulary import FAILED, PASSED, FrameLike, check_choice

_GRADERS = pl.List(
    pl.Struct({"name": pl.String, "kind": pl.String, "verdict": pl.String, "calibration_version": pl.String})
)

__all__ = ["JudgeEligibility", "JudgePolicy", "JudgeVote", "judge_eligibility", "load_calibrations"]


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgePolicy:
    """What a judge's calibration must show before the judge may vote.

    ``max_*`` are limits on rates in [0, 1] (``None``: not limited; the false-pass rate is always
    limited). ``criterion="upper_bound"`` compares the upper confidence bound with the limit,
    ``"estimate"`` the point estimate.
    """

    judge_model: str
    rubric_digest: str
    max_false_pass_rate: float
    max_false_fail_rate: float | None = None
    max_flip_rate: float | None = None
    criterion: LimitCriterion = "upper_bound"

    def __post_init__(self) -> None:
        for name in ("max_false_pass_rate", "max_false_fail_rate", "max_flip_rate"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int | float) and 0.0 <= value <= 1.0):
                msg = f"JudgePolicy.{name} must lie in [0, 1] (got {value!r})"
                raise ValueError(msg)
        check_choice(self.criterion, LIMIT_CRITERIA, "JudgePolicy.criterion")
        if not self.judge_model or not self.rubric_digest:
            got = f"{self.judge_model!r}, {self.rubric_digest!r}"
            msg = f"JudgePolicy needs a judge_model and a rubric_digest (got {got})"
            raise ValueError(msg)


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeVote:
    """One judge grader (and calibration version) found in the records, and whether it may vote."""

    grader: str
    calibration_version: str | None
    n_verdicts: int
    n_passed: int
    n_failed: int
    n_unparseable: int
    can_vote: bool
    reasons: tuple[str, ...]

    def to_dict(self) -> JSONObject:
        """JSON-ready dict."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["reasons"] = list(self.reasons)
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeEligibility:
    """The verdict on every judge grader of a record set."""

    votes: tuple[JudgeVote, ...]

    @property
    def all_can_vote(self) -> bool:
        """True when every judge grader may vote (also when there are none)."""
        return all(v.can_vote for v in self.votes)

    @property
    def blocked(self) -> tuple[JudgeVote, ...]:
        """The judge graders that may not vote."""
        return tuple(v for v in self.votes if not v.can_vote)

    def to_frame(self) -> pl.DataFrame:
        """One row per (grader, calibration version); ``reasons`` joined with ``"; "``."""
        schema = {
            "grader": pl.String,
            "calibration_version": pl.String,
            "n_verdicts": pl.Int64,
            "n_passed": pl.Int64,
            "n_failed": pl.Int64,
            "n_unparseable": pl.Int64,
            "can_vote": pl.Boolean,
            "reasons": pl.String,
        }
        rows = [{**v.to_dict(), "reasons": "; ".join(v.reasons)} for v in self.votes]
        return pl.DataFrame(rows, schema=schema)

    def to_dict(self) -> JSONObject:
        """JSON-ready dict."""
        return {"all_can_vote": self.all_can_vote, "votes": [v.to_dict() for v in self.votes]}


def load_calibrations(paths: Sequence[str | os.PathLike[str]]) -> dict[str, JudgeCalibration]:
    """Read calibration files (integrity-checked) into ``{version: calibration}``.

    Parameters
    ----------
    paths
        Calibration files.

    Returns
    -------
    dict
        Version -> calibration.

    Raises
    ------
    RecordFileError
        A file that cannot be read or no longer matches its version.
    """
    calibrations: dict[str, JudgeCalibration] = {}
    for path in paths:
        calibration = load_calibration(path)
        calibrations[calibration.version] = calibration
    return calibrations


def _limit(name: str, rate: Proportion | None, limit: float | None, criterion: LimitCriterion) -> str | None:
    """The reason ``rate`` fails ``limit``, or ``None`` when it meets it (or is not limited)."""
    if limit is None:
        return None
    label = name.replace("_", " ")
    if rate is None:
        return f"the policy limits the {label} to {limit:g} but the calibration did not measure it"
    if rate.status != "ok" or rate.estimate is None or rate.ci_high is None:
        return f"the {label} is unknown ({rate.reason}), so it cannot be shown to be within {limit:g}"
    value = rate.ci_high if criterion == "upper_bound" else rate.estimate
    if value <= limit:
        return None
    what = (
        f"upper {rate.confidence_level:.0%} confidence bound {rate.ci_high:.4f}"
        if criterion == "upper_bound"
        else (f"estimate {rate.estimate:.4f}")
    )
    return f"the {label} {what} exceeds the limit {limit:g} (estimate {rate.estimate:.4f}, {rate.numerator}/{rate.n})"


def _reasons(
    grader: str, version: str | None, calibrations: Mapping[str, JudgeCalibration], policies: Mapping[str, JudgePolicy]
) -> list[str]:
    reasons: list[str] = []
    policy = policies.get(grader)
    if policy is None:
        reasons.append(f"no judge policy for grader {grader!r} (policies: {sorted(policies)})")
    if version is None:
        reasons.append("the records name no calibration version: an uncalibrated judge cannot vote")
        return reasons
    calibration = calibrations.get(version)
    if calibration is None:
        reasons.append(f"calibration {version!r} not found among the {len(calibrations)} calibration(s) given")
        return reasons
    if policy is None:
        return reasons
    if calibration.judge_model != policy.judge_model:
        reasons.append(
            f"calibration {version} measured judge model {calibration.judge_model!r}, the policy requires "
            f"{policy.judge_model!r} (stale calibration)"
        )
    if calibration.rubric_digest != policy.rubric_digest:
        reasons.append(
            f"calibration {version} measured rubric {calibration.rubric_digest!r}, the policy requires "
            f"{policy.rubric_digest!r} (stale calibration)"
        )
    for name, rate, limit in (
        ("false_pass_rate", calibration.false_pass_rate, policy.max_false_pass_rate),
        ("false_fail_rate", calibration.false_fail_rate, policy.max_false_fail_rate),
        ("flip_rate", calibration.flip_rate, policy.max_flip_rate),
    ):
        reason = _limit(name, rate, limit, policy.criterion)
        if reason is not None:
            reasons.append(reason)
    return reasons


def judge_eligibility(
    records: FrameLike,
    *,
    calibrations: Mapping[str, JudgeCalibration] | Iterable[JudgeCalibration],
    policies: Mapping[str, JudgePolicy],
) -> JudgeEligibility:
    """Which judge graders in ``records`` may vote, and why the others may not.

    Parameters
    ----------
    records
        Run records (DataFrame or LazyFrame, e.g. from :func:`gatestats.load_records`) with the
        contract's ``graders`` column: a list of ``{name, kind, verdict, calibration_version}``.
    calibrations
        The available calibrations, as ``{version: calibration}`` or an iterable.
    policies
        Grader name -> :class:`JudgePolicy`.

    Returns
    -------
    JudgeEligibility
        One :class:`JudgeVote` per (grader name, calibration version) of the judge graders, with the
        verdict counts (``n_passed``/``n_passed + n_failed`` is the apparent pass rate that
        :func:`~gatestats.judges.corrected_pass_rate` corrects).

    Raises
    ------
    TypeError
        ``records`` is not a polars frame.
    ValueError
        Calibrations not keyed by their version, or records without a ``graders`` column.

    Examples
    --------
    >>> import polars as pl
    >>> records = pl.DataFrame({"graders": [[{"name": "helpful", "kind": "judge", "verdict": "passed",
    ...                                       "calibration_version": None}]]})
    >>> policy = JudgePolicy(judge_model="gpt-4o", rubric_digest="sha256:ab", max_false_pass_rate=0.1)
    >>> e = judge_eligibility(records, calibrations={}, policies={"helpful": policy})
    >>> e.all_can_vote, e.votes[0].reasons[0]
    (False, 'the records name no calibration version: an uncalibrated judge cannot vote')
    """
    if not isinstance(records, pl.DataFrame | pl.LazyFrame):
        msg = f"records must be a polars DataFrame or LazyFrame (got {type(records).__name__})"
        raise TypeError(msg)
    known = dict(calibrations) if isinstance(calibrations, Mapping) else {c.version: c for c in calibrations}
    for key, calibration in known.items():
        if not isinstance(calibration, JudgeCalibration) or calibration.version != key:
            msg = f"calibrations: expected JudgeCalibration objects keyed by their version (got {key!r})"
            raise ValueError(msg)
    lazy = records.lazy()
    schema = lazy.collect_schema()
    if "graders" not in schema:
        msg = f"records: missing column 'graders' (got columns {list(schema)[:20]})"
        raise ValueError(msg)
    graders = _judge_graders(lazy)
    votes = []
    for row in graders.iter_rows(named=True):
        reasons = _reasons(row["name"], row["calibration_version"], known, policies)
        votes.append(
            JudgeVote(
                grader=row["name"],
                calibration_version=row["calibration_version"],
                n_verdicts=int(row["n_verdicts"]),
                n_passed=int(row["n_passed"]),
                n_failed=int(row["n_failed"]),
                n_unparseable=int(row["n_unparseable"]),
                can_vote=not reasons,
                reasons=tuple(reasons),
            )
        )
    return JudgeEligibility(votes=tuple(votes))


def _judge_graders(records: pl.LazyFrame) -> pl.DataFrame:
    """One row per judge grader (name, calibration version) with its verdict counts."""
    return (
        records.select(pl.col("graders").cast(_GRADERS))
        .explode("graders")
        .drop_nulls("graders")
        .unnest("graders")
        .filter(pl.col("kind") == "judge")
        .group_by("name", "calibration_version")
        .agg(
            n_verdicts=pl.len(),
            n_passed=(pl.col("verdict") == PASSED).sum(),
            n_failed=(pl.col("verdict") == FAILED).sum(),
            n_unparseable=(pl.col("verdict") == "unparseable").sum(),
        )
        .sort("name", "calibration_version", nulls_last=True)
        .collect()
    )
