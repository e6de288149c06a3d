r"""Cost per accepted outcome per system (or slice), with a case-level bootstrap interval.

.. math::

    \mathrm{CPA} = \frac{\sum_{a} \mathrm{spend}_a + r_\text{review} \cdot H}{A},
    \qquad H = \sum_\text{reviewers} \Bigl|\bigcup_{j} [s_j, e_j]\Bigr|

where the first sum runs over *every* attempt of the group (failed, retried and infra-errored
attempts included), :math:`H` is the merged human review and correction time in hours (a
reviewer's overlapping intervals counted once), :math:`r_\text{review}` the hourly rate and
:math:`A` the number of accepted outcomes: trials whose final (highest) attempt passed. The
interval resamples cases (or ``case_group`` clusters): with per-unit spend :math:`Y_u` (attempt
spend plus the unit's share of :math:`r_\text{review} H`) and accepted outcomes :math:`A_u`, each
resample is :math:`\sum Y^*_u / \sum A^*_u`, a ratio of sums, never a mean of per-case ratios.

Per attempt :math:`a`, spend is ``cost_usd`` if set, else the sum of its parts (null parts
count 0 when one part is set). An attempt without any cost makes its group's spend unknown:
``status="insufficient_evidence"``, never a silent 0. With no accepted outcome the ratio is
undefined: ``insufficient_evidence`` too, never infinity. Interval: BCa (Efron 1987) over
units; resamples with no accepted outcome are kept as :math:`+\infty` and counted; the
interval is refused below :data:`gatestats.cost.MIN_UNITS_INTERVAL` units (docs/cost.md).

References
----------
Cochran, W. G. (1977). Sampling Techniques, 3rd ed. Wiley, ch. 6 (the ratio estimator).
Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397), 171-185.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypedDict

import polars as pl

from gatestats._typing import JSONObject
from gatestats.cost._bootstrap import (
    MIN_UNITS_INTERVAL,
    BootstrapKind,
    IntervalRule,
    RatioBootstrap,
    RebuildableInterval,
    cpa_statistic,
)
from gatestats.cost._frames import SLICE, CostOptions, explode_groups, prepare, record_ids_text
from gatestats.cost.missing import BoundsRequest, CapSource, MissingCosts, check_max_cost_per_attempt, missing_costs
from gatestats.errors import find_by_key
from gatestats.publish.notebook import Presentable
from gatestats.vocabulary import INFRA_ERROR, FrameLike, Status

if TYPE_CHECKING:
    from gatestats.publish import Labels, PublishedTable

__all__ = ["CPA_INTERVAL_METHOD", "CostAnalysis", "CostEstimate", "cost_per_accepted", "group_statistics"]

#: Interval construction for the cost per accepted outcome, chosen by the coverage simulation
#: (docs/cost.md): BCa covered as well as or better than the percentile interval in every cell.
CPA_INTERVAL_METHOD: Final[BootstrapKind] = "bca"
_US_PER_HOUR: Final = 3.6e9
_RULE: Final = IntervalRule(
    statistic=cpa_statistic,
    kind=CPA_INTERVAL_METHOD,
    cases="cases",
    groups="case groups",
    infinite_means="had no accepted outcome",
    positive=False,
    min_units=MIN_UNITS_INTERVAL,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CostEstimate(RebuildableInterval):
    """Cost per accepted outcome of one group, with the sums and counts behind it.

    ``estimate`` is ``None`` when ``status == "insufficient_evidence"`` (spend or human time
    unknown, or no accepted outcome; ``reason`` says which). The interval has its own
    ``interval_status``: below the minimum number of cases the estimate is still given. Spend
    fields are ``None`` when some attempt carries no cost; ``human_hours`` when an interval has one
    end missing; ``machine_hours`` when no attempt has ``machine_seconds``; ``calendar_hours`` when
    an attempt lacks ``started_at`` or ``ended_at``.
    """

    group: tuple[tuple[str, Any], ...]
    estimate: float | None
    n_resamples_no_accepted: int | None
    accepted: int
    trials: int
    attempts: int
    attempts_infra_error: int
    n_cases: int
    n_units: int
    total_spend_usd: float | None
    attempt_spend_usd: float | None
    model_usd: float | None
    tool_usd: float | None
    execution_usd: float | None
    undivided_usd: float | None
    imputed_execution_usd: float | None
    n_attempts_imputed: int
    review_usd: float | None
    n_attempts_cost_unknown: int
    cost_unknown_record_ids: tuple[str, ...]
    human_hours: float | None
    n_human_time_unknown: int
    machine_hours: float | None
    n_attempts_missing_machine_seconds: int
    calendar_hours: float | None
    n_attempts_missing_timestamps: int
    #: The known part and bounds when some attempts carry no cost (``None``: every attempt has one).
    missing_costs: MissingCosts | None = None
    _rule: ClassVar[IntervalRule] = _RULE

    @property
    def key(self) -> JSONObject:
        """The group's values, e.g. ``{"system": "a"}``."""
        return dict(self.group)

    def _what(self) -> str:
        return f"group {self.key}"

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping (one entry of ``groups`` in ``gatestats cost --json``)."""
        entries: JSONObject = {
            "group": self.key,
            "status": self.status,
            "reason": self.reason,
            "cost_per_accepted": {
                "estimate": self.estimate,
                **self._interval_entries(),
                "n_resamples_no_accepted": self.n_resamples_no_accepted,
            },
            "accepted": self.accepted,
            "trials": self.trials,
            "attempts": self.attempts,
            "attempts_infra_error": self.attempts_infra_error,
            "n_cases": self.n_cases,
            "n_units": self.n_units,
            "clustered": self.clustered,
            "total_spend_usd": self.total_spend_usd,
            "spend_usd": {
                "attempts": self.attempt_spend_usd,
                "model": self.model_usd,
                "tool": self.tool_usd,
                "execution": self.execution_usd,
                "undivided": self.undivided_usd,
                "review": self.review_usd,
            },
            "imputed_execution_usd": self.imputed_execution_usd,
            "n_attempts_imputed": self.n_attempts_imputed,
            "n_attempts_cost_unknown": self.n_attempts_cost_unknown,
            "cost_unknown_record_ids": list(self.cost_unknown_record_ids),
            "human_hours": self.human_hours,
            "n_human_time_unknown": self.n_human_time_unknown,
            "machine_hours": self.machine_hours,
            "n_attempts_missing_machine_seconds": self.n_attempts_missing_machine_seconds,
            "calendar_hours": self.calendar_hours,
            "n_attempts_missing_timestamps": self.n_attempts_missing_timestamps,
        }
        if self.missing_costs is not None:
            entries["missing_costs"] = self.missing_costs.to_dict()
        return entries


_FRAME_SCHEMA: Final[dict[str, pl.DataType]] = {
    "status": pl.String(),
    "estimate": pl.Float64(),
    "ci_low": pl.Float64(),
    "ci_high": pl.Float64(),
    "interval_status": pl.String(),
    "accepted": pl.Int64(),
    "trials": pl.Int64(),
    "attempts": pl.Int64(),
    "attempts_infra_error": pl.Int64(),
    "n_cases": pl.Int64(),
    "n_units": pl.Int64(),
    "total_spend_usd": pl.Float64(),
    "attempt_spend_usd": pl.Float64(),
    "model_usd": pl.Float64(),
    "tool_usd": pl.Float64(),
    "execution_usd": pl.Float64(),
    "undivided_usd": pl.Float64(),
    "imputed_execution_usd": pl.Float64(),
    "review_usd": pl.Float64(),
    "human_hours": pl.Float64(),
    "machine_hours": pl.Float64(),
    "calendar_hours": pl.Float64(),
    "n_attempts_cost_unknown": pl.Int64(),
    "reason": pl.String(),
    "interval_reason": pl.String(),
}


#: The fields of :class:`CostAnalysis` its JSON gives between ``by`` and ``groups``, in order.
_ANALYSIS_SETTINGS: Final = (
    "review_rate_usd_per_hour",
    "machine_rate_usd_per_hour",
    "confidence_level",
    "method",
    "n_resamples",
    "seed",
    "human_hours_total",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CostAnalysis(Presentable):
    """Result of :func:`cost_per_accepted`: one :class:`CostEstimate` per group."""

    groups: tuple[CostEstimate, ...]
    by: tuple[str, ...]
    review_rate_usd_per_hour: float | None
    machine_rate_usd_per_hour: float | None
    confidence_level: float
    n_resamples: int
    seed: int
    method: BootstrapKind
    #: Merged human time of every record passed in (each reviewer's overlaps counted once).
    human_hours_total: float
    #: The upper cost per attempt given for the bounds of missing costs (``None``: the largest observed).
    max_cost_per_attempt_usd: float | None = None

    def group(self, **values: Any) -> CostEstimate:
        """The estimate of the group with these values, e.g. ``group(system="a")``.

        Parameters
        ----------
        **values
            The group's value of every ``by`` column.

        Returns
        -------
        CostEstimate
            That group's estimate.

        Raises
        ------
        KeyError
            No group has these values.
        """
        return find_by_key(self.groups, lambda item: item.key, values, f"group {values}")

    def to_dict(self) -> JSONObject:
        """The documented ``gatestats cost --json`` object (docs/cost.md)."""
        settings = {name: getattr(self, name) for name in _ANALYSIS_SETTINGS}
        if self.max_cost_per_attempt_usd is not None:
            settings["max_cost_per_attempt_usd"] = self.max_cost_per_attempt_usd
        return {"by": list(self.by), **settings, "groups": [g.to_dict() for g in self.groups]}

    def to_frame(self) -> pl.DataFrame:
        """One row per group: the ``by`` columns, then fixed columns (see ``_FRAME_SCHEMA``)."""
        rows = [{**g.key, **{name: getattr(g, name) for name in _FRAME_SCHEMA}} for g in self.groups]
        overrides = {**_FRAME_SCHEMA, **({SLICE: pl.String()} if SLICE in self.by else {})}
        frame = pl.DataFrame(rows, schema_overrides=overrides, infer_schema_length=None)
        return frame.select(*self.by, *_FRAME_SCHEMA)

    def table(self, labels: Labels | None = None) -> PublishedTable:
        """The result as a published table (:func:`gatestats.cost.published.cost_analysis_table`).

        Parameters
        ----------
        labels
            Display names of the ids shown (None: the ids).

        Returns
        -------
        PublishedTable
            The table (render it with :func:`gatestats.publish.render`).
        """
        from gatestats.cost.published import cost_analysis_table  # noqa: PLC0415 - the tables on first use

        return cost_analysis_table(self, labels)


def group_statistics(frame: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Per-group sums and counts of prepared attempts (see :mod:`gatestats.cost._frames`).

    Parameters
    ----------
    frame
        Prepared attempts (the derived ``__`` columns present).
    by
        Grouping columns.

    Returns
    -------
    polars.DataFrame
        One row per group, sorted by ``by``: counts (attempts, trials, accepted, cases, units, ...),
        spend sums and time sums.
    """
    cost_unknown = pl.col("__spend").is_null()
    machine = pl.col("machine_seconds")
    return (
        frame.group_by(*by)
        .agg(
            pl.len().cast(pl.Int64).alias("attempts"),
            pl.col("__final").sum().cast(pl.Int64).alias("trials"),
            pl.col("__accepted").sum().cast(pl.Int64).alias("accepted"),
            (pl.col("outcome") == INFRA_ERROR).sum().cast(pl.Int64).alias("attempts_infra_error"),
            pl.struct("case_id", "case_version").n_unique().cast(pl.Int64).alias("n_cases"),
            pl.col("__unit").n_unique().cast(pl.Int64).alias("n_units"),
            pl.col("case_group").is_not_null().any().alias("clustered"),
            cost_unknown.sum().cast(pl.Int64).alias("n_cost_unknown"),
            pl.col("record_id").filter(cost_unknown).bottom_k(5).sort().alias("cost_unknown_ids"),
            pl.col("__spend").sum().alias("attempt_spend"),
            pl.col("__spend").max().alias("max_spend"),
            pl.col("__accepted").filter(~cost_unknown).sum().cast(pl.Int64).alias("accepted_known"),
            pl.col("__human_s").filter(~cost_unknown).sum().alias("human_s_known"),
            pl.col("cost_model_usd").sum().alias("model"),
            pl.col("cost_tool_usd").sum().alias("tool"),
            pl.col("__execution").sum().alias("execution"),
            pl.col("cost_usd").sum().alias("undivided"),
            pl.col("__imputed").sum().alias("imputed"),
            pl.col("__imputed").is_not_null().sum().cast(pl.Int64).alias("n_imputed"),
            pl.col("__human_s").sum().alias("human_s"),
            pl.col("__human_unknown").sum().cast(pl.Int64).alias("n_human_unknown"),
            pl.col("record_id").filter(pl.col("__human_unknown")).bottom_k(5).sort().alias("human_unknown_ids"),
            machine.sum().alias("machine_s"),
            machine.is_null().sum().cast(pl.Int64).alias("n_machine_missing"),
            pl.col("__start_us").min().alias("start_us"),
            pl.col("__end_us").max().alias("end_us"),
            pl.col("__no_timestamps").sum().cast(pl.Int64).alias("n_no_timestamps"),
        )
        .sort(*by, nulls_last=True)
    )


