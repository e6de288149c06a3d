"""``analyze``'s path in floats (estimators/small.py) gives numpy's path's numbers, bit for bit (issue 28 item 2).

``analyze`` computes a small Wilson analysis without numpy while numpy is not loaded; everything here runs
with numpy loaded, so each check asks for one path or the other by replacing ``small._numpy_loaded`` and
checks which path ran (the floats path keeps each estimate's case values as a list, numpy's as an array).
Every float is compared by its bits (``repr``: ``-0.0`` and ``0.0`` differ, ``nan`` equals ``nan``).

The models of numpy's order of additions (estimators/numpy_order.py) hold for the numpy and the machine
named by ``numpy_order.PROVED_FOR`` (the lock's numpy 2.4.6 on x86-64): on any other the first test fails,
never skips. Re-prove them there (this file, ``benchmarks/numpy_reduction_order.py``) before changing it.
tests/cli/test_analyze_without_numpy.py compares the command's output on the bundled data, byte for byte.
"""

from __future__ import annotations

import importlib
import json
import platform
from typing import Any

import numpy as np
import polars as pl
import pytest

from gatestats.estimators import Analysis, small
from gatestats.estimators.intervals import _case_mean_intervals
from gatestats.estimators.numpy_order import PROVED_FOR, einsum_row_dot, row_mean, row_var
from tests.hypothesis_counts import draws

analyze_module = importlib.import_module("gatestats.estimators.analyze")

#: Random rows per check of the models against numpy.
ROW_DRAWS = draws(300)
#: Random analyses compared between the two paths.
ANALYSIS_DRAWS = draws(160)
#: Random analyses whose per-case values are at most SMALL_VALUES and near it (the largest the floats path takes).
NEAR_THRESHOLD_DRAWS = draws(4, floor=2)
#: Random batches of Wilson intervals compared with numpy's batch.
BATCH_DRAWS = draws(40)


def _bits(value: Any) -> str:
    """Every float of ``value`` by its bits (JSON with ``repr`` floats; NaN and infinities allowed)."""
    return json.dumps(value, sort_keys=True, default=repr)


def test_the_models_were_proved_for_this_numpy_and_machine() -> None:
    found = (np.__version__, platform.machine())
    assert found == PROVED_FOR, (
        f"analyze's path without numpy was proved for numpy {PROVED_FOR[0]} on {PROVED_FOR[1]}, not {found}: "
        "re-prove estimators/numpy_order.py here (this file, benchmarks/numpy_reduction_order.py), then PROVED_FOR"
    )


def _random_rows(rng: np.random.Generator, count: int) -> list[np.ndarray]:
    """Rows of 1-1200 values (scaled, shifted normals), 0/1 rows and rows of pass@k-like fractions."""
    rows: list[np.ndarray] = []
    for i in range(count):
        length = int(rng.integers(1, 1201 if i % 3 else 60))
        kind = i % 3
        if kind == 0:
            rows.append(rng.integers(0, 2, size=length).astype(np.float64))
        elif kind == 1:
            rows.append(rng.standard_normal(length) * rng.uniform(0.01, 100) + rng.uniform(-5, 5))
        else:
            rows.append(rng.integers(0, 7, size=length) / 6.0)
    return rows


def test_the_reductions_add_in_numpys_order() -> None:
    rng = np.random.default_rng(47)
    for row in _random_rows(rng, ROW_DRAWS):
        values = row.tolist()
        stacked = np.stack([row, row[::-1], row * 0.5, row[::-1] * 0.25])  # the (samples, cases) array of a batch
        d = stacked - stacked.mean(axis=1, keepdims=True)
        rows = [r.tolist() for r in stacked]
        assert _bits([row_mean(r) for r in rows]) == _bits(stacked.mean(axis=1).tolist())
        assert _bits([row_var(r) for r in rows]) == _bits(stacked.var(axis=1).tolist())
        assert _bits([einsum_row_dot(r) for r in d.tolist()]) == _bits(np.einsum("ij,ij->i", d, d).tolist())
        assert _bits(row_mean(values)) == _bits(float(row.mean()))
        if row.size > 1:
            assert _bits(row_var(values, ddof=1)) == _bits(float(row.var(ddof=1)))


