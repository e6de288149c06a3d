"""The words gatestats speaks, in one place: every layer reads them from here.

Three kinds of vocabulary live in this module and nowhere else:

- **Words**: every string option as a named ``Literal`` (trial outcomes, decisions, interval
  methods, multiplicity corrections, ...), with the tuple of its values for runtime checks.
- **The metric table**: what ``pass_rate``, ``pass_hat_k``, ``pass_at_k`` and
  ``cost_per_accepted`` mean, which estimator computes them, whether they take a ``k``,
  which direction is better and how to say them in a table or a sentence.
- **Shared rules**: "which attempt counts" (a trial's outcome is its highest attempt's), which
  outcomes are valid trials, and the validation of numeric options (``confidence_level``,
  ``alpha``, ``n_resamples``, ``seed``) with one message each.

The outcome words come from one source, the run-record contract (``run_record.v1.schema.json``,
read by the runner's public :mod:`gatestats_runner.contract`): :data:`OUTCOMES` is the contract's
tuple, and the ``Outcome`` type and the names :data:`PASSED`, :data:`FAILED`,
:data:`RESOURCE_KILLED` and :data:`INFRA_ERROR` are its static mirror for mypy
(``tests/test_vocabulary.py`` fails if they differ). Code outside this module writes an outcome
or a policy option through these names, never as a literal: ``tests/test_vocabulary_words.py``
fails on a word spelt by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, cast, get_args

from gatestats_runner.contract import GRADER_VERDICTS as _CONTRACT_GRADER_VERDICTS
from gatestats_runner.contract import OUTCOMES as _CONTRACT_OUTCOMES
from gatestats_runner.contract import STAGES as _CONTRACT_STAGES

__all__ = [
    "ACTIONS",
    "CORRECTIONS",
    "DECISIONS",
    "DIRECTIONS",
    "ESTIMANDS",
    "EVERY_STAGE",
    "FAILED",
    "FAILING_OUTCOMES",
    "GATE_CORRECTIONS",
    "GATE_METRICS",
    "GRADER_VERDICTS",
    "INFRA_ERROR",
    "INFRA_RETRIES",
    "JUDGE_CRITERIA",
    "LATE_LABELS",
    "METRICS",
    "METRICS_WITHOUT_K",
    "NO_SLICE",
    "OUTCOMES",
    "OUTPUT_FORMATS",
    "PASSED",
    "RANK_CORRECTIONS",
    "RESOURCE_KILLED",
    "ROLLOUT_METRICS",
    "ROLLOUT_METRIC_BETTER",
    "RULE_TESTS",
    "SEVERITIES",
    "SIMULTANEOUS_METHODS",
    "SPLITS",
    "STAGES",
    "TABLE_FORMATS",
    "TRIAL_KEY",
    "TRIGGER_KINDS",
    "UNCLASSIFIED",
    "UNPARSEABLE",
    "VALID_OUTCOMES",
    "WEIGHTED_CORRECTIONS",
    "Action",
    "Alternative",
    "AsymptoticMcNemarMethod",
    "ComparisonFamily",
    "ComparisonStatus",
    "Correction",
    "Decision",
    "Direction",
    "FrameLike",
    "GateCorrection",
    "GateMetric",
    "GraderVerdict",
    "InfraRetries",
    "IntervalMethod",
    "JudgeCriterion",
    "LateLabel",
    "McNemarMethod",
    "Metric",
    "MetricSpec",
    "OddsRatioMethod",
    "Outcome",
    "OutputFormat",
    "PairedDesign",
    "PairedIntervalMethod",
    "PairedTest",
    "PlanTest",
    "RankCorrection",
    "ResolvedIntervalMethod",
    "ResolvedPairedIntervalMethod",
    "RolloutMetric",
    "RuleTest",
    "Severity",
    "SimultaneousMethod",
    "Split",
    "Stage",
    "Status",
    "TableFormat",
    "TriggerKind",
    "WeightedCorrection",
    "WorkingCorrelation",
    "check_alpha",
    "check_choice",
    "check_confidence_level",
    "check_n_resamples",
    "check_open_unit",
    "check_seed",
    "final_attempts",
    "is_final_attempt",
    "is_valid_outcome",
    "metric_spec",
]

# polars on first use (issue 28 item 2): the words, the metric table and the option checks need none, and every
# command's module reads them at import, so `gatestats analyze --help` (compare, cost, rank, calibrate, drift,
# recovery) imported polars (~0.2 CPU-s) to print its options. The three expressions below import it when built.
if TYPE_CHECKING:
    import polars as pl

    #: A polars frame in either mode; functions accept both and go lazy internally.
    FrameLike: TypeAlias = pl.DataFrame | pl.LazyFrame


def __getattr__(name: str) -> Any:
    """``FrameLike``, made (and kept) when it is first read: the one name of this module that is a polars object.

    Parameters
    ----------
    name
        The attribute read from the module.

    Returns
    -------
    Any
        ``polars.DataFrame | polars.LazyFrame`` for ``FrameLike``.

    Raises
    ------
    AttributeError
        For any other name.
    """
    if name == "FrameLike":
        import polars  # noqa: PLC0415 - on first use, see above

        value = polars.DataFrame | polars.LazyFrame
        globals()[name] = value
        return value
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


# ---------------------------------------------------------------------------------------------
# Outcomes and "which attempt counts"
# ---------------------------------------------------------------------------------------------

#: Trial outcomes of the run-record contract v1 (the type; the values are the contract's).
Outcome: TypeAlias = Literal["passed", "failed", "resource_killed", "infra_error"]
#: The outcome words, in the contract's order, read from the runner's contract (one source).
OUTCOMES: Final[tuple[Outcome, ...]] = cast("tuple[Outcome, ...]", _CONTRACT_OUTCOMES)
#: Each outcome by name, for expressions (``pl.col("outcome") == PASSED``): a typo is a NameError,
#: not a filter that silently matches nothing.
PASSED: Final = "passed"
FAILED: Final = "failed"
RESOURCE_KILLED: Final = "resource_killed"
INFRA_ERROR: Final = "infra_error"

#: Outcomes that are evidence about the candidate: a pass, a failure, or a kill at a declared
#: bound. ``infra_error`` is neither a pass nor a failure and is counted apart.
VALID_OUTCOMES: Final[tuple[Outcome, ...]] = (PASSED, FAILED, RESOURCE_KILLED)
#: Outcomes that are failures of the candidate: a failure, or a kill at a declared bound.
FAILING_OUTCOMES: Final[tuple[Outcome, ...]] = (FAILED, RESOURCE_KILLED)
#: The failure class of a failing trial whose record names none (``failure_class`` null), in
#: failure-class counts, trends and the report.
UNCLASSIFIED: Final = "(unclassified)"
#: The slice of cases whose records carry no slice (in slice tables, the gate's and the report's).
NO_SLICE: Final = "(none)"

#: A grader's verdict on one trial (``graders[].verdict`` in the contract): the outcome words
#: ``passed`` and ``failed``, or ``unparseable``.
GraderVerdict: TypeAlias = Literal["passed", "failed", "unparseable"]
GRADER_VERDICTS: Final[tuple[GraderVerdict, ...]] = cast("tuple[GraderVerdict, ...]", _CONTRACT_GRADER_VERDICTS)
UNPARSEABLE: Final = "unparseable"

#: A trial: one system, one case at one version, one trial index (its attempts are its lineage).
TRIAL_KEY: Final = ("system", "case_id", "case_version", "trial")


def is_valid_outcome(column: str = "outcome") -> pl.Expr:
    """Polars expression: the trial's outcome is evidence (passed, failed or resource_killed).

    Parameters
    ----------
    column
        Name of the outcome column.

    Returns
    -------
    polars.Expr
        Boolean expression, false for ``infra_error``.
    """
    import polars as pl  # noqa: PLC0415 - on first use, see FrameLike

    return pl.col(column).is_in(VALID_OUTCOMES)


def is_final_attempt(key: tuple[str, ...] = TRIAL_KEY) -> pl.Expr:
    """Polars expression: this row is its trial's counting attempt (the highest ``attempt``).

    A trial's attempts are its correction lineage; the trial's outcome is that of its last
    attempt. Every layer (estimators, paired tests, cost, the gate's severe slices) decides
    which attempt counts through this expression or :func:`final_attempts`.

    Parameters
    ----------
    key
        Columns that identify one trial.

    Returns
    -------
    polars.Expr
        Boolean expression over a frame with an ``attempt`` column and the ``key`` columns.
    """
    import polars as pl  # noqa: PLC0415 - on first use, see FrameLike

    return pl.col("attempt") == pl.col("attempt").max().over(list(key))


def final_attempts(records: FrameLike, key: tuple[str, ...] = TRIAL_KEY) -> pl.LazyFrame:
    """Keep one row per trial: its counting (highest) attempt.

    Parameters
    ----------
    records
        Run records with an ``attempt`` column and the ``key`` columns.
    key
        Columns that identify one trial.

    Returns
    -------
    polars.LazyFrame
        The rows of ``records`` that are their trial's highest attempt, in input order.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"system": ["a"] * 3, "case_id": ["x"] * 3, "case_version": [None] * 3,
    ...     "trial": [0, 1, 1], "attempt": [0, 0, 1], "outcome": ["passed", "failed", "passed"]})
    >>> final_attempts(frame).collect().get_column("outcome").to_list()
    ['passed', 'passed']
    """
    import polars as pl  # noqa: PLC0415 - on first use, see FrameLike

    lazy = records.lazy()
    # Only trials with a retry (attempt > 0, usually few) need resolving: find their latest
    # attempt and drop the superseded rows; this keeps the common case a cheap filter.
    latest = lazy.filter(pl.col("attempt") > 0).group_by(list(key)).agg(pl.col("attempt").max().alias("__latest"))
    return (
        lazy.join(latest, on=list(key), how="left", nulls_equal=True, maintain_order="left")
        .filter(pl.col("__latest").is_null() | (pl.col("attempt") == pl.col("__latest")))
        .drop("__latest")
    )


# ---------------------------------------------------------------------------------------------
# Decisions and statuses
# ---------------------------------------------------------------------------------------------

#: The gate's answer, overall and per rule: "we do not know" is its own word, never a pass.
Decision: TypeAlias = Literal["pass", "warn", "fail", "insufficient_evidence"]
DECISIONS: Final[tuple[Decision, ...]] = get_args(Decision)

#: ``ok`` or an explicit "we do not know".
Status: TypeAlias = Literal["ok", "insufficient_evidence"]

#: Status of a paired comparison: ``cannot_resolve`` when the sample can never decide the
#: question asked (a margin finer than one case, too few discordant cases for the exact test).
ComparisonStatus: TypeAlias = Literal["ok", "insufficient_evidence", "cannot_resolve"]

# ---------------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------------

#: Case-level estimands. ``pass_at_k``: at least one of k trials succeeds (capability, Chen et
#: al. 2021). ``pass_hat_k``: all k trials succeed (reliability, pass^k, Yao et al. 2024).
Metric: TypeAlias = Literal["pass_at_k", "pass_hat_k"]

#: Which direction of a metric is an improvement (a policy rule's ``direction``).
Direction: TypeAlias = Literal["higher", "lower"]
DIRECTIONS: Final[tuple[Direction, ...]] = get_args(Direction)

#: What a gate rule may be about: the estimands, the pass rate (pass^1) and the cost per
#: accepted outcome.
GateMetric: TypeAlias = Literal["pass_rate", "pass_hat_k", "pass_at_k", "cost_per_accepted"]
GATE_METRICS: Final[tuple[GateMetric, ...]] = get_args(GateMetric)


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """What one metric name means.

    Attributes
    ----------
    name
        The metric's name in policies, verdicts and JSON output.
    estimand
        The case-level estimand that computes it (``pass_rate`` is ``pass_hat_k`` at k = 1);
        ``None`` for the cost metric, which has its own estimator.
    takes_k
        Whether a rule on it names a ``k`` (pass_rate and cost are at k = 1 by definition).
    better
        ``higher`` or ``lower``: the direction that is an improvement.
    short
        A table heading; ``{k}`` is replaced by the rule's k.
    plain
        The words a release manager reads; ``{k}`` is replaced by the rule's k.
    """

    name: GateMetric
    estimand: Metric | None
    takes_k: bool
    better: Direction
    short: str
    plain: str

    def label(self, k: int = 1) -> str:
        """Table heading, e.g. ``pass^4``.

        Parameters
        ----------
        k
            The rule's number of trials.

        Returns
        -------
        str
            The short name with ``k`` filled in.
        """
        return self.short.format(k=k)

    def words(self, k: int = 1) -> str:
        """Plain-language name, e.g. ``reliability (pass^4: all 4 trials of a case pass)``.

        Parameters
        ----------
        k
            As in :meth:`label`.

        Returns
        -------
        str
            The plain name with ``k`` filled in.
        """
        return self.plain.format(k=k)


#: The metric table: every layer (estimators, policy, engine, report, CLI) reads it.
METRICS: Final[Mapping[GateMetric, MetricSpec]] = {
    "pass_rate": MetricSpec("pass_rate", "pass_hat_k", False, "higher", "pass rate", "pass rate"),
    "pass_hat_k": MetricSpec(
        "pass_hat_k", "pass_hat_k", True, "higher", "pass^{k}", "reliability (pass^{k}: all {k} trials of a case pass)"
    ),
    "pass_at_k": MetricSpec(
        "pass_at_k",
        "pass_at_k",
        True,
        "higher",
        "pass@{k}",
        "capability (pass@{k}: at least one of {k} trials passes)",
    ),
    "cost_per_accepted": MetricSpec(
        "cost_per_accepted", None, False, "lower", "cost per accepted", "cost per accepted outcome"
    ),
}


#: The case-level estimands in the order tables and charts show them: reliability, then capability.
ESTIMANDS: Final[tuple[Metric, ...]] = ("pass_hat_k", "pass_at_k")
#: The gate metrics that take no ``k`` (a rule on one must not name one).
METRICS_WITHOUT_K: Final[tuple[GateMetric, ...]] = tuple(name for name, spec in METRICS.items() if not spec.takes_k)


def metric_spec(name: str) -> MetricSpec:
    """The table entry for a metric name.

    Parameters
    ----------
    name
        A metric name (see :data:`GATE_METRICS`).

    Returns
    -------
    MetricSpec
        Its meaning.

    Raises
    ------
    ValueError
        The name is not a metric.
    """
    spec = METRICS.get(name)  # type: ignore[call-overload]
    if spec is None:
        msg = f"unknown metric {name!r}; expected one of {', '.join(GATE_METRICS)}"
        raise ValueError(msg)
    return spec  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# Methods
# ---------------------------------------------------------------------------------------------

#: Interval methods for a mean over cases. ``auto`` picks per data (see
#: :func:`gatestats.estimators.case_mean_interval`).
IntervalMethod: TypeAlias = Literal["auto", "bootstrap", "clt", "wilson"]

#: The method that actually produced an interval (``auto`` resolved).
ResolvedIntervalMethod: TypeAlias = Literal["bootstrap", "clt", "wilson"]

Alternative: TypeAlias = Literal["two-sided", "less", "greater"]

#: Primary p-value of a paired comparison: the mid-p or the exact conditional McNemar / sign
#: test, or the sign-flip permutation test on per-case differences; ``auto``: mid-p with one trial
#: per independent case, exact otherwise (see :mod:`gatestats.paired`).
PairedTest: TypeAlias = Literal["auto", "midp", "exact", "permutation"]

#: Interval for a paired difference. ``tango`` (score), ``scas`` (Tango's score with Laud's
#: skewness and N/(N-1) variance corrections) and ``newcombe`` (hybrid score) need one trial per
#: case; ``bootstrap`` and ``clt`` work on per-case differences; ``auto`` picks.
PairedIntervalMethod: TypeAlias = Literal["auto", "tango", "scas", "newcombe", "bootstrap", "clt"]

#: The method that actually produced a paired-difference interval (``auto`` resolved).
ResolvedPairedIntervalMethod: TypeAlias = Literal["tango", "scas", "newcombe", "bootstrap", "clt"]

#: The conditional McNemar (sign) test whose p-value decides: ``midp`` (Lancaster 1961; Fagerland,
#: Lydersen & Laake 2013) or ``exact`` (the exact conditional test, never above its level).
McNemarMethod: TypeAlias = Literal["midp", "exact"]

#: McNemar's asymptotic test: ``asymptotic`` (McNemar 1947) or ``continuity_corrected`` (Edwards 1948).
AsymptoticMcNemarMethod: TypeAlias = Literal["asymptotic", "continuity_corrected"]

#: Interval of the conditional odds ratio c/b: ``exact`` (transformed Clopper-Pearson) or
#: ``transformed_wilson`` (Fagerland, Lydersen & Laake 2014).
OddsRatioMethod: TypeAlias = Literal["exact", "transformed_wilson"]

#: Multiplicity corrections: Holm (default), Bonferroni, Hochberg, Benjamini-Hochberg, or none.
Correction: TypeAlias = Literal["holm", "bonferroni", "hochberg", "bh", "none"]
#: Every correction :func:`gatestats.paired.adjust_pvalues` offers (Benjamini-Hochberg controls
#: the false discovery rate, the others the family-wise error).
CORRECTIONS: Final[tuple[Correction, ...]] = get_args(Correction)
#: Corrections a gate policy offers: a release gate controls the family-wise error (no ``bh``);
#: ``none`` for a family of one or a policy that takes the risk knowingly.
GateCorrection: TypeAlias = Literal["holm", "bonferroni", "hochberg", "none"]
GATE_CORRECTIONS: Final[tuple[GateCorrection, ...]] = get_args(GateCorrection)
#: Corrections with intervals compatible with them (:mod:`gatestats.paired.simultaneous`): Holm
#: (Strassburger & Bretz 2008) and Bonferroni.
SimultaneousMethod: TypeAlias = Literal["holm", "bonferroni"]
SIMULTANEOUS_METHODS: Final[tuple[SimultaneousMethod, ...]] = get_args(SimultaneousMethod)
#: Corrections a joint rank interval can rest on (``gatestats rank``): the family-wise ones.
RankCorrection: TypeAlias = Literal["holm", "bonferroni", "hochberg"]
RANK_CORRECTIONS: Final[tuple[RankCorrection, ...]] = get_args(RankCorrection)

#: Corrections that split α over a family by each hypothesis's own level (weighted Holm or
#: Bonferroni, :func:`gatestats.paired.adjust_pvalues_weighted`).
WeightedCorrection: TypeAlias = Literal["holm", "bonferroni"]
WEIGHTED_CORRECTIONS: Final[tuple[WeightedCorrection, ...]] = get_args(WeightedCorrection)

#: What a failing or undecided gate rule does (policy key ``action``): ``block`` the release, or
#: only ``warn``.
Action: TypeAlias = Literal["block", "warn"]
ACTIONS: Final[tuple[Action, ...]] = get_args(Action)

#: A gate rule's test (policy key ``test``): ``none`` (the candidate against a threshold) or
#: ``paired`` (the candidate against the baseline, case by case).
RuleTest: TypeAlias = Literal["none", "paired"]
RULE_TESTS: Final[tuple[RuleTest, ...]] = get_args(RuleTest)

#: How a judge's error rate meets its limit (policy key ``judges.*.criterion``): its interval's
#: ``upper_bound`` (the default) or its point ``estimate``.
JudgeCriterion: TypeAlias = Literal["upper_bound", "estimate"]
JUDGE_CRITERIA: Final[tuple[JudgeCriterion, ...]] = get_args(JudgeCriterion)

#: What a gate makes of a trial retried after an infrastructure error (policy key ``infra_retries``):
#: ``bounded`` (the default) keeps it unresolved whatever the retry gave, since a retry can be a
#: second chance only the trials hit by the error got; ``counted`` takes the final attempt's outcome,
#: the policy's statement that infrastructure errors are unrelated to the outcome (docs/gate.md).
InfraRetries: TypeAlias = Literal["bounded", "counted"]
INFRA_RETRIES: Final[tuple[InfraRetries, ...]] = get_args(InfraRetries)

#: ``one_trial``: one valid trial per case (the 2x2 table); ``several_trials``: per-case rates.
PairedDesign: TypeAlias = Literal["one_trial", "several_trials"]

#: Which comparisons of many configurations: every pair, or each against one baseline.
ComparisonFamily: TypeAlias = Literal["all_pairs", "vs_baseline"]

#: Working correlation of the factor model (GEE) within a case.
WorkingCorrelation: TypeAlias = Literal["exchangeable", "independence"]

#: The conditional McNemar test a sample-size plan is for; ``auto``: mid-p two-sided, exact one-sided
#: (as :func:`gatestats.paired.compare` decides with one trial per case).
PlanTest: TypeAlias = Literal["auto", "midp", "exact"]

# ---------------------------------------------------------------------------------------------
# Option validation: one rule and one message per option
# ---------------------------------------------------------------------------------------------


def _number_in(value: object, name: str, *, domain: str, inside: Callable[[float], bool]) -> float:
    """``value`` as a float if it is a number (a bool is not) for which ``inside`` holds; ``domain`` words the range."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = f"{name} must be a number {domain} (got {value!r})"
        raise TypeError(msg)
    number = float(value)
    if not inside(number):
        msg = f"{name} must lie {domain} (got {value})"
        raise ValueError(msg)
    return number


