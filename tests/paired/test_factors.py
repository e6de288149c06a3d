"""Factor model for harness research (``gatestats.paired.factor_model``): GEE clustered by case.

Reference: the same fit done directly with statsmodels' GEE (Binomial, exchangeable, robust
covariance) on trial rows built here independently of the library's data path.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

from gatestats.paired import factor_model
from tests.paired.conftest import SCHEMA, AsFrame

DESIGN = {
    "m0-off": {"model": "m0", "planning": 0},
    "m0-on": {"model": "m0", "planning": 1},
    "m1-off": {"model": "m1", "planning": 0},
    "m1-on": {"model": "m1", "planning": 1},
}
EFFECT = {"m0-off": -0.3, "m0-on": 0.7, "m1-off": 0.2, "m1-on": 0.7}


def _rows(n_cases: int = 80, trials: int = 3, seed: int = 4) -> list[tuple[str, str, None, None, int, int, str]]:
    rng = np.random.default_rng(seed)
    ease = rng.normal(0, 1.2, n_cases)
    return [
        (
            s,
            f"c{i}",
            None,
            None,
            t,
            0,
            "passed" if rng.random() < 1 / (1 + np.exp(-(ease[i] + EFFECT[s]))) else "failed",
        )
        for s in DESIGN
        for i in range(n_cases)
        for t in range(trials)
    ]


def test_factor_model_matches_direct_statsmodels_gee(as_frame: AsFrame) -> None:
    rows = _rows()
    records = pl.DataFrame(rows, schema=SCHEMA, orient="row")
    fit = factor_model(as_frame(records), design=DESIGN, factors="C(model) * planning")
    frame = pd.DataFrame(
        {
            "passed": [1.0 if r[6] == "passed" else 0.0 for r in rows],
            "case": [r[1] for r in rows],
            "model": [DESIGN[r[0]]["model"] for r in rows],
            "planning": [DESIGN[r[0]]["planning"] for r in rows],
        }
    ).sort_values("case", kind="stable")
    direct = smf.gee(
        "passed ~ C(model) * planning",
        groups="case",
        data=frame,
        family=sm.families.Binomial(),
        cov_struct=sm.cov_struct.Exchangeable(),
    ).fit(cov_type="robust")
    assert fit.status == "ok"
    assert fit.cov_type == "robust"
    assert fit.n_clusters == 80
    assert [e.term for e in fit.effects] == list(direct.params.index)
    assert [e.estimate for e in fit.effects] == pytest.approx(direct.params.to_numpy(), abs=1e-5)
    assert [e.se for e in fit.effects] == pytest.approx(direct.bse.to_numpy(), rel=1e-3)
    interaction = fit.get("C(model)[T.m1]:planning")
    assert interaction.ci_low < interaction.estimate < interaction.ci_high
    assert fit.correlation is not None
    assert fit.correlation > 0
    predicted = dict(zip(fit.predicted["system"], fit.predicted["estimate"], strict=True))
    assert predicted["m0-on"] > predicted["m0-off"]
    assert fit.to_frame().height == 4
    assert fit.confidence_interval(0.9).height == 4


def test_design_as_frame_and_small_sample_correction() -> None:
    records = pl.DataFrame(_rows(n_cases=30), schema=SCHEMA, orient="row")
    design = pl.DataFrame(
        {
            "system": list(DESIGN),
            "model": [v["model"] for v in DESIGN.values()],
            "planning": [v["planning"] for v in DESIGN.values()],
        }
    )
    fit = factor_model(records.lazy(), design=design.lazy(), factors="C(model) + planning")
    assert fit.status == "ok"
    assert fit.cov_type == "bias_reduced"


def test_degenerate_configuration_and_few_clusters_are_insufficient() -> None:
    rows = [r if r[0] != "m1-on" else (*r[:6], "passed") for r in _rows()]
    fit = factor_model(pl.DataFrame(rows, schema=SCHEMA, orient="row"), design=DESIGN, factors="C(model) * planning")
    assert fit.status == "insufficient_evidence"
    assert fit.effects == ()
    assert "m1-on (100%) passed or failed every trial" in (fit.reason or "")
    few = factor_model(pl.DataFrame(_rows(n_cases=6), schema=SCHEMA, orient="row"), design=DESIGN, factors="planning")
    assert few.status == "insufficient_evidence"
    assert few.reason == "the factor model needs at least 10 independent cases or case groups (got 6)"
    with pytest.raises(ValueError, match="has no estimates"):
        few.confidence_interval()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"design": {k: v for k, v in DESIGN.items() if k != "m0-on"}}, r"design: no row for system\(s\) \['m0-on'\]"),
        (
            {"design": {**DESIGN, "ghost": {"model": "m2", "planning": 0}}},
            r"design: system\(s\) \['ghost'\] have no records",
        ),
        ({"factors": "passed ~ planning"}, r"factors must be the right-hand side of a formula"),
        (
            {"factors": "C(model) + C(model2)", "design": {k: {**v, "model2": v["model"]} for k, v in DESIGN.items()}},
            r"factors: the design is rank-deficient",
        ),
        ({"factors": "unknown_column"}, r"factors: cannot build the model"),
    ],
)
def test_bad_designs_are_refused(kwargs: dict[str, object], message: str) -> None:
    records = pl.DataFrame(_rows(n_cases=20), schema=SCHEMA, orient="row")
    arguments: dict[str, object] = {"design": DESIGN, "factors": "C(model) + planning", **kwargs}
    with pytest.raises(ValueError, match=message):
        factor_model(records, **arguments)  # type: ignore[arg-type]
