"""What the sample-size plans of :mod:`gatestats.paired.planning` and ``cases_trials`` share."""

from __future__ import annotations

from typing import Any

__all__ = ["FieldsAsDict"]


class FieldsAsDict:
    """Mixin of a frozen slotted dataclass whose fields are JSON-ready scalars: ``to_dict``."""

    __slots__: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping: every field, in order.

        Returns
        -------
        dict of str to Any
            Field name -> value.
        """
        return {name: getattr(self, name) for name in self.__slots__}
