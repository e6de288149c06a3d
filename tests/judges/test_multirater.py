"""Multi-class statistics, several raters, the clustered corrected rate, and the PandaLM CLI reproduction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typer
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa
from typer.testing import CliRunner

from gatestats.cli.calibrate import calibrate_command
from gatestats.judges import proportion, weighted_kappa
from gatestats.judges.clustered_correction import corrected_pass_rate_clustered, design_effect
from gatestats.judges.correction import lang_reiczigel_batch
from gatestats.judges.raters import fleiss_kappa_counts, krippendorff_alpha_counts, rater_agreement, rating_counts
from tests.conftest import DATA

PANDALM = DATA / "pandalm_multi_rater" / "items.csv"
app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("calibrate")(calibrate_command)


@app.command("version")
def _version() -> None:
    """Unused."""


def _invoke(*args: str | Path) -> Any:
    return CliRunner().invoke(app, ["calibrate", *(str(a) for a in args)], catch_exceptions=False)


PANDALM_ARGS = ["--classes", "1,2,0", "--tie", "0", "--kind", "pairwise", "--positive", "1", "--json"]

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 observers x 12 units example
# with missing values: nominal 0.743, ordinal 0.815 (also krippendorff 0.9.0 on PyPI).
KRIPPENDORFF_2011 = [
    ["1", "1", None, "1"],
    ["2", "2", "3", "2"],
    ["3", "3", "3", "3"],
    ["3", "3", "3", "3"],
    ["2", "2", "2", "2"],
    ["1", "2", "3", "4"],
    ["4", "4", "4", "4"],
    ["1", "1", "2", "1"],
    ["2", "2", "2", "2"],
    [None, "5", "5", "5"],
    [None, None, "1", "1"],
    [None, "3", None, None],
]


@pytest.mark.parametrize(
    ("judge", "published"),
    [("gpt35_result_raw", (71.07, 58.79, 57.36, 57.55)), ("pandalm7b_result_raw", (66.77, 57.38, 57.50, 57.43))],
)
def test_cli_reproduces_pandalm_readme_accuracy_precision_recall_f1(judge: str, published: tuple[float, ...]) -> None:
    # PandaLM README / Wang et al. (ICLR 2024) evaluation table; the authors fold Tie and garbage into tie (0).
    mapping = f"item=idx,label=annotator1+annotator2+annotator3,verdict={judge}"
    result = _invoke(PANDALM, "--map", mapping, *PANDALM_ARGS, "--alias", "Tie=0", "--alias", "garbage=0")
    assert result.exit_code == 0, result.stderr
    m = json.loads(result.stdout)["multiclass"]
    got = [100 * m[k]["estimate"] for k in ("accuracy", "macro_precision", "macro_recall", "macro_f1")]
    assert got == pytest.approx(published, abs=0.005)


def test_cli_counts_gpt35_garbage_as_unparseable_and_reports_rater_agreement() -> None:
    mapping = "item=idx,label=annotator1+annotator2+annotator3,verdict=gpt35_result_raw"
    result = _invoke(PANDALM, "--map", mapping, *PANDALM_ARGS, "--alias", "Tie=0", "--unparseable", "garbage")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["multiclass"]["n_unparseable"] == 25
    assert doc["multiclass"]["accuracy"]["n"] == 974
    assert doc["binary"]["n_label_tie_excluded"] == 92  # 105 tie labels, 13 with a garbage verdict
    raters = doc["raters"]
    assert raters["fleiss_kappa"]["estimate"] == pytest.approx(0.864175364997549, abs=1e-12)  # statsmodels
    assert [round(p["kappa"]["estimate"], 4) for p in raters["pairwise"]] == [0.852, 0.8789, 0.8617]
    assert len(doc["judge_vs_raters"]) == 3


def test_fleiss_kappa_matches_statsmodels_and_fleiss_1971() -> None:
    # Fleiss (1971) Table 1 has kappa 0.430; here statsmodels' fleiss_kappa on random complete ratings.
    rng = np.random.default_rng(7)
    for _ in range(5):
        ratings = rng.integers(0, 4, size=(40, 5))
        table, _ = aggregate_raters(ratings)
        ours = fleiss_kappa_counts(
            rating_counts([[str(v) for v in row] for row in ratings], classes=["0", "1", "2", "3"])
        )
        assert float(ours[0]) == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)


def test_krippendorff_alpha_matches_krippendorff_2011_worked_example() -> None:
    counts = rating_counts(KRIPPENDORFF_2011, classes=list("12345"))
    assert float(krippendorff_alpha_counts(counts)[0]) == pytest.approx(0.743421052631579, abs=1e-12)
    assert float(krippendorff_alpha_counts(counts, level="ordinal")[0]) == pytest.approx(0.8153875037548814, abs=1e-12)


def test_krippendorff_alpha_matches_the_krippendorff_package_on_random_data() -> None:
    krippendorff = pytest.importorskip("krippendorff")  # .venv/bin/pip install krippendorff==0.9.0
    rng = np.random.default_rng(3)
    data = rng.integers(1, 6, size=(4, 30)).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan
    ratings = [[None if np.isnan(v) else str(int(v)) for v in unit] for unit in data.T]
    ratings = [r for r in ratings if any(v is not None for v in r)]
    counts = rating_counts(ratings, classes=list("12345"))
    for level in ("nominal", "ordinal"):
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert float(krippendorff_alpha_counts(counts, level=level)[0]) == pytest.approx(expected, abs=1e-10)


def test_weighted_kappa_matches_sas_proc_freq_linear() -> None:
    # SAS PROC FREQ agreement example, linear weights: kappa_w 0.4701 (more in test_weighted_kappa.py).
    assert weighted_kappa([[0, 4, 1], [0, 8, 0], [0, 1, 5]], weights="linear").estimate == pytest.approx(
        0.4701, abs=5e-5
    )


def test_rater_tie_has_no_majority_and_is_counted() -> None:
    r = rater_agreement([["1", "2", "0"], ["1", "1", "2"]], classes=["1", "2", "0"], n_resamples=100)
    assert r.majority.labels == (None, "1")
    assert r.majority.n_rater_ties == 1


def test_design_effect_is_one_for_one_verdict_per_case_and_large_for_all_or_nothing_cases() -> None:
    assert float(design_effect([1, 0] * 50, [1, 1] * 50)[()]) == pytest.approx(100 / 99)
    assert float(design_effect([4, 0] * 50, [4, 4] * 50)[()]) == pytest.approx(4 * 100 / 99)


def test_clustered_interval_is_wider_than_the_naive_one() -> None:
    class Cal:
        false_fail_rate = proportion(10, 100)
        false_pass_rate = proportion(10, 100)

    clustered = corrected_pass_rate_clustered([4, 0] * 50, [4, 4] * 50, calibration=Cal()).corrected
    naive = corrected_pass_rate_clustered([1, 0] * 200, [1, 1] * 200, calibration=Cal()).corrected
    assert clustered.estimate == pytest.approx(naive.estimate)
    assert clustered.ci_high - clustered.ci_low > 1.5 * (naive.ci_high - naive.ci_low)


def _coverage(*, clustered: bool, reps: int = 4000, seed: int = 11) -> float:
    """Coverage of the corrected-rate interval: 100 cases x 4 verdicts, case-level pass rates Beta(1, 1)."""
    rng = np.random.default_rng(seed)
    se, sp, cases, m, n_cal = 0.85, 0.9, 100, 4, 100
    p_case = rng.beta(1.0, 1.0, size=(reps, cases))  # true pass rate 0.5, intra-case correlation 1/3
    truth = rng.binomial(m, p_case)
    judged = rng.binomial(truth, se) + rng.binomial(m - truth, 1 - sp)
    x_se, x_sp = rng.binomial(n_cal, se, size=reps), rng.binomial(n_cal, sp, size=reps)
    totals = np.full((reps, cases), m)
    deff = design_effect(judged, totals) if clustered else np.ones(reps)
    k, n = judged.sum(axis=1) / deff, (cases * m) / deff
    _, low, high, code = lang_reiczigel_batch(k, n, x_se, n_cal, x_sp, n_cal)
    ok = code == 0
    return float(np.mean((low[ok] <= 0.5) & (high[ok] >= 0.5)))


def test_clustered_corrected_rate_covers_and_the_naive_one_does_not() -> None:
    # Bounded simulation (4,000 replicates, < 2 s): nominal 95%.
    assert _coverage(clustered=True) >= 0.94
    assert _coverage(clustered=False) < 0.93


@pytest.mark.parametrize(
    ("rows", "args", "message"),
    [
        (
            "1,1,3,1\n2,2,2,2\n",
            ["--classes", "1,2", "--positive", "1"],
            ":2: field 'b': column 'b': expected one of '1', '2'",
        ),
        (
            "1,4,5,4\n2,6,2,2\n",
            ["--classes", "1,2,3,4,5", "--ordinal", "--positive", "4"],
            ":3: field 'a': column 'a': expected one of '1', '2', '3', '4', '5' (got '6')",
        ),
        (
            "1,0,0,1\n2,2,2,2\n",
            ["--classes", "1,2", "--positive", "1"],
            "(a tie label needs a tie class: --classes ...,TIE --tie TIE --kind pairwise) (got '0')",
        ),
    ],
    ids=["unknown-rater-label", "score-outside-scale", "tie-label-on-binary-set"],
)
def test_bad_rater_value_names_file_line_and_field(tmp_path: Path, rows: str, args: list[str], message: str) -> None:
    path = tmp_path / "j.csv"
    path.write_text("id,a,b,v\n" + rows)
    result = _invoke(path, "--map", "item=id,label=a+b,verdict=v", *args)
    assert result.exit_code == 1
    assert str(path) in result.stderr
    assert message in result.stderr
    assert result.stdout == ""


def test_correct_clusters_production_verdicts_by_case(tmp_path: Path) -> None:
    production = tmp_path / "prod.csv"
    production.write_text(
        "case,pandalm7b_result_raw\n" + "".join(f"c{i // 4},{1 if (i // 4) % 2 else 2}\n" for i in range(200))
    )
    mapping = "item=idx,label=annotator1+annotator2+annotator3,verdict=pandalm7b_result_raw"
    args = [PANDALM, "--map", mapping, *PANDALM_ARGS, "--correct", production]
    plain = json.loads(_invoke(*args).stdout)["correction"]
    clustered = json.loads(_invoke(*args, "--case", "case").stdout)["correction"]
    assert (plain["n_pass"], plain["n"], clustered["n_cases"]) == (100, 200, 50)
    assert clustered["design_effect"] == pytest.approx(4 * 50 / 49)
    assert clustered["ci_high"] - clustered["ci_low"] > plain["ci_high"] - plain["ci_low"]
