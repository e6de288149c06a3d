"""The pass-curve frame of an analysis (docs/publish.md, "Frames the charts read").

One row per system, metric and k: ``label`` (the system), ``metric`` (``pass@k`` / ``pass^k``),
``k``, ``estimate``, ``ci_low``, ``ci_high`` (null where the estimate or its interval is undefined).
"""

from __future__ import annotations

from typing import Final

import polars as pl

from gatestats.publish.charts import PASS_CURVE_SCHEMA

__all__ = ["METRIC_NAMES", "pass_curve_frame"]

#: The metric words of the records and results → the chart's.
METRIC_NAMES: Final = {"pass_at_k": "pass@k", "pass_hat_k": "pass^k"}


def pass_curve_frame(estimates: pl.DataFrame) -> pl.DataFrame:
    """The pass-curve frame of :meth:`gatestats.estimators.Analysis.to_frame`'s rows.

    Parameters
    ----------
    estimates
        ``system``, ``metric`` (``pass_at_k`` / ``pass_hat_k``), ``k``, ``estimate``, ``ci_low``, ``ci_high``.

    Returns
    -------
    polars.DataFrame
        The frame :func:`gatestats.publish.charts.pass_curves` reads (other metrics left out).
    """
    return estimates.filter(pl.col("metric").is_in(list(METRIC_NAMES))).select(
        label=pl.col("system"),
        metric=pl.col("metric").replace_strict(METRIC_NAMES, return_dtype=pl.String),
        k=pl.col("k").cast(PASS_CURVE_SCHEMA["k"]),
        estimate="estimate",
        ci_low="ci_low",
        ci_high="ci_high",
    )
