"""tests/conftest.py ``built_once_per_run``: a session fixture's build shared by the xdist workers of one run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, built_once_per_run


class _Factory:
    """The one method of ``pytest.TempPathFactory`` the helper calls."""

    def __init__(self, base: Path) -> None:
        self.base = base

    def getbasetemp(self) -> Path:
        return self.base


def _build(calls: list[Path]) -> object:
    def build(directory: Path) -> dict[str, object]:
        calls.append(directory)
        (directory / "made.txt").write_text("made", encoding="utf-8")
        return {"path": directory / "made.txt", "n": len(calls)}

    return build


def test_the_second_process_to_ask_loads_what_the_first_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two xdist workers of one run: base temps pytest-N/popen-gw0 and popen-gw1 share their parent.
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    calls: list[Path] = []
    first = built_once_per_run(_Factory(tmp_path / "popen-gw0"), "thing", _build(calls))  # type: ignore[arg-type]
    code = (
        "import sys; from pathlib import Path\n"
        "from tests.conftest import built_once_per_run\n"
        "class F:\n    def getbasetemp(self): return Path(sys.argv[1])\n"
        "def build(d): raise AssertionError('built twice')\n"
        "print(repr(built_once_per_run(F(), 'thing', build)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "popen-gw1")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        env={**os.environ, "PYTEST_XDIST_WORKER": "gw1"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr(first)
    assert calls == [tmp_path / "shared-thing"]
    assert first == {"path": tmp_path / "shared-thing" / "made.txt", "n": 1}


def test_without_xdist_it_is_built_in_the_process_base_temp_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    calls: list[Path] = []
    factory = _Factory(tmp_path)
    values = [built_once_per_run(factory, "thing", _build(calls)) for _ in range(3)]  # type: ignore[arg-type]
    assert calls == [tmp_path / "shared-thing"]
    assert values == [values[0]] * 3


def test_a_failed_build_is_made_again_from_scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    factory = _Factory(tmp_path)

    def fail(directory: Path) -> None:
        (directory / "half.txt").write_text("half", encoding="utf-8")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        built_once_per_run(factory, "thing", fail)  # type: ignore[arg-type]
    calls: list[Path] = []
    value = built_once_per_run(factory, "thing", _build(calls))  # type: ignore[arg-type]
    assert calls == [tmp_path / "shared-thing"]
    assert sorted(p.name for p in (tmp_path / "shared-thing").iterdir()) == ["made.txt"]  # nothing of the failed one
    assert value == {"path": tmp_path / "shared-thing" / "made.txt", "n": 1}