def _integer_at_least(value: object, name: str, minimum: int) -> int:
    """``value`` if it is an integer (a bool is not) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        msg = f"{name} must be an integer >= {minimum} (got {value!r})"
        raise ValueError(msg)
    return value


def check_confidence_level(value: object, name: str = "confidence_level") -> float:
    """Check a confidence level: a finite number strictly between 0 and 1.

    Parameters
    ----------
    value
        The level given.
    name
        The option's name in the message (``--confidence-level`` on the command line).

    Returns
    -------
    float
        The level.

    Raises
    ------
    TypeError
        Not a number (a bool is not a number).
    ValueError
        Outside (0, 1), or NaN.
    """
    return _number_in(value, name, domain="strictly between 0 and 1", inside=lambda level: 0 < level < 1)


def check_alpha(value: object, name: str = "alpha", *, upper: float = 0.5) -> float:
    """Check a significance level: a number in (0, ``upper``].

    Parameters
    ----------
    value, name
        As in :func:`check_confidence_level`.
    upper
        The largest level accepted (0.5 by default: a one-sided test at more is a coin).

    Returns
    -------
    float
        The level, in (0, ``upper``].

    Raises
    ------
    TypeError, ValueError
        Not a number (TypeError); outside (0, upper], or NaN (ValueError).
    """
    return _number_in(value, name, domain=f"in (0, {upper}]", inside=lambda level: 0 < level <= upper)


def check_open_unit(value: object, name: str) -> float:
    """Check a level, alpha or share of the sequential and drift statistics: a number in (0, 1).

    Parameters
    ----------
    value, name
        The number given and the argument's name, which starts the message
        (``name: expected a number in (0, 1) (got ...)``).

    Returns
    -------
    float
        The number.

    Raises
    ------
    ValueError
        Not a number (a bool is not a number), or not strictly between 0 and 1 (NaN is not).
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        msg = f"{name}: expected a number in (0, 1) (got {value!r})"
        raise ValueError(msg)
    return float(value)