def insufficiency(row: Mapping[str, Any]) -> list[str]:
    """Why a group's cost per accepted outcome is undefined (empty when it is defined)."""
    problems = []
    if row["n_cost_unknown"]:
        ids = record_ids_text(row["cost_unknown_ids"], row["n_cost_unknown"])
        problems.append(
            f"spend unknown: {row['n_cost_unknown']} of {row['attempts']} attempt(s) carry no cost (cost_usd and "
            f"the parts cost_model_usd, cost_tool_usd, cost_execution_usd all null), e.g. record(s) {ids}; "
            "missing cost is never counted as 0"
        )
    if row["n_human_unknown"]:
        ids = record_ids_text(row["human_unknown_ids"], row["n_human_unknown"])
        problems.append(
            f"human time unknown: {row['n_human_unknown']} record(s) have a review or correction interval "
            f"with one end missing, e.g. {ids}"
        )
    if row["accepted"] == 0:
        problems.append(
            f"no accepted outcome: none of the {row['trials']} trial(s) ended (final attempt) in 'passed'; "
            "cost per accepted outcome is undefined"
        )
    return problems


class _SpendFields(TypedDict):
    """The spend and human-time fields of a :class:`CostEstimate` (``None`` where unknown)."""

    total_spend_usd: float | None
    attempt_spend_usd: float | None
    model_usd: float | None
    tool_usd: float | None
    execution_usd: float | None
    undivided_usd: float | None
    imputed_execution_usd: float | None
    review_usd: float | None
    human_hours: float | None


