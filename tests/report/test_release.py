"""The versioned release report (``gatestats report``), from a verdict made by the real gate.

The scenario: 30 cases x 4 trials per side; a severe slice ``security`` whose case ``case-01`` the
candidate gets resource-killed once (bound ``wall_clock``: the verdict is ``fail``); flips both ways
(cases 20-23 and 26-29 better, 24-25 worse); one infra_error retried (case-05, trial 1); costs;
slices ``billing``/``search`` on the other cases, none on ``case-29``.

The snapshot of the generated ``report.qmd`` is ``snapshots/release_report.qmd`` (digests and the
renderer version normalised). After an intended change of the template, regenerate it with
``GATESTATS_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/report/test_release.py -k snapshot``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import evaluate_gate, load_policy, load_record_set, write_verdict
from gatestats.report import RenderError, chart_svg, find_network_references, render_qmd
from gatestats.report import release as release_module
from gatestats.report.quarto import charts as charts_module
from gatestats.report.release import (
    CHART_NAMES,
    SECTIONS,
    ReleaseReport,
    ReportInputError,
    build_release_report,
    check_release_name,
    default_release_name,
    load_release_data,
    release_charts,
)
from tests.gate.factory import policy_text, write_run_set
from tests.report.chromium import load_offline
from tests.report.conftest import ScenarioReport, copy_verdict
from tests.report.drawn_once import DrawnOnce

SNAPSHOT = Path(__file__).resolve().parent / "snapshots" / "release_report.qmd"
UPDATE = os.environ.get("GATESTATS_UPDATE_SNAPSHOTS") == "1"
NOW = "2026-11-02T12:00:00Z"
RELEASE = "test-policy-candidate"  # default_release_name: policy "test-policy", candidate system "candidate"
RULES = """
[[rules]]
name = "pass rate non-inferior"
metric = "pass_rate"
test = "paired"
margin = 0.10

[[rules]]
name = "reliability floor"
metric = "pass_hat_k"
k = 4
threshold = 0.3

[[rules]]
name = "capability"
metric = "pass_at_k"
k = 4
threshold = 0.5
action = "warn"
"""
EXTRA = 'severe_slices = ["security"]\nmax_cost_increase = 0.5\n\n[cost]\nreview_rate_usd_per_hour = 60.0\n'
DATA_FILES = {
    "verdict.json",
    "provenance.json",
    "flips.csv",
    *(
        f"{t}.parquet"
        for t in (
            "rules",
            "checks",
            "severe_slices",
            "severe_failures",
            "flips",
            "curves",
            "slices",
            "cost",
            "judges",
            "infra",
            "bounds",
        )
    ),
}


def _outcomes() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    base: dict[str, list[str]] = {}
    cand: dict[str, list[str]] = {}
    for i in range(30):
        case = f"case-{i:02d}"
        if i < 20:
            base[case], cand[case] = ["passed"] * 4, ["passed"] * 4
        elif i < 24:
            base[case], cand[case] = ["failed"] * 4, ["passed"] * 4
        elif i < 26:
            base[case], cand[case] = ["passed"] * 4, ["failed", "resource_killed", "failed", "failed"]
        else:
            base[case], cand[case] = ["passed", "failed", "passed", "failed"], ["passed", "passed", "failed", "passed"]
    cand["case-01"] = ["passed", "passed", "resource_killed", "passed"]  # the severe slice's failure
    return base, cand


def make_verdict(root: Path) -> Path:
    """Run the real gate on the scenario and write its verdict file (``root/verdict.json``)."""
    root.mkdir(parents=True, exist_ok=True)
    policy_path = root / "policy.toml"
    policy_path.write_text(policy_text(RULES, k=4, min_cases=10, min_trials=4, extra=EXTRA), encoding="utf-8")
    policy = load_policy(policy_path)
    base, cand = _outcomes()
    slices = {
        c: ["security"] if c in {"case-00", "case-01"} else ["billing" if int(c[-2:]) % 2 else "search"] for c in base
    }
    del slices["case-29"]  # a case without slice: the slice "(none)" of the report
    b = write_run_set(root / "base", system="baseline", outcomes=base, slices=slices, cost=0.02)
    c = write_run_set(
        root / "cand",
        system="candidate",
        outcomes=cand,
        slices=slices,
        policy=policy,
        cost=0.025,
        retries={("case-05", 1): 1},
    )
    verdict = evaluate_gate(policy, load_record_set(b), load_record_set(c), now=NOW)
    return write_verdict(verdict, root / "verdict.json")


def _sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): _sha(p) for p in sorted(root.rglob("*")) if p.is_file()}


@dataclass(frozen=True)
class Built:
    verdict: Path
    out: Path
    first: ReleaseReport
    first_tree: dict[str, str]


@pytest.fixture(scope="module")
def built(scenario_report: ScenarioReport) -> Built:
    """The scenario's verdict and its first report (Jupyter renderer; tests/report/conftest.py, made once)."""
    report = scenario_report.report
    return Built(
        verdict=scenario_report.verdict, out=scenario_report.out, first=report, first_tree=_tree(report.directory)
    )


