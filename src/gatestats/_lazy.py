"""A package's public names imported on first use (PEP 562), for the packages whose ``__init__`` re-exports them.

``gatestats.gate``, ``gatestats.sequential`` and ``gatestats.golden`` list each name's module in a
table and take their module ``__getattr__`` and ``__dir__`` from :func:`lazy_names`: importing the
package loads none of its modules, reading a name loads its module alone (issue 28, item 4: the
report reads a verdict without the engine, the judges or scipy). The names stay typed through the
package's ``if TYPE_CHECKING:`` imports.

A name may share its module's name (``gatestats.estimators.analyze`` is both the function the package
re-exports and the module defining it). When a submodule is imported, the import system binds it as an
attribute of its package (``setattr(package, "analyze", <module>)``), which would put the module in the
function's place. :func:`lazy_names` therefore gives such a package the module class :class:`_LazyPackage`,
whose ``__setattr__`` refuses exactly that binding (the value being the module ``<package>.<name>`` for a
name that lives in that module): the name then stays unbound in the package and its ``__getattr__`` resolves it
to the function, whatever was imported first (the package, the submodule, ``import <package>.<name> as m``,
``mock.patch("<package>.<name>.<attribute>")``, which imports the module through ``sys.modules``). Every other
attribute, a submodule of another name or a stand-in ``mock.patch`` sets, is bound as before. So these packages
import nothing eagerly (issue 28 item 2: ``calibrate`` no longer loads ``estimators.analyze`` and polars).
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeGuard

if TYPE_CHECKING:
    import numpy as np

__all__ = ["is_integer", "lazy_module", "lazy_names", "numpy_loaded"]


def lazy_names(package: str, homes: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package`` whose names live in the modules ``homes`` maps them to.

    Parameters
    ----------
    package
        The package's ``__name__``.
    homes
        Each public name -> its module under ``package`` (``{"read_verdict": "verdict"}``).

    Returns
    -------
    tuple of callable
        ``__getattr__(name)``: the name's value, its module imported on first use (AttributeError
        naming the package for any other name); ``__dir__()``: the package's globals and the names, sorted.

    Notes
    -----
    When a name is also its module's name (``{"analyze": "analyze"}``), the package's class becomes a
    :class:`_LazyPackage` keeping those names (see the module's docstring), and a binding of that submodule
    made before this call (by an import in the ``__init__``) is undone.
    """
    shadowed = frozenset(name for name, home in homes.items() if name == home)
    if shadowed:
        module = sys.modules[package]
        module.__class__ = type("_LazyPackage", (_LazyPackage,), {"_SHADOWED": shadowed})
        for name in shadowed:
            if _is_submodule(vars(module).get(name), package, name):
                del vars(module)[name]

    def getattr_(name: str) -> Any:
        if name in homes:
            return getattr(importlib.import_module(f"{package}.{homes[name]}"), name)
        msg = f"module {package!r} has no attribute {name!r}"
        raise AttributeError(msg)

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[package]), *homes})

    return getattr_, dir_


def _is_submodule(value: object, package: str, name: str) -> bool:
    """Whether ``value`` is the module ``<package>.<name>``."""
    return isinstance(value, types.ModuleType) and value.__name__ == f"{package}.{name}"


class _LazyPackage(types.ModuleType):
    """A package whose submodule does not replace the function of the same name its ``__getattr__`` resolves.

    :func:`lazy_names` makes one subclass per package, its :attr:`_SHADOWED` the names that are also their
    modules' names.
    """

    _SHADOWED: ClassVar[frozenset[str]] = frozenset()

    def __setattr__(self, name: str, value: Any) -> None:
        # The import system's binding of the submodule ``<package>.<name>`` (done after the submodule ran):
        # left undone, so ``__getattr__`` keeps answering the function.
        if name in self._SHADOWED and _is_submodule(value, self.__name__, name):
            return
        super().__setattr__(name, value)


class _LazyModule:
    """Stands for a module until an attribute is read; then imports it (once, by ``importlib``) and reads from it."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"


def lazy_module(name: str) -> Any:
    """A stand-in for the module ``name`` that imports it when one of its attributes is first read.

    ``stats = lazy_module("scipy.stats")`` at the top of a module keeps ``stats.norm.sf(x)`` in its
    functions as it was, and the import happens at the first such call, not when the module loads
    (issue 28 item 2: ``compare``, ``rank`` and ``calibrate`` import no scipy on their default paths).

    Parameters
    ----------
    name
        The module's full name (``"scipy.stats"``).

    Returns
    -------
    Any
        The stand-in (typed ``Any``: scipy has no type information here either).

    Examples
    --------
    >>> special = lazy_module("math")
    >>> special.sqrt(4.0)
    2.0
    """
    return _LazyModule(name)


def numpy_loaded() -> bool:
    """Whether numpy is imported in this process (a command's numpy-free path is taken only while it is not).

    ``analyze`` (:mod:`gatestats.estimators.small`) and ``compare`` (:mod:`gatestats.paired.small`) compute small
    inputs in Python numbers, proved bit for bit against numpy's path, while numpy is not loaded: once it is, its
    path costs no import and every call takes it (issue 28 item 2).

    Returns
    -------
    bool
        True when ``numpy`` is in ``sys.modules``.
    """
    return "numpy" in sys.modules


def is_integer(value: object) -> TypeGuard[int | np.integer[Any]]:
    """Whether ``value`` is a Python or a numpy integer, without importing numpy to ask (a ``bool`` counts, as an int).

    A numpy integer exists only once numpy is loaded, so numpy's type is looked at only then.

    Parameters
    ----------
    value
        Any value.

    Returns
    -------
    bool
        True for an ``int`` (a ``bool`` too: callers refuse it first) or a ``numpy.integer``.

    Examples
    --------
    >>> is_integer(3), is_integer(3.0), is_integer("3")
    (True, False, False)
    """
    numpy = sys.modules.get("numpy")
    return isinstance(value, int) or (numpy is not None and isinstance(value, numpy.integer))
