"""String options of judge calibration, as named ``Literal`` types with the tuple of their values.

They belong with the rest of the vocabulary in :mod:`gatestats.vocabulary`; they live here until that
module takes them, and :mod:`gatestats.judges` re-exports them.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias, get_args

from gatestats.vocabulary import JUDGE_CRITERIA, JudgeCriterion

__all__ = [
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
]

#: ``pointwise``: the judge grades one output (pass / fail). ``pairwise``: the judge compares two
#: outputs A and B (A better / B better, optionally a tie).
JudgeKind: TypeAlias = Literal["pointwise", "pairwise"]
JUDGE_KINDS: Final[tuple[JudgeKind, ...]] = get_args(JudgeKind)

#: Interval for a binomial proportion: Wilson's score interval or the exact Clopper-Pearson interval.
ProportionMethod: TypeAlias = Literal["wilson", "clopper-pearson"]
PROPORTION_METHODS: Final[tuple[ProportionMethod, ...]] = get_args(ProportionMethod)

#: Interval for a pass rate corrected for judge error: Lang & Reiczigel (2014), which carries the
#: uncertainty of the calibration set and of the production sample (the only method offered; see
#: :mod:`gatestats.judges.correction` for why no bootstrap is).
CorrectionMethod: TypeAlias = Literal["lang-reiczigel"]
CORRECTION_METHODS: Final[tuple[CorrectionMethod, ...]] = get_args(CorrectionMethod)

#: How a release gate compares an error rate with its limit: the upper confidence bound (the limit
#: must be demonstrated) or the point estimate.
LimitCriterion: TypeAlias = JudgeCriterion
LIMIT_CRITERIA: Final[tuple[LimitCriterion, ...]] = JUDGE_CRITERIA

#: How the swapped-order verdict of a pairwise judge is coded: ``original`` (already mapped back to
#: the original A/B labels, so a position-consistent judge repeats its verdict) or ``presented``
#: (in the order shown, so a position-consistent judge reverses it).
SwappedCoding: TypeAlias = Literal["original", "presented"]
SWAPPED_CODINGS: Final[tuple[SwappedCoding, ...]] = get_args(SwappedCoding)

#: Agreement weights of weighted kappa on an ordinal scale of k categories: ``linear``
#: :math:`1 - |i - j|/(k - 1)` (Cicchetti-Allison) or ``quadratic`` :math:`1 - (i - j)^2/(k - 1)^2`
#: (Fleiss-Cohen).
KappaWeights: TypeAlias = Literal["linear", "quadratic"]
KAPPA_WEIGHTS: Final[tuple[KappaWeights, ...]] = get_args(KappaWeights)

#: Positional agreement of a pairwise judge judged in both orders: ``parseable-only`` leaves out
#: every pair with an unparseable verdict in either order (agreement = 1 - flip rate);
#: ``both-unparseable-agree`` counts a pair unparseable in both orders as agreeing over all pairs
#: (the ``equal`` column of LLMBar's statistics files, Zeng et al. 2024).
AgreementConvention: TypeAlias = Literal["parseable-only", "both-unparseable-agree"]
AGREEMENT_CONVENTIONS: Final[tuple[AgreementConvention, ...]] = get_args(AgreementConvention)
