"""Prediction-powered pass rates and paired differences: behaviour, fallbacks and hostile input."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from gatestats.judges.ppi import human_mean, ppi_mean, ppi_mean_weighted, tuned_lambda
from gatestats.judges.ppi_items import PPIComparison, ppi_paired_difference, ppi_pass_rate


def _frames(seed: int = 7, n_judged: int = 600, n_labelled: int = 120) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    truth = rng.random(n_judged) < 0.6
    verdict = np.where(rng.random(n_judged) < 0.15, ~truth, truth)
    judged = pl.DataFrame({"item": [f"i{k}" for k in range(n_judged)], "verdict": verdict.tolist()})
    pick = np.sort(rng.choice(n_judged, n_labelled, replace=False))
    labels = pl.DataFrame({"item": [f"i{k}" for k in pick], "label": truth[pick].tolist()})
    return judged, labels


def test_five_estimates_side_by_side() -> None:
    judged, labels = _frames()
    r = ppi_pass_rate(judged, labels)
    assert isinstance(r, PPIComparison)
    assert [e.method for e in r.estimates()] == ["human-only", "judge-only", "rogan-gladen", "ppi", "ppi++"]
    for e in r.estimates():
        assert e.status == "ok", e.reason
        assert e.ci_low is not None
        assert e.ci_high is not None
        assert e.estimate is not None
        assert 0.0 <= e.ci_low < e.estimate < e.ci_high <= 1.0
    assert r.n_labelled == 120
    assert r.n_judged == 600
    assert r.ppi.n_labelled == 120
    assert r.ppi.n_unlabelled == 480
    assert r.ppi.lam == 1.0
    assert 0.0 <= (r.ppi_plus_plus.lam or 0.0) <= 1.0
    # PPI++ is never wider than the human-only CLT interval by more than rounding (lambda = 0 is allowed)
    width = {e.method: (e.ci_high or 0.0) - (e.ci_low or 0.0) for e in r.estimates()}
    assert width["ppi++"] < width["human-only"]
    frame = r.to_frame()
    assert frame.height == 5
    assert frame["method"].to_list()[3] == "ppi"
    assert r.to_dict()["estimates"][4]["method"] == "ppi++"  # type: ignore[index]


def test_lazy_frames_and_integer_labels() -> None:
    judged, labels = _frames()
    a = ppi_pass_rate(judged.lazy(), labels.with_columns(pl.col("label").cast(pl.Int64)).lazy())
    b = ppi_pass_rate(judged, labels)
    assert a.ppi.estimate == b.ppi.estimate


def test_too_few_labels_is_insufficient_evidence() -> None:
    judged, labels = _frames(n_labelled=12)
    r = ppi_pass_rate(judged, labels)
    assert r.ppi.status == "insufficient_evidence"
    assert r.ppi.estimate is None
    assert r.ppi.ci_low is None
    assert "12 human label(s)" in (r.ppi.reason or "")
    assert r.ppi_plus_plus.status == "insufficient_evidence"


def test_ppi_plus_plus_needs_100_labels() -> None:
    """Tuning lambda on fewer labels under-covered (benchmarks/ppi_coverage.py): PPI answers, PPI++ does not."""
    judged, labels = _frames(n_labelled=60)
    r = ppi_pass_rate(judged, labels)
    assert r.ppi.status == "ok"
    assert r.ppi_plus_plus.status == "insufficient_evidence"
    assert "at least 100" in (r.ppi_plus_plus.reason or "")


def test_judge_perfect_on_labels_never_gives_width_zero() -> None:
    """Every labelled residual is 0: the floor keeps a positive width and the note says so."""
    y = np.ones(40)
    r = ppi_mean(y, y, np.ones(500), bounds=(0.0, 1.0))
    assert r.status == "ok"
    assert r.ci_high is not None
    assert r.ci_low is not None
    assert r.ci_high - r.ci_low > 0.01
    assert r.note is not None
    assert "variance floor" in r.note
    # without a known range there is no honest floor
    r = ppi_mean(y, y, np.ones(500))
    assert r.status == "insufficient_evidence"
    assert "all equal" in (r.reason or "")
    h = human_mean(np.zeros(40), bounds=(0.0, 1.0))
    assert h.status == "ok"
    assert (h.ci_high or 0) - (h.ci_low or 0) > 0


def test_all_labels_equal_item_level() -> None:
    judged = pl.DataFrame({"item": [str(k) for k in range(300)], "verdict": [True] * 300})
    labels = pl.DataFrame({"item": [str(k) for k in range(120)], "label": [True] * 120})
    r = ppi_pass_rate(judged, labels)
    for e in (r.ppi, r.ppi_plus_plus, r.human_only):
        assert e.status == "ok"
        assert e.ci_low is not None
        assert e.ci_high is not None
        assert e.ci_high - e.ci_low > 0
    assert r.ppi.note is not None
    assert "floor" in r.ppi.note
    # a constant judge: Rogan-Gladen has no labelled fail to measure the false-pass rate
    assert r.rogan_gladen.status == "insufficient_evidence"


def test_ppi_is_unbiased_where_the_judge_is_not() -> None:
    """A judge that passes everything: judge-only says 1.0, PPI recovers the labels' rate."""
    rng = np.random.default_rng(3)
    truth = rng.random(2000) < 0.3
    judged = pl.DataFrame({"item": [str(k) for k in range(2000)], "verdict": [True] * 2000})
    labels = pl.DataFrame({"item": [str(k) for k in range(400)], "label": truth[:400].tolist()})
    r = ppi_pass_rate(judged, labels)
    assert r.judge_only.estimate == 1.0
    assert r.ppi.ci_low is not None
    assert r.ppi.ci_high is not None
    assert r.ppi.ci_low < 0.3 < r.ppi.ci_high
    assert r.ppi_plus_plus.lam == 0.0  # a constant judge carries no information