@pytest.fixture(scope="module")
def page(built: Built) -> str:
    return built.first.html_path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def second(built: Built, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """The same verdict built again, through ``gatestats report --json``, into a copy of the first build's root.

    A copy: the first build's root is shared by the test processes (tests/report/conftest.py), which read it.
    """
    out = tmp_path_factory.mktemp("second") / "reports"
    shutil.copytree(built.out, out)
    result = CliRunner().invoke(
        app, ["report", str(built.verdict), "--out", str(out), "--renderer", "jupyter", "--json"]
    )
    assert result.exit_code == 0, result.output
    body: dict[str, object] = json.loads(result.stdout)
    return out, body


# --- the directory ---------------------------------------------------------------------------------


def test_every_chart_is_a_valid_vega_lite_spec_and_drawn_as_validated(built: Built) -> None:
    """The report draws its charts without the schema check (``save_chart(..., validate=False)``).

    So the check is here: each chart of the report's own data is valid Vega-Lite (``chart_svg``
    validates the spec against Altair's schema first), and the SVG drawn with the check is the file
    the report wrote without it.
    """
    charts = release_charts(load_release_data(built.first.directory / "data"))
    assert set(charts) == set(CHART_NAMES)
    for stem, chart in charts.items():
        written = (built.first.directory / "charts" / f"{stem}.svg").read_text(encoding="utf-8")
        assert chart_svg(chart, validate=True) == written, stem


def test_report_is_version_1_of_the_default_release(built: Built) -> None:
    report = built.first
    assert (report.release, report.version) == (RELEASE, 1)
    assert report.directory == built.out / RELEASE / "1"
    assert report.html_path == report.directory / "report.html"
    assert (report.renderer, report.verdict) == ("jupyter", "fail")
    assert re.fullmatch(r"nbclient \S+, nbconvert \S+", report.renderer_version)
    assert report.seconds >= report.seconds_render > 0


def test_directory_holds_the_qmd_the_data_the_charts_and_the_page(built: Built) -> None:
    files = set(built.first_tree)
    charts = {f"charts/{stem}.{ext}" for stem in CHART_NAMES for ext in ("svg", "png")}
    expected = {"report.qmd", "report.html", "report.json", "data/digests.json", *(f"data/{n}" for n in DATA_FILES)}
    assert files == expected | charts
    assert sorted(p.name for p in (built.out / RELEASE).iterdir()) == ["1"]  # no temporary left
    assert (built.first.directory / "charts" / "pass_hat_k.png").read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in (built.first.directory / "charts" / "slices.svg").read_bytes()


def test_data_digests_are_the_sha256_of_each_data_file(built: Built) -> None:
    data = built.first.directory / "data"
    index = json.loads((data / "digests.json").read_text())
    assert index["format"] == "gatestats-release-data/1"
    assert set(index["files"]) == DATA_FILES
    assert {name: _sha(data / name) for name in DATA_FILES} == index["files"] == dict(built.first.data_digests)
    assert built.first.data_digest == _sha(data / "digests.json")
    assert (data / "verdict.json").read_bytes() == built.verdict.read_bytes()


def test_data_tables_carry_the_scenario(built: Built) -> None:
    data = load_release_data(built.first.directory / "data")
    curves = data.curves
    for metric in ("pass_hat_k", "pass_at_k"):
        for side in ("baseline", "candidate"):
            rows = curves.filter((pl.col("metric") == metric) & (pl.col("side") == side))
            assert rows.get_column("k").to_list() == [1, 2, 3, 4]
            assert rows.get_column("status").to_list() == ["ok"] * 4
            assert (rows["ci_low"] < rows["estimate"]).all()
            assert (rows["estimate"] <= rows["ci_high"]).all()
    # baseline pass^1: 20 + 2 + 4 x 1/2 = 24 of 30 cases (hand count of the scenario)
    first = curves.filter((pl.col("metric") == "pass_hat_k") & (pl.col("side") == "baseline") & (pl.col("k") == 1))
    assert first.get_column("estimate").item() == pytest.approx(24 / 30)
    assert data.severe_failures.to_dicts() == [
        {"slice": "security", "case_id": "case-01", "trial": 2, "outcome": "resource_killed", "bound": "wall_clock"}
    ]
    assert data.bounds.to_dicts() == [{"side": "candidate", "bound": "wall_clock", "count": 3}]
    infra = {r["side"]: r for r in data.infra.to_dicts()}
    assert (infra["candidate"]["infra_errors"], infra["candidate"]["infra_error_cases"]) == (1, "case-05")
    flips = data.flips
    assert sorted(flips.filter(pl.col("direction") == "pass_to_fail")["case"].str.split("@").list.first()) == [
        "case-01",  # the severe case: 4/4 -> 3/4
        "case-24",
        "case-25",
    ]
    assert flips.filter(pl.col("direction") == "fail_to_pass").height == 8
    assert flips.row(by_predicate=pl.col("case").str.starts_with("case-24"), named=True)["candidate_passed"] == 0
    cost = {r["side"]: r for r in data.cost.to_dicts()}
    assert cost["candidate"]["attempts"] == 121  # 120 trials + the infra_error retried
    assert cost["baseline"]["estimate"] == pytest.approx(2.4 / 96)  # $0.02 x 120 attempts / 96 accepted
    assert all(cost[s]["ci_low"] < cost[s]["estimate"] < cost[s]["ci_high"] for s in cost)
    slices = data.slices
    assert set(slices["slice"]) == {"(none)", "billing", "search", "security"}
    unsliced = slices.filter((pl.col("slice") == "(none)") & (pl.col("side") == "candidate")).row(0, named=True)
    assert (unsliced["n_cases"], unsliced["n_passed"], unsliced["n_valid_trials"]) == (1, 3, 4)  # case-29
    assert slices.filter(pl.col("slice") == "security")["severe"].all()


# --- the page --------------------------------------------------------------------------------------


def _h2(page: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", h).replace("¶", "").strip() for h in re.findall(r"<h2[^>]*>(.*?)</h2>", page, re.S)]


def test_sections_appear_in_the_order_of_the_section_table(page: str) -> None:
    assert _h2(page) == [s.title for s in SECTIONS]
    assert _h2(page)[:4] == ["Verdict", "Rules", "Severe slices", "Flips per case"]  # DESIGN.md: the verdict first


def test_page_shows_the_verdict_first_with_its_reasons(page: str) -> None:
    verdict_at = page.index('<div class="gs-verdict gs-fail" data-verdict="fail">')
    assert verdict_at < page.index("<h2", page.index("<h2") + 1)  # before the second section
    assert '<div class="gs-verdict-word">FAIL</div>' in page
    assert "severe slice 'security': 1 of 8 trials did not pass (case-01 trial 2 resource_killed)" in page
    assert "severe slice security: severe slice" not in page  # the slice named once (issue 29)


def test_page_shows_every_rule_row_the_flips_and_the_provenance(built: Built, page: str) -> None:
    body = json.loads(built.verdict.read_text())
    for rule in body["rules"]:
        assert rule["row"].replace("&", "&amp;") in page
    for case in body["flips"]["pass_to_fail"] + body["flips"]["fail_to_pass"]:
        short = case.split("@")[0]
        assert f'<code class="gs-case" title="{case}">{short}</code>' in page
    assert body["policy"]["digest"] in page
    assert body["digest"] in page
    for side in ("baseline", "candidate"):
        assert body[side]["files"][0]["digest"] in page
        assert body[side]["digest"] in page
    assert f"jupyter ({built.first.renderer_version})" in page
    assert "2026-11-01T09:00:00Z" in page  # policy registration time


def test_page_shows_results_not_code_and_fetches_nothing(page: str) -> None:
    body = page[page.index("<main>") :]
    for code in ("section_html(", "load_release_data", "enable_offline_altair", "verdict_digest ="):
        assert code not in body
    assert find_network_references(page) == []


def test_every_chart_is_drawn_in_chromium_with_the_network_off(built: Built, chromium: str) -> None:
    loaded = load_offline(built.first.html_path)
    charts = {c.chart_id: c for c in loaded.charts()}
    expected = {f"chart-{stem.replace('_', '-')}-1" for s in SECTIONS for stem in s.charts}
    assert len(expected) == 4
    assert set(charts) == expected
    for chart_id, check in charts.items():
        assert check.drawn, (chart_id, check)
        assert check.probe is not None
        assert check.probe["drawn_marks"] >= 2, (chart_id, check.probe)  # both sides drawn


def test_the_page_made_while_building_is_the_page_the_qmd_makes_from_data(built: Built, tmp_path: Path) -> None:
    """``gatestats report`` passes the page it made (sections and charts made once) to the kernel;
    rendered on its own (``page`` left at ``None``), the ``.qmd`` makes it from ``data/``: the same page."""
    copy = tmp_path / "copy"
    shutil.copytree(built.first.directory, copy)
    params = {
        "data_dir": "data",
        "verdict_path": "data/verdict.json",
        "verdict_digest": built.first.verdict_digest,
        "renderer": "jupyter",
        "renderer_version": built.first.renderer_version,
    }
    result = render_qmd(copy / "report.qmd", params=params, renderer="jupyter", output=copy / "again.html")
    assert result.html_path.read_bytes() == built.first.html_path.read_bytes()


@pytest.fixture(scope="module")
def fresh_process(built: Built, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """What a new interpreter with one polars thread makes of the scenario, in this order (one process, not two):

    ``data``: the data files' digests, written from the verdict (imports no Altair: the order cannot hide one);
    ``charts``: the chart names of the page made from the first build's ``data/`` (``release_page``);
    ``drawing_modules``: which of Altair and narwhals the process had imported after both.
    """
    script = (
        "import json, sys\n"
        "from gatestats.report._release_data import *\n"
        "from gatestats.report._release_tables import compute_tables\n"
        "v = read_verdict(sys.argv[1])\n"
        "t, p = compute_tables(v, load_sides(v, check_record_files(v)))\n"
        "data = write_data(__import__('pathlib').Path(sys.argv[2]), v, t, p)\n"
        "from gatestats.report.release import release_page\n"
        "page = release_page(sys.argv[3])\n"
        "drawing = [m for m in ('altair', 'narwhals') if m in sys.modules]\n"
        "print(json.dumps({'data': data, 'charts': sorted(page['charts']), 'drawing_modules': drawing}))\n"
    )
    env = {**os.environ, "POLARS_MAX_THREADS": "1"}
    out = tmp_path_factory.mktemp("fresh-process") / "data"
    args = [sys.executable, "-c", script, str(built.verdict), str(out), str(built.first.directory / "data")]
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=True, timeout=120)
    made: dict[str, object] = json.loads(done.stdout)
    return made


def test_the_page_made_from_data_draws_without_altair(fresh_process: dict[str, object]) -> None:
    """Rendered on its own, the ``.qmd``'s kernel draws the charts from their specs: no Altair is imported."""
    assert [fresh_process["charts"], fresh_process["drawing_modules"]] == [sorted(CHART_NAMES), []]


def test_a_report_built_without_a_rollout_log_says_no_reading_is_bound(built: Built, page: str) -> None:
    """Without ``watch``, "After the gate" says no reading is bound and ``data/`` holds no ``watch.json``
    (tests/rollout/test_watch_report.py builds the report with a reading)."""
    shown = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", shown))
    assert "After the gate" in text
    assert "No rollout reading is bound to this report version" in text
    assert not (built.first.directory / "data" / "watch.json").exists()


# --- versions and determinism ----------------------------------------------------------------------


def test_a_second_build_is_version_2_with_identical_data(built: Built, second: tuple[Path, dict[str, object]]) -> None:
    out, body = second
    assert body["version"] == 2
    assert body["directory"] == str(out / RELEASE / "2")
    assert body["data_digests"] == dict(built.first.data_digests)
    assert body["data_digest"] == built.first.data_digest
    assert _tree(out / RELEASE / "1") == built.first_tree  # version 1 untouched
    assert sorted(p.name for p in (out / RELEASE).iterdir()) == ["1", "2"]


def test_data_files_are_identical_in_another_process_with_one_thread(
    built: Built, fresh_process: dict[str, object]
) -> None:
    assert fresh_process["data"] == dict(built.first.data_digests)


def test_a_lost_rename_race_takes_the_next_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release_dir = tmp_path / "r"
    for taken in ("1", "2"):
        (release_dir / taken).mkdir(parents=True)
        (release_dir / taken / "report.html").write_text(taken)
    built = release_dir / ".building-x"
    built.mkdir()
    (built / "report.html").write_text("new")
    calls = iter([1])  # the first scan "missed" versions 1 and 2, as a concurrent build would
    monkeypatch.setattr(release_module, "_next_version", lambda d: next(calls, 3))
    version, target = release_module._move_into_place(built, release_dir)
    assert (version, target) == (3, release_dir / "3")
    assert [(release_dir / n / "report.html").read_text() for n in ("1", "2", "3")] == ["1", "2", "new"]


# --- refusals: nothing written ---------------------------------------------------------------------


def _with_earlier_version(out: Path) -> Path:
    (out / RELEASE / "1").mkdir(parents=True)
    (out / RELEASE / "1" / "report.html").write_text("earlier")
    return out


@pytest.fixture(scope="module")
def fresh_gate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The scenario's verdict with record files of its own (``root/gate``), made once per module, and a copy of
    that directory as made (``root/made``), from which :func:`fresh` restores it before each test."""
    root = tmp_path_factory.mktemp("fresh")
    verdict = make_verdict(root / "gate")
    shutil.copytree(root / "gate", root / "made")
    return verdict, root


@pytest.fixture
def fresh(fresh_gate: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A verdict with record files of its own (to tamper with: the module's, restored as made) and a reports root
    holding one earlier version."""
    verdict, root = fresh_gate
    shutil.rmtree(root / "gate")
    shutil.copytree(root / "made", root / "gate")
    return verdict, _with_earlier_version(tmp_path / "reports")


@pytest.fixture
def earlier(scenario_verdict: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the scenario's verdict (to edit; its record files are shared, read only) and a reports root
    holding one earlier version."""
    return copy_verdict(scenario_verdict, tmp_path / "gate"), _with_earlier_version(tmp_path / "reports")


def _listing(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*"))


def test_a_tampered_record_file_is_refused_naming_file_and_digests(fresh: tuple[Path, Path]) -> None:
    verdict, out = fresh
    before = _listing(out)
    records = verdict.parent / "cand" / "records.jsonl"
    expected = _sha(records)
    data = bytearray(records.read_bytes())
    data[data.index(b'"passed"') + 1] = ord("P")  # one byte: "passed" -> "Passed"
    records.write_bytes(bytes(data))
    with pytest.raises(ReportInputError) as info:
        build_release_report(verdict, out=out, renderer="jupyter")
    message = str(info.value)
    assert f"candidate record file {records}: digest mismatch: expected {expected}" in message
    assert f"got {_sha(records)}" in message
    assert _listing(out) == before


def test_a_missing_record_file_is_refused(fresh: tuple[Path, Path]) -> None:
    verdict, out = fresh
    records = verdict.parent / "base" / "records.jsonl"
    expected = _sha(records)
    records.unlink()
    with pytest.raises(
        ReportInputError, match=re.escape(f"baseline record file {records}: missing (expected {expected}")
    ):
        build_release_report(verdict, out=out / "new", renderer="jupyter")
    assert not (out / "new").exists()


def test_an_edited_verdict_is_refused(earlier: tuple[Path, Path]) -> None:
    verdict, out = earlier
    body = json.loads(verdict.read_text())
    stored = body["digest"]
    body["verdict"] = "pass"
    verdict.write_text(json.dumps(body))
    with pytest.raises(ReportInputError, match=re.escape(f"expected {stored} (stored in the file), got sha256:")):
        build_release_report(verdict, out=out / "new")
    assert not (out / "new").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "field '<line>': not valid JSON: Expecting value (column 1)"),
        ("[1]", "expected a verdict object (got list)"),
        (
            '{"format": "gatestats-policy/1"}',
            "field 'format': expected 'gatestats-verdict/1' (got 'gatestats-policy/1')",
        ),
    ],
)
def test_a_file_that_is_not_a_verdict_is_refused(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "verdict.json"
    path.write_text(content)
    with pytest.raises(ReportInputError, match=re.escape(message)):
        build_release_report(path, out=tmp_path / "reports")
    assert not (tmp_path / "reports").exists()


def test_a_failed_render_leaves_no_version_and_no_temporary(
    earlier: tuple[Path, Path], scenario_report: ScenarioReport, monkeypatch: pytest.MonkeyPatch
) -> None:
    verdict, out = earlier

    def broken(*args: object, **kwargs: object) -> None:
        raise RenderError("boom", file="report.qmd")

    monkeypatch.setattr(release_module, "render_qmd", broken)
    drawn = DrawnOnce(scenario_report.drawings)  # the charts are written as before; vl-convert draws none again
    monkeypatch.setattr(charts_module, "vl_convert", drawn.module)
    before = _listing(out)
    with pytest.raises(RenderError, match="boom"):
        build_release_report(verdict, out=out, renderer="jupyter")
    assert _listing(out) == before
    with pytest.raises(RenderError):
        build_release_report(verdict, out=out / "deeper" / "root", renderer="jupyter")
    assert not (out / "deeper").exists()  # directories the build made are removed again
    assert drawn.misses == 0  # what the builds drew was the scenario's charts, given from its recorded drawings


def test_data_that_changed_after_the_build_is_refused_when_read(built: Built, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for f in (built.first.directory / "data").iterdir():
        (data / f.name).write_bytes(f.read_bytes())
    rules = data / "rules.parquet"
    expected = _sha(rules)
    rules.write_bytes(rules.read_bytes() + b"\0")
    with pytest.raises(ReportInputError, match=re.escape(f"{rules}: data file changed: expected {expected}")):
        load_release_data(data)
    other = "sha256:" + "0" * 64
    (data / "rules.parquet").write_bytes((built.first.directory / "data" / "rules.parquet").read_bytes())
    with pytest.raises(ReportInputError, match=re.escape(f"expected {other} (the report's parameter)")):
        load_release_data(data, verdict_digest=other)


def test_relative_record_paths_are_found_beside_the_verdict(
    fresh_gate: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gatestats.report._release_data import check_record_files, read_verdict

    gate_dir = tmp_path / "gate"
    shutil.copytree(fresh_gate[1] / "made", gate_dir)  # the scenario's policy and run sets (make_verdict)
    monkeypatch.chdir(gate_dir)  # the gate run from there with relative paths, as a CI job does
    result = CliRunner().invoke(
        app, ["gate", "--policy", "policy.toml", "--baseline", "base", "--candidate", "cand", "-o", "relative.json"]
    )
    assert result.exit_code == 11, result.output  # fail: the severe slice
    body = json.loads((gate_dir / "relative.json").read_text())
    assert body["candidate"]["files"][0]["path"] == "cand/records.jsonl"
    monkeypatch.chdir(tmp_path)  # the report made from elsewhere
    found = check_record_files(read_verdict(gate_dir / "relative.json"))
    assert found == {"baseline": (gate_dir / "base/records.jsonl",), "candidate": (gate_dir / "cand/records.jsonl",)}


def test_the_template_ships_in_the_wheel(tmp_path: Path) -> None:
    import shutil
    import zipfile

    hatchling = shutil.which("hatchling", path=str(Path(sys.executable).parent))
    assert hatchling is not None, "hatchling (a dev dependency) is not installed in the environment"
    root = Path(__file__).resolve().parents[2]
    subprocess.run([hatchling, "build", "-t", "wheel", "-d", str(tmp_path)], cwd=root, check=True, capture_output=True)
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "gatestats/report/templates/release/report.qmd" in names
    assert "gatestats/report/release.py" in names


# --- the CLI ---------------------------------------------------------------------------------------


def test_cli_exits_1_on_tampered_records_with_nothing_written(fresh: tuple[Path, Path]) -> None:
    verdict, out = fresh
    records = verdict.parent / "base" / "records.jsonl"
    records.write_bytes(records.read_bytes().replace(b"passed", b"failed", 1))
    before = _listing(out)
    result = CliRunner().invoke(app, ["report", str(verdict), "--out", str(out)])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "error:" in result.stderr
    assert "digest mismatch" in result.stderr
    assert _listing(out) == before


@pytest.mark.parametrize(
    ("args", "hint"),
    [(["--release", "../escape"], "--release"), (["--renderer", "latex"], "--renderer")],
)
def test_cli_exits_2_on_usage_errors(earlier: tuple[Path, Path], args: list[str], hint: str) -> None:
    verdict, out = earlier
    result = CliRunner().invoke(app, ["report", str(verdict), "--out", str(out), *args])
    assert result.exit_code == 2
    assert hint in result.output
    assert _listing(out) == ["test-policy-candidate", "test-policy-candidate/1", "test-policy-candidate/1/report.html"]


def test_cli_prints_the_directory_and_the_page(built: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gatestats.report.release.build_release_report", lambda *a, **k: built.first)
    result = CliRunner().invoke(app, ["report", str(built.verdict)])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == f"report: {built.first.directory} (release {RELEASE}, version 1)"
    assert lines[1] == f"html: {built.first.html_path}"


# --- the .qmd --------------------------------------------------------------------------------------


def _normalised(text: str) -> str:
    text = re.sub(r"sha256:[0-9a-f]{64}", "sha256:<digest>", text)
    return re.sub(r'"nbclient [^"]+, nbconvert [^"]+"', '"<renderer version>"', text)


def test_generated_qmd_matches_the_snapshot(built: Built) -> None:
    text = _normalised((built.first.directory / "report.qmd").read_text(encoding="utf-8"))
    if UPDATE:
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert SNAPSHOT.is_file(), "no snapshot: run with GATESTATS_UPDATE_SNAPSHOTS=1 once"
    assert text == SNAPSHOT.read_text(encoding="utf-8")


def test_generated_qmd_is_parameterised_and_hides_code(built: Built) -> None:
    from gatestats.report import read_qmd

    doc = read_qmd(built.first.directory / "report.qmd")
    names = ("data_dir", "verdict_path", "verdict_digest", "renderer", "renderer_version", "page")
    assert doc.parameter_names() == names
    assert doc.front_matter["params"]["verdict_digest"] == built.first.verdict_digest
    assert doc.front_matter["params"]["page"] is None  # made in the kernel from data/ unless passed
    assert doc.front_matter["jupyter"] == "python3"
    code = [c for c in doc.cells if c.kind == "code"]
    assert all(c.options.get("echo") is False for c in code)
    assert "parameters" in code[0].tags


# --- release names ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "../x", ".hidden", "a/b", "x" * 101, "ümlaut"])
def test_bad_release_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="release: expected 1-100 letters"):
        check_release_name(name)


@given(policy=st.text(max_size=150), system=st.one_of(st.none(), st.text(max_size=150)))
def test_the_default_release_name_is_always_a_valid_name(policy: str, system: str | None) -> None:
    name = default_release_name({"policy": {"name": policy}, "candidate": {"system": system}})
    assert check_release_name(name) == name


def test_page_shows_the_case_set_and_the_failure_classes_the_verdict_binds(page: str) -> None:
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "One case set: both sides ran case set cs-1" in text
    # the candidate's failed cases: case-01 (killed once), case-24/25, case-26..29 (one failed trial each)
    assert "The candidate's 7 failed cases by failure class" in text
    assert "(unclassified) 7 of 7 — " in text  # no share or interval where no class is known (issue 29)