def check_n_resamples(value: object, name: str = "n_resamples", *, minimum: int = 100) -> int:
    """Check a number of bootstrap or permutation resamples.

    Parameters
    ----------
    value
        The number given.
    name
        The option's name in the message.
    minimum
        The fewest resamples accepted.

    Returns
    -------
    int
        The number.

    Raises
    ------
    ValueError
        Not an integer, or fewer than ``minimum``.
    """
    return _integer_at_least(value, name, minimum)


def check_seed(value: object, name: str = "seed") -> int:
    """Check a random seed: a non-negative integer (it is recorded with every result).

    Parameters
    ----------
    value, name
        The seed given, and the option's name in the message.

    Returns
    -------
    int
        The seed.

    Raises
    ------
    ValueError
        Not an integer, or negative.
    """
    return _integer_at_least(value, name, 0)


def check_choice(value: object, choices: tuple[str, ...], name: str) -> str:
    """Check a string option against its vocabulary.

    Parameters
    ----------
    value
        The word given.
    choices
        The accepted words (a ``get_args`` of one of this module's ``Literal`` types).
    name
        The option's name in the message.

    Returns
    -------
    str
        The word.

    Raises
    ------
    ValueError
        Not one of ``choices``.
    """
    if not isinstance(value, str) or value not in choices:
        msg = f"{name} must be one of {', '.join(choices)} (got {value!r})"
        raise ValueError(msg)
    return value