def test_unparseable_verdicts_read_as_fail_and_counted() -> None:
    judged, labels = _frames()
    judged = judged.with_columns(
        pl.when(pl.col("item").is_in(["i1", "i2", "i3"])).then(None).otherwise(pl.col("verdict")).alias("verdict")
    )
    r = ppi_pass_rate(judged, labels)
    assert r.n_unparseable == 3
    assert r.judge_only.n_unlabelled == 597
    assert r.ppi.status == "ok"


def test_every_item_labelled() -> None:
    judged, _ = _frames(n_judged=50, n_labelled=10)
    labels = judged.select("item", pl.col("verdict").alias("label"))
    r = ppi_pass_rate(judged, labels)
    assert r.ppi.status == "insufficient_evidence"
    assert "every judged item is labelled" in (r.ppi.reason or "")
    assert r.human_only.status == "ok"


def test_paired_difference() -> None:
    rng = np.random.default_rng(11)
    n = 800
    a, b = rng.random(n) < 0.7, rng.random(n) < 0.55
    va = np.where(rng.random(n) < 0.1, ~a, a)
    vb = np.where(rng.random(n) < 0.1, ~b, b)
    ids = [f"x{k}" for k in range(n)]
    judged = pl.DataFrame({"item": ids, "verdict_a": va.tolist(), "verdict_b": vb.tolist()})
    labels = pl.DataFrame({"item": ids[:150], "label_a": a[:150].tolist(), "label_b": b[:150].tolist()})
    r = ppi_paired_difference(judged, labels)
    assert r.target == "paired_difference"
    assert r.rogan_gladen.status == "insufficient_evidence"
    for e in (r.human_only, r.judge_only, r.ppi, r.ppi_plus_plus):
        assert e.status == "ok"
        assert e.ci_low is not None
        assert e.ci_high is not None
        assert -1.0 <= e.ci_low < e.ci_high <= 1.0
    assert r.ppi.ci_low is not None
    assert r.ppi.ci_high is not None
    assert r.ppi.ci_low < 0.15 < r.ppi.ci_high


