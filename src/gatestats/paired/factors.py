r"""A factor model for harness research: outcome ~ configuration factors, clustered by case.

Each configuration (system) is described by factors in a *design* table (e.g. ``model``,
``planning`` on/off, ``tools``). Every valid trial :math:`t` of case :math:`i` under configuration
:math:`s` is a binary outcome :math:`y_{ist}` (its latest attempt; ``infra_error`` excluded), and

.. math:: \operatorname{logit} P(y_{ist} = 1) = x_s^\top \beta

is fitted by generalised estimating equations (Liang & Zeger 1986) with an exchangeable working
correlation among all trials of one case (across configurations: the same case is hard or easy
for every configuration), so that :math:`\beta` are population-averaged log odds ratios of the
factors, with their interactions when the formula asks for them (``model * planning``). Standard
errors are the cluster-robust sandwich with cases as clusters (groups when cases carry
``case_group``), with the Mancl & DeRouen (2001) small-sample bias correction below
:data:`BIAS_REDUCED_BELOW` clusters; intervals and Wald tests use the normal reference.

The model refuses (``insufficient_evidence``) rather than report a misleading number: fewer than
:data:`MIN_CLUSTERS` clusters, a configuration that passed (or failed) every trial (its log odds
are unbounded: the MLE does not exist), or a fit that did not converge. Trials are rows of the
fitted data: this model is meant for research-size sets (up to a few million trials), not for the
release gate, which uses :func:`gatestats.paired.compare`.

References
----------
Liang, K.-Y. & Zeger, S. L. (1986). Longitudinal data analysis using generalized linear models.
    Biometrika 73(1), 13-22.
Mancl, L. A. & DeRouen, T. A. (2001). A covariance estimator for GEE with improved small-sample
    properties. Biometrics 57(1), 126-134.
Zeger, S. L., Liang, K.-Y. & Albert, P. S. (1988). Models for longitudinal data: a generalized
    estimating equation approach. Biometrics 44(4), 1049-1060.
"""

from __future__ import annotations

import importlib
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypedDict, get_args

import numpy as np
import numpy.typing as npt
import polars as pl

from gatestats._lazy import lazy_module
from gatestats._typing import JSONObject
from gatestats.errors import find_by_key
from gatestats.paired._common import field_values
from gatestats.records.columns import system_records
from gatestats.vocabulary import (
    PASSED,
    TRIAL_KEY,
    FrameLike,
    Status,
    WorkingCorrelation,
    check_choice,
    check_confidence_level,
    final_attempts,
    is_valid_outcome,
)

special = lazy_module("scipy.special")
stats = lazy_module("scipy.stats")

__all__ = ["BIAS_REDUCED_BELOW", "MIN_CLUSTERS", "FactorEffect", "FactorModel", "factor_model"]

#: Fewest clusters (cases or case groups) for which the model is fitted.
MIN_CLUSTERS: Final = 10
#: Below this many clusters the sandwich covariance gets the Mancl-DeRouen correction.
BIAS_REDUCED_BELOW: Final = 50

_REQUIRED = ("case_id", "case_version", "case_group", "trial", "attempt", "outcome")
_RESERVED = {"__passed", "__cluster", "system"}


