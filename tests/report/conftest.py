"""Fixtures for the report renderer's tests: the fixture report rendered once per module, Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from gatestats.report import RenderResult, render_qmd
from tests.report.chromium import ChromiumMissingError, find_chromium

FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: The values the fixture report is rendered with (its parameters cell has other defaults).
FIXTURE_PARAMS: dict[str, Any] = {"release": "r-2025.01", "threshold": 0.75, "systems": ["alpha", "beta"]}


def copy_fixture(name: str, directory: Path) -> Path:
    """Copy ``fixtures/<name>`` into ``directory`` (renders write beside the .qmd)."""
    target = directory / name
    shutil.copyfile(FIXTURES / name, target)
    return target


@pytest.fixture(scope="session")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> RenderResult:
    """``fixtures/report.qmd`` rendered once per test process with the Jupyter renderer and :data:`FIXTURE_PARAMS`."""
    directory = tmp_path_factory.mktemp("report")
    qmd = copy_fixture("report.qmd", directory)
    return render_qmd(
        qmd,
        params=FIXTURE_PARAMS,
        renderer="jupyter",
        timeout_s=300,
        notebook_output=directory / "report.ipynb",
    )


@pytest.fixture(scope="session")
def page(rendered: RenderResult) -> str:
    """The rendered HTML page."""
    return rendered.html_path.read_text(encoding="utf-8")


@pytest.fixture
def chromium() -> str:
    """Chromium's path; a missing Chromium FAILS the test (with how to install it), never skips."""
    try:
        return find_chromium()
    except ChromiumMissingError as exc:
        pytest.fail(str(exc))
