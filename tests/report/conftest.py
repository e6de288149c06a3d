"""Fixtures for the report renderer's tests: the fixture report rendered once per test run, the release
scenario's verdict and report made once per test run (not once per xdist worker), Chromium."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gatestats.report import RenderResult, render_qmd
from gatestats.report import release as release_module
from gatestats.report.quarto import charts as charts_module
from gatestats.report.quarto.splicing import HeldOut
from gatestats.report.release import ReleaseReport, build_release_report
from tests.conftest import built_once_per_run
from tests.report.chromium import ChromiumMissingError, find_chromium
from tests.report.drawn_once import Drawings, DrawnOnce

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
    """``fixtures/report.qmd`` rendered once per test run with the Jupyter renderer and :data:`FIXTURE_PARAMS`.

    Once per run, not once per xdist worker (tests/conftest.py :func:`~tests.conftest.built_once_per_run`).
    """

    def render(directory: Path) -> RenderResult:
        qmd = copy_fixture("report.qmd", directory)
        return render_qmd(
            qmd,
            params=FIXTURE_PARAMS,
            renderer="jupyter",
            timeout_s=300,
            notebook_output=directory / "report.ipynb",
        )

    return built_once_per_run(tmp_path_factory, "fixture-report", render)


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


@pytest.fixture(scope="session")
def scenario_verdict(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release scenario's verdict (``tests/report/test_release.py``, :func:`make_verdict`), once per test run.

    Its record files are shared: a test that edits the verdict edits a copy (:func:`copy_verdict`); a test that
    edits a record file makes a verdict of its own.
    """
    from tests.report.test_release import make_verdict

    return built_once_per_run(tmp_path_factory, "scenario-verdict", lambda directory: make_verdict(directory / "gate"))


def copy_verdict(verdict: Path, directory: Path) -> Path:
    """A copy of ``verdict`` in ``directory`` (the record files it names stay where they are)."""
    directory.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy2(verdict, directory / verdict.name))


@dataclass(frozen=True)
class ScenarioReport:
    """The scenario's first report and what ``build_release_report`` passed to ``render_qmd`` for it."""

    verdict: Path
    out: Path
    report: ReleaseReport
    #: The page's sections as the kernel was given them (inert ones as placeholders).
    sections: dict[str, str]
    #: The inert sections held out of the kernel and spliced into its page.
    spliced: HeldOut | None
    #: What vl-convert drew for it (tests/report/drawn_once.py): a second build of it can draw nothing again.
    drawings: Drawings


@pytest.fixture(scope="session")
def scenario_report(scenario_verdict: Path, tmp_path_factory: pytest.TempPathFactory) -> ScenarioReport:
    """The scenario's report (Jupyter renderer) built once per test run into a reports root of its own.

    ``render_qmd`` is watched (and called unchanged) while it is built. Tests only read it (shared by the
    xdist workers, :func:`~tests.conftest.built_once_per_run`); tests/report/test_release.py builds version 2
    into a copy of the root.
    """

    def build(out: Path) -> ScenarioReport:
        seen: list[tuple[dict[str, str], HeldOut | None]] = []
        render = release_module.render_qmd

        def watched(*args: Any, **kwargs: Any) -> RenderResult:
            seen.append((dict(kwargs["params"]["page"]["sections"]), kwargs.get("spliced")))
            return render(*args, **kwargs)

        drawn = DrawnOnce()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(release_module, "render_qmd", watched)
            patch.setattr(charts_module, "vl_convert", drawn.module)  # vl-convert itself, its drawings recorded
            report = build_release_report(scenario_verdict, out=out, renderer="jupyter")
        ((sections, spliced),) = seen
        return ScenarioReport(
            verdict=scenario_verdict,
            out=out,
            report=report,
            sections=sections,
            spliced=spliced,
            drawings=drawn.drawings,
        )

    return built_once_per_run(tmp_path_factory, "scenario-reports", build)