class _TimeFields(TypedDict):
    """Machine and calendar hours of a :class:`CostEstimate` (``None`` where unknown)."""

    machine_hours: float | None
    calendar_hours: float | None


class _IntervalFields(TypedDict):
    """The estimate and interval fields of a :class:`CostEstimate`."""

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    interval_status: Status
    interval_reason: str | None
    n_resamples_no_accepted: int | None


def _spend_fields(row: Mapping[str, Any], review_rate: float) -> _SpendFields:
    """The spend and human-time fields of a group's :class:`CostEstimate` (``None`` where unknown)."""
    spend_known = row["n_cost_unknown"] == 0
    human_hours = row["human_s"] / 3600 if row["n_human_unknown"] == 0 else None
    review = human_hours * review_rate if human_hours is not None else None
    attempt_spend = float(row["attempt_spend"]) if spend_known else None

    def known(value: Any) -> float | None:
        return float(value) if spend_known else None

    return {
        "total_spend_usd": attempt_spend + review if attempt_spend is not None and review is not None else None,
        "attempt_spend_usd": attempt_spend,
        "model_usd": known(row["model"]),
        "tool_usd": known(row["tool"]),
        "execution_usd": known(row["execution"]),
        "undivided_usd": known(row["undivided"]),
        "imputed_execution_usd": known(row["imputed"]),
        "review_usd": review,
        "human_hours": human_hours,
    }


