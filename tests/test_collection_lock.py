"""The clean-clone collection lock (tests/collection_lock.py): held only in a worker, only while bytecode is cold."""

from __future__ import annotations

import fcntl
import py_compile
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.collection_lock import bytecode_cold, lock_path, one_worker_at_a_time


def _worker_config(tmp_path: Path) -> SimpleNamespace:
    return SimpleNamespace(
        workerinput={"testrunuid": "run1"}, option=SimpleNamespace(basetemp=str(tmp_path / "root" / "popen-gw0"))
    )


def _held(path: Path) -> bool:
    with path.open("a") as other:
        try:
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(other, fcntl.LOCK_UN)
        return False


def test_cold_until_the_module_is_compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "coldpkg_for_the_lock_test"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    source = package / "sub" / "big.py"
    source.write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert bytecode_cold(package.name, "sub/big.py")
    py_compile.compile(str(source), doraise=True)
    assert not bytecode_cold(package.name, "sub/big.py")
    assert not bytecode_cold(package.name, "sub/missing.py")  # a sentinel that moved is not "cold"
    assert not bytecode_cold("no_such_package_for_the_lock_test", "x.py")
    assert "coldpkg_for_the_lock_test" not in sys.modules  # found, never imported


def test_the_lock_is_held_during_a_cold_worker_collection_only(tmp_path: Path) -> None:
    config = _worker_config(tmp_path)
    path = lock_path(config)
    assert path == tmp_path / "root" / "collect-run1.lock"
    with one_worker_at_a_time(config, cold=lambda: True):
        assert _held(path)
    assert not _held(path)
    with one_worker_at_a_time(config, cold=lambda: False):
        assert not _held(path)


def test_no_lock_outside_an_xdist_worker(tmp_path: Path) -> None:
    config = SimpleNamespace(option=SimpleNamespace(basetemp=str(tmp_path / "popen-gw0")))
    assert lock_path(config) is None
    with one_worker_at_a_time(config, cold=lambda: True):
        assert not list(tmp_path.iterdir())
