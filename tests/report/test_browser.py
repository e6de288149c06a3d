"""Rendered reports in headless Chromium with the network off: the fixture's charts are drawn, and the
release report reads as a release manager needs it (issue 19: every display defect has a test here).

Chromium is required: when it is missing these tests FAIL with how to install it (CI installs the
Debian package through ``dev.py``'s ``system_tools()``); they never skip.
"""

from __future__ import annotations

import html
import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from gatestats.report import RenderResult
from gatestats.report.release import build_release_report
from tests.report.chromium import (
    INSTALL_HINT,
    BrowserPage,
    ChromiumMissingError,
    check_charts,
    find_chromium,
    load_offline,
    offline_prefix,
)
from tests.report.scenarios import make_one_trial_verdict, version


@pytest.mark.usefixtures("chromium")
def test_both_charts_are_drawn_offline(rendered: RenderResult, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    page = load_offline(rendered.html_path, screenshot=shot, window=(1100, 3200))
    charts = page.charts()
    assert [c.chart_id for c in charts] == ["fig-pass-hat-k-1", "fig-pass-at-k-1"]
    for chart in charts:
        assert chart.has_svg, chart
        assert chart.drawn, chart
        assert chart.probe is not None
        assert chart.probe["width"] > 50
        assert chart.probe["height"] > 50
    # line chart: one line + 4 points; bar chart: 4 bars (4 rows in the fixture's frame)
    assert [c.svg_marks for c in charts] == [5, 4]
    assert [c.probe["drawn_marks"] for c in charts if c.probe] == [5, 4]
    assert "Fixture release report" in page.dom
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_check_charts_flags_an_empty_svg() -> None:
    dom = (
        '<div class="gatestats-chart" data-chart-id="a"><svg width="10" height="10"></svg></div>'
        '<div class="gatestats-chart" data-chart-id="b"><svg><g class="mark-rect role-mark"><path d="M0,0h5v5z">'
        "</path></g></svg></div>"
        '<div class="gatestats-chart" data-chart-id="c"><canvas width="300" height="200"></canvas></div>'
    )
    assert [(c.chart_id, c.drawn) for c in check_charts(dom)] == [("a", False), ("b", True), ("c", True)]


@pytest.mark.usefixtures("chromium")
@pytest.mark.parametrize("method", ["unshare", "bwrap"])
def test_offline_namespace_has_no_network_interface_but_loopback(method: str) -> None:
    if method == "unshare" and not _is_root():
        pytest.skip("unshare --net needs root; bwrap covers the unprivileged case")
    code = "print(open('/proc/net/dev').read())"
    completed = subprocess.run(
        [*offline_prefix(method), sys.executable, "-c", code],  # type: ignore[arg-type]
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    interfaces = re.findall(r"^\s*([\w.-]+):", completed.stdout, flags=re.MULTILINE)
    assert interfaces == ["lo"]


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Recorder.requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/javascript")
        self.end_headers()
        self.wfile.write(b"document.title = 'FETCHED';")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def local_server() -> Iterator[str]:
    """An HTTP server on the host's loopback that records requests."""
    _Recorder.requests = []
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.usefixtures("chromium")
def test_chromium_cannot_reach_even_the_hosts_loopback(local_server: str, tmp_path: Path) -> None:
    page = tmp_path / "fetch.html"
    page.write_text(f'<html><head><script src="{local_server}/x.js"></script></head><body>hi</body></html>')
    control = load_offline(page, probe=False, budget_ms=2000, method="none")  # network on: it is fetched
    assert "<title>FETCHED</title>" in control.dom
    assert _Recorder.requests == ["/x.js"]
    _Recorder.requests.clear()
    loaded = load_offline(page, probe=False, budget_ms=2000)
    assert "FETCHED" not in loaded.dom
    assert _Recorder.requests == []


def test_missing_chromium_fails_with_install_instructions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("GATESTATS_CHROMIUM", raising=False)
    with pytest.raises(ChromiumMissingError) as caught:
        find_chromium()
    assert str(caught.value) == (
        f"no Chromium on PATH (looked for chromium, chromium-browser, google-chrome, google-chrome-stable); "
        f"{INSTALL_HINT}"
    )
    assert "apt-get install chromium" in str(caught.value)


def _is_root() -> bool:
    return os.geteuid() == 0


# --- the release report as a release manager sees it (issue 19) ------------------------------------


@pytest.fixture(scope="module")
def one_trial_page(tmp_path_factory: pytest.TempPathFactory) -> BrowserPage:
    """The one-trial scenario's release report (``tests/report/scenarios.py``) loaded in Chromium."""
    find_chromium()  # fails (never skips) when Chromium is missing
    root = tmp_path_factory.mktemp("one-trial")
    report = build_release_report(make_one_trial_verdict(root / "gate"), out=root / "reports", renderer="jupyter")
    return load_offline(report.html_path, window=(1200, 2400))


def _visible_text(dom: str) -> str:
    """The page's text as a reader sees it: no scripts, styles, tags or attributes."""
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def _section(dom: str, heading: str) -> str:
    start = dom.index(heading)
    end = dom.find("<h2", start)
    return dom[start : end if end > 0 else len(dom)]


def test_release_cost_chart_draws_estimates_without_an_interval_as_hollow_dots(one_trial_page: BrowserPage) -> None:
    charts = {c.chart_id: c for c in one_trial_page.charts()}
    cost = charts["chart-cost-1"]
    assert cost.drawn, cost
    assert cost.probe is not None
    assert cost.probe["mark_extents"].get("symbol", 0) > 5  # the dots are laid out
    svg = _section(one_trial_page.dom, "Cost per accepted outcome")
    assert "hollow dot: estimate without an interval (insufficient evidence)" in html.unescape(svg)
    assert "baseline (no interval)" in svg
    assert "No cost estimate to draw" not in one_trial_page.dom


def test_release_curve_intervals_are_visible_with_one_trial_per_case(one_trial_page: BrowserPage) -> None:
    charts = {c.chart_id: c for c in one_trial_page.charts()}
    for chart_id in ("chart-pass-hat-k-1", "chart-pass-at-k-1"):
        probe = charts[chart_id].probe
        assert probe is not None
        # an error bar of the 95% interval: tens of pixels tall on a 260 px axis (a band at one k has no width)
        assert probe["mark_extents"].get("rule", 0) > 40, (chart_id, probe["mark_extents"])


def test_release_legend_swatches_are_the_side_colours_at_full_strength(one_trial_page: BrowserPage) -> None:
    swatches = re.findall(r'<g class="mark-symbol role-legend-symbol"[^>]*>(.*?)</g>', one_trial_page.dom, re.S)
    assert len(swatches) >= 8  # 2 sides x 4 charts
    for swatch in swatches:
        for path in re.findall(r"<path [^>]*>", swatch):
            assert re.search(r'stroke="#(4c78a8|f58518)"', path), path
            assert 'opacity="1"' in path, path


def test_release_money_is_in_plain_decimals_never_scientific(one_trial_page: BrowserPage) -> None:
    text = _visible_text(one_trial_page.dom)
    assert re.findall(r"\$\s?[0-9.,]+e[-+]?\d+", text) == []
    assert re.findall(r"\d\.?\d*e-\d+", text) == []  # not on the chart axes either
    cost = _visible_text(_section(one_trial_page.dom, "Cost per accepted outcome"))
    assert "$0.0000291 (no interval)" in cost  # 12 x $0.00001453 / 6 accepted
    assert "$0.000174" in cost  # total spend: 12 x $0.00001453


def test_release_hours_are_shown_at_a_readable_precision(one_trial_page: BrowserPage) -> None:
    cost = _section(one_trial_page.dom, "Cost per accepted outcome")
    cells = re.findall(r'<td class="gs-num">([^<]*)</td>', cost)
    assert "0.00" not in cells
    assert "12.0 s" in cells  # machine time: 12 trials x 1 s
    assert "0 s" in cells  # no human review


def test_release_case_ids_are_short_with_the_full_id_on_hover_and_do_not_wrap(one_trial_page: BrowserPage) -> None:
    cases = one_trial_page.case_ids()
    flipped = ["case-00", "case-06", "case-01", "case-05", "case-07", "case-11"]
    failed = ["case-00", "case-03", "case-06", "case-09"]  # the "Failure classes" section's failed cases
    assert [c["text"] for c in cases] == flipped + failed
    for case in cases:
        assert case["title"] == f"{case['text']}@{version(case['text'])}"
        assert case["lines"] == 1, case
    flips = _visible_text(_section(one_trial_page.dom, "Flips per case"))
    assert "sha256" not in flips


def test_release_prose_has_no_raw_tokens_and_reasons_start_plainly(one_trial_page: BrowserPage) -> None:
    text = _visible_text(one_trial_page.dom[one_trial_page.dom.index("<main") :])
    assert "insufficient_evidence" not in text
    verdict = _visible_text(_section(one_trial_page.dom, "Verdict"))
    assert (
        "There are too few cases to tell whether the candidate's cost per accepted outcome rose by more than the "
        "allowed 15%." in verdict
    )
    assert "p-values need at least 50 paired independent units (got 12; docs/cost.md)" in verdict


def test_release_slices_with_insufficient_evidence_are_shown_marked(one_trial_page: BrowserPage) -> None:
    slices = html.unescape(_section(one_trial_page.dom, "Per-slice pass rates"))
    assert "dates (insufficient evidence)" in slices  # the y-axis label of the chart
    assert "insufficient evidence: no estimate" in slices


def test_release_threshold_of_a_paired_row_is_labelled_a_difference(one_trial_page: BrowserPage) -> None:
    rules = _visible_text(_section(one_trial_page.dom, "Rules"))
    assert "\N{MINUS SIGN}0.05 vs baseline (difference)" in rules
    assert "≤ 1.15 × baseline (ratio)" in rules


def test_release_cost_row_shows_its_case_count(one_trial_page: BrowserPage) -> None:
    # The gate used to record 0 cases for a cost row it could not decide (the report then showed
    # "12*" with a footnote); it now records the 12 cases it looked at, and the report shows them.
    rules = _section(one_trial_page.dom, "Rules")
    (cost_row,) = [row for row in re.findall(r"<tr>.*?</tr>", rules, flags=re.S) if "CPA ratio" in row]
    assert '<td class="gs-num">12</td>' in cost_row