def _time_fields(row: Mapping[str, Any]) -> _TimeFields:
    """Machine and calendar hours of a group (``None`` when no attempt, or not every one, says)."""
    calendar = None
    if row["n_no_timestamps"] == 0 and row["start_us"] is not None and row["end_us"] is not None:
        calendar = (row["end_us"] - row["start_us"]) / _US_PER_HOUR
    machine_present = row["attempts"] - row["n_machine_missing"]
    return {
        "machine_hours": row["machine_s"] / 3600 if machine_present else None,
        "calendar_hours": calendar,
    }


def _interval_fields(
    row: Mapping[str, Any], units: pl.DataFrame, *, total: float, options: CostOptions
) -> tuple[_IntervalFields, RatioBootstrap]:
    """The estimate and the interval fields of a group whose cost per accepted outcome is defined."""
    columns = units.select(
        pl.col("spend") + pl.col("human_s") / 3600 * options.rate, pl.col("accepted").cast(pl.Float64)
    ).to_numpy()
    boot, interval = _RULE.resample(
        columns,
        confidence_level=options.confidence_level,
        n_resamples=options.n_resamples,
        seed=options.seed,
        clustered=row["clustered"],
    )
    fields: _IntervalFields = {
        "estimate": total / row["accepted"],
        "ci_low": interval.ci_low,
        "ci_high": interval.ci_high,
        "interval_status": interval.status,
        "interval_reason": interval.reason,
        "n_resamples_no_accepted": interval.n_resamples_infinite + interval.n_resamples_undefined,
    }
    return fields, boot