def test_weighted_design_by_verdict() -> None:
    """Label 50% of the judge's fails and 10% of its passes: the IPW estimate covers the truth."""
    rng = np.random.default_rng(5)
    n = 3000
    truth = rng.random(n) < 0.5
    verdict = np.where(rng.random(n) < 0.2, ~truth, truth)
    pi = np.where(verdict, 0.1, 0.5)
    chosen = rng.random(n) < pi
    ids = [str(k) for k in range(n)]
    judged = pl.DataFrame({"item": ids, "verdict": verdict.tolist(), "inclusion": pi.tolist()})
    labels = pl.DataFrame({"item": [i for i, c in zip(ids, chosen, strict=True) if c], "label": truth[chosen].tolist()})
    r = ppi_pass_rate(judged, labels, design="weighted")
    assert r.design == "weighted"
    assert r.rogan_gladen.status == "insufficient_evidence"
    assert "random" in (r.rogan_gladen.reason or "")
    for e in (r.human_only, r.ppi, r.ppi_plus_plus):
        assert e.status == "ok"
        assert e.ci_low is not None
        assert e.ci_high is not None
        assert e.ci_low < truth.mean() < e.ci_high
    # the unweighted human mean of this design is biased towards the judge's fails
    assert abs(float(truth[chosen].mean()) - float(truth.mean())) > 0.1


