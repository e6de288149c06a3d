"""Recovery rate, rounds and cost per accepted outcome across correction rounds, the case as the unit."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from gatestats.errors import InsufficientEvidenceError
from gatestats.estimators.intervals import wilson_interval
from gatestats_runner.journal import ROUND_FIELDS, read_rounds

__all__ = ["ROUND_COLUMNS", "RecoverySummary", "check_round_run_sets", "load_rounds", "recovery_summary"]

#: The columns :func:`recovery_summary` needs, with their types (one row per case and round).
ROUND_COLUMNS: dict[str, pl.DataType] = {
    "case_id": pl.String(),
    "round": pl.Int64(),
    "candidate_digest": pl.String(),
    "parent_candidate_digest": pl.String(),
    "feedback_digest": pl.String(),
    "verdict": pl.String(),
    "trials_usd": pl.Float64(),
    "trials_seconds": pl.Float64(),
    "reviser_usd": pl.Float64(),
    "reviser_seconds": pl.Float64(),
    "stop_reason": pl.String(),
}
_BLOCKED = ("infrastructure", "evaluator_crash", "evaluator_nondeterministic")


def check_round_run_sets(out: str | os.PathLike[str]) -> int:
    """Read every round's run set of a correction output through the gate's door; return how many were read.

    Each ``OUT/rounds/CASE/rNN/`` holding a manifest is read by :func:`gatestats.records.read_run_set`
    (line checksums, the seal, membership, evidence digests and containment), so a round edited
    after the loop wrote it is refused before its numbers are shown or the loop resumes. A round a
    kill interrupted mid-line (an incomplete run set whose ``records.jsonl`` does not end with a
    newline) is left to the runner's resume, which sets the torn line aside.

    Parameters
    ----------
    out
        The correction output directory.

    Returns
    -------
    int
        The number of run sets read.

    Raises
    ------
    RecordFileError
        A round's run set fails a check (file, line and field named).
    """
    from gatestats.records import read_run_set  # noqa: PLC0415 - the records layer, once per output
    from gatestats.records.runset import MANIFEST, read_run_set_manifest, records_end_mid_line  # noqa: PLC0415

    read = 0
    for manifest in sorted(Path(out).glob(f"rounds/*/*/{MANIFEST}")):
        run_set = manifest.parent
        if read_run_set_manifest(manifest).get("complete") is not True and records_end_mid_line(run_set):
            continue
        read_run_set(run_set)
        read += 1
    return read


def load_rounds(out: str | os.PathLike[str]) -> pl.DataFrame:
    """The rounds of a correction output directory (its journal), one row per case and round.

    Only the journal is read: ``gatestats recovery`` and ``correct --resume`` read every round's run
    set through the gate's door first (:func:`check_round_run_sets`).

    Parameters
    ----------
    out
        The correction output directory.

    Returns
    -------
    polars.DataFrame
        :data:`ROUND_COLUMNS`, one row per case and round.

    Raises
    ------
    gatestats_runner.launch.RunSetError
        ``out`` holds no correction journal, or the journal is damaged.
    """
    rows = read_rounds(os.fspath(out))
    return pl.DataFrame(
        [{name: row[name] for name in ROUND_FIELDS} for row in rows], schema=ROUND_COLUMNS, orient="row"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RecoverySummary:
    """Recovery over the cases of one correction loop.

    ``rate`` is ``recovered / failed_first``: cases whose round 0 was a candidate failure and that
    passed within ``within`` rounds, over the cases whose round 0 was a candidate failure (a case
    later blocked by infrastructure or the evaluator stays in the denominator, not recovered, and
    is counted in ``blocked``). Per-accepted values are None (with ``*_reason``) when nothing was
    accepted — never 0.
    """

    within: int | None
    cases: int
    failed_first: int
    passed_first: int
    recovered: int
    accepted: int
    blocked: int
    rounds_run: int
    recovered_case_ids: tuple[str, ...]
    rate: float | None
    rate_reason: str | None
    rounds_per_accepted: float | None
    usd_per_accepted: float | None
    seconds_per_accepted: float | None
    usd_per_accepted_without_correction: float | None
    seconds_per_accepted_without_correction: float | None
    per_accepted_reason: str | None
    confidence_level: float = 0.95

    def confidence_interval(self, confidence_level: float | None = None) -> tuple[float, float]:
        """Wilson interval of the recovery rate over cases (the case is the unit).

        Parameters
        ----------
        confidence_level
            In (0, 1); default: the summary's own.

        Returns
        -------
        tuple of float
            The lower and upper bound.

        Raises
        ------
        InsufficientEvidenceError
            No case failed its first round: the rate is undefined.
        """
        if self.rate is None:
            raise InsufficientEvidenceError(self.rate_reason or "recovery rate undefined")
        level = self.confidence_level if confidence_level is None else confidence_level
        return wilson_interval(self.rate, self.failed_first, confidence_level=level)

    def to_frame(self) -> pl.DataFrame:
        """One row per statistic: ``metric``, ``numerator``, ``denominator``, ``value``, ``low``, ``high``.

        Returns
        -------
        polars.DataFrame
            Recovery rate, rounds and cost per accepted outcome, with and without correction.
        """
        low, high = self.confidence_interval() if self.rate is not None else (None, None)
        rows = [
            ("recovery_rate", float(self.recovered), float(self.failed_first), self.rate, low, high),
            ("rounds_per_accepted", float(self.rounds_run), float(self.accepted), self.rounds_per_accepted, None, None),
            ("usd_per_accepted", None, float(self.accepted), self.usd_per_accepted, None, None),
            ("seconds_per_accepted", None, float(self.accepted), self.seconds_per_accepted, None, None),
            (
                "usd_per_accepted_without_correction",
                None,
                float(self.passed_first),
                self.usd_per_accepted_without_correction,
                None,
                None,
            ),
            (
                "seconds_per_accepted_without_correction",
                None,
                float(self.passed_first),
                self.seconds_per_accepted_without_correction,
                None,
                None,
            ),
        ]
        schema = {
            "metric": pl.String(),
            "numerator": pl.Float64(),
            "denominator": pl.Float64(),
            "value": pl.Float64(),
            "low": pl.Float64(),
            "high": pl.Float64(),
        }
        return pl.DataFrame(rows, schema=schema, orient="row")


def _checked_rounds(rounds: pl.DataFrame | pl.LazyFrame, within: int | None) -> pl.DataFrame:
    """The rounds collected, after checking ``within``, the columns and that no (case, round) repeats."""
    if within is not None and (isinstance(within, bool) or not isinstance(within, int) or within < 0):
        msg = f"within: expected an integer >= 0 or None (got {within!r})"
        raise ValueError(msg)
    frame = rounds.lazy().collect() if isinstance(rounds, pl.LazyFrame) else rounds
    needed = ("case_id", "round", "verdict", "trials_usd", "trials_seconds", "reviser_usd", "reviser_seconds")
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        msg = f"rounds: missing column(s) {', '.join(missing)} (got {', '.join(frame.columns)})"
        raise ValueError(msg)
    if frame.select("case_id", "round").is_duplicated().any():
        msg = "rounds: a (case_id, round) appears twice"
        raise ValueError(msg)
    return frame


@dataclass(slots=True)
class _Tally:
    """Case counts by how their loop went."""

    cases: int
    failed_first: int = 0
    passed_first: int = 0
    recovered: int = 0
    accepted: int = 0
    blocked: int = 0
    recovered_ids: list[str] = field(default_factory=list)


def _tally(frame: pl.DataFrame, within: int | None) -> _Tally:
    """Count cases, first-round passes and failures, recoveries (by round ``within``), acceptances and blocks."""
    per_case: dict[str, dict[int, str | None]] = {}
    for row in frame.select("case_id", "round", "verdict").iter_rows(named=True):
        per_case.setdefault(row["case_id"], {})[row["round"]] = row["verdict"]
    tally = _Tally(cases=len(per_case))
    for case_id, verdicts in sorted(per_case.items()):
        first = verdicts.get(0)
        passed_rounds = [r for r, v in verdicts.items() if v == "passed"]
        if passed_rounds:
            tally.accepted += 1
        if any(v in _BLOCKED for v in verdicts.values()):
            tally.blocked += 1
        if first == "passed":
            tally.passed_first += 1
        elif first == "candidate_failure":
            tally.failed_first += 1
            if passed_rounds and (within is None or min(passed_rounds) <= within):
                tally.recovered += 1
                tally.recovered_ids.append(case_id)
    return tally


def recovery_summary(
    rounds: pl.DataFrame | pl.LazyFrame, *, within: int | None = None, confidence_level: float = 0.95
) -> RecoverySummary:
    """Recovery rate, rounds and cost per accepted outcome from a loop's rounds.

    .. math::

        \\text{rate} = \\frac{\\#\\{c : v_{c,0} = \\text{fail},\\ \\exists r' \\le r : v_{c,r'} = \\text{pass}\\}}
        {\\#\\{c : v_{c,0} = \\text{fail}\\}}, \\qquad
        \\text{cost per accepted} = \\frac{\\sum_{c,r} (\\text{trials}_{c,r} + \\text{reviser}_{c,r})}
        {\\#\\{c : \\text{ended passed}\\}}

    Parameters
    ----------
    rounds
        One row per case and round with :data:`ROUND_COLUMNS` (as :func:`load_rounds` returns).
    within
        Count a recovery only when it passed by this round (None: any round the loop ran).
    confidence_level
        Of the Wilson interval, in (0, 1).

    Returns
    -------
    RecoverySummary

    Raises
    ------
    ValueError
        A column is missing, ``within`` is negative, a (case, round) repeats.

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
    *Journal of the American Statistical Association*, 22(158), 209-212.

    Examples
    --------
    >>> import polars as pl
    >>> rows = pl.DataFrame({"case_id": ["a", "a", "b"], "round": [0, 1, 0],
    ...     "verdict": ["candidate_failure", "passed", "passed"], "trials_usd": [0.0, 0.0, 0.0],
    ...     "trials_seconds": [1.0, 1.0, 1.0], "reviser_usd": [0.5, None, None],
    ...     "reviser_seconds": [2.0, None, None]})
    >>> s = recovery_summary(rows)
    >>> (s.recovered, s.failed_first, s.rounds_per_accepted, s.usd_per_accepted)
    (1, 1, 1.5, 0.25)
    """
    frame = _checked_rounds(rounds, within)
    tally = _tally(frame, within)
    failed_first, passed_first, accepted = tally.failed_first, tally.passed_first, tally.accepted
    run = frame.filter(pl.col("verdict").is_not_null())
    spend = frame.select(
        (pl.col("trials_usd").fill_null(0.0) + pl.col("reviser_usd").fill_null(0.0)).sum().alias("usd"),
        (pl.col("trials_seconds").fill_null(0.0) + pl.col("reviser_seconds").fill_null(0.0)).sum().alias("s"),
    ).row(0)
    first_spend = (
        frame.filter(pl.col("round") == 0)
        .select(pl.col("trials_usd").fill_null(0.0).sum(), pl.col("trials_seconds").fill_null(0.0).sum())
        .row(0)
    )
    reason = None if accepted else f"no accepted outcome in {tally.cases} cases: cost per accepted outcome undefined"
    return RecoverySummary(
        within=within,
        cases=tally.cases,
        failed_first=failed_first,
        passed_first=passed_first,
        recovered=tally.recovered,
        accepted=accepted,
        blocked=tally.blocked,
        rounds_run=run.height,
        recovered_case_ids=tuple(tally.recovered_ids),
        rate=tally.recovered / failed_first if failed_first else None,
        rate_reason=None if failed_first else "no case failed its first round: recovery rate undefined",
        rounds_per_accepted=run.height / accepted if accepted else None,
        usd_per_accepted=float(spend[0]) / accepted if accepted else None,
        seconds_per_accepted=float(spend[1]) / accepted if accepted else None,
        usd_per_accepted_without_correction=float(first_spend[0]) / passed_first if passed_first else None,
        seconds_per_accepted_without_correction=float(first_spend[1]) / passed_first if passed_first else None,
        per_accepted_reason=reason,
        confidence_level=confidence_level,
    )
