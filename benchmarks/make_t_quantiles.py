"""Write ``src/gatestats/estimators/t_quantiles.f64``: scipy's Student-t quantiles at the common levels.

    .venv/bin/python benchmarks/make_t_quantiles.py

The table holds ``scipy.special.stdtrit(df, 0.5 + level / 2)`` for every level of
``gatestats.estimators.quantiles.COMMON_LEVELS`` (one row each, in that order) and every ``df``
from 1 to ``T_TABLE_MAX_DF``, as little-endian float64: what ``two_sided_t`` reads so that the
Wilson intervals of ``analyze`` need no scipy at start-up (issue 28, item 2).
``tests/estimators/test_quantiles.py`` compares every value with scipy bit for bit; run this again
when scipy's ``stdtrit`` changes (the test says so).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from gatestats.estimators import quantiles


def main() -> None:
    """Compute and write the table."""
    df = np.arange(1, quantiles.T_TABLE_MAX_DF + 1)
    rows = [special.stdtrit(df, 0.5 + level / 2) for level in quantiles.COMMON_LEVELS]
    table = np.stack(rows).astype("<f8")
    path = quantiles.__file__.removesuffix("quantiles.py") + "t_quantiles.f64"
    table.tofile(path)
    print(f"wrote {table.size} quantiles ({table.nbytes} bytes) to {path}")


if __name__ == "__main__":
    main()