def _missing(row: Mapping[str, Any], units: pl.DataFrame, bounds: BoundsRequest) -> MissingCosts | None:
    """The known part and bounds of a group some of whose attempts carry no cost (``None`` when all do)."""
    if not row["n_cost_unknown"]:
        return None
    columns = units.select(
        pl.col("spend") + pl.col("human_s") / 3600 * bounds.review_rate,
        pl.col("accepted").cast(pl.Float64),
        pl.col("n_missing"),
    ).to_numpy()
    others = [p for p in insufficiency(row) if not p.startswith("spend unknown")]
    return missing_costs(row, columns, request=bounds, undefined="; ".join(others) if others else None)


def _estimate(
    row: Mapping[str, Any], units: pl.DataFrame, *, by: tuple[str, ...], options: CostOptions, bounds: BoundsRequest
) -> CostEstimate:
    problems = insufficiency(row)
    reason = "; ".join(problems) if problems else None
    spend = _spend_fields(row, options.rate)
    interval: _IntervalFields = {
        "estimate": None,
        "ci_low": None,
        "ci_high": None,
        "interval_status": "insufficient_evidence",
        "interval_reason": reason,
        "n_resamples_no_accepted": None,
    }
    boot = None
    if not problems and spend["total_spend_usd"] is not None:
        interval, boot = _interval_fields(row, units, total=spend["total_spend_usd"], options=options)
    return CostEstimate(
        group=tuple((name, row[name]) for name in by),
        status="insufficient_evidence" if problems else "ok",
        reason=reason,
        method=CPA_INTERVAL_METHOD,
        confidence_level=options.confidence_level,
        n_resamples=options.n_resamples,
        seed=options.seed,
        accepted=row["accepted"],
        trials=row["trials"],
        attempts=row["attempts"],
        attempts_infra_error=row["attempts_infra_error"],
        n_cases=row["n_cases"],
        n_units=row["n_units"],
        clustered=bool(row["clustered"]),
        n_attempts_imputed=row["n_imputed"],
        n_attempts_cost_unknown=row["n_cost_unknown"],
        cost_unknown_record_ids=tuple(row["cost_unknown_ids"][:5]),
        n_human_time_unknown=row["n_human_unknown"],
        n_attempts_missing_machine_seconds=row["n_machine_missing"],
        n_attempts_missing_timestamps=row["n_no_timestamps"],
        missing_costs=_missing(row, units, bounds),
        _bootstrap=boot,
        **interval,
        **spend,
        **_time_fields(row),
    )


def _units_read(statistics: pl.DataFrame, cap: float | None) -> bool:
    """Whether any group's resampling units are read: a group with a known spend (its interval) or a cap.

    A group whose attempts all lack a cost has no largest observed cost; without a given cap its
    bounds are refused before its units are read (:func:`gatestats.cost.missing.missing_costs`) and it
    has no interval. So when no attempt carries a cost and no cap is given (a runner's records without
    cost fields: at 1M, 0.5 of the 2.8 CPU-s of the gate's cost summary) the units are not built.
    """
    return cap is not None or bool(statistics.select(pl.col("max_spend").is_not_null().any()).item())


#: A group's units when none is read (see :func:`_analysis`): the columns of :func:`_units_by_group`, no row.
_NO_UNITS: Final = pl.DataFrame(
    schema={"spend": pl.Float64, "human_s": pl.Float64, "accepted": pl.Int64, "n_missing": pl.Float64}
)


def _units_by_group(exploded: pl.DataFrame, columns: tuple[str, ...]) -> dict[tuple[Any, ...], pl.DataFrame]:
    """Per group, one row per resampling unit: its attempt spend, human seconds and accepted outcomes."""
    unit_frame = (
        exploded.group_by(*columns, "__unit")
        .agg(
            pl.col("__spend").sum().alias("spend"),
            pl.col("__human_s").sum().alias("human_s"),
            pl.col("__accepted").sum().alias("accepted"),
            pl.col("__spend").is_null().sum().cast(pl.Float64).alias("n_missing"),
        )
        .sort(*columns, "__unit", nulls_last=True)
    )
    return unit_frame.partition_by(*columns, as_dict=True, maintain_order=True, include_key=False)