@dataclass(frozen=True, slots=True, kw_only=True)
class FactorEffect:
    """One model term: log odds ratio with its robust SE, Wald test and interval."""

    term: str
    estimate: float
    se: float
    statistic: float
    pvalue: float
    ci_low: float
    ci_high: float

    @property
    def odds_ratio(self) -> float:
        """``exp(estimate)``."""
        return math.exp(self.estimate)

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping: every field, then the odds ratio and its interval."""
        return {
            **field_values(self),
            "odds_ratio": self.odds_ratio,
            "odds_ratio_ci_low": math.exp(self.ci_low),
            "odds_ratio_ci_high": math.exp(self.ci_high),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class FactorModel:
    """GEE fit of pass probability on configuration factors (see the module docstring)."""

    formula: str
    status: Status
    reason: str | None
    confidence_level: float
    working_correlation: WorkingCorrelation
    correlation: float | None
    cov_type: str | None
    n_trials: int
    n_clusters: int
    n_configurations: int
    effects: tuple[FactorEffect, ...]
    predicted: pl.DataFrame = field(repr=False, compare=False)
    _params: npt.NDArray[np.float64] | None = field(default=None, repr=False, compare=False)
    _cov: npt.NDArray[np.float64] | None = field(default=None, repr=False, compare=False)

    def get(self, term: str) -> FactorEffect:
        """The effect of ``term`` (as statsmodels names it, e.g. ``C(model)[T.b]:planning``).

        Parameters
        ----------
        term
            The term's name.

        Returns
        -------
        FactorEffect
            Its estimate, standard error, test and interval.

        Raises
        ------
        KeyError
            The model has no such term (the message lists those it has).
        """
        return find_by_key(self.effects, lambda effect: effect.term, term, f"term {term!r}")

    def confidence_interval(self, confidence_level: float = 0.95) -> pl.DataFrame:
        """Wald intervals of every term at another level.

        Parameters
        ----------
        confidence_level
            Two-sided level of every term's Wald interval, in (0, 1).

        Returns
        -------
        polars.DataFrame
            Columns ``term, ci_low, ci_high``, one row per term.

        Raises
        ------
        ValueError
            The model has no estimates (the message gives its reason), or a level outside (0, 1).
        """
        if self._params is None or self._cov is None:
            msg = f"the factor model has no estimates: {self.reason}"
            raise ValueError(msg)
        check_confidence_level(confidence_level)
        z = float(stats.norm.isf((1 - confidence_level) / 2))
        se = np.sqrt(np.diag(self._cov))
        return pl.DataFrame(
            {
                "term": [e.term for e in self.effects],
                "ci_low": self._params - z * se,
                "ci_high": self._params + z * se,
            }
        )

    def to_frame(self) -> pl.DataFrame:
        """One row per term: ``term, estimate, se, statistic, pvalue, ci_low, ci_high, odds_ratio``."""
        schema = {
            "term": pl.String,
            "estimate": pl.Float64,
            "se": pl.Float64,
            "statistic": pl.Float64,
            "pvalue": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "odds_ratio": pl.Float64,
        }
        rows = [
            (e.term, e.estimate, e.se, e.statistic, e.pvalue, e.ci_low, e.ci_high, e.odds_ratio) for e in self.effects
        ]
        return pl.DataFrame(rows, schema=schema, orient="row")

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping."""
        return {
            "formula": self.formula,
            "status": self.status,
            "reason": self.reason,
            "confidence_level": self.confidence_level,
            "working_correlation": self.working_correlation,
            "correlation": self.correlation,
            "cov_type": self.cov_type,
            "n_trials": self.n_trials,
            "n_clusters": self.n_clusters,
            "n_configurations": self.n_configurations,
            "effects": [e.to_dict() for e in self.effects],
            "predicted": self.predicted.to_dicts(),
        }


def _trials(records: FrameLike, system_column: str) -> pl.DataFrame:
    selected = system_records(records.lazy(), system_column, _REQUIRED)
    return (
        final_attempts(selected)
        .select(*TRIAL_KEY, "outcome", "case_group")
        .filter(is_valid_outcome())
        .with_columns(
            (pl.col("outcome") == PASSED).cast(pl.Float64).alias("__passed"),
            pl.when(pl.col("case_group").is_not_null())
            .then(pl.lit("group:") + pl.col("case_group"))
            .otherwise(pl.lit("case:") + pl.col("case_id") + pl.lit("@") + pl.col("case_version").fill_null(""))
            .alias("__cluster"),
        )
        .sort(["__cluster", "system", "trial"])
        .collect()
    )


