"""The rendered report in headless Chromium with the network off: both charts are drawn.

Chromium is required: when it is missing these tests FAIL with how to install it (CI installs the
Debian package through ``dev.py``'s ``system_tools()``); they never skip.
"""

from __future__ import annotations

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
from tests.report.chromium import (
    INSTALL_HINT,
    ChromiumMissingError,
    check_charts,
    find_chromium,
    load_offline,
    offline_prefix,
)


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
