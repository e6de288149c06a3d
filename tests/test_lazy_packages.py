"""A package's name that is also its module's name stays the function, whatever is imported first (``gatestats._lazy``).

The import system binds a submodule as an attribute of its package once it has run; for
``gatestats.estimators.analyze`` (and ``paired.compare``, ``paired.resolution``, ``judges.weighted_kappa``) that
binding would put the module where the package's function is. :func:`gatestats._lazy.lazy_names` gives such a
package a module class that refuses it (issue 28 item 2: the ``__init__``s import nothing eagerly). Each import
order runs in a fresh interpreter: first on a package of three small modules written here (cheap), then on the
four real names.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: A package whose ``thing`` is a function of its module ``thing`` (with a class beside it) and ``helper`` a
#: function of ``util``; ``thing`` also holds a module-level number the mock scenarios patch.
_PACKAGE = {
    "__init__.py": (
        "from gatestats._lazy import lazy_names\n"
        "__all__ = ['Thing', 'helper', 'thing']\n"
        "_HOMES = {'Thing': 'thing', 'thing': 'thing', 'helper': 'util'}\n"
        "__getattr__, __dir__ = lazy_names(__name__, _HOMES)\n"
    ),
    "thing.py": "class Thing: ...\n\n\ndef thing():\n    return 'the function'\n",
    "util.py": "def helper():\n    return 'helper'\n",
}
#: Each import order, then the common check (``_CHECK``) in the same interpreter.
_ORDERS = {
    "package first, then the submodule": "import lazypkg as P\nimport lazypkg.thing\n",
    "the submodule first": "import lazypkg.thing\nimport lazypkg as P\n",
    "from the package": "from lazypkg import thing as f\nimport lazypkg as P\nassert f() == 'the function'\n",
    "import the submodule as m": "import lazypkg.thing as m\nimport lazypkg as P\n",
    "importlib": "import importlib\nm = importlib.import_module('lazypkg.thing')\nimport lazypkg as P\n"
    "assert type(m).__name__ == 'module' and m.thing() == 'the function'\n",
    "star import of the submodule": "from lazypkg.thing import *\nimport lazypkg as P\n",
    "mock.patch of the submodule's attribute": "from unittest import mock\nimport lazypkg as P\n"
    "with mock.patch('lazypkg.thing.thing', return_value='patched'):\n    assert P.thing() == 'patched'\n",
    "mock.patch of the package's name": "from unittest import mock\nimport lazypkg as P\n"
    "with mock.patch('lazypkg.thing', return_value='patched'):\n    import lazypkg.thing\n"
    "    assert P.thing() == 'patched'\n",
    "the package reloaded": "import importlib\nimport lazypkg as P\nimport lazypkg.thing\nimportlib.reload(P)\n",
    "another submodule": "import lazypkg as P\nimport lazypkg.util\nassert P.util is lazypkg.util\n",
}
_CHECK = (
    "import json, sys\n"
    "ns = {}\nexec('from lazypkg import *', ns)\n"
    "print(json.dumps([P.thing(), P.thing is sys.modules['lazypkg.thing'].thing, ns['thing'] is P.thing,\n"
    "    'thing' in dir(P), P.Thing is sys.modules['lazypkg.thing'].Thing, P.helper(), 'thing' in vars(P)]))\n"
)
_EXPECTED = ["the function", True, True, True, True, "helper", False]


def _python(code: str, *paths: Path) -> str:
    env = {"PYTHONPATH": ":".join(str(p) for p in paths), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout


@pytest.fixture(scope="module")
def package_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lazy")
    (root / "lazypkg").mkdir()
    for name, text in _PACKAGE.items():
        (root / "lazypkg" / name).write_text(text, encoding="utf-8")
    # The same package whose __init__ imports the submodule before lazy_names (the import binds it as `thing`).
    (root / "eagerpkg").mkdir()
    for name, text in _PACKAGE.items():
        first = "import eagerpkg.thing\n" if name == "__init__.py" else ""
        (root / "eagerpkg" / name).write_text(first + text.replace("lazypkg", "eagerpkg"), encoding="utf-8")
    return root


@pytest.mark.parametrize("order", _ORDERS)
def test_a_name_shared_with_its_module_stays_the_function(package_dir: Path, order: str) -> None:
    out = _python(_ORDERS[order] + _CHECK, package_dir, ROOT / "src")
    assert json.loads(out.splitlines()[-1]) == _EXPECTED


def test_a_submodule_bound_before_lazy_names_gives_the_name_back(package_dir: Path) -> None:
    code = "import eagerpkg as P\n" + _CHECK.replace("lazypkg", "eagerpkg")
    assert json.loads(_python(code, package_dir, ROOT / "src").splitlines()[-1]) == _EXPECTED


#: The real packages' names that are also their modules' names.
_SHARED = (
    ("gatestats.estimators", "analyze"),
    ("gatestats.paired", "resolution"),
    ("gatestats.paired", "compare"),
    ("gatestats.judges", "weighted_kappa"),
)


@pytest.mark.parametrize("packages_first", [False, True], ids=["submodules first", "packages first"])
def test_the_packages_names_shared_with_their_modules_stay_the_functions(packages_first: bool) -> None:
    # Packages first: importing the three loads none of their modules (nor polars, numpy), then the submodules.
    code = (
        "import importlib, json, sys\n"
        f"shared = {_SHARED!r}\n"
        "loaded = []\n"
        f"if {packages_first}:\n"
        "    for p in ('gatestats.estimators', 'gatestats.paired', 'gatestats.judges'): importlib.import_module(p)\n"
        "    loaded = sorted(m for m in sys.modules if m.startswith(('gatestats.estimators.', 'gatestats.paired.',\n"
        "        'gatestats.judges.', 'polars', 'numpy')))\n"
        "modules = [importlib.import_module(f'{p}.{n}') for p, n in shared]\n"
        "import gatestats.estimators.analyze as m\n"
        "from gatestats.estimators import analyze\n"
        "print(json.dumps([loaded, m is analyze, analyze.__module__, [\n"
        "    [type(getattr(sys.modules[p], n)).__name__, getattr(sys.modules[p], n) is getattr(module, n),\n"
        "     n in vars(sys.modules[p]), type(module).__name__] for (p, n), module in zip(shared, modules)]]))\n"
    )
    out = json.loads(_python(code, ROOT / "src").splitlines()[-1])
    assert out == [[], True, "gatestats.estimators.analyze", [["function", True, False, "module"]] * 4]
