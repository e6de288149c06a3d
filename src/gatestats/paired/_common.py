"""What modules of :mod:`gatestats.paired` share: the float-array alias and ``to_dict`` over every field."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from gatestats._typing import JSONObject

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
