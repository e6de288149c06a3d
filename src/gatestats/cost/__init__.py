"""Cost per accepted outcome: what a system spends for each outcome that passes.

- :func:`cost_per_accepted`: (model + tool + execution spend of every attempt — failed, retried and
  infra-errored ones included — + merged human review and correction time x an hourly rate) /
  accepted outcomes, per system, slice or any record column, with a case-level bootstrap interval
  of the ratio of sums; human, machine and calendar time in separate columns.
- :func:`cost_ratio`: candidate over baseline cost per accepted outcome on the cases both ran,
  with a paired case bootstrap interval and one-sided p-values against a limit (for the gate).
- :class:`MissingCosts`: when some attempts carry no cost, the known spend, how many are missing,
  and bounds for what they could add (0 up to a stated cost per attempt), with an interval.
- :func:`merge_intervals`, :func:`attribute_overlaps`: a reviewer's overlapping time counted once,
  and split among the outcomes it served.

Definitions, the JSON of ``gatestats cost`` and the coverage simulation: ``docs/cost.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gatestats._lazy import lazy_names

if TYPE_CHECKING:
    from gatestats.cost._bootstrap import MIN_UNITS_INTERVAL, MIN_UNITS_RATIO, CostInterval
    from gatestats.cost._frames import RECORD_COLUMNS, ReviewRateRequiredError
    from gatestats.cost.human_time import attribute_overlaps, merge_intervals
    from gatestats.cost.missing import MissingCosts
    from gatestats.cost.per_accepted import CPA_INTERVAL_METHOD, CostAnalysis, CostEstimate, cost_per_accepted
    from gatestats.cost.ratio import RATIO_INTERVAL_METHOD, CostRatio, cost_ratio

__all__ = [
    "CPA_INTERVAL_METHOD",
    "MIN_UNITS_INTERVAL",
    "MIN_UNITS_RATIO",
    "RATIO_INTERVAL_METHOD",
    "RECORD_COLUMNS",
    "CostAnalysis",
    "CostEstimate",
    "CostInterval",
    "CostRatio",
    "MissingCosts",
    "ReviewRateRequiredError",
    "attribute_overlaps",
    "cost_per_accepted",
    "cost_ratio",
    "merge_intervals",
]

#: The module (under this package) of each name in ``__all__``, imported on first use: ``gatestats cost``
#: loads :mod:`~gatestats.cost.per_accepted` and what it needs, not the gate's ratio (issue 28 item 2).
_HOMES: Final = {
    "MIN_UNITS_INTERVAL": "_bootstrap",
    "MIN_UNITS_RATIO": "_bootstrap",
    "CostInterval": "_bootstrap",
    "RECORD_COLUMNS": "_frames",
    "ReviewRateRequiredError": "_frames",
    "attribute_overlaps": "human_time",
    "merge_intervals": "human_time",
    "MissingCosts": "missing",
    "CPA_INTERVAL_METHOD": "per_accepted",
    "CostAnalysis": "per_accepted",
    "CostEstimate": "per_accepted",
    "cost_per_accepted": "per_accepted",
    "RATIO_INTERVAL_METHOD": "ratio",
    "CostRatio": "ratio",
    "cost_ratio": "ratio",
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
