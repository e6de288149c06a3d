"""What modules of :mod:`gatestats.paired` share: the float-array alias and ``to_dict`` over every field."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from gatestats._lazy import lazy_module
from gatestats._typing import JSONObject

special = lazy_module("scipy.special")

__all__ = ["FieldsAsDict", "FloatArray", "field_values"]

#: An array of float64 values.
FloatArray = npt.NDArray[np.float64]


def field_values(result: Any) -> JSONObject:
    """Every field of a frozen slotted dataclass whose fields are JSON-ready, in order.

    Parameters
    ----------
    result
        The dataclass instance.

    Returns
    -------
    JSONObject
        Field name -> value.
    """
    return {name: getattr(result, name) for name in result.__slots__}


class FieldsAsDict:
    """Mixin of a frozen slotted dataclass whose fields are JSON-ready scalars: ``to_dict``."""

    __slots__: tuple[str, ...] = ()

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping: every field, in order.

        Returns
        -------
        JSONObject
            Field name -> value.
        """
        return field_values(self)


# scipy.stats' norm.ppf, norm.cdf, norm.sf and t.isf are scipy.special's ndtri, ndtr, ndtr(-x) and -stdtrit
# behind rv_continuous's argument checks and ``* scale + loc`` (30-60 us a call: a third of a paired bootstrap
# interval, four fifths of the Tango test's exact size table). These compute the same floats without them:
# ``* 1.0`` is exact and ``+ 0.0`` turns -0.0 into 0.0 as scipy's ``+ loc`` does; ``(x - 0) / 1`` leaves ``x``
# as it is (tests/paired/test_trials_quantiles.py compares them with scipy.stats bit for bit).
def _norm_ppf(q: float) -> float:
    """``scipy.stats.norm.ppf(q)`` for ``q`` in [0, 1]."""
    return float(special.ndtri(q)) + 0.0


def _norm_cdf(x: float) -> float:
    """``scipy.stats.norm.cdf(x)``."""
    return float(special.ndtr(x))


def _t_isf(q: float, df: int) -> float:
    """``scipy.stats.t.isf(q, df)`` for ``q`` in (0, 1) and ``df >= 1``."""
    return -float(special.stdtrit(df, q)) + 0.0


def _norm_sf(x: float) -> float:
    """``scipy.stats.norm.sf(x)`` (scipy's ``_norm_sf``: the CDF at ``-x``)."""
    return float(special.ndtr(-x))
