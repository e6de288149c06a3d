"""What modules of :mod:`gatestats.paired` share: the float-array alias and ``to_dict`` over every field."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gatestats._typing import JSONObject

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    #: An array of float64 values.
    FloatArray = npt.NDArray[np.float64]

__all__ = ["FieldsAsDict", "FloatArray", "field_values"]


def __getattr__(name: str) -> Any:
    """``FloatArray`` built on first use (numpy's type): the modules of compare's one-trial path load no numpy.

    Parameters
    ----------
    name
        The attribute asked for.

    Returns
    -------
    Any
        ``numpy.typing.NDArray[numpy.float64]`` for ``FloatArray``.

    Raises
    ------
    AttributeError
        Any other name.
    """
    if name == "FloatArray":
        import numpy as np  # noqa: PLC0415 - on first use
        import numpy.typing as npt  # noqa: PLC0415

        return npt.NDArray[np.float64]
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


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