def _summary(rng: np.random.Generator, n_cases: int, *, systems: int = 1, trials: int | None = None) -> pl.DataFrame:
    """Per-case counts of ``systems`` systems: equal or unequal trials, 0/1 cases, all passing or all failing.

    ``trials``: every case of every system has that many (else a random shape).
    """
    shapes = ["equal", "unequal", "one trial", "all pass", "all fail", "short"]
    shape = "equal" if trials is not None else str(rng.choice(shapes))
    rows = []
    for s in range(systems):
        trials = int(rng.integers(1, 11)) if shape != "equal" or trials is None else trials
        for i in range(n_cases):
            n = {"equal": trials, "one trial": 1, "short": int(rng.integers(0, 4))}.get(shape, int(rng.integers(1, 11)))
            c = {"all pass": n, "all fail": 0}.get(shape, int(rng.binomial(n, rng.uniform())))
            rows.append((f"s{s}", f"c{i}", n, c))
    return pl.DataFrame(
        {
            "system": [r[0] for r in rows],
            "case_id": [r[1] for r in rows],
            "case_version": pl.Series([None] * len(rows), dtype=pl.String),
            "case_group": pl.Series([None] * len(rows), dtype=pl.String),
            "n_trials": [r[2] for r in rows],
            "n": [r[2] for r in rows],
            "c": [r[3] for r in rows],
            "n_resource_killed": 0,
            "n_infra_errors": 0,
        },
        schema_overrides={"n": pl.UInt32, "c": pl.UInt32},
    )


def _analysis(monkeypatch: pytest.MonkeyPatch, floats: bool, summary: pl.DataFrame, **options: Any) -> Analysis:
    """``analyze_summary`` of ``summary`` by the floats path (``floats``) or numpy's."""
    with monkeypatch.context() as m:
        m.setattr(small, "_numpy_loaded", lambda: not floats)
        return analyze_module.analyze_summary(summary, **options)


def _path(analysis: Analysis) -> set[str]:
    """The paths that computed ``analysis``' defined estimates: ``floats`` (case values in a list), ``numpy``."""
    return {
        "floats" if isinstance(e._values, list) else "numpy"
        for s in analysis.systems
        for e in s.estimates
        if e._values is not None
    }


def _compared(monkeypatch: pytest.MonkeyPatch, summary: pl.DataFrame, **options: Any) -> tuple[Analysis, Analysis]:
    """Both paths' analyses of ``summary``, asserted equal bit for bit (every field, case values included)."""
    floats = _analysis(monkeypatch, True, summary, **options)
    numpy = _analysis(monkeypatch, False, summary, **options)
    assert _bits(floats.to_dict()) == _bits(numpy.to_dict()), options
    for a, b in zip(floats.systems, numpy.systems, strict=True):
        for e, f in zip(a.estimates, b.estimates, strict=True):
            assert _bits(None if e._values is None else list(e._values)) == _bits(
                None if f._values is None else f._values.tolist()
            )
            assert (e._max_effective_n, e._method) == (f._max_effective_n, f._method)
            assert _bits(None if e._groups is None else e._groups.tolist()) == _bits(
                None if f._groups is None else f._groups.tolist()
            )
    assert _path(numpy) <= {"numpy"}
    return floats, numpy


def test_an_analysis_in_floats_is_numpys_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4702)
    seen = dict.fromkeys(("floats", "one case", "refused", "undefined", "constant", "design effect below 1"), 0)
    for draw in range(ANALYSIS_DRAWS):
        n_cases = (
            int(rng.choice([1, 1, 2, 3, 5, 20, 50, 199, 200, 200, 400, 400]))
            if draw % 8
            else int(rng.integers(500, 1500))
        )
        summary = _summary(rng, n_cases, systems=int(rng.integers(1, 4)))
        ks = sorted({int(k) for k in rng.integers(1, 6, size=int(rng.integers(1, 4)))})
        level = float(rng.choice([0.8, 0.9, 0.95, 0.99, 0.975]))
        method = str(rng.choice(["auto", "wilson"]))
        floats, _ = _compared(monkeypatch, summary, ks=ks, confidence_level=level, method=method)
        assert _path(floats) <= {"floats"}
        estimates = [e for s in floats.systems for e in s.estimates]
        seen["floats"] += _path(floats) == {"floats"}
        seen["one case"] += n_cases == 1
        seen["refused"] += any(e.status != "ok" and not e.undefined_cases and e.n_cases > 0 for e in estimates)
        seen["undefined"] += any(e.undefined_cases for e in estimates)
        seen["constant"] += any(e.status == "ok" and e.se == 0.0 for e in estimates)
        seen["design effect below 1"] += any((e.effective_n or 0.0) > e.n_cases for e in estimates)
    print(seen)
    assert min(seen.values()) >= ANALYSIS_DRAWS // 20, seen


