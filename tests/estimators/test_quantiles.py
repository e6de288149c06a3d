"""The stored normal and Student-t quantiles are scipy's own floats, bit for bit (issue 28, item 2).

``gatestats.estimators.quantiles`` lets ``analyze`` start without importing scipy: at the common
levels it reads :math:`z` and :math:`t` from stored values, elsewhere it asks scipy. Every stored
value is compared with scipy here, so that no interval moves by an ulp; the fallbacks are checked
over a grid of levels into the tails (1e-12 to 1 - 1e-12) and of degrees of freedom past the table.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import special

from gatestats.estimators.quantiles import COMMON_LEVELS, T_TABLE_MAX_DF, two_sided_t, two_sided_z

#: Levels into both tails: the fallback path (scipy) for all but the common ones.
GRID_LEVELS = (1e-12, 1e-6, 0.01, 0.5, 0.6827, 0.8, 0.9, 0.95, 0.975, 0.99, 0.999, 1 - 1e-6, 1 - 1e-12)


def test_every_stored_t_quantile_is_scipys_float() -> None:
    df = np.arange(1, T_TABLE_MAX_DF + 1)
    for level in COMMON_LEVELS:
        expected = special.stdtrit(df, 0.5 + level / 2)
        stored = np.array([two_sided_t(int(d), level) for d in df])
        differ = np.flatnonzero(stored != expected)
        # If this fails after a scipy upgrade, scipy's stdtrit changed: run benchmarks/make_t_quantiles.py.
        assert differ.size == 0, f"level {level}: df {df[differ[:5]].tolist()} differ from scipy.special.stdtrit"


def test_table_holds_one_row_of_finite_quantiles_per_common_level() -> None:
    from gatestats.estimators import quantiles

    table = np.fromfile(quantiles._T_TABLE, dtype="<f8")
    assert table.size == len(COMMON_LEVELS) * T_TABLE_MAX_DF
    assert np.isfinite(table).all()
    rows = table.reshape(len(COMMON_LEVELS), T_TABLE_MAX_DF)
    assert (np.diff(rows, axis=1) < 0).all()  # t quantiles fall towards z as df grows
    assert (np.diff(rows, axis=0) > 0).all()  # and rise with the level


@pytest.mark.parametrize("level", GRID_LEVELS)
def test_z_is_scipys_float_at_every_level(level: float) -> None:
    assert two_sided_z(level) == float(special.ndtri(0.5 + level / 2))


@pytest.mark.parametrize("level", GRID_LEVELS)
@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 30, 49, 499, 4998, T_TABLE_MAX_DF, T_TABLE_MAX_DF + 1, 20_000, 10**7])
def test_t_is_scipys_float_in_and_past_the_table(df: int, level: float) -> None:
    assert two_sided_t(df, level) == float(special.stdtrit(df, 0.5 + level / 2))


def test_t_accepts_numpy_integers_and_levels() -> None:
    assert two_sided_t(np.int64(49), np.float64(0.95)) == float(special.stdtrit(49, 0.975))


@pytest.mark.parametrize("df", [0, -3, 2.5, "4", None])
def test_t_refuses_degrees_of_freedom_that_are_not_positive_integers(df: object) -> None:
    with pytest.raises(ValueError, match=r"^df must be a positive integer \(got "):
        two_sided_t(df, 0.95)  # type: ignore[arg-type]


def test_common_levels_need_no_scipy() -> None:
    code = (
        "import sys; from gatestats.estimators.quantiles import two_sided_t, two_sided_z; "
        "[two_sided_t(d, lv) + two_sided_z(lv) for d in (1, 49, 4999) for lv in (0.8, 0.9, 0.95, 0.99)]; "
        "print('scipy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
