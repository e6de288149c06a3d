"""The import rules of the architecture (docs/architecture.md), read from the source with ``ast``.

Every module of ``src/gatestats`` and ``runner/gatestats_runner`` is parsed (never imported) and
each import is checked against the rules below. The tests themselves, benchmarks and notebooks are
not checked: a white-box test may reach a private helper it tests.

1. The runner never imports ``gatestats`` (it is standard-library only and owns no statistics).
2. Nothing outside ``gatestats.cli`` imports the CLI; nothing outside ``gatestats.report`` and
   ``gatestats.cli`` imports the report (statistics, records, gate, importers never do).
3. ``gatestats`` reaches the runner only through its public modules (:data:`RUNNER_PUBLIC`, the
   runner's ``__all__``), and only the commands that start runs (:data:`RUN_STARTERS`) import a public
   module that starts runs (:data:`RUN_STARTING`, the runner's ``RUN_STARTING``).
4. A private module (``a.b._c``) is imported only from inside its own package (``a.b``): not
   ``gatestats_runner._util`` from ``gatestats``, not ``gatestats.report._x`` from ``gatestats.gate``,
   not a third-party package's ``_private`` module. The exceptions are listed in :data:`ALLOWED`,
   each with its reason.
"""

from __future__ import annotations

import ast
import functools
import importlib.machinery
import importlib.util
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import gatestats_runner
from tests.conftest import ROOT

#: Where the checked packages live: package name -> its directory.
PACKAGES = {
    "gatestats": ROOT / "src" / "gatestats",
    "gatestats_runner": ROOT / "runner" / "gatestats_runner",
}

#: The runner's public API for the release controller, derived from the one list: the runner's
#: ``__all__`` (its lowercase names are its public modules; docs/architecture.md, "Owners").
RUNNER_PUBLIC = frozenset(
    {"gatestats_runner"}  # the package itself: __version__, RUN_STARTING
    | {f"gatestats_runner.{name}" for name in gatestats_runner.__all__ if name.islower() and not name.startswith("_")}
)

#: The public modules that start runs (the runner's ``RUN_STARTING``).
RUN_STARTING = frozenset(f"gatestats_runner.{name}" for name in gatestats_runner.RUN_STARTING)

#: The commands that start runs: the only modules of ``gatestats`` that import a module of
#: :data:`RUN_STARTING`, each with what it starts.
RUN_STARTERS: Mapping[str, str] = {
    "gatestats.cli.run": "gatestats run: a run set, or a baseline re-run (--baseline-sample)",
    "gatestats.cli.correct": "gatestats correct: the correction loop",
    "gatestats.cli._trial_bar": "the trials bar of gatestats run: makes the executor and runs with it",
    "gatestats.cli._sequential_run": "gatestats run --until-decided: the stages' runs",
    "gatestats.sequential.run.controller": "the sequential run behind gatestats run --until-decided: each stage's run set",
}

#: How a message lists the public modules (sorted), for the expected messages below.
_PUBLIC_LIST = ", ".join(sorted(RUNNER_PUBLIC))

