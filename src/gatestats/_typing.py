"""Every string option of gatestats, as a named ``Literal`` (one vocabulary everywhere)."""

from __future__ import annotations

from typing import Literal, TypeAlias

import polars as pl

__all__ = [
    "Alternative",
    "FrameLike",
    "IntervalMethod",
    "Metric",
    "Outcome",
    "ResolvedIntervalMethod",
    "Status",
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