def test_the_largest_analyses_in_floats_are_numpys(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4703)
    for _ in range(NEAR_THRESHOLD_DRAWS):
        ks = list(range(1, int(rng.integers(7, 10))))  # 6-8 k values: under 5,000 cases
        n_cases = small.SMALL_VALUES // (2 * len(ks)) - int(rng.integers(0, 40))  # just under the threshold
        floats, _ = _compared(monkeypatch, _summary(rng, n_cases, trials=len(ks)), ks=ks, method="wilson")
        assert _path(floats) == {"floats"}
        over = small.SMALL_VALUES // (2 * len(ks)) + 1
        over = _analysis(monkeypatch, True, _summary(rng, over, trials=len(ks)), ks=ks, method="wilson")
        assert _path(over) == {"numpy"}  # one value over the threshold: numpy's path


def test_other_methods_groups_and_many_cases_take_numpys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4704)
    summary = _summary(rng, 30, trials=3)
    for method in ("bootstrap", "clt"):
        assert _path(_analysis(monkeypatch, True, summary, method=method)) <= {"numpy"}
    grouped = summary.with_columns(pl.format("g{}", pl.int_range(pl.len()) % 5).alias("case_group"))
    _compared(monkeypatch, grouped)
    assert _path(_analysis(monkeypatch, True, grouped)) == {"numpy"}
    many = _summary(rng, 5000, trials=2)
    assert _path(_analysis(monkeypatch, True, many)) == {"numpy"}  # auto's CLT from 5,000 cases


def test_the_floats_path_refuses_what_numpys_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    summary = _summary(np.random.default_rng(4705), 10, trials=2)
    for options, match in (
        ({"confidence_level": 1.5}, "confidence_level"),
        ({"n_resamples": 10}, "n_resamples"),
        ({"seed": -1}, "seed"),
    ):
        errors = []
        for floats in (True, False):
            with pytest.raises(ValueError, match=match) as caught:
                _analysis(monkeypatch, floats, summary, **options)
            errors.append(str(caught.value))
        assert errors[0] == errors[1]


def test_an_estimate_in_floats_recomputes_its_interval_as_numpys(monkeypatch: pytest.MonkeyPatch) -> None:
    summary = _summary(np.random.default_rng(4706), 40, trials=4)
    floats, numpy = _compared(monkeypatch, summary, ks=[1, 2])
    for a, b in zip(floats.systems[0].estimates, numpy.systems[0].estimates, strict=True):
        if a.status == "ok":
            assert repr(a.confidence_interval(0.9)) == repr(b.confidence_interval(0.9))


def test_wilson_intervals_are_the_batchs_field_for_field() -> None:
    rng = np.random.default_rng(4707)
    for _ in range(BATCH_DRAWS):
        n = int(rng.choice([1, 2, 7, 150, 260]))
        samples = [rng.integers(0, 5, size=n) / 4.0 for _ in range(int(rng.integers(1, 5)))]
        if rng.random() < 0.3:
            samples.append(np.full(n, 0.75))
        caps = [float(rng.choice([2.0, 40.0, 1e6])) for _ in samples]
        options: dict[str, Any] = {"method": str(rng.choice(["auto", "wilson"])), "confidence_level": 0.95}
        expected = _case_mean_intervals(samples, n_resamples=2000, seed=0, max_effective_n=caps, **options)
        found = small.wilson_intervals(
            [s.tolist() for s in samples], n_resamples=2000, seed=0, max_effective_n=caps, **options
        )
        assert repr(found) == repr(expected)


def test_the_estimators_package_reads_the_interval_functions_on_first_use() -> None:
    import gatestats.estimators as package
    from gatestats.estimators import intervals

    # Session 49: every name of the package is read on first use (its home module in _HOMES).
    interval_names = {"case_mean_interval", "clustered_standard_error", "wilson_interval"}
    assert {name for name, home in package._HOMES.items() if home == "intervals"} == interval_names
    for name in interval_names:
        assert getattr(package, name) is getattr(intervals, name)
    assert set(package._HOMES) <= set(package.__all__) & set(dir(package))