#: (importer, imported module) -> why the edge is allowed although a rule forbids it.
ALLOWED: Mapping[tuple[str, str], str] = {
    ("gatestats.records.io", "polars._typing"): (
        "PolarsDataType, a type annotation only: polars documents the alias but exports it from its private "
        "_typing module alone; a polars upgrade that moves it fails mypy, not a run"
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Import:
    """One imported module, as written in one source file."""

    importer: str
    module: str
    file: str
    line: int


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def module_name(path: Path, package: str, package_dir: Path) -> str:
    """The dotted name of the module at ``path`` inside ``package`` (``pkg/__init__.py`` is ``pkg``)."""
    parts = [package, *path.relative_to(package_dir).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package_dir(top: str, roots: Mapping[str, Path]) -> Path | None:
    if top in roots:
        return roots[top]
    spec = importlib.util.find_spec(top)  # a top-level name: found on sys.path, nothing is imported
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def is_module(dotted: str, roots: Mapping[str, Path]) -> bool:
    """Whether ``dotted`` names a module or package on disk (a file lookup; nothing is imported)."""
    top, *rest = dotted.split(".")
    where = _package_dir(top, roots)
    if where is None:
        return False
    for i, part in enumerate(rest):
        last = i == len(rest) - 1
        if (where / part).is_dir():
            where = where / part
            continue
        if last:
            return any((where / f"{part}{suffix}").is_file() for suffix in importlib.machinery.all_suffixes())
        return False
    return True


def imports_in(source: str, *, importer: str, is_package: bool, file: str, roots: Mapping[str, Path]) -> list[Import]:
    """Every module that ``source`` imports; ``from m import x`` counts ``m``, and ``m.x`` when that is a module."""
    found: list[Import] = []
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    for node in ast.walk(ast.parse(source, filename=file)):
        if isinstance(node, ast.Import):
            found.extend(Import(importer=importer, module=a.name, file=file, line=node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - node.level + 1]
                module = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.append(Import(importer=importer, module=module, file=file, line=node.lineno))
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                if alias.name != "*" and is_module(sub, roots):
                    found.append(Import(importer=importer, module=sub, file=file, line=node.lineno))
    return found


def collect_imports(roots: Mapping[str, Path]) -> list[Import]:
    """The imports of every module under ``roots``."""
    found: list[Import] = []
    for package, package_dir in roots.items():
        for path in sorted(package_dir.rglob("*.py")):
            importer = module_name(path, package, package_dir)
            found.extend(
                imports_in(
                    path.read_text(encoding="utf-8"),
                    importer=importer,
                    is_package=path.name == "__init__.py",
                    file=str(path.relative_to(package_dir.parent.parent)),
                    roots=roots,
                )
            )
    return found


def _private_owner(module: str) -> str | None:
    """The package that owns the first private component of ``module`` (``a.b._c.d`` -> ``a.b``), if any."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            return ".".join(parts[:i])
    return None


def _rule(imp: Import) -> str | None:
    """Why ``imp`` is forbidden, or None."""
    importer, module = imp.importer, imp.module
    if _within(importer, "gatestats_runner") and _within(module, "gatestats"):
        return "the runner is standard-library only and never imports gatestats"
    if _within(module, "gatestats.cli") and not _within(importer, "gatestats.cli"):
        return "only the CLI imports gatestats.cli (statistics, records, gate and report never do)"
    if (
        _within(module, "gatestats.report")
        and not _within(importer, "gatestats.report")
        and not _within(importer, "gatestats.cli")
    ):
        return "only the report and the CLI import gatestats.report (statistics, records and gate never do)"
    if _within(importer, "gatestats") and _within(module, "gatestats_runner") and module not in RUNNER_PUBLIC:
        return f"gatestats reaches the runner only through its public modules ({', '.join(sorted(RUNNER_PUBLIC))})"
    if _within(importer, "gatestats") and module in RUN_STARTING and importer not in RUN_STARTERS:
        return (
            f"only the commands that start runs ({', '.join(sorted(RUN_STARTERS))}) import {module}, which starts runs"
        )
    owner = _private_owner(module)
    if owner is not None and not _within(importer, owner):
        return f"a private module of {owner} is imported only from inside {owner}"
    return None


def violations(imports: Iterable[Import], *, allowed: Mapping[tuple[str, str], str] = ALLOWED) -> list[str]:
    """One line per forbidden import (``file:line: importer imports module: why``), allowed edges left out."""
    problems: list[str] = []
    for imp in imports:
        why = _rule(imp)
        if why is not None and (imp.importer, imp.module) not in allowed:
            problems.append(f"{imp.file}:{imp.line}: {imp.importer} imports {imp.module}: {why}")
    return sorted(set(problems))


def _imp(importer: str, module: str) -> Import:
    return Import(importer=importer, module=module, file="x.py", line=1)


@functools.cache
def repository_imports() -> tuple[Import, ...]:
    """:func:`collect_imports` of the repository's packages, scanned once per test process (≈ 0.8 CPU-s a scan).

    Four tests here and in tests/test_layers.py read it; none changes the source while the suite runs.
    Tests of the scanner on their own trees call :func:`collect_imports` directly.
    """
    return tuple(collect_imports(PACKAGES))


def test_no_module_imports_what_the_architecture_forbids() -> None:
    found = repository_imports()
    assert len(found) > 500  # the scan saw the code base, not an empty directory
    assert violations(found) == []


def test_every_allowed_exception_is_still_needed() -> None:
    found = {(imp.importer, imp.module) for imp in repository_imports()}
    assert [edge for edge in ALLOWED if edge not in found] == []


def test_every_public_runner_module_exists() -> None:
    assert [m for m in sorted(RUNNER_PUBLIC | RUN_STARTING) if not is_module(m, PACKAGES)] == []
    assert RUN_STARTING <= RUNNER_PUBLIC
    assert len(RUNNER_PUBLIC) == 10  # the package and its 9 public modules: the derivation saw the list


def _documented_runner_modules(text: str) -> list[str]:
    """The module names in the first column of docs/architecture.md's table of the runner's public API."""
    section = text.split("### The runner's public API", 1)[1].split("\n## ", 1)[0]
    return sorted(
        cell.strip().strip("`")
        for line in section.splitlines()
        if line.startswith("| `gatestats_runner")
        for cell in [line.split("|")[1]]
    )


def test_the_architecture_doc_lists_the_runners_public_modules() -> None:
    documented = _documented_runner_modules((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert documented == sorted(RUNNER_PUBLIC - {"gatestats_runner"})


def test_a_doc_table_that_differs_from_the_runners_list_is_seen() -> None:
    table = "### The runner's public API\n\n| module | offers |\n|---|---|\n| `gatestats_runner.contract` | x |\n\n## Next\n"
    assert _documented_runner_modules(table) == ["gatestats_runner.contract"]
    assert _documented_runner_modules(table) != sorted(RUNNER_PUBLIC - {"gatestats_runner"})


def test_only_the_commands_that_start_runs_import_a_module_that_starts_runs() -> None:
    planted = [
        _imp("gatestats.gate.drift", "gatestats_runner.baseline"),
        _imp("gatestats.records.io", "gatestats_runner.launch"),
        _imp("gatestats.cli.recovery", "gatestats_runner.correction"),
    ]
    starts = ", ".join(sorted(RUN_STARTERS))
    assert violations(planted, allowed={}) == sorted(
        [
            f"x.py:1: gatestats.cli.recovery imports gatestats_runner.correction: only the commands that start runs "
            f"({starts}) import gatestats_runner.correction, which starts runs",
            f"x.py:1: gatestats.gate.drift imports gatestats_runner.baseline: only the commands that start runs "
            f"({starts}) import gatestats_runner.baseline, which starts runs",
            f"x.py:1: gatestats.records.io imports gatestats_runner.launch: only the commands that start runs "
            f"({starts}) import gatestats_runner.launch, which starts runs",
        ]
    )
    fine = [
        _imp("gatestats.cli.run", "gatestats_runner.baseline"),
        _imp("gatestats.gate.drift", "gatestats_runner.runsets"),
    ]
    assert violations(fine, allowed={}) == []


def test_each_forbidden_edge_is_named_with_its_rule() -> None:
    planted = [
        _imp("gatestats_runner.runset", "gatestats.records"),
        _imp("gatestats.gate.engine", "gatestats.report.release"),
        _imp("gatestats.paired.compare", "gatestats.cli._common"),
        _imp("gatestats.report.release", "gatestats.cli"),
        _imp("gatestats.gate.registration", "gatestats_runner.store"),
        _imp("gatestats.cli.run", "gatestats_runner.__main__"),
        _imp("gatestats.io.digest", "gatestats_runner._util"),
        _imp("gatestats.gate.engine", "gatestats.cost._bootstrap"),
        _imp("gatestats.estimators.passk", "numpy._core"),
    ]
    assert violations(planted, allowed={}) == sorted(
        [
            "x.py:1: gatestats.cli.run imports gatestats_runner.__main__: gatestats reaches the runner only through its "
            f"public modules ({_PUBLIC_LIST})",
            "x.py:1: gatestats.estimators.passk imports numpy._core: a private module of numpy is imported only from "
            "inside numpy",
            "x.py:1: gatestats.io.digest imports gatestats_runner._util: gatestats reaches the runner only through its "
            f"public modules ({_PUBLIC_LIST})",
            "x.py:1: gatestats.gate.engine imports gatestats.cost._bootstrap: a private module of gatestats.cost is "
            "imported only from inside gatestats.cost",
            "x.py:1: gatestats.gate.engine imports gatestats.report.release: only the report and the CLI import "
            "gatestats.report (statistics, records and gate never do)",
            "x.py:1: gatestats.gate.registration imports gatestats_runner.store: gatestats reaches the runner only "
            f"through its public modules ({_PUBLIC_LIST})",
            "x.py:1: gatestats.paired.compare imports gatestats.cli._common: only the CLI imports gatestats.cli "
            "(statistics, records, gate and report never do)",
            "x.py:1: gatestats.report.release imports gatestats.cli: only the CLI imports gatestats.cli (statistics, "
            "records, gate and report never do)",
            "x.py:1: gatestats_runner.runset imports gatestats.records: the runner is standard-library only and never "
            "imports gatestats",
        ]
    )


def test_edges_the_architecture_allows_pass() -> None:
    fine = [
        _imp("gatestats.cost.ratio", "gatestats.cost._bootstrap"),  # a package's own private module
        _imp("gatestats.gate.verdict", "gatestats.io.digest"),  # gatestats' private module, inside gatestats
        _imp("gatestats.cli.report", "gatestats.report.release"),
        _imp("gatestats.records.io", "gatestats_runner.runsets"),
        _imp("gatestats_runner.runset", "gatestats_runner._util"),
        _imp("gatestats.report.release", "gatestats.gate"),
        _imp("gatestats.cli.run", "rich.progress"),
    ]
    assert violations(fine, allowed={}) == []


def _tree(tmp_path: Path, files: Mapping[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return {"gatestats": tmp_path / "src" / "gatestats", "gatestats_runner": tmp_path / "runner" / "gatestats_runner"}


def test_a_planted_module_on_disk_is_caught_with_its_file_and_line(tmp_path: Path) -> None:
    roots = _tree(
        tmp_path,
        {
            "src/gatestats/__init__.py": "",
            "src/gatestats/gate/__init__.py": "",
            "src/gatestats/gate/bad.py": (
                '"""A planted violation."""\n\nfrom gatestats_runner import _util\nfrom gatestats_runner.store import x\n'
            ),
            "src/gatestats/gate/relative.py": "from ..report import _html\n",
            "src/gatestats/report/__init__.py": "",
            "src/gatestats/report/_html.py": "",
            "runner/gatestats_runner/__init__.py": "",
            "runner/gatestats_runner/_util.py": "",
            "runner/gatestats_runner/store.py": "def f() -> None:\n    import gatestats.records\n",
        },
    )
    found = violations(collect_imports(roots), allowed={})
    public = f"gatestats reaches the runner only through its public modules ({_PUBLIC_LIST})"
    assert found == [
        "runner/gatestats_runner/store.py:2: gatestats_runner.store imports gatestats.records: the runner is "
        "standard-library only and never imports gatestats",
        f"src/gatestats/gate/bad.py:3: gatestats.gate.bad imports gatestats_runner._util: {public}",
        f"src/gatestats/gate/bad.py:4: gatestats.gate.bad imports gatestats_runner.store: {public}",
        "src/gatestats/gate/relative.py:1: gatestats.gate.relative imports gatestats.report._html: only the report "
        "and the CLI import gatestats.report (statistics, records and gate never do)",
        "src/gatestats/gate/relative.py:1: gatestats.gate.relative imports gatestats.report: only the report and "
        "the CLI import gatestats.report (statistics, records and gate never do)",
    ]


def test_a_private_name_is_not_mistaken_for_a_private_module(tmp_path: Path) -> None:
    roots = _tree(
        tmp_path,
        {
            "src/gatestats/__init__.py": "",
            "src/gatestats/a/__init__.py": "",
            "src/gatestats/a/helpers.py": "_name = 1\n",
            "src/gatestats/b.py": "from gatestats.a.helpers import _name\n",
            "runner/gatestats_runner/__init__.py": "",
        },
    )
    assert [imp.module for imp in collect_imports(roots)] == ["gatestats.a.helpers"]
    assert violations(collect_imports(roots), allowed={}) == []
