"""Pairing on (case_id, case_version) and the end-to-end paired comparison (``gatestats.paired``)."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.estimators import case_summary
from gatestats.paired import (
    CaseVersionMismatchError,
    NoPairedCasesError,
    UnknownSystemError,
    build_case_table,
    compare,
    pair_cases,
)
from gatestats.paired.pairing import case_label
from gatestats.paired.trials import case_difference_interval, permutation_test
from tests.hypothesis_counts import examples
from tests.paired.conftest import SCHEMA, AsFrame, table_records, trial_records


def _with_versions(frame: pl.DataFrame, versions: dict[tuple[str, str], str]) -> pl.DataFrame:
    return frame.with_columns(
        pl.struct("system", "case_id")
        .map_elements(lambda r: versions.get((r["system"], r["case_id"])), return_dtype=pl.String)
        .alias("case_version")
    )


def test_pairing_lists_unpaired_cases(as_frame: AsFrame) -> None:
    records = trial_records({"A": [[1], [0], [1]], "B": [[1], [1]]})
    extra = pl.DataFrame([("B", "case-9", None, None, 0, 0, "passed")], schema=SCHEMA, orient="row")
    paired = pair_cases(as_frame(pl.concat([records, extra])), baseline="A", candidate="B")
    assert paired.n_pairs == 2
    assert (paired.unpaired_baseline, paired.unpaired_candidate) == (("case-2",), ("case-9",))
    frame = paired.to_frame()
    assert frame["case"].to_list() == ["case-0", "case-1"]
    assert frame["c_candidate"].to_list() == [1, 1]


def test_version_mismatch_is_an_error_unless_restricted(as_frame: AsFrame) -> None:
    records = _with_versions(
        trial_records({"A": [[1], [0], [1]], "B": [[1], [1], [0]]}),
        {("A", "case-0"): "v1", ("B", "case-0"): "v2", ("A", "case-1"): "v1", ("B", "case-1"): "v1"},
    )
    with pytest.raises(
        CaseVersionMismatchError,
        match=r"1 case id\(s\) were run at different versions by baseline 'A' "
        r"and candidate 'B' \(first: baseline has \['case-0@v1'\], candidate has \['case-0@v2'\]\)",
    ):
        pair_cases(as_frame(records), baseline="A", candidate="B")
    paired = pair_cases(as_frame(records), baseline="A", candidate="B", shared_versions_only=True)
    assert paired.n_pairs == 2  # case-1@v1 and case-2 (no version)
    assert paired.excluded_versions == ("case-0@v1", "case-0@v2")
    result = compare(as_frame(records), baseline="A", candidate="B", shared_versions_only=True)
    assert result.excluded_versions == ("case-0@v1", "case-0@v2")
    assert result.to_dict()["excluded_versions"] == ["case-0@v1", "case-0@v2"]


def test_compare_keyword_defaults_are_the_options_defaults() -> None:
    # The gate's flips compare a table it already holds with ComparisonOptions() (gate/sides.py) where compare()
    # would build options from its own keyword defaults: the two sets of defaults must be one.
    import dataclasses
    import inspect

    from gatestats.paired import ComparisonOptions

    defaults = {name: p.default for name, p in inspect.signature(compare).parameters.items()}
    fields = dataclasses.fields(ComparisonOptions)
    assert fields
    assert {f.name: defaults[f.name] for f in fields} == {f.name: f.default for f in fields}


def test_case_label_is_the_label_a_case_table_gives() -> None:
    # The gate maps unresolved attempts to a table's columns by case_label; the table writes its labels as a
    # polars expression: the two must agree, with and without versions (and a version that looks like an id).
    records = _with_versions(
        trial_records({"A": [[1], [0], [1]], "B": [[1], [1], [0]]}),
        {("A", "case-0"): "v1", ("B", "case-0"): "v1", ("A", "case-1"): "@x", ("B", "case-1"): "@x"},
    )
    table = build_case_table(records, systems=("A", "B"))
    keys = records.select("case_id", "case_version").unique().sort("case_id").iter_rows()
    assert table.labels.tolist() == [case_label(*key) for key in keys] == ["case-0@v1", "case-1@@x", "case-2"]


def test_one_system_with_two_versions_of_a_case_needs_restriction() -> None:
    base = trial_records({"A": [[1]], "B": [[1]]}, version="v2")
    old = trial_records({"A": [[0]]}, version="v1")
    with pytest.raises(
        CaseVersionMismatchError, match=r"case 'case-0' of system 'A' has records at several case versions"
    ):
        pair_cases(pl.concat([base, old]), baseline="A", candidate="B")
    paired = pair_cases(pl.concat([base, old]), baseline="A", candidate="B", shared_versions_only=True)
    assert paired.n_pairs == 1
    assert paired.excluded_versions == ("case-0@v1",)


def test_unknown_system_and_no_shared_case_are_errors(as_frame: AsFrame) -> None:
    records = trial_records({"A": [[1], [0]], "B": [[1], [1]]})
    with pytest.raises(UnknownSystemError, match=r"candidate: no records for system 'C' \(got systems 'A', 'B'\)"):
        compare(as_frame(records), baseline="A", candidate="C")
    with pytest.raises(UnknownSystemError, match=r"baseline: no records for system 'Z'"):
        compare(as_frame(records), baseline="Z", candidate="A")
    disjoint = pl.concat(
        [trial_records({"A": [[1]]}), trial_records({"B": [[1]]}).with_columns(case_id=pl.lit("other"))]
    )
    with pytest.raises(
        NoPairedCasesError, match=r"baseline 'A' \(1 cases\) and candidate 'B' \(1 cases\) share no case"
    ):
        compare(as_frame(disjoint), baseline="A", candidate="B")
    with pytest.raises(ValueError, match=r"baseline and candidate must be different systems \(got 'A' twice\)"):
        compare(as_frame(records), baseline="A", candidate="A")


@settings(max_examples=examples(25))
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["A", "B"]),
            st.integers(0, 4),
            st.integers(0, 2),
            st.integers(0, 1),
            st.sampled_from(["passed", "failed", "resource_killed", "infra_error"]),
        ),
        min_size=1,
        max_size=40,
        unique_by=lambda r: r[:4],
    )
)
def test_case_counts_equal_case_summary(rows: list[tuple[str, int, int, int, str]]) -> None:
    frame = pl.DataFrame([(s, f"c{c}", None, None, t, a, o) for s, c, t, a, o in rows], schema=SCHEMA, orient="row")
    table = build_case_table(frame)
    reference = case_summary(frame)
    for row in reference.iter_rows(named=True):
        s, j = table.systems.index(row["system"]), table.labels.tolist().index(row["case_id"])
        assert (table.n[s, j], table.c[s, j], table.n_infra_errors[s, j]) == (row["n"], row["c"], row["n_infra_errors"])
    assert int(table.present.sum()) == reference.height


def test_compare_reproduces_bentur_example_end_to_end(as_frame: AsFrame) -> None:
    result = compare(as_frame(table_records(1, 1, 7, 12)), baseline="base", candidate="cand")
    assert (result.design, result.a, result.b, result.c, result.d, result.n_pairs) == ("one_trial", 1, 1, 7, 12, 21)
    assert (round(result.pvalue_exact, 3), round(result.pvalue_midp, 3)) == (0.070, 0.039)
    assert result.pvalue == result.pvalue_midp
    assert (round(result.diff_ci_low or 0, 4), round(result.diff_ci_high or 0, 4)) == (0.0260, 0.5172)
    assert result.interval.method == "tango"
    assert result.flips_pass_to_fail == ("case-1",)
    assert result.flips_fail_to_pass == tuple(f"case-{i}" for i in range(2, 9))
    assert result.status == "ok"
    assert result.reason is None
    assert result.odds_ratio is not None
    assert result.odds_ratio.estimate == 7.0


def test_compare_is_swap_symmetric(as_frame: AsFrame) -> None:
    records = as_frame(table_records(59, 16, 6, 80))
    one = compare(records, baseline="base", candidate="cand", margin=0.2)
    two = compare(records, baseline="cand", candidate="base", margin=0.2)
    assert (one.b, one.c) == (two.c, two.b)
    assert one.pvalue_exact == pytest.approx(two.pvalue_exact)
    assert one.pvalue_midp == pytest.approx(two.pvalue_midp)
    assert one.diff == pytest.approx(-(two.diff or 0))
    assert (one.diff_ci_low, one.diff_ci_high) == pytest.approx((-(two.diff_ci_high or 0), -(two.diff_ci_low or 0)))
    assert one.flips_pass_to_fail == two.flips_fail_to_pass


def test_compare_newcombe_interval_and_one_sided_alternative() -> None:
    records = table_records(59, 16, 6, 80)
    newcombe = compare(records, baseline="cand", candidate="base", interval="newcombe")
    assert (round(newcombe.diff_ci_low or 0, 4), round(newcombe.diff_ci_high or 0, 4)) == (0.0046, 0.1186)
    less = compare(records, baseline="base", candidate="cand", alternative="less")
    assert less.test == "exact"  # auto: mid-p only two-sided
    with pytest.raises(ValueError, match=r"here alternative 'less'\): one-sided, its size reaches 0.0501"):
        compare(records, baseline="base", candidate="cand", alternative="less", test="midp")
    assert less.diff_ci_low == -1.0
    assert less.diff_ci_high is not None
    assert less.diff_ci_high < 0
    assert less.pvalue_exact == pytest.approx(0.052478790283203125 / 2)


def test_compare_noninferiority_margin_and_cannot_resolve() -> None:
    records = table_records(59, 16, 6, 80)
    ok = compare(records, baseline="base", candidate="cand", margin=0.15)
    assert ok.noninferiority is not None
    assert ok.noninferiority.non_inferior is True
    fine = compare(records, baseline="base", candidate="cand", margin=0.005)
    assert fine.status == "cannot_resolve"
    assert fine.resolution is not None
    assert fine.resolution.cases_needed == 200
    assert fine.noninferiority is not None
    assert fine.noninferiority.non_inferior is None


def test_too_few_discordant_cases_cannot_resolve() -> None:
    result = compare(table_records(10, 1, 2, 10), baseline="base", candidate="cand", test="exact")
    assert result.status == "cannot_resolve"
    assert result.resolution is not None
    assert result.resolution.discordant_needed == 6
    assert result.pvalue_exact == 1.0
    assert result.diff_ci_low is not None


def test_several_trials_keep_the_case_as_unit(as_frame: AsFrame) -> None:
    base = [[1, 1, 0, 1]] * 10 + [[0, 0, 0, 1]] * 10 + [[1, 1, 1, 1]] * 10
    cand = [[1, 1, 1, 1]] * 10 + [[0, 0, 1, 1]] * 10 + [[1, 1, 1, 1]] * 10
    result = compare(as_frame(trial_records({"A": base, "B": cand})), baseline="A", candidate="B")
    assert result.design == "several_trials"
    assert (result.b, result.c, result.n_ties, result.n_units) == (0, 20, 10, 30)
    assert result.diff == pytest.approx(0.25 * 20 / 30)
    # Sign test on cases: 20 of 20 non-tied cases favour the candidate.
    assert result.pvalue_exact == pytest.approx(2 * 0.5**20)
    assert result.interval.method == "clt"
    assert result.test == "exact"  # auto: the exact sign test with several trials per case
    assert result.pvalue == result.pvalue_exact
    records = as_frame(trial_records({"A": base, "B": cand}))
    with pytest.raises(
        ValueError,
        match=r"test 'midp' is offered only for two-sided tests with one trial per independent case \(here cases have several trials\)",
    ):
        compare(records, baseline="A", candidate="B", test="midp")
    boot = compare(records, baseline="A", candidate="B", interval="bootstrap")
    assert boot.status == "insufficient_evidence"
    assert "the bootstrap interval is not offered below 200 independent cases (got 30)" in (boot.reason or "")
    assert result.a is None
    assert result.d is None
    assert result.odds_ratio is None


def test_several_trials_clt_interval_matches_miller_eq7() -> None:
    import numpy as np
    from scipy import stats

    rng = np.random.default_rng(5)
    base = [[int(x) for x in rng.random(4) < 0.6] for _ in range(60)]
    cand = [[int(x) for x in rng.random(4) < 0.7] for _ in range(60)]
    result = compare(trial_records({"A": base, "B": cand}), baseline="A", candidate="B", interval="clt")
    d = np.array([np.mean(c) - np.mean(b) for b, c in zip(base, cand, strict=True)])
    # Miller (2024) eq. 7: Var(s_B) + Var(s_A) - 2 Cov over the number of questions.
    se = np.sqrt(
        (
            np.var(np.mean(cand, axis=1), ddof=1)
            + np.var(np.mean(base, axis=1), ddof=1)
            - 2 * np.cov(np.mean(cand, axis=1), np.mean(base, axis=1))[0, 1]
        )
        / 60
    )
    q = stats.t.isf(0.025, 59)
    assert result.interval.se == pytest.approx(se, rel=1e-10)
    assert (result.diff_ci_low, result.diff_ci_high) == pytest.approx((d.mean() - q * se, d.mean() + q * se), rel=1e-10)


def test_clustered_cases_use_groups_as_units() -> None:
    base = [[1, 0]] * 40
    cand = [[1, 1]] * 20 + [[1, 0]] * 20
    groups = [f"g{i // 4}" for i in range(40)]
    result = compare(trial_records({"A": base, "B": cand}, groups=groups), baseline="A", candidate="B")
    assert result.clustered
    assert result.n_units == 10
    assert (result.b, result.c) == (0, 20)  # cases
    assert result.pvalue_exact == pytest.approx(2 * 0.5**5)  # 5 groups favour the candidate, 5 tie
    with pytest.raises(
        ValueError, match=r"interval 'tango' needs one trial per independent case \(here cases share a case_group\)"
    ):
        compare(trial_records({"A": base, "B": cand}, groups=groups), baseline="A", candidate="B", interval="tango")


def test_undefined_cases_give_insufficient_evidence() -> None:
    records = trial_records({"A": [[1, 1], [1, -1]], "B": [[1, 0], [0, 1]]})
    result = compare(records, baseline="A", candidate="B", k=2)
    assert result.status == "insufficient_evidence"
    assert result.undefined_cases == ("case-1",)
    assert result.pvalue is None
    assert result.diff is None
    assert result.diff_ci_low is None
    assert "fewer than 2 valid trial(s)" in (result.reason or "")
    with pytest.raises(ValueError, match="has no interval"):
        result.confidence_interval(0.9)


def test_constant_differences_have_no_zero_width_interval() -> None:
    records = trial_records({"A": [[1, 1]] * 30, "B": [[1, 1]] * 30})
    result = compare(records, baseline="A", candidate="B")
    assert result.status == "insufficient_evidence"
    assert result.diff == 0.0
    assert result.diff_ci_low is None
    assert result.pvalue_exact == 1.0


def test_permutation_test_and_reproducible_seed() -> None:
    base = [[1, 0, 0, 1]] * 15 + [[1, 1, 1, 0]] * 15
    cand = [[1, 1, 0, 1]] * 15 + [[1, 1, 1, 1]] * 10 + [[0, 0, 0, 0]] * 5  # d: +0.25 x 25, -0.75 x 5
    records = trial_records({"A": base, "B": cand})
    result = compare(records, baseline="A", candidate="B", test="permutation")
    assert result.pvalue == result.pvalue_permutation is not None
    assert result.permutation_exact is False
    assert result.n_permutations == 9999
    again = compare(records, baseline="A", candidate="B", test="permutation")
    assert again.pvalue_permutation == result.pvalue_permutation
    # With one trial per case the permutation test is the exact McNemar test.
    table = compare(table_records(5, 2, 9, 5), baseline="base", candidate="cand", test="permutation")
    assert table.pvalue_permutation == pytest.approx(table.pvalue_exact)


def test_permutation_enumeration_matches_brute_force() -> None:
    import itertools

    values = [0.5, -0.25, 0.75, 0.25, -0.5, 0.1]
    import numpy as np

    observed = sum(values)
    flips = [
        sum(s * abs(v) for s, v in zip(signs, values, strict=True)) for signs in itertools.product([-1, 1], repeat=6)
    ]
    expected = sum(abs(t) >= abs(observed) - 1e-12 for t in flips) / 64
    assert permutation_test(np.array(values)) == (pytest.approx(expected), True)


def test_confidence_interval_method_and_frames(as_frame: AsFrame) -> None:
    result = compare(as_frame(table_records(59, 16, 6, 80)), baseline="base", candidate="cand")
    ninety = result.confidence_interval(0.90)
    assert ninety.method == "tango"
    assert ninety.confidence_level == 0.90
    assert result.diff_ci_low < ninety.ci_low < ninety.ci_high < result.diff_ci_high  # type: ignore[operator]
    frame = result.to_frame()
    assert frame.columns[:4] == ["baseline", "candidate", "status", "design"]
    assert frame.row(0, named=True)["b"] == 16
    payload = result.to_dict()
    for key in ("n_pairs", "b", "c", "pvalue_exact", "pvalue_midp", "diff", "diff_ci_low", "diff_ci_high", "flips"):
        assert key in payload
    assert payload["flips"]["pass_to_fail"][:2] == ["case-59", "case-60"]


def test_case_difference_interval_refuses_too_few_units() -> None:
    r = case_difference_interval([0.1, -0.1, 0.2] * 3, method="clt")
    assert case_difference_interval([0.1, -0.1, 0.2] * 4, method="clt").status == "ok"
    assert r.status == "insufficient_evidence"
    assert r.ci_low is None
    assert "not offered below 10 independent cases (got 9)" in (r.reason or "")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"margin": 1.5}, r"margin must be a number strictly between 0 and 1 \(got 1.5\)"),
        ({"confidence_level": 0}, r"confidence_level must lie strictly between 0 and 1 \(got 0\)"),
        ({"test": "z"}, r"test must be one of auto, midp, exact, permutation \(got 'z'\)"),
        (
            {"interval": "wald"},
            r"interval must be one of auto, tango, scas, newcombe, bootstrap, clt \(got 'wald'\)",
        ),
        ({"n_resamples": 10}, r"n_resamples must be an integer >= 100 \(got 10\)"),
        ({"k": 0}, r"k must be an integer >= 1 \(got 0\)"),
    ],
)
def test_bad_options_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compare(table_records(1, 1, 1, 1), baseline="base", candidate="cand", **kwargs)  # type: ignore[arg-type]
