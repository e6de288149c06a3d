"""Weighted kappa for ordinal judge scales (``gatestats.judges.weighted_kappa``).

Reference values:

- SAS PROC FREQ agreement example (table [[0, 4, 1], [0, 8, 0], [0, 1, 5]]), the SAS printout that
  statsmodels' ``stats/tests/test_inter_rater.py`` (``TestWeightedCohens``) checks: linear
  (Cicchetti-Allison) weights, kappa 0.4701, ASE 0.1457, 95% CI 0.1845 to 0.7558, ASE under H0
  0.1426, Z 3.2971, two-sided p 0.0010.
- R ``irr::kappa2`` on the ``anxiety`` data, raters 2 and 3 (the printout in the same statsmodels
  test file, ``test_cohenskappa_irr``): "equal" (linear) weights kappa 0.1459075, z 1.282472,
  p 0.1996772; "squared" (quadratic) weights kappa 0.2520325, z 1.437451, p 0.1505898. The table
  below is that data cross-tabulated as statsmodels does (irr drops the empty category 5).
- statsmodels ``cohens_kappa(table, wt=...)`` for the standard errors (computed in the tests).
"""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from gatestats.judges import agreement_table, cohens_kappa, kappa_weights, weighted_kappa

SAS_TABLE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]
ANXIETY_RATERS_2_3 = [[0, 0, 1, 0, 0], [4, 0, 1, 0, 0], [2, 3, 3, 0, 0], [0, 2, 0, 1, 1], [1, 0, 0, 1, 0]]


def test_linear_weighted_kappa_matches_sas_printout() -> None:
    k = weighted_kappa(SAS_TABLE, weights="linear")
    assert (k.status, k.weights, k.n, k.n_categories) == ("ok", "linear", 19, 3)
    rounded = [round(v or 0, 4) for v in (k.estimate, k.se, k.ci_low, k.ci_high, k.se_null, k.z, k.pvalue)]
    assert rounded == [0.4701, 0.1457, 0.1845, 0.7558, 0.1426, 3.2971, 0.001]


@pytest.mark.parametrize(
    ("weights", "kappa", "z", "pvalue"),
    [("linear", 0.1459075, 1.282472, 0.1996772), ("quadratic", 0.2520325, 1.437451, 0.1505898)],
)
def test_weighted_kappa_matches_r_irr_kappa2_on_anxiety_data(
    weights: str, kappa: float, z: float, pvalue: float
) -> None:
    k = weighted_kappa(ANXIETY_RATERS_2_3, weights=weights)  # type: ignore[arg-type]
    assert k.estimate == pytest.approx(kappa, abs=5e-8)
    assert k.z == pytest.approx(z, abs=5e-7)
    assert k.pvalue == pytest.approx(pvalue, abs=5e-8)


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
@pytest.mark.parametrize(
    "table", [SAS_TABLE, ANXIETY_RATERS_2_3, [[20, 5, 1, 0], [4, 15, 6, 1], [0, 3, 12, 2], [1, 0, 4, 9]]]
)
def test_weighted_kappa_and_both_standard_errors_match_statsmodels(weights: str, table: list[list[int]]) -> None:
    reference = sm_cohens_kappa(table, wt=weights)
    k = weighted_kappa(table, weights=weights)  # type: ignore[arg-type]
    assert k.estimate == pytest.approx(reference.kappa, rel=1e-12)
    assert k.se == pytest.approx(np.sqrt(reference.var_kappa), rel=1e-10)
    assert k.se_null == pytest.approx(np.sqrt(reference.var_kappa0), rel=1e-10)


def test_two_category_weighted_kappa_is_cohens_kappa() -> None:
    table = [[40, 9], [6, 45]]
    plain = cohens_kappa(table)
    for weights in ("linear", "quadratic"):
        k = weighted_kappa(table, weights=weights)  # type: ignore[arg-type]
        assert (k.estimate, k.se, k.se_null) == pytest.approx((plain.estimate, plain.se, plain.se_null), rel=1e-12)


def test_quadratic_weights_credit_near_misses_more_than_linear() -> None:
    near_misses = [[10, 6, 0, 0], [5, 10, 6, 0], [0, 5, 10, 6], [0, 0, 5, 10]]
    linear = weighted_kappa(near_misses, weights="linear").estimate or 0
    quadratic = weighted_kappa(near_misses, weights="quadratic").estimate or 0
    unweighted = cohens_kappa(near_misses).estimate or 0
    assert unweighted < linear < quadratic