def _design_frame(design: FrameLike | Mapping[str, Mapping[str, Any]], system_column: str) -> pl.DataFrame:
    if isinstance(design, Mapping):
        rows = [{"system": name, **dict(values)} for name, values in design.items()]
        frame = pl.DataFrame(rows)
    elif isinstance(design, pl.DataFrame | pl.LazyFrame):
        frame = design.lazy().collect()
        if system_column not in frame.columns:
            msg = f"design: no column {system_column!r} naming the systems (got {frame.columns})"
            raise ValueError(msg)
        frame = frame.rename({system_column: "system"}) if system_column != "system" else frame
    else:
        msg = f"design must be a polars frame or a mapping system -> factors (got {type(design).__name__})"
        raise TypeError(msg)
    frame = frame.with_columns(pl.col("system").cast(pl.String))
    duplicated = frame.filter(pl.col("system").is_duplicated())["system"].unique().to_list()
    if duplicated:
        msg = f"design: each system needs exactly one row (got several for {sorted(duplicated)})"
        raise ValueError(msg)
    clash = _RESERVED.intersection(frame.columns) - {"system"}
    if clash:
        msg = f"design: column name(s) {sorted(clash)} are reserved"
        raise ValueError(msg)
    return frame


def factor_model(
    records: FrameLike,
    *,
    design: FrameLike | Mapping[str, Mapping[str, Any]],
    factors: str,
    working_correlation: WorkingCorrelation = "exchangeable",
    confidence_level: float = 0.95,
    system_column: str = "system",
) -> FactorModel:
    """Fit pass probability on configuration factors by GEE, clustered by case.

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``) of every configuration.
    design
        One row per system: ``system_column`` and the factor columns (a polars frame), or a
        mapping ``{system: {factor: value}}``.
    factors
        Right-hand side of the model formula over the design columns, e.g.
        ``"C(model) * planning + C(tools)"`` (statsmodels formula syntax; ``*`` adds interactions).
    working_correlation
        ``exchangeable`` (default) or ``independence`` among the trials of one case.
    confidence_level
        Of the Wald intervals.
    system_column
        Column that names the system in ``records`` (and in a ``design`` frame).

    Returns
    -------
    FactorModel

    Examples
    --------
    >>> import numpy as np, polars as pl
    >>> rng = np.random.default_rng(1)
    >>> ease = rng.normal(0, 1, 60)
    >>> design = {"m0-off": {"model": "m0", "planning": 0}, "m0-on": {"model": "m0", "planning": 1},
    ...           "m1-off": {"model": "m1", "planning": 0}, "m1-on": {"model": "m1", "planning": 1}}
    >>> effect = {"m0-off": 0.0, "m0-on": 1.0, "m1-off": 0.5, "m1-on": 1.5}
    >>> rows = [(s, f"c{i}", t, bool(rng.random() < 1 / (1 + np.exp(-(ease[i] + effect[s])))))
    ...         for s in design for i in range(60) for t in range(3)]
    >>> records = pl.DataFrame(rows, schema=["system", "case_id", "trial", "ok"], orient="row").select(
    ...     "system", "case_id", "trial", case_version=None, case_group=None, attempt=0,
    ...     outcome=pl.when("ok").then(pl.lit("passed")).otherwise(pl.lit("failed")))
    >>> fit = factor_model(records, design=design, factors="C(model) + planning")
    >>> fit.status, fit.n_clusters, round(fit.get("planning").estimate, 2)
    ('ok', 60, 0.73)
    """
    _check_arguments(records, factors, working_correlation, confidence_level)
    table = _design_frame(design, system_column)
    data = _trials(records, system_column)
    _check_design_covers(set(data["system"].unique().to_list()), set(table["system"].to_list()))
    data = data.join(table, on="system", how="left")
    formula = f"__passed ~ {factors.strip()}"
    n_clusters = int(data["__cluster"].n_unique())
    empty = pl.DataFrame(
        schema={"system": pl.String, "estimate": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64}
    )
    base: _ModelInputs = {
        "formula": formula.replace("__passed", PASSED),
        "confidence_level": confidence_level,
        "working_correlation": working_correlation,
        "n_trials": data.height,
        "n_clusters": n_clusters,
        "n_configurations": table.height,
    }
    reason = _why_no_fit(data, n_clusters)
    if reason is not None:
        return FactorModel(
            status="insufficient_evidence",
            reason=reason,
            correlation=None,
            cov_type=None,
            effects=(),
            predicted=empty,
            **base,
        )
    return _fit(data, table, formula, base, working_correlation, n_clusters, confidence_level, empty)


