"""The shape of the code a contributor reads: short functions, bounded complexity, documented parameters.

- No function in ``src/`` or ``runner/`` is longer than 80 lines (docstring included), except
  those in :data:`LONG_FUNCTIONS`, which may only shrink.
- ruff's complexity limits are on (pyproject.toml); a function above them carries a
  noqa comment for C901 or PLR091x with a reason, and their number may only go down
  (:data:`COMPLEXITY_WAIVERS`).
- Every public function (listed in its module's ``__all__``) and every public method of a public
  class documents each of its parameters in a numpydoc ``Parameters`` section.

Lower a baseline when the code gets better; never raise it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "src" / "gatestats", ROOT / "runner" / "gatestats_runner")
MAX_LINES = 80

#: Functions allowed above MAX_LINES (path relative to the repository, name: lines at most).
#: Recorded 2026-12-01; may only shrink.
LONG_FUNCTIONS: dict[tuple[str, str], int] = {}

#: Waiver comments (noqa) of the complexity rules in src/ and runner/. Recorded 2026-12-01 at 0; may only go down.
COMPLEXITY_WAIVERS = 0

_WAIVER = re.compile(r"#\s*noqa:[^#\n]*\b(C901|PLR0911|PLR0912|PLR0915)\b")


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for base in SOURCES:
        for path in sorted(base.rglob("*.py")):
            yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def test_no_function_is_longer_than_80_lines_outside_the_baseline() -> None:
    found: dict[tuple[str, str], int] = {}
    for path, tree in _modules():
        for fn in _functions(tree):
            lines = (fn.end_lineno or fn.lineno) - fn.lineno + 1
            if lines > MAX_LINES:
                found[(str(path.relative_to(ROOT)), fn.name)] = lines
    over = {key: n for key, n in found.items() if n > LONG_FUNCTIONS.get(key, MAX_LINES)}
    assert not over, f"functions over {MAX_LINES} lines (or longer than their baseline): {over}"


def test_complexity_waivers_only_go_down() -> None:
    waivers = [
        f"{path.relative_to(ROOT)}:{i}"
        for base in SOURCES
        for path in sorted(base.rglob("*.py"))
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _WAIVER.search(line)
    ]
    assert len(waivers) <= COMPLEXITY_WAIVERS, f"complexity waivers above the baseline: {waivers}"


def _public_names(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            value = ast.literal_eval(node.value)
            return {str(v) for v in value}
    return set()


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = fn.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return [n for n in names if n not in {"self", "cls"} and not n.startswith("_")]


def _documented(doc: str) -> set[str]:
    """Parameter names of a numpydoc ``Parameters`` section (``a, b : int`` names both)."""
    match = re.search(r"\n\s*Parameters\n\s*-{3,}\n(.*?)(?:\n\s*\n\s*[A-Z][A-Za-z ]+\n\s*-{3,}\n|\Z)", doc, re.S)
    if match is None:
        return set()
    names: set[str] = set()
    indent = None
    for line in match.group(1).splitlines():
        if not line.strip():
            continue
        width = len(line) - len(line.lstrip())
        indent = width if indent is None else min(indent, width)
        if width == indent:
            head = line.strip().split(" : ")[0]
            names |= {n.strip().lstrip("*") for n in head.split(",")}
    return names


def _undocumented() -> list[str]:
    missing: list[str] = []
    for path, tree in _modules():
        public = _public_names(tree)
        where = str(path.relative_to(ROOT))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in public:
                targets = [node]
            elif isinstance(node, ast.ClassDef) and node.name in public:
                targets = [
                    f
                    for f in node.body
                    if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and not f.name.startswith("_")
                ]
            else:
                continue
            for fn in targets:
                params = _parameters(fn)
                if not params:
                    continue
                doc = ast.get_docstring(fn) or ""
                lacking = [p for p in params if p not in _documented(doc)]
                if lacking:
                    missing.append(f"{where}:{fn.lineno} {fn.name}: {', '.join(lacking)}")
    return missing


def test_every_public_function_documents_its_parameters() -> None:
    missing = _undocumented()
    assert not missing, f"{len(missing)} public functions lack numpydoc parameters:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("doc", "names"),
    [
        (
            "Do it.\n\nParameters\n----------\na, b : int\n    Two.\nc\n    Three.\n\nReturns\n-------\nint\n",
            {"a", "b", "c"},
        ),
        ("Do it.\n\nReturns\n-------\nint\n", set()),
        ("Do it.\n\nParameters\n----------\n**kwargs\n    More.\n", {"kwargs"}),
    ],
)
def test_the_parameter_reader_reads_numpydoc(doc: str, names: set[str]) -> None:
    assert _documented("\n" + doc) == names
