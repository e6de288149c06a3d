"""``python3 dev.py setup``: pip installs only uv, pinned with its hashes; uv installs the lock with its hashes.

The lock discipline (every dependency pinned with its hash, DEVELOPERS guide) holds for the installer
too: pip installs uv from ``requirements-uv.lock`` with ``--require-hashes``, and uv installs
``requirements.lock`` with ``--require-hashes --no-deps``. The last test runs the venv's own uv, with
the command dev.py builds, on a wheel made here: a wrong hash and a missing hash are refused.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT
from tests.dev_module import load_dev

HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")


def _dev() -> ModuleType:
    return load_dev("gatestats_dev_setup")


def _requirements(lock: Path) -> dict[str, list[str]]:
    """``name==version`` of each requirement of a hashed lock file -> its sha256 hashes."""
    entries: dict[str, list[str]] = {}
    current = ""
    for line in lock.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if not line.startswith(" "):
            current = line.split(";")[0].split(" ")[0]
            entries[current] = []
        entries[current] += HASH.findall(line)
    return entries


def test_uv_is_pinned_with_hashes_and_is_the_uv_installed() -> None:
    dev = _dev()
    pinned = _requirements(dev.UV_LOCK)
    assert list(pinned) == [next(iter(pinned))]
    (requirement,) = pinned
    name, version = requirement.split("==")
    assert name == "uv"
    assert len(pinned[requirement]) >= 1
    uv = Path(sys.executable).parent / "uv"
    printed = subprocess.run([str(uv), "--version"], capture_output=True, text=True, check=True).stdout
    assert printed.split()[:2] == ["uv", version]


def test_setup_installs_every_dependency_with_its_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dev = _dev()
    venv_dir = tmp_path / ".venv"
    bin_dir = venv_dir / "bin"
    for name, value in {
        "VENV": venv_dir,
        "BIN": bin_dir,
        "PY": bin_dir / "python",
        "STAMP": venv_dir / ".gatestats-lock-digest",
    }.items():
        monkeypatch.setattr(dev, name, value)
    monkeypatch.setattr(dev, "ROOT", tmp_path)
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    monkeypatch.setattr(dev.venv.EnvBuilder, "create", lambda _self, path: Path(path).mkdir())
    ran: list[list[str]] = []
    monkeypatch.setattr(dev, "_run", lambda *args, **_kwargs: ran.append([str(a) for a in args]))
    dev.setup()
    python, uv = str(bin_dir / "python"), str(bin_dir / "uv")
    assert ran[0] == [python, "-m", "pip", "--disable-pip-version-check", "--no-input", "install", "--quiet",
                      "--require-hashes", "--no-deps", "-r", str(dev.UV_LOCK)]  # fmt: skip
    assert ran[1] == [uv, "pip", "install", "--quiet", "--system-certs", "--python", python,
                      "--require-hashes", "--no-deps", "-r", str(dev.LOCK)]  # fmt: skip
    assert ran[2] == [uv, "pip", "install", "--quiet", "--system-certs", "--python", python,
                      "--no-deps", "--no-build-isolation", "--editable", str(tmp_path)]  # fmt: skip
    assert len(ran) == 3
    assert dev.STAMP.exists()


def _wheel(directory: Path) -> Path:
    """A minimal pure-Python wheel, ``gatestats_probe`` 1.0."""
    files = {
        "gatestats_probe/__init__.py": b"VALUE = 1\n",
        "gatestats_probe-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: gatestats-probe\nVersion: 1.0\n",
        "gatestats_probe-1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("gatestats_probe-1.0.dist-info/RECORD,,")
    files["gatestats_probe-1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = directory / "gatestats_probe-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


@pytest.mark.parametrize(
    ("hashes", "refusal"),
    [
        pytest.param("right", None, id="right-hash-installs"),
        pytest.param("wrong", "Hash mismatch", id="wrong-hash-refused"),
        pytest.param("none", "must have a hash", id="missing-hash-refused"),
    ],
)
def test_the_lock_install_refuses_a_wrong_or_missing_hash(tmp_path: Path, hashes: str, refusal: str | None) -> None:
    dev = _dev()
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    right = hashlib.sha256(_wheel(wheels).read_bytes()).hexdigest()
    pin = {"right": f" --hash=sha256:{right}", "wrong": f" --hash=sha256:{'0' * 64}", "none": ""}[hashes]
    lock = tmp_path / "probe.lock"
    lock.write_text(f"gatestats-probe==1.0{pin}\n", encoding="utf-8")
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / "bin" / "python"
    uv = Path(sys.executable).parent / "uv"
    command = [str(a) for a in dev.lock_install_command(uv, python, lock)]
    offline = ["--offline", "--no-index", "--find-links", str(wheels), "--cache-dir", str(tmp_path / "cache")]
    done = subprocess.run([*command, *offline], capture_output=True, text=True, check=False)
    probe = subprocess.run([str(python), "-c", "import gatestats_probe"], capture_output=True, check=False)
    if refusal is None:
        assert done.returncode == 0, done.stderr
        assert probe.returncode == 0
    else:
        assert done.returncode != 0
        assert refusal in done.stderr
        assert probe.returncode != 0


def test_the_suite_writes_bytecode_even_where_the_shell_says_not_to() -> None:
    """tests/conftest.py: dev.py installs without bytecode, so the suite's processes write what they compile.

    Else, under ``PYTHONDONTWRITEBYTECODE`` (as on the machines this project runs on), each of the suite's
    hundreds of child interpreters would compile polars', numpy's and gatestats' modules again.
    """
    assert not sys.dont_write_bytecode
    child = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.flags.dont_write_bytecode)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert child.stdout.split() == ["0"]
    # The conftest itself undoes the setting, whatever the shell of this run had.
    undone = subprocess.run(
        [sys.executable, "-c", "import os, sys, tests.conftest; print(sys.dont_write_bytecode, 'PYTHONDONTWRITEBYTECODE' in os.environ)"],
        capture_output=True, text=True, check=True, cwd=ROOT, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    assert undone.stdout.split() == ["False", "False"]