def test_weighted_with_equal_probabilities_is_the_plain_ipw_mean() -> None:
    f = np.asarray([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    r = ppi_mean_weighted(f, np.full(6, 0.5), [0, 1, 2], [1.0, 1.0, 0.0], lam=1.0, min_labels=2, bounds=(0, 1))
    # phi = f + xi/pi (y - f): [1, 2, -1, 1, 0, 1] -> mean 4/6
    assert r.estimate == pytest.approx(4 / 6)
    assert r.se == pytest.approx(math.sqrt(np.var([1, 2, -1, 1, 0, 1], ddof=1) / 6))


@pytest.mark.parametrize(
    ("judged", "labels", "match"),
    [
        (
            {"item": ["a", "b"], "verdict": [True, False]},
            {"item": ["a", "z"], "label": [True, False]},
            "no verdict in the judged set",
        ),
        ({"item": ["a", "a"], "verdict": [True, False]}, {"item": ["a"], "label": [True]}, "appears twice"),
        ({"item": ["a", "b"], "verdict": [True, False]}, {"item": ["a", "a"], "label": [True, True]}, "appears twice"),
        ({"item": ["a", "b"], "verdict": [True, False]}, {"item": ["a"], "label": [2]}, "label is 2"),
        ({"item": ["a", "b"], "verdict": [True, False]}, {"item": ["a"], "label": [None]}, "label is null"),
        ({"item": ["a", "b"], "verdict": [True, False]}, {"item": ["a"], "label": [0.5]}, "boolean or 0/1"),
        ({"item": ["a", "b"], "verdict": [True, False]}, {"item": ["a"], "label": [float("nan")]}, "boolean or 0/1"),
        ({"item": ["a", "b"], "verdict": ["pass", "fail"]}, {"item": ["a"], "label": [True]}, "boolean or 0/1"),
        ({"item": ["a", None], "verdict": [True, False]}, {"item": ["a"], "label": [True]}, "item is null"),
        ({"item": ["a", "b"]}, {"item": ["a"], "label": [True]}, "no 'verdict' column"),
        ({"verdict": [True]}, {"item": ["a"], "label": [True]}, "no 'item' column"),
    ],
)
def test_hostile_input(judged: dict[str, list[object]], labels: dict[str, list[object]], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ppi_pass_rate(pl.DataFrame(judged, strict=False), pl.DataFrame(labels, strict=False))


@pytest.mark.parametrize("p", [0.0, -0.1, 1.5, float("nan"), None])
def test_inclusion_probability_out_of_range(p: float | None) -> None:
    judged = pl.DataFrame({"item": ["a", "b"], "verdict": [True, False], "inclusion": [0.5, p]}, strict=False)
    with pytest.raises(ValueError, match=r"inclusion probability .* not in \(0, 1\]"):
        ppi_pass_rate(judged, pl.DataFrame({"item": ["a"], "label": [True]}), design="weighted")


def test_weighted_design_needs_inclusion_column() -> None:
    judged, labels = _frames()
    with pytest.raises(ValueError, match="inclusion"):
        ppi_pass_rate(judged, labels, design="weighted")


def test_bad_options() -> None:
    judged, labels = _frames()
    with pytest.raises(ValueError, match="design"):
        ppi_pass_rate(judged, labels, design="stratified")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="min_labels"):
        ppi_pass_rate(judged, labels, min_labels=1)
    with pytest.raises(ValueError, match="confidence"):
        ppi_pass_rate(judged, labels, confidence_level=1.0)
    with pytest.raises(TypeError):
        ppi_pass_rate({"item": ["a"]}, labels)  # type: ignore[arg-type]


def test_array_level_hostile() -> None:
    with pytest.raises(ValueError, match="not a finite number"):
        ppi_mean([1.0, float("nan")], [1.0, 0.0], [1.0])
    with pytest.raises(ValueError, match="differ in length"):
        ppi_mean([1.0, 0.0], [1.0], [1.0])
    with pytest.raises(ValueError, match="empty"):
        ppi_mean([1.0], [1.0], [])
    with pytest.raises(ValueError, match="lam"):
        ppi_mean([1.0], [1.0], [1.0], lam=1.5)
    with pytest.raises(ValueError, match="one-dimensional"):
        ppi_mean([[1.0]], [[1.0]], [1.0])
    with pytest.raises(ValueError, match="twice"):
        ppi_mean_weighted([1.0, 0.0], [0.5, 0.5], [0, 0], [1.0, 1.0])
    with pytest.raises(ValueError, match="positions"):
        ppi_mean_weighted([1.0, 0.0], [0.5, 0.5], [5], [1.0])
    with pytest.raises(ValueError, match="not in"):
        ppi_mean_weighted([1.0, 0.0], [0.0, 0.5], [1], [1.0])
    assert tuned_lambda([1.0, 0.0], [1.0, 1.0], [1.0, 1.0]) == 0.0


def test_empty_inputs_are_insufficient_evidence() -> None:
    judged = pl.DataFrame({"item": [], "verdict": []}, schema={"item": pl.String, "verdict": pl.Boolean})
    labels = pl.DataFrame({"item": [], "label": []}, schema={"item": pl.String, "label": pl.Boolean})
    r = ppi_pass_rate(judged, labels)
    assert all(e.status == "insufficient_evidence" for e in r.estimates())
    assert r.ppi.reason == "no judged item"
    weighted = judged.with_columns(pl.lit(0.5).alias("inclusion"))
    r = ppi_pass_rate(weighted, labels, design="weighted")
    assert all(e.status == "insufficient_evidence" for e in r.estimates() if e.method != "judge-only")
    assert ppi_mean_weighted([1.0, 0.0], [0.5, 0.5], [], [], min_labels=0).status == "insufficient_evidence"


def test_every_verdict_unparseable() -> None:
    """A judge that never answers: PPI is the labels' mean (its prediction is 0 everywhere), judge-only has none."""
    judged = pl.DataFrame(
        {"item": [str(i) for i in range(50)], "verdict": [None] * 50}, schema={"item": pl.String, "verdict": pl.Boolean}
    )
    labels = pl.DataFrame({"item": [str(i) for i in range(35)], "label": [True, False] * 17 + [True]})
    r = ppi_pass_rate(judged, labels)
    assert r.n_unparseable == 50
    assert r.judge_only.status == "insufficient_evidence"
    assert r.ppi.estimate == pytest.approx(18 / 35)
