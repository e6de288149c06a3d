"""Paired comparisons of configurations on the same cases.

- :func:`compare`: one candidate against one baseline — flips, exact and mid-p McNemar (or the
  case-level sign / permutation tests with several trials per case), Tango or Newcombe interval
  for the paired difference (paired bootstrap or Miller's clustered SE with several trials),
  exact interval of the conditional odds ratio, non-inferiority against a margin, and a
  resolution check.
- :func:`compare_many`: all pairs, or each against a baseline, with Holm (default), Bonferroni,
  Hochberg or Benjamini-Hochberg adjusted p-values, the adjusted decision of each pair and
  intervals that hold jointly, compatible with Holm or Bonferroni (:func:`simultaneous_intervals`).
- :func:`factor_model`: pass probability on configuration factors (GEE, clustered by case).
- :func:`cases_needed`, :func:`minimum_detectable_effect`, :func:`false_block`: planning;
  :func:`plan_cases_trials_from_pilot` / :func:`plan_cases_trials`: cases or trials (Miller 2024).
- Classical methods, for reference (the gate does not use them): :func:`mcnemar_asymptotic_test`
  (Edwards' continuity-corrected McNemar), :func:`scas_interval` (Laud's skewness-corrected score
  interval), ``conditional_odds_ratio(..., method="transformed_wilson")``.
- Building blocks on counts: :func:`mcnemar_test`, :func:`tango_interval`,
  :func:`newcombe_interval`, :func:`conditional_odds_ratio`, :func:`noninferiority_test`,
  :func:`resolution`, :func:`adjust_pvalues`, :func:`pair_cases`.

The names are imported on first use (PEP 562, :func:`gatestats._lazy.lazy_names`): ``gatestats.paired.mcnemar``
loads without the planning, factor-model or comparison modules, and ``compare`` imports no scipy (issue 28 item 2).
:func:`compare` and :func:`resolution` share their modules' names: the package keeps the functions
(``gatestats._lazy``'s docstring says how).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gatestats._lazy import lazy_names

if TYPE_CHECKING:
    from gatestats.paired.cases_trials import (
        CasesTrialsPlan,
        TrialsOption,
        cases_for_trials,
        plan_cases_trials,
        plan_cases_trials_from_pilot,
    )
    from gatestats.paired.compare import Comparison, ComparisonOptions, compare, compare_pair
    from gatestats.paired.factors import FactorEffect, FactorModel, factor_model
    from gatestats.paired.intervals import (
        DifferenceInterval,
        newcombe_interval,
        scas_interval,
        scas_statistic,
        tango_interval,
        tango_statistic,
    )
    from gatestats.paired.mcnemar import (
        AsymptoticMcNemarTest,
        McNemarTest,
        mcnemar_asymptotic_test,
        mcnemar_pvalues,
        mcnemar_test,
    )
    from gatestats.paired.multiplicity import CORRECTIONS, MultipleComparison, adjust_pvalues, compare_many
    from gatestats.paired.noninferiority import NonInferiorityTest, noninferiority_test
    from gatestats.paired.odds_ratio import OddsRatioEstimate, conditional_odds_ratio
    from gatestats.paired.pairing import (
        CaseTable,
        CaseVersionMismatchError,
        NoPairedCasesError,
        PairedCases,
        UnknownSystemError,
        build_case_table,
        pair_cases,
    )
    from gatestats.paired.planning import (
        DetectableEffectPlan,
        FalseBlockPlan,
        SampleSizePlan,
        cases_needed,
        exact_power,
        false_block,
        minimum_detectable_effect,
        power_curve,
    )
    from gatestats.paired.resolution import Resolution, resolution
    from gatestats.paired.simultaneous import SimultaneousInterval, simultaneous_intervals
    from gatestats.paired.trials import case_difference_interval, permutation_test

__all__ = [
    "CORRECTIONS",
    "AsymptoticMcNemarTest",
    "CaseTable",
    "CaseVersionMismatchError",
    "CasesTrialsPlan",
    "Comparison",
    "ComparisonOptions",
    "DetectableEffectPlan",
    "DifferenceInterval",
    "FactorEffect",
    "FactorModel",
    "FalseBlockPlan",
    "McNemarTest",
    "MultipleComparison",
    "NoPairedCasesError",
    "NonInferiorityTest",
    "OddsRatioEstimate",
    "PairedCases",
    "Resolution",
    "SampleSizePlan",
    "SimultaneousInterval",
    "TrialsOption",
    "UnknownSystemError",
    "adjust_pvalues",
    "build_case_table",
    "case_difference_interval",
    "cases_for_trials",
    "cases_needed",
    "compare",
    "compare_many",
    "compare_pair",
    "conditional_odds_ratio",
    "exact_power",
    "factor_model",
    "false_block",
    "mcnemar_asymptotic_test",
    "mcnemar_pvalues",
    "mcnemar_test",
    "minimum_detectable_effect",
    "newcombe_interval",
    "noninferiority_test",
    "pair_cases",
    "permutation_test",
    "plan_cases_trials",
    "plan_cases_trials_from_pilot",
    "power_curve",
    "resolution",
    "scas_interval",
    "scas_statistic",
    "simultaneous_intervals",
    "tango_interval",
    "tango_statistic",
]
#: The module (under this package) of each name in ``__all__``, imported on first use.
_HOMES: Final = {
    **dict.fromkeys(("Comparison", "ComparisonOptions", "compare", "compare_pair"), "compare"),
    **dict.fromkeys(("Resolution", "resolution"), "resolution"),
    **dict.fromkeys(
        ("CasesTrialsPlan", "TrialsOption", "cases_for_trials", "plan_cases_trials", "plan_cases_trials_from_pilot"),
        "cases_trials",
    ),
    **dict.fromkeys(("FactorEffect", "FactorModel", "factor_model"), "factors"),
    **dict.fromkeys(
        (
            "DifferenceInterval",
            "newcombe_interval",
            "scas_interval",
            "scas_statistic",
            "tango_interval",
            "tango_statistic",
        ),
        "intervals",
    ),
    **dict.fromkeys(
        ("AsymptoticMcNemarTest", "McNemarTest", "mcnemar_asymptotic_test", "mcnemar_pvalues", "mcnemar_test"),
        "mcnemar",
    ),
    **dict.fromkeys(("CORRECTIONS", "MultipleComparison", "adjust_pvalues", "compare_many"), "multiplicity"),
    **dict.fromkeys(("NonInferiorityTest", "noninferiority_test"), "noninferiority"),
    **dict.fromkeys(("OddsRatioEstimate", "conditional_odds_ratio"), "odds_ratio"),
    **dict.fromkeys(
        (
            "CaseTable",
            "CaseVersionMismatchError",
            "NoPairedCasesError",
            "PairedCases",
            "UnknownSystemError",
            "build_case_table",
            "pair_cases",
        ),
        "pairing",
    ),
    **dict.fromkeys(
        (
            "DetectableEffectPlan",
            "FalseBlockPlan",
            "SampleSizePlan",
            "cases_needed",
            "exact_power",
            "false_block",
            "minimum_detectable_effect",
            "power_curve",
        ),
        "planning",
    ),
    **dict.fromkeys(("SimultaneousInterval", "simultaneous_intervals"), "simultaneous"),
    **dict.fromkeys(("case_difference_interval", "permutation_test"), "trials"),
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