# --- Golden sets (gatestats.golden, docs/golden.md) ---

#: The split a golden case belongs to; a case moves between splits only by ``gatestats cases reclassify``.
Split: TypeAlias = Literal["development", "validation", "test", "holdout"]
SPLITS: Final[tuple[Split, ...]] = get_args(Split)
#: How bad the failure a golden case guards against is.
Severity: TypeAlias = Literal["low", "medium", "high", "critical"]
SEVERITIES: Final[tuple[Severity, ...]] = get_args(Severity)


# --- After the gate: the rollout (gatestats.rollout, docs/rollout.md) ---

#: A rollout stage, in rollout order (the record field ``stage``; the values are the contract's).
Stage: TypeAlias = Literal["shadow", "pilot", "production"]
STAGES: Final[tuple[Stage, ...]] = cast("tuple[Stage, ...]", _CONTRACT_STAGES)
#: A trigger's stage: one stage, or ``"*"`` for every stage of the plan.
EVERY_STAGE: Final = "*"
#: What a rollback trigger watches: accepted outcomes per observation, escaped defects and rework per
#: accepted outcome (from late labels), mean review minutes, unauthorised-action attempts, and the
#: cost of every attempt per accepted outcome.
RolloutMetric: TypeAlias = Literal[
    "accepted_rate", "escaped_defect_rate", "rework_rate", "review_minutes", "unauthorized_actions", "cost_per_accepted"
]
ROLLOUT_METRICS: Final[tuple[RolloutMetric, ...]] = get_args(RolloutMetric)
#: Which way a rollout metric is better (``accepted_rate`` higher, every other lower): a trigger fires
#: when the metric is worse than its level.
ROLLOUT_METRIC_BETTER: Final[Mapping[RolloutMetric, Direction]] = {
    "accepted_rate": "higher",
    "escaped_defect_rate": "lower",
    "rework_rate": "lower",
    "review_minutes": "lower",
    "unauthorized_actions": "lower",
    "cost_per_accepted": "lower",
}
#: How a trigger compares: any event fires (``none_tolerated``), a fixed level, the gate's own estimate
#: for the release (``vs_gate``), or the previous release in the same stage (``vs_previous``).
TriggerKind: TypeAlias = Literal["none_tolerated", "fixed", "vs_gate", "vs_previous"]
TRIGGER_KINDS: Final[tuple[TriggerKind, ...]] = get_args(TriggerKind)
#: A late label on an observation (``WATCH/labels.jsonl``): an accepted outcome later found wrong
#: (``escaped_defect``), later changed (``rework``), or acceptance known only later.
LateLabel: TypeAlias = Literal["escaped_defect", "rework", "accepted", "not_accepted"]
LATE_LABELS: Final[tuple[LateLabel, ...]] = get_args(LateLabel)
#: A rendering of a published table (:func:`gatestats.publish.render`): the terminal (rich), a
#: Markdown pipe table, LaTeX and HTML (great-tables), or CSV (the numeric frame with label columns).
TableFormat: TypeAlias = Literal["terminal", "markdown", "latex", "html", "csv"]
TABLE_FORMATS: Final[tuple[TableFormat, ...]] = get_args(TableFormat)
#: What ``--format`` prints: a table rendering, or ``json`` (the full result, as ``--json``).
OutputFormat: TypeAlias = Literal["terminal", "json", "markdown", "latex", "csv", "html"]
OUTPUT_FORMATS: Final[tuple[OutputFormat, ...]] = get_args(OutputFormat)
