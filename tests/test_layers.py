"""The layers of ``gatestats`` (docs/architecture.md, "Owners"): a module imports only its own unit and lower layers.

A *unit* is a subpackage of ``gatestats`` (``gate``, ``paired`` ...), a root module (``errors``,
``vocabulary``), or ``sequential.run`` (the sequential controller lives in the sequential home but
sits above the gate). Units of one layer never import each other: two statistics packages that
need each other are in different layers, so the order is written here and nowhere else. The scan
is the one of ``tests/test_architecture.py`` (``ast``, nothing imported).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from tests.test_architecture import PACKAGES, Import, collect_imports, repository_imports

#: The layers, lowest first.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"_typing", "_lazy", "_query", "errors", "vocabulary"}),  # types, errors, words, lazy names, query flags
    frozenset({"io"}),  # files in and out: limits, strict JSON, digests, atomic writes, text shown to people
    frozenset({"tables", "publish"}),  # the one reader of the tables users bring; tables and charts going out
    frozenset({"records"}),  # the run-record contract in and out
    frozenset({"importers", "estimators"}),  # other harnesses' results in; pass@k, intervals, summaries
    frozenset({"paired", "sequential", "golden", "gatestats"}),  # gatestats: the package's own API (__init__)
    frozenset({"cost", "judges"}),  # statistics built on the paired tests
    frozenset({"gate"}),  # the policy, the engine, the verdict
    frozenset({"attest", "rollout", "sequential.run"}),  # signed verdicts, the rollout watch, the sequential controller
    frozenset({"report"}),  # release reports (they read the rollout's decision files)
    frozenset({"cli"}),  # the commands
)


def unit(module: str) -> str | None:
    """The layered unit of a ``gatestats`` module (``gatestats.gate.rules`` -> ``gate``); None outside gatestats."""
    parts = module.split(".")
    if parts[0] != "gatestats":
        return None
    if len(parts) == 1:
        return "gatestats"
    if parts[1:3] == ["sequential", "run"]:
        return "sequential.run"
    return parts[1]


def layer_of(name: str) -> int:
    """The index of ``name``'s layer in :data:`LAYERS`."""
    for index, members in enumerate(LAYERS):
        if name in members:
            return index
    msg = f"unit {name!r} has no layer in LAYERS (tests/test_layers.py): give it one"
    raise AssertionError(msg)


def layer_violations(imports: Iterable[Import]) -> list[str]:
    """One line per import of a unit that is not in a lower layer (``file:line: importer imports module: why``)."""
    problems: list[str] = []
    for imp in imports:
        importer, imported = unit(imp.importer), unit(imp.module)
        if importer is None or imported is None or importer == imported:
            continue
        if layer_of(imported) >= layer_of(importer):
            problems.append(
                f"{imp.file}:{imp.line}: {imp.importer} imports {imp.module}: {importer} (layer "
                f"{layer_of(importer)}) may import only lower layers, and {imported} is in layer {layer_of(imported)}"
            )
    return sorted(set(problems))


def _tree(tmp_path: Path, files: Mapping[str, str]) -> dict[str, Path]:
    for relative, text in files.items():
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return {"gatestats": tmp_path / "src" / "gatestats"}


def test_every_import_goes_down_the_layers() -> None:
    found = repository_imports()
    assert len(found) > 500  # the scan saw the code base
    assert layer_violations(found) == []


def test_every_unit_on_disk_has_a_layer() -> None:
    root = PACKAGES["gatestats"]
    units = {unit(f"gatestats.{'.'.join(p.relative_to(root).with_suffix('').parts)}") for p in root.rglob("*.py")}
    units.discard("__init__")
    for name in units:
        assert name is not None
        layer_of(name)


def test_the_sequential_statistics_never_import_the_controller_or_the_gate() -> None:
    found = repository_imports()
    statistics = [i for i in found if unit(i.importer) == "sequential"]
    assert statistics  # the scan saw the sequential statistics
    assert [i.module for i in statistics if i.module.startswith(("gatestats.gate", "gatestats.sequential.run"))] == []


def test_an_upward_or_sideways_import_is_caught_with_its_file_and_line(tmp_path: Path) -> None:
    roots = _tree(
        tmp_path,
        {
            "src/gatestats/__init__.py": "",
            "src/gatestats/paired/__init__.py": "",
            "src/gatestats/paired/bad.py": "from gatestats.gate import engine\nfrom gatestats import sequential\n",
            "src/gatestats/sequential/__init__.py": "from gatestats.sequential.run import controller\n",
            "src/gatestats/sequential/run/__init__.py": "",
            "src/gatestats/sequential/run/controller.py": "from gatestats.paired import bad\n",
            "src/gatestats/gate/__init__.py": "",
            "src/gatestats/gate/engine.py": "",
        },
    )
    assert layer_violations(collect_imports(roots)) == sorted(
        [
            "src/gatestats/paired/bad.py:1: gatestats.paired.bad imports gatestats.gate.engine: paired (layer 5) may "
            "import only lower layers, and gate is in layer 7",
            "src/gatestats/paired/bad.py:1: gatestats.paired.bad imports gatestats.gate: paired (layer 5) may import only "
            "lower layers, and gate is in layer 7",
            "src/gatestats/paired/bad.py:2: gatestats.paired.bad imports gatestats: paired (layer 5) may import only "
            "lower layers, and gatestats is in layer 5",
            "src/gatestats/paired/bad.py:2: gatestats.paired.bad imports gatestats.sequential: paired (layer 5) may "
            "import only lower layers, and sequential is in layer 5",
            "src/gatestats/sequential/__init__.py:1: gatestats.sequential imports gatestats.sequential.run.controller: "
            "sequential (layer 5) may import only lower layers, and sequential.run is in layer 8",
            "src/gatestats/sequential/__init__.py:1: gatestats.sequential imports gatestats.sequential.run: sequential "
            "(layer 5) may import only lower layers, and sequential.run is in layer 8",
        ]
    )
