"""A covariate's bins from two polars queries are the bins of one query per Series operation (session 45).

``gatestats.judges.covariates._binned`` asked polars for each Series operation on its own (≈ 10 queries a
covariate: 9 of the 24 CPU-s of tests/judges/test_covariates.py). It now asks twice. :func:`_reference` is the
code it replaced, verbatim (its quantile bins, unchanged, shared); the codes, labels and kind must be the same for every kind of column a judgment set
can carry: numbers, numbers as text with blanks, empty and blank text, missing values, NaN and infinities, ties, a few distinct values,
text, booleans, integers, dates, an empty column and one with nothing present.
"""

from __future__ import annotations

import datetime

import numpy as np
import numpy.typing as npt
import polars as pl
import pytest

from gatestats.judges.covariates import _binned, _g, _quantile_bins


def _reference(values: pl.Series, bins: int) -> tuple[npt.NDArray[np.int64], list[str], str]:
    """``_binned`` before session 45 (main ``f799b63``), one polars query per Series operation (its numeric
    bins, which did not change, by the same :func:`_quantile_bins`)."""
    text = values.cast(pl.String)
    number = text.str.strip_chars().cast(pl.Float64, strict=False)
    present = text.is_not_null().to_numpy()
    numeric = bool(present.any()) and int(number.is_not_null().sum()) == int(present.sum())
    numeric = numeric and bool(number.drop_nulls().is_finite().all())
    if numeric and number.drop_nulls().n_unique() > bins:
        return _quantile_bins(number.to_numpy(), present, bins)  # the quantile bins themselves did not change
    keys = number if numeric else text
    levels = sorted(keys.drop_nulls().unique().to_list())
    index = {level: i for i, level in enumerate(levels)}
    codes = np.array([-1 if v is None else index[v] for v in keys.to_list()], dtype=np.int64)
    return codes, [_g(v) if numeric else str(v) for v in levels], "numeric" if numeric else "categorical"


def _columns() -> list[pl.Series]:
    rng = np.random.default_rng(28)
    out: list[pl.Series] = []
    for n in (1, 2, 7, 40, 300):
        x = rng.lognormal(0.0, 1.0, n)
        out.append(pl.Series("length", x))
        out.append(pl.Series("length", np.round(x, 1)))  # ties
        out.append(pl.Series("few", rng.integers(0, 3, n)))  # fewer distinct values than bins
        out.append(pl.Series("many", rng.integers(-50, 50, n)))
        out.append(pl.Series("flag", rng.random(n) < 0.4))
        out.append(pl.Series("topic", rng.choice(["math", "code", "law", " law", "Code"], n)))
        out.append(pl.Series("blank", rng.choice(["", " ", "x", "é"], n)))  # the empty string is a level
        text = [f" {v:.3g}\t" if i % 3 else repr(float(v)) for i, v in enumerate(x)]  # numbers as text, blanks around
        out.append(pl.Series("text", text))
        holes = [None if i % 4 == 1 else v for i, v in enumerate(x.tolist())]
        out.append(pl.Series("holes", holes, dtype=pl.Float64))
        out.append(pl.Series("holes_text", [None if v is None else f"{v:.4g}" for v in holes], dtype=pl.String))
        mixed = [("n/a" if i % 5 == 2 else f"{v:.2f}") for i, v in enumerate(x)]  # not all numeric: categorical
        out.append(pl.Series("mixed", mixed))
        for bad in (float("nan"), float("inf"), -float("inf"), -0.0):
            y = x.copy()
            y[n // 2] = bad
            out.append(pl.Series("bad", y))
            out.append(pl.Series("bad_text", [str(v) for v in y]))
        day = datetime.date(2026, 1, 1)
        out.append(pl.Series("day", [day + datetime.timedelta(days=int(d)) for d in rng.integers(0, 9, n)]))
        out.append(pl.Series("none", [None] * n, dtype=pl.Float64))
        out.append(pl.Series("none_text", [None] * n, dtype=pl.String))
        out.append(pl.Series("zeros", [0.0 if i % 2 else -0.0 for i in range(n)]))
        out.append(pl.Series("cat", rng.choice(["a", "b"], n)).cast(pl.Categorical))
    out.append(pl.Series("empty", [], dtype=pl.Float64))
    out.append(pl.Series("empty_text", [], dtype=pl.String))
    return out


@pytest.mark.parametrize("bins", [1, 2, 4, 5, 10])
def test_the_bins_are_those_of_one_query_per_series_operation(bins: int) -> None:
    kinds = set()
    for values in _columns():
        codes, labels, kind = _binned(values, bins)
        kinds.add((kind, labels == []))
        want_codes, want_labels, want_kind = _reference(values, bins)
        where = (values.name, values.dtype, len(values), bins)
        assert codes.dtype == want_codes.dtype, where
        assert codes.tolist() == want_codes.tolist(), where
        assert (labels, kind) == (want_labels, want_kind), where
    assert {("numeric", False), ("categorical", False)} <= kinds  # both paths taken