class _ModelInputs(TypedDict):
    """The fields of a :class:`FactorModel` known before the fit: its inputs and the data's counts."""

    formula: str
    confidence_level: float
    working_correlation: WorkingCorrelation
    n_trials: int
    n_clusters: int
    n_configurations: int


def _check_arguments(records: object, factors: object, working_correlation: object, confidence_level: object) -> None:
    if not isinstance(records, pl.DataFrame | pl.LazyFrame):
        msg = f"records must be a polars DataFrame or LazyFrame (got {type(records).__name__})"
        raise TypeError(msg)
    check_choice(working_correlation, get_args(WorkingCorrelation), "working_correlation")
    check_confidence_level(confidence_level)
    if not isinstance(factors, str) or not factors.strip() or "~" in factors:
        msg = f"factors must be the right-hand side of a formula, e.g. 'C(model) * planning' (got {factors!r})"
        raise ValueError(msg)


def _check_design_covers(systems: set[str], described: set[str]) -> None:
    """Every system with records has a design row, and every design row has records."""
    if systems - described:
        msg = f"design: no row for system(s) {sorted(systems - described)} (got rows for {sorted(described)})"
        raise ValueError(msg)
    if described - systems:
        msg = f"design: system(s) {sorted(described - systems)} have no records (got {sorted(systems)})"
        raise ValueError(msg)


def _why_no_fit(data: pl.DataFrame, n_clusters: int) -> str | None:
    """Why the model cannot be fitted (too few clusters, a configuration at 0% or 100%), or ``None``."""
    if n_clusters < MIN_CLUSTERS:
        return f"the factor model needs at least {MIN_CLUSTERS} independent cases or case groups (got {n_clusters})"
    rates = data.group_by("system").agg(pl.col("__passed").mean().alias("rate")).sort("system")
    degenerate = rates.filter(pl.col("rate").is_in([0.0, 1.0]))
    if degenerate.is_empty():
        return None
    shown = ", ".join(f"{r['system']} ({r['rate']:.0%})" for r in degenerate.iter_rows(named=True))
    return (
        f"configuration(s) {shown} passed or failed every trial: their log odds are unbounded (the "
        "maximum-likelihood estimate does not exist)"
    )


