"""Every string option of gatestats, as a named ``Literal`` (one vocabulary everywhere)."""

from __future__ import annotations

from typing import Literal, TypeAlias

import polars as pl

__all__ = [
    "Alternative",
    "AsymptoticMcNemarMethod",
    "ComparisonFamily",
    "ComparisonStatus",
    "Correction",
    "FrameLike",
    "IntervalMethod",
    "Metric",
    "OddsRatioMethod",
    "Outcome",
    "PairedDesign",
    "PairedIntervalMethod",
    "PairedTest",
    "PlanTest",
    "ResolvedIntervalMethod",
    "ResolvedPairedIntervalMethod",
    "Status",
    "WorkingCorrelation",
]

#: A polars frame in either mode; functions accept both and go lazy internally.
FrameLike: TypeAlias = pl.DataFrame | pl.LazyFrame

#: Trial outcomes of the run-record contract v1.
Outcome: TypeAlias = Literal["passed", "failed", "resource_killed", "infra_error"]

#: ``pass_at_k``: at least one of k trials succeeds (capability, Chen et al. 2021).
#: ``pass_hat_k``: all k trials succeed (reliability, pass^k, Yao et al. 2024).
Metric: TypeAlias = Literal["pass_at_k", "pass_hat_k"]

#: Interval methods for a mean over cases. ``auto`` picks per data (see
#: :func:`gatestats.estimators.case_mean_interval`).
IntervalMethod: TypeAlias = Literal["auto", "bootstrap", "clt", "wilson"]

#: The method that actually produced an interval (``auto`` resolved).
ResolvedIntervalMethod: TypeAlias = Literal["bootstrap", "clt", "wilson"]

#: ``ok`` or an explicit "we do not know".
Status: TypeAlias = Literal["ok", "insufficient_evidence"]

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

#: McNemar's asymptotic test: ``asymptotic`` (McNemar 1947) or ``continuity_corrected`` (Edwards 1948).
AsymptoticMcNemarMethod: TypeAlias = Literal["asymptotic", "continuity_corrected"]

#: Interval of the conditional odds ratio c/b: ``exact`` (transformed Clopper-Pearson) or
#: ``transformed_wilson`` (Fagerland, Lydersen & Laake 2014).
OddsRatioMethod: TypeAlias = Literal["exact", "transformed_wilson"]

#: Multiplicity corrections: Holm (default), Bonferroni, Hochberg, Benjamini-Hochberg.
Correction: TypeAlias = Literal["holm", "bonferroni", "hochberg", "bh"]

#: Status of a paired comparison: ``cannot_resolve`` when the sample can never decide the
#: question asked (a margin finer than one case, too few discordant cases for the exact test).
ComparisonStatus: TypeAlias = Literal["ok", "insufficient_evidence", "cannot_resolve"]

#: ``one_trial``: one valid trial per case (the 2x2 table); ``several_trials``: per-case rates.
PairedDesign: TypeAlias = Literal["one_trial", "several_trials"]

#: Which comparisons of many configurations: every pair, or each against one baseline.
ComparisonFamily: TypeAlias = Literal["all_pairs", "vs_baseline"]

#: Working correlation of the factor model (GEE) within a case.
WorkingCorrelation: TypeAlias = Literal["exchangeable", "independence"]

#: The conditional McNemar test a sample-size plan is for; ``auto``: mid-p two-sided, exact one-sided
#: (as :func:`gatestats.paired.compare` decides with one trial per case).
PlanTest: TypeAlias = Literal["auto", "midp", "exact"]