def _analysis(
    frame: pl.DataFrame, columns: tuple[str, ...], options: CostOptions, *, cap: float | None, cap_source: CapSource
) -> CostAnalysis:
    """Estimate every group of the prepared attempts (the options are checked)."""
    exploded = explode_groups(frame, columns)
    statistics = group_statistics(exploded, columns)
    units = _units_by_group(exploded, columns) if _units_read(statistics, cap) else None
    bounds = BoundsRequest(
        rule=_RULE,
        max_cost_per_attempt_usd=cap,
        cap_source=cap_source,
        review_rate=options.rate,
        confidence_level=options.confidence_level,
        n_resamples=options.n_resamples,
        seed=options.seed,
    )
    groups = tuple(
        _estimate(
            row,
            _NO_UNITS if units is None else units[tuple(row[name] for name in columns)],
            by=columns,
            options=options,
            bounds=bounds,
        )
        for row in statistics.iter_rows(named=True)
    )
    return CostAnalysis(
        groups=groups,
        by=columns,
        **options.echo(),
        method=CPA_INTERVAL_METHOD,
        human_hours_total=float(frame["__human_s"].sum()) / 3600,
        max_cost_per_attempt_usd=cap,
    )


def cost_per_accepted(
    records: FrameLike,
    *,
    by: Sequence[str] = ("system",),
    review_rate_usd_per_hour: float | None = None,
    machine_rate_usd_per_hour: float | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    max_cost_per_attempt_usd: float | None = None,
    cap_source: CapSource = "given",
) -> CostAnalysis:
    r"""Cost per accepted outcome per group, with a case-level BCa bootstrap interval (see the module docstring).

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``) with ``record_id, system, case_id, trial, attempt,
        outcome``; the contract's cost, time and review fields are read when present (absent = null).
    by
        Grouping columns; ``"slice"`` explodes each record's list ``slices`` (a case in two slices
        counts in both; a case without slice goes to the group ``None``).
    review_rate_usd_per_hour
        Price of an hour of human review and correction. Required (0 allowed) when any record
        carries review or correction time, else :class:`ReviewRateRequiredError`.
    machine_rate_usd_per_hour
        When given, an attempt without execution spend (nor an undivided ``cost_usd``) but with
        ``machine_seconds`` is charged ``machine_seconds / 3600 * rate`` (``n_attempts_imputed``).
    confidence_level
        Two-sided level of the interval, in (0, 1).
    n_resamples
        Bootstrap resamples (>= 100).
    seed
        Seed of the bootstrap (recorded); every group is resampled from a generator seeded with
        it, so a group's interval does not depend on the other groups.
    max_cost_per_attempt_usd
        Upper cost of one attempt for the bounds of a group whose attempts lack a cost
        (:class:`gatestats.cost.MissingCosts`); ``None``: the largest observed cost per attempt in
        the group (stated as such in the result).
    cap_source
        Where a given ``max_cost_per_attempt_usd`` comes from, for the result: ``"given"`` (the
        user) or ``"policy"``.

    Returns
    -------
    CostAnalysis
        One :class:`CostEstimate` per group, sorted by the ``by`` values.

    Raises
    ------
    ReviewRateRequiredError
        Human time is recorded and ``review_rate_usd_per_hour`` is ``None``.
    ValueError
        Missing columns, an unknown ``by`` column, invalid rates or options, or records that break the
        contract (negative cost, ``cost_usd`` with parts, bad timestamps, duplicate keys, ...).

    Examples
    --------
    A trial that failed twice through infrastructure errors before it passed, and one that failed:

    >>> import polars as pl
    >>> records = pl.DataFrame({"record_id": ["r1", "r2", "r3", "r4"], "system": "a",
    ...     "case_id": ["x", "x", "x", "y"], "trial": 0, "attempt": [0, 1, 2, 0],
    ...     "outcome": ["infra_error", "infra_error", "passed", "failed"],
    ...     "cost_usd": [0.5, 0.5, 1.0, 2.0]})
    >>> g = cost_per_accepted(records).group(system="a")
    >>> g.estimate, g.accepted, g.attempts, g.interval_status
    (4.0, 1, 4, 'insufficient_evidence')
    """
    options = CostOptions.checked(
        review_rate_usd_per_hour, machine_rate_usd_per_hour, confidence_level, n_resamples, seed
    )
    check_max_cost_per_attempt(max_cost_per_attempt_usd)
    if cap_source not in ("given", "policy"):
        msg = f"cap_source must be 'given' or 'policy' (got {cap_source!r})"
        raise ValueError(msg)
    frame, columns = prepare(records, by=by, review_rate=options.review_rate, machine_rate=options.machine_rate)
    return _analysis(frame, columns, options, cap=max_cost_per_attempt_usd, cap_source=cap_source)
