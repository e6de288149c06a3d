"""Judge calibration: how far an LLM judge can be trusted, and whether it may vote in a release gate.

- :func:`read_judgments` — a labelled set and judge verdicts from CSV / JSONL / Parquet.
- :func:`judge_error_rates` — false-pass and false-fail rates (each with its own n and interval),
  confusion matrix, Cohen's kappa, by slice; :func:`weighted_kappa` (linear or quadratic weights,
  Fleiss-Cohen-Everitt interval) for ordinal judge scales.
- :func:`order_sensitivity` — flip rate and the exact sign test of position bias (pairwise judges);
  :func:`persuasion_test` — exact McNemar test of self-advocating text; :func:`pairwise_agreement` —
  a pairwise judge against people in each order, both orders and positional agreement.
- :func:`judge_bias_by_covariate` — does the judge's disagreement with people depend on a field
  (length, position, model family)? Rates by bin, one test per field, Holm across them.
- :func:`corrected_pass_rate` — a production pass rate corrected for judge error (Rogan-Gladen,
  Lang-Reiczigel interval carrying both samples' uncertainty).
- :func:`calibrate` / :func:`write_calibration` / :func:`load_calibration` — the versioned,
  content-addressed calibration artifact.
- :func:`ppi_pass_rate` / :func:`ppi_paired_difference` — prediction-powered estimates (PPI, PPI++)
  from a judge-graded set and a human-labelled subset, beside the human-only, judge-only and
  Rogan-Gladen estimates (:mod:`gatestats.judges.ppi` for the array-level estimators).
- :func:`recalibration_change` — a judge re-calibrated on a new sample against its stored
  calibration (Fisher's exact test per rate, Holm); the gate refuses one that moved too far.
- :func:`judge_eligibility` — the gate's check that a judge is calibrated, current and good enough
  to vote.

The names are imported on first use (PEP 562, :func:`gatestats._lazy.lazy_names`): ``calibrate`` loads only the
modules it uses (issue 28 item 2). :func:`weighted_kappa` shares its module's name: the package keeps the function
(``gatestats._lazy``'s docstring says how).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gatestats._lazy import lazy_names

if TYPE_CHECKING:
    from gatestats.judges._stats import (
        Kappa,
        PairedDifference,
        Proportion,
        SignTest,
        clopper_pearson_interval,
        cohens_kappa,
        paired_difference_interval,
        proportion,
        sign_test,
    )
    from gatestats.judges._types import (
        AGREEMENT_CONVENTIONS,
        CORRECTION_METHODS,
        JUDGE_KINDS,
        KAPPA_WEIGHTS,
        LIMIT_CRITERIA,
        PROPORTION_METHODS,
        SWAPPED_CODINGS,
        AgreementConvention,
        CorrectionMethod,
        JudgeKind,
        KappaWeights,
        LimitCriterion,
        ProportionMethod,
        SwappedCoding,
    )
    from gatestats.judges.calibration import (
        CALIBRATION_SCHEMA,
        JudgeCalibration,
        calibrate,
        load_calibration,
        write_calibration,
    )
    from gatestats.judges.correction import (
        CorrectedPassRate,
        JudgeUnusableError,
        corrected_pass_rate,
        corrected_pass_rate_known,
        rogan_gladen,
    )
    from gatestats.judges.covariates import CovariateBias, CovariateBin, CovariateTest, judge_bias_by_covariate
    from gatestats.judges.gate import JudgeEligibility, JudgePolicy, JudgeVote, judge_eligibility, load_calibrations
    from gatestats.judges.inputs import (
        JUDGMENT_FIELDS,
        JudgmentSet,
        parse_judgment_mapping,
        parse_where,
        read_judgments,
    )
    from gatestats.judges.order import OrderSensitivity, PersuasionTest, order_sensitivity, persuasion_test
    from gatestats.judges.pairwise import OrderAgreement, PairwiseAgreement, pairwise_agreement
    from gatestats.judges.ppi import MeanEstimate, ppi_mean, ppi_mean_weighted
    from gatestats.judges.ppi_items import PPIComparison, ppi_paired_difference, ppi_pass_rate
    from gatestats.judges.rates import JudgeErrorRates, judge_error_rates
    from gatestats.judges.recalibration import RateChange, RecalibrationChange, recalibration_change
    from gatestats.judges.weighted_kappa import WeightedKappa, agreement_table, kappa_weights, weighted_kappa

__all__ = [
    "AGREEMENT_CONVENTIONS",
    "CALIBRATION_SCHEMA",
    "CORRECTION_METHODS",
    "JUDGE_KINDS",
    "JUDGMENT_FIELDS",
    "KAPPA_WEIGHTS",
    "LIMIT_CRITERIA",
    "PROPORTION_METHODS",
    "SWAPPED_CODINGS",
    "AgreementConvention",
    "CorrectedPassRate",
    "CorrectionMethod",
    "CovariateBias",
    "CovariateBin",
    "CovariateTest",
    "JudgeCalibration",
    "JudgeEligibility",
    "JudgeErrorRates",
    "JudgeKind",
    "JudgePolicy",
    "JudgeUnusableError",
    "JudgeVote",
    "JudgmentSet",
    "Kappa",
    "KappaWeights",
    "LimitCriterion",
    "MeanEstimate",
    "OrderAgreement",
    "OrderSensitivity",
    "PPIComparison",
    "PairedDifference",
    "PairwiseAgreement",
    "PersuasionTest",
    "Proportion",
    "ProportionMethod",
    "RateChange",
    "RecalibrationChange",
    "SignTest",
    "SwappedCoding",
    "WeightedKappa",
    "agreement_table",
    "calibrate",
    "clopper_pearson_interval",
    "cohens_kappa",
    "corrected_pass_rate",
    "corrected_pass_rate_known",
    "judge_bias_by_covariate",
    "judge_eligibility",
    "judge_error_rates",
    "kappa_weights",
    "load_calibration",
    "load_calibrations",
    "order_sensitivity",
    "paired_difference_interval",
    "pairwise_agreement",
    "parse_judgment_mapping",
    "parse_where",
    "persuasion_test",
    "ppi_mean",
    "ppi_mean_weighted",
    "ppi_paired_difference",
    "ppi_pass_rate",
    "proportion",
    "read_judgments",
    "recalibration_change",
    "rogan_gladen",
    "sign_test",
    "weighted_kappa",
    "write_calibration",
]
#: The module (under this package) of each other name in ``__all__``, imported on first use.
_HOMES: Final = {
    **dict.fromkeys(("WeightedKappa", "agreement_table", "kappa_weights", "weighted_kappa"), "weighted_kappa"),
    **dict.fromkeys(
        (
            "Kappa",
            "PairedDifference",
            "Proportion",
            "SignTest",
            "clopper_pearson_interval",
            "cohens_kappa",
            "paired_difference_interval",
            "proportion",
            "sign_test",
        ),
        "_stats",
    ),
    **dict.fromkeys(
        (
            "AGREEMENT_CONVENTIONS",
            "CORRECTION_METHODS",
            "JUDGE_KINDS",
            "KAPPA_WEIGHTS",
            "LIMIT_CRITERIA",
            "PROPORTION_METHODS",
            "SWAPPED_CODINGS",
            "AgreementConvention",
            "CorrectionMethod",
            "JudgeKind",
            "KappaWeights",
            "LimitCriterion",
            "ProportionMethod",
            "SwappedCoding",
        ),
        "_types",
    ),
    **dict.fromkeys(
        ("CALIBRATION_SCHEMA", "JudgeCalibration", "calibrate", "load_calibration", "write_calibration"), "calibration"
    ),
    **dict.fromkeys(
        ("CorrectedPassRate", "JudgeUnusableError", "corrected_pass_rate", "corrected_pass_rate_known", "rogan_gladen"),
        "correction",
    ),
    **dict.fromkeys(("CovariateBias", "CovariateBin", "CovariateTest", "judge_bias_by_covariate"), "covariates"),
    **dict.fromkeys(("JudgeEligibility", "JudgePolicy", "JudgeVote", "judge_eligibility", "load_calibrations"), "gate"),
    **dict.fromkeys(
        ("JUDGMENT_FIELDS", "JudgmentSet", "parse_judgment_mapping", "parse_where", "read_judgments"), "inputs"
    ),
    **dict.fromkeys(("OrderSensitivity", "PersuasionTest", "order_sensitivity", "persuasion_test"), "order"),
    **dict.fromkeys(("OrderAgreement", "PairwiseAgreement", "pairwise_agreement"), "pairwise"),
    **dict.fromkeys(("MeanEstimate", "ppi_mean", "ppi_mean_weighted"), "ppi"),
    **dict.fromkeys(("PPIComparison", "ppi_paired_difference", "ppi_pass_rate"), "ppi_items"),
    **dict.fromkeys(("JudgeErrorRates", "judge_error_rates"), "rates"),
    **dict.fromkeys(("RateChange", "RecalibrationChange", "recalibration_change"), "recalibration"),
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