def _fit(
    data: pl.DataFrame,
    table: pl.DataFrame,
    formula: str,
    base: _ModelInputs,
    working_correlation: WorkingCorrelation,
    n_clusters: int,
    confidence_level: float,
    empty: pl.DataFrame,
) -> FactorModel:
    pd = importlib.import_module("pandas")
    # The GEE's formula constructor, families and working correlations from their own modules: the same objects
    # ``statsmodels.api`` re-exports, without its ~340 other modules (time series, scipy.signal; ~0.35 CPU-s a process).
    smf = importlib.import_module("statsmodels.formula.api")
    families = importlib.import_module("statsmodels.genmod.families")
    cov_structs = importlib.import_module("statsmodels.genmod.cov_struct")
    columns = [c for c in data.columns if c not in ("outcome", "case_group", "case_id", "case_version")]
    frame = pd.DataFrame({name: data[name].to_numpy() for name in columns})
    cov_struct = cov_structs.Exchangeable() if working_correlation == "exchangeable" else cov_structs.Independence()
    cov_type = "bias_reduced" if n_clusters < BIAS_REDUCED_BELOW else "robust"
    try:
        model = smf.gee(formula, groups="__cluster", data=frame, family=families.Binomial(), cov_struct=cov_struct)
    except Exception as exc:  # formula errors come from patsy/formulaic with their own types
        msg = f"factors: cannot build the model {formula.replace('__passed', PASSED)!r}: {exc}"
        raise ValueError(msg) from None
    if np.linalg.matrix_rank(model.exog) < model.exog.shape[1]:
        msg = (
            f"factors: the design is rank-deficient (some terms of {model.exog_names} are not identifiable from "
            f"{int(base['n_configurations'])} configurations); drop or merge terms"
        )
        raise ValueError(msg)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = model.fit(cov_type=cov_type, maxiter=100)
    trouble = [str(w.message) for w in caught if "converge" in str(w.message).lower()]
    params = np.asarray(result.params, dtype=np.float64)
    cov = np.asarray(result.cov_params(), dtype=np.float64)
    if trouble or not np.all(np.isfinite(params)) or not np.all(np.isfinite(cov)):
        why = trouble[0] if trouble else "non-finite estimates"
        return FactorModel(
            status="insufficient_evidence",
            reason=f"the GEE fit did not converge: {why}",
            correlation=None,
            cov_type=cov_type,
            effects=(),
            predicted=empty,
            **base,
        )
    z = float(stats.norm.isf((1 - confidence_level) / 2))
    effects = _effects(model.exog_names, params, cov, z)
    predicted = _predicted(model, table, params, cov, z)
    dep = getattr(result.cov_struct, "dep_params", None)
    correlation = float(dep) if working_correlation == "exchangeable" and dep is not None else None
    return FactorModel(
        status="ok",
        reason=None,
        correlation=correlation,
        cov_type=cov_type,
        effects=effects,
        predicted=predicted,
        _params=params,
        _cov=cov,
        **base,
    )


def _effects(
    names: list[str], params: npt.NDArray[np.float64], cov: npt.NDArray[np.float64], z: float
) -> tuple[FactorEffect, ...]:
    """Wald estimate, test and interval of every term."""
    se = np.sqrt(np.diag(cov))
    return tuple(
        FactorEffect(
            term=str(name),
            estimate=float(p),
            se=float(s),
            statistic=float(p / s),
            pvalue=float(2 * stats.norm.sf(abs(p / s))),
            ci_low=float(p - z * s),
            ci_high=float(p + z * s),
        )
        for name, p, s in zip(names, params, se, strict=True)
    )


def _predicted(
    model: Any, table: pl.DataFrame, params: npt.NDArray[np.float64], cov: npt.NDArray[np.float64], z: float
) -> pl.DataFrame:
    """Population-averaged pass probability of each configuration (delta method on the logit)."""
    pd = importlib.import_module("pandas")
    design_rows = pd.DataFrame({name: table[name].to_numpy() for name in table.columns})
    design_rows["__passed"] = 0.0
    exog = _exog_for(model, design_rows)
    eta = exog @ params
    eta_se = np.sqrt(np.einsum("ij,jk,ik->i", exog, cov, exog))
    expit = special.expit
    return pl.DataFrame(
        {
            "system": table["system"].to_list(),
            "estimate": expit(eta),
            "ci_low": expit(eta - z * eta_se),
            "ci_high": expit(eta + z * eta_se),
        }
    ).sort("system")


def _exog_for(model: Any, rows: Any) -> npt.NDArray[np.float64]:
    """Design matrix of new rows through the fitted model's own formula specification."""
    spec = model.data.model_spec
    if hasattr(spec, "get_model_matrix"):  # formulaic
        return np.asarray(spec.get_model_matrix(rows), dtype=np.float64)
    patsy = importlib.import_module("patsy")
    return np.asarray(patsy.build_design_matrices([spec], rows)[0], dtype=np.float64)
