"""One door, structurally: no module outside ``gatestats.records`` opens run-set files itself.

A run set's ``records.jsonl``, ``manifest.json`` and evidence files are read only through the
records package (``read_run_set``, ``read_run_set_manifest``, ``read_record_evidence``), which is
the reader the gate uses: line checksums, the seal, membership, evidence digests and containment.
Issue 24 found ``gatestats promote`` reading them on its own (no checksum, no seal, evidence
followed anywhere). This test parses every module of ``src/gatestats`` outside ``records/`` and
fails on any of:

- the literal file names ``"records.jsonl"`` or ``"manifest.json"`` (use the records package's
  ``RECORDS``/``MANIFEST`` to *name* a file in a message or a stat; read it through the package);
- importing or calling the runner's own lenient readers (``read_manifest``, ``read_records``,
  ``decode_line``): they check less than the gate's door;
- a record's evidence path taken out of a record (``record["stdout_path"]``,
  ``record.get("stderr_path")``) instead of handing the field to ``read_record_evidence``;
- a file read (``open``, ``read_text``, ``read_bytes``) of a path built from ``RECORDS`` or
  ``MANIFEST``, or of a name its function assigned such a path (the data flow followed is that
  one step: a path handed to another function is not followed).

:data:`WRITERS` lists the modules allowed to do one of these, each with the reason (none today:
the runner writes run sets, and ``gate.registration`` writes the manifest through the runner).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "gatestats"
RECORDS_PACKAGE = SRC / "records"

#: Modules (relative to src/gatestats) allowed to touch run-set files themselves, and why.
WRITERS: dict[str, str] = {}

_FILE_NAMES = frozenset({"records.jsonl", "manifest.json"})
_LENIENT_READERS = frozenset({"read_manifest", "read_records", "decode_line"})
_EVIDENCE_FIELDS = frozenset({"stdout_path", "stderr_path"})
_FILE_READS = frozenset({"open", "read_text", "read_bytes"})
_NAMES = frozenset({"RECORDS", "MANIFEST"})


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _call_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _is_evidence_read(node: ast.AST) -> bool:
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in _EVIDENCE_FIELDS
    if isinstance(node, ast.Call) and _call_name(node) == "get" and node.args:
        first = node.args[0]
        return isinstance(first, ast.Constant) and first.value in _EVIDENCE_FIELDS
    return False


def _is_file_read(node: ast.AST, paths: frozenset[str]) -> bool:
    """A call that opens or reads a file whose path mentions one of ``paths`` (names)."""
    if not isinstance(node, ast.Call) or _call_name(node) not in _FILE_READS:
        return False
    mentioned = set().union(*(_names_in(a) for a in node.args))
    if isinstance(node.func, ast.Attribute):
        mentioned |= _names_in(node.func.value)
    return bool(mentioned & paths)


def _run_set_names(tree: ast.AST) -> frozenset[str]:
    """The names the module binds to the run-set file names (``RECORDS``/``MANIFEST`` of the records package or the runner)."""
    return frozenset(
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith(("gatestats.records", "gatestats.gate.recordset", "gatestats_runner"))
        for alias in node.names
        if alias.name in _NAMES
    )


def _file_reads(tree: ast.AST) -> set[int]:
    """Lines that read a run-set file: a path built from ``RECORDS``/``MANIFEST``, or a name assigned one in its function."""
    lines: set[int] = set()
    names = _run_set_names(tree)
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))]
    for scope in scopes:
        own = list(_own_nodes(scope))
        tainted = {
            target.id
            for node in own
            if isinstance(node, ast.Assign) and _names_in(node.value) & names
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        paths = names | frozenset(tainted)
        lines |= {node.lineno for node in own if isinstance(node, ast.Call) and _is_file_read(node, paths)}
    return lines


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope`` outside the functions defined in it (each function is its own scope)."""
    for child in ast.iter_child_nodes(scope):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        yield child
        yield from _own_nodes(child)


def door_violations(source: str, where: str) -> list[str]:
    """Every place ``source`` reads run-set files without the records package (``where:line: what``).

    Parameters
    ----------
    source
        A module's source text.
    where
        Its name, for the messages.

    Returns
    -------
    list of str
        One message per violation.
    """
    out: list[str] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and node.value in _FILE_NAMES:
            out.append(f"{where}:{line}: the literal {node.value!r} (read run sets through gatestats.records)")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gatestats_runner"):
            out += [
                f"{where}:{line}: imports the runner's lenient reader {a.name} (use gatestats.records)"
                for a in node.names
                if a.name in _LENIENT_READERS
            ]
        elif isinstance(node, ast.Attribute) and node.attr in _LENIENT_READERS:
            out.append(f"{where}:{line}: calls the runner's lenient reader {node.attr} (use gatestats.records)")
        elif _is_evidence_read(node):
            out.append(f"{where}:{line}: takes an evidence path out of a record (use read_record_evidence)")
    out += [
        f"{where}:{line}: reads a run-set file itself (use gatestats.records)" for line in sorted(_file_reads(tree))
    ]
    return out


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if not p.is_relative_to(RECORDS_PACKAGE))


def test_no_module_outside_the_records_package_opens_run_set_files_itself() -> None:
    found: list[str] = []
    for path in _modules():
        rel = path.relative_to(SRC).as_posix()
        if rel in WRITERS:
            continue
        found += door_violations(path.read_text(encoding="utf-8"), rel)
    assert found == []


def test_every_listed_writer_exists_and_still_needs_its_exception() -> None:
    for rel, reason in WRITERS.items():
        assert reason
        assert door_violations((SRC / rel).read_text(encoding="utf-8"), rel), f"{rel} no longer needs WRITERS"


@pytest.mark.parametrize(
    "source",
    [
        # The code issue 24 found in gatestats.golden.trace: each line is one way around the door.
        'lines = (run_set / "records.jsonl").read_bytes().splitlines()',
        "from gatestats_runner.runsets import RunSetError, read_manifest",
        "from gatestats_runner.contract import decode_json, decode_line",
        'stdout = run_set / str(record.get("stdout_path"))',
        'stdout = run_set / record["stderr_path"]',
        "from gatestats.records.runset import MANIFEST\nmanifest = json.loads((root / MANIFEST).read_text())",
        "from gatestats.gate.recordset import RECORDS\nwith open(run_set / RECORDS) as handle: pass",
        "rows = store.read_records(path)",
        "from gatestats.records.runset import RECORDS\n"
        "def f(root):\n    path = root / RECORDS\n    with path.open('rb') as handle:\n        return handle.read(1)",
        "from gatestats_runner.store import MANIFEST as M\ndef f(root):\n    m = root / M\n    return m.read_text()",
    ],
)
def test_the_scan_finds_each_way_around_the_door(source: str) -> None:
    assert len(door_violations(source, "m.py")) == 1


@pytest.mark.parametrize(
    "source",
    [
        "records, info = read_run_set(run_set)",
        'data = read_record_evidence(run_set, record, "stdout_path", row=0)',
        "manifest = read_run_set_manifest(run_set / MANIFEST)",
        'where = f"{root}/records.jsonl: the seal"',
        "exists = (run_set / RECORDS).is_file()",
        "def f(root):\n    path = root / RECORDS\n    return path.stat().st_size",
        "from gatestats.records.runset import RECORDS\n"
        "def f(root):\n    path = root / RECORDS\n\ndef g(path):\n    return path.read_text()",
        'MANIFEST = "golden.json"\nraw = (root / MANIFEST).read_text()',  # another file's own name
    ],
)
def test_the_scan_lets_the_door_itself_through(source: str) -> None:
    assert door_violations(source, "m.py") == []
