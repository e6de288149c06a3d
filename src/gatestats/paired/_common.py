"""What modules of :mod:`gatestats.paired` share: the float-array alias and ``to_dict`` over every field."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gatestats._typing import JSONObject

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    #: An array of float64 values: a name for annotations only (every module imports it under TYPE_CHECKING), so this
    #: module loads no numpy and compare's one-trial path runs without it (paired/small.py).
    FloatArray = npt.NDArray[np.float64]

__all__ = ["FieldsAsDict", "field_values"]


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