def test_weight_matrices_follow_the_named_schemes() -> None:
    assert kappa_weights(5, "linear")[0].tolist() == [1.0, 0.75, 0.5, 0.25, 0.0]
    assert kappa_weights(5, "quadratic")[0].tolist() == [1.0, 0.9375, 0.75, 0.4375, 0.0]


def test_interval_at_another_level_and_to_dict() -> None:
    k = weighted_kappa(SAS_TABLE, weights="linear", confidence_level=0.95)
    low, high = k.confidence_interval(0.90)
    assert (k.ci_low or 0) < low < high < (k.ci_high or 0)
    assert low == pytest.approx((k.estimate or 0) - 1.6448536 * (k.se or 0))
    assert k.to_dict()["weights"] == "linear"


def test_weighted_kappa_to_dict_lists_the_scale_then_the_kappa_fields() -> None:
    # WeightedKappa shares its numbers with Kappa (one field list); its JSON keeps the scale first.
    keys = list(weighted_kappa(SAS_TABLE, weights="linear").to_dict())
    kappa_keys = list(cohens_kappa(SAS_TABLE).to_dict())
    assert keys == ["weights", "n_categories", *kappa_keys]
    assert kappa_keys[:3] == ["estimate", "se", "ci_low"]


def test_weighted_kappa_and_kappa_refuse_with_the_same_sentence_but_their_own_name() -> None:
    # One rater constant: 0 by construction; the reason names the statistic and the rater's side.
    table = [[3, 0, 0], [2, 0, 0], [1, 0, 0]]
    weighted, plain = weighted_kappa(table), cohens_kappa(table)
    assert weighted.reason == (
        "weighted kappa is 0 by construction: the second (columns) rating puts all 6 items in one category, "
        "so there is no agreement beyond chance to estimate and no interval"
    )
    assert plain.reason == (
        "kappa is 0 by construction: the columns rating puts all 6 items in one category, "
        "so there is no agreement beyond chance to estimate and no interval"
    )


@pytest.mark.parametrize(
    ("table", "reason"),
    [
        ([[0, 0], [0, 0]], "weighted kappa needs at least one rated item (got 0)"),
        ([[5, 0, 0], [0, 0, 0], [0, 0, 0]], "weighted kappa is undefined: expected agreement is 1 on 5 items"),
        ([[3, 0, 0], [2, 0, 0], [1, 0, 0]], "weighted kappa is 0 by construction: the second (columns) rating"),
        ([[3, 0, 0], [0, 2, 0], [0, 0, 4]], "has asymptotic standard error 0"),
    ],
)
def test_undefined_weighted_kappa_is_insufficient_evidence_with_the_reason(table: list[list[int]], reason: str) -> None:
    k = weighted_kappa(table)
    assert (k.status, k.estimate, k.ci_low, k.pvalue) == ("insufficient_evidence", None, None, None)
    assert k.reason is not None
    assert reason in k.reason
    with pytest.raises(ValueError, match="weighted kappa has no interval"):
        k.confidence_interval()


@pytest.mark.parametrize(
    ("table", "kwargs", "message"),
    [
        ([[1, 2, 3]], {}, r"table must be a square matrix with at least 2 categories \(got shape \(1, 3\)\)"),
        ([[1, -2], [3, 4]], {}, "table must hold non-negative finite counts"),
        ([[1, 2], [3, 4]], {"weights": "cubic"}, r"weights must be one of linear, quadratic \(got 'cubic'\)"),
        (
            [[1, 2], [3, 4]],
            {"confidence_level": 1.0},
            r"confidence_level must lie strictly between 0 and 1 \(got 1.0\)",
        ),
    ],
)
def test_weighted_kappa_rejects_bad_input(table: list[list[int]], kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        weighted_kappa(table, **kwargs)  # type: ignore[arg-type]


def test_agreement_table_cross_tabulates_ordinal_ratings_in_scale_order() -> None:
    human = [1, 2, 3, 4, 5, 5, 3]
    judge = [1, 3, 3, 5, 5, 4, 2]
    table = agreement_table(human, judge, categories=[1, 2, 3, 4, 5])
    assert table.sum() == 7
    assert table.diagonal().tolist() == [1, 0, 1, 0, 1]
    assert weighted_kappa(table).n == 7
    with pytest.raises(
        ValueError, match=r"second rating of item 1 is not a category of the scale \[1, 2, 3\] \(got 7\)"
    ):
        agreement_table([1, 2], [1, 7], categories=[1, 2, 3])
    with pytest.raises(ValueError, match=r"first and second must rate the same items \(got 2 and 1 ratings\)"):
        agreement_table([1, 2], [1], categories=[1, 2])
    with pytest.raises(ValueError, match="categories must list at least 2 distinct categories"):
        agreement_table([1], [1], categories=[1, 1])
