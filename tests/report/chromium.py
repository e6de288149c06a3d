"""Headless Chromium with the network off: open a rendered report from disk, return its DOM, check charts.

Chromium runs in a fresh network namespace that has only a loopback interface (down): ``unshare
--net`` as root, ``bwrap --unshare-net`` (bubblewrap) otherwise. Nothing it loads can come from the
network, not even from the host's ``localhost``. ``--no-sandbox`` is always passed (Chromium refuses
to run as root with its sandbox; the page is our own local file and the network is gone).

``--dump-dom`` prints the DOM after scripts ran, with a virtual-time budget so timers settle.
:func:`load_offline` also injects a probe script into a copy of the page that measures every
``div.gatestats-chart`` with the layout engine (bounding box of the ``<svg>``/``<canvas>``, number
of Vega mark shapes and how many have a non-empty ``getBBox()``), and can take a screenshot.

When Chromium is missing, :func:`find_chromium` raises :class:`ChromiumMissingError` saying how to
install it; the tests turn that into a failure, never a skip.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "INSTALL_HINT",
    "BrowserPage",
    "ChartCheck",
    "ChromiumMissingError",
    "check_charts",
    "find_chromium",
    "load_offline",
    "offline_prefix",
]

INSTALL_HINT = (
    "install Chromium: `apt-get install chromium` (Debian/Ubuntu, as root; `python3 dev.py test` and "
    ".ci/run do it through dev.py system_tools()), or set GATESTATS_CHROMIUM to a Chromium/Chrome binary"
)
_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_SHAPES = {"path", "rect", "circle", "line", "polygon", "polyline", "ellipse"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_PROBE_ID = "gatestats-probe"
_PROBE = """
<script>
(function () {
  var out = [];
  document.querySelectorAll('.gatestats-chart').forEach(function (box) {
    var svg = box.querySelector('svg');
    var canvas = box.querySelector('canvas');
    var rect = (svg || canvas || box).getBoundingClientRect();
    var marks = svg ? svg.querySelectorAll(
      '.role-mark path, .role-mark rect, .role-mark circle, .role-mark line, .role-mark polygon') : [];
    var drawn = 0;
    marks.forEach(function (m) {
      try { var b = m.getBBox(); if (b.width > 0 || b.height > 0) { drawn += 1; } } catch (e) {}
    });
    var extents = {};
    marks.forEach(function (m) {
      var group = m.closest('.role-mark');
      var kind = group ? (group.getAttribute('class').match(/mark-([a-z]+)/) || [null, 'other'])[1] : 'other';
      try { var b = m.getBBox(); extents[kind] = Math.max(extents[kind] || 0, b.width, b.height); } catch (e) {}
    });
    out.push({id: box.getAttribute('data-chart-id'), svg: !!svg, canvas: !!canvas,
              width: rect.width, height: rect.height, marks: marks.length, drawn_marks: drawn,
              mark_extents: extents,
              canvas_width: canvas ? canvas.width : 0, canvas_height: canvas ? canvas.height : 0});
  });
  var cases = [];
  document.querySelectorAll('code.gs-case').forEach(function (c) {
    var r = c.getBoundingClientRect();
    cases.push({text: c.textContent, title: c.getAttribute('title'), height: r.height,
                lines: c.getClientRects().length});
  });
  out.push({id: '#case-ids', cases: cases});
  var main = document.querySelector('main') || document.body;
  var box = main.getBoundingClientRect();
  var limit = box.right - parseFloat(getComputedStyle(main).paddingRight || '0');
  var tables = [];
  document.querySelectorAll('table.gs-table').forEach(function (t) {
    var r = t.getBoundingClientRect();
    var heads = [];
    t.querySelectorAll('thead th').forEach(function (h) { heads.push(h.textContent); });
    tables.push({headers: heads, left: r.left, right: r.right, width: r.width, limit: limit});
  });
  out.push({id: '#tables', tables: tables});
  var pre = document.createElement('pre');
  pre.id = 'PROBE_ID';
  pre.hidden = true;  // not drawn: a screenshot taken in the same launch shows the page as it is
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
""".replace("PROBE_ID", _PROBE_ID)
#: The probe's results as Chromium writes them into the DOM (hidden: not drawn).
_PROBE_PRE = f'<pre id="{_PROBE_ID}" hidden="">'


class ChromiumMissingError(RuntimeError):
    """No Chromium binary was found."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChartCheck:
    """One ``div.gatestats-chart`` as found in the DOM (and measured by the probe when available)."""

    chart_id: str | None
    has_svg: bool
    svg_shapes: int
    svg_marks: int
    has_canvas: bool
    canvas_width: int
    canvas_height: int
    probe: dict[str, Any] | None = None

    @property
    def drawn(self) -> bool:
        """A non-empty ``<svg>`` with mark shapes, or a ``<canvas>`` of positive size (and laid out
        with a positive size and at least one mark with a non-empty box when probed)."""
        static = (self.has_svg and self.svg_marks > 0) or (
            self.has_canvas and self.canvas_width > 0 and self.canvas_height > 0
        )
        if self.probe is None:
            return static
        laid_out = self.probe["width"] > 0 and self.probe["height"] > 0
        marks_ok = self.probe["canvas"] or self.probe["drawn_marks"] > 0
        return static and laid_out and marks_ok


@dataclass(frozen=True, slots=True, kw_only=True)
class BrowserPage:
    """What Chromium made of a page: the DOM after scripts, the probe's measurements, a screenshot."""

    dom: str
    probe: list[dict[str, Any]] | None
    screenshot: Path | None
    offline: str

    def charts(self) -> list[ChartCheck]:
        """:func:`check_charts` on the DOM, joined with the probe's measurements by chart id."""
        return check_charts(self.dom, probe=self.probe)

    def tables(self) -> list[dict[str, Any]]:
        """Every ``table.gs-table`` as laid out: its headers, its right edge and the page's content edge (``limit``)."""
        for item in self.probe or []:
            if item.get("id") == "#tables":
                tables: list[dict[str, Any]] = item["tables"]
                return tables
        return []

    def case_ids(self) -> list[dict[str, Any]]:
        """Every ``code.gs-case`` as laid out: its text, ``title``, height and number of line boxes."""
        for item in self.probe or []:
            if item.get("id") == "#case-ids":
                cases: list[dict[str, Any]] = item["cases"]
                return cases
        return []


def find_chromium() -> str:
    """Path of a Chromium/Chrome binary (``GATESTATS_CHROMIUM`` first), else :class:`ChromiumMissingError`."""
    configured = os.environ.get("GATESTATS_CHROMIUM")
    if configured:
        found = shutil.which(configured)
        if found is None:
            msg = f"GATESTATS_CHROMIUM={configured!r} is not an executable; {INSTALL_HINT}"
            raise ChromiumMissingError(msg)
        return found
    for name in _CANDIDATES:
        found = shutil.which(name)
        if found is not None:
            return found
    msg = f"no Chromium on PATH (looked for {', '.join(_CANDIDATES)}); {INSTALL_HINT}"
    raise ChromiumMissingError(msg)


Method = Literal["auto", "unshare", "bwrap", "none"]


def offline_prefix(method: Method = "auto") -> list[str]:
    """Command prefix that runs a program in a new network namespace (no interface but a down ``lo``).

    ``none`` (no namespace, the network stays on) exists only for control experiments in tests.
    """
    if method == "none":
        return []
    if method == "auto":
        method = "unshare" if os.geteuid() == 0 and shutil.which("unshare") else "bwrap"
    if method == "unshare":
        if shutil.which("unshare") is None:
            msg = "unshare (util-linux) is not installed"
            raise RuntimeError(msg)
        return ["unshare", "--net"]
    if shutil.which("bwrap") is None:
        msg = "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
        raise RuntimeError(msg)
    return ["bwrap", "--dev-bind", "/", "/", "--unshare-net", "--die-with-parent", "--"]


def load_offline(
    page: Path,
    *,
    screenshot: Path | None = None,
    window: tuple[int, int] = (1280, 2400),
    budget_ms: int = 5000,
    probe: bool = True,
    method: Method = "auto",
    timeout_s: float = 120.0,
) -> BrowserPage:
    """Open ``page`` (a local HTML file) in headless Chromium with the network off.

    Returns the DOM after a ``budget_ms`` virtual-time budget; with ``probe``, the DOM of a copy of
    the page with the chart probe appended (its JSON is parsed into :attr:`BrowserPage.probe`);
    with ``screenshot``, a PNG of the page at ``window`` size, taken in the same launch (the probe's
    results are hidden, so it shows the unmodified page: the same PNG as a launch of its own).
    """
    chromium = find_chromium()
    prefix = offline_prefix(method)
    source = page.resolve()
    with tempfile.TemporaryDirectory(prefix="gatestats-chromium-") as tmp:
        target = source
        if probe:
            text = source.read_text(encoding="utf-8")
            anchor = text.rfind("</body>")
            text = text[:anchor] + _PROBE + text[anchor:] if anchor >= 0 else text + _PROBE
            target = Path(tmp) / source.name
            target.write_text(text, encoding="utf-8")
        shot = [] if screenshot is None else [f"--screenshot={screenshot}"]
        dom = _chromium(prefix, chromium, tmp, [*shot, "--dump-dom", target.as_uri()], window, budget_ms, timeout_s)
        if screenshot is not None and not screenshot.is_file():
            msg = f"chromium wrote no screenshot at {screenshot}"
            raise RuntimeError(msg)
    measured = _probe_result(dom) if probe else None
    return BrowserPage(dom=dom, probe=measured, screenshot=screenshot, offline=" ".join(prefix) or "network on")


def check_charts(dom: str, *, probe: list[dict[str, Any]] | None = None) -> list[ChartCheck]:
    """Every ``div.gatestats-chart`` in a DOM with what it holds (Vega marks: shapes in ``.role-mark``)."""
    tree = _parse(dom)
    by_id = {str(p.get("id")): p for p in probe or []}
    checks = []
    for box in _find_all(tree, lambda n: n.tag == "div" and "gatestats-chart" in n.classes()):
        svgs = [n for n in _walk(box) if n.tag == "svg"]
        canvases = [n for n in _walk(box) if n.tag == "canvas"]
        shapes = [n for s in svgs for n in _walk(s) if n.tag in _SHAPES]
        marks = [n for s in svgs for g in _walk(s) if "role-mark" in g.classes() for n in _walk(g) if n.tag in _SHAPES]
        chart_id = box.attrs.get("data-chart-id")
        checks.append(
            ChartCheck(
                chart_id=chart_id,
                has_svg=bool(svgs),
                svg_shapes=len(shapes),
                svg_marks=len(marks),
                has_canvas=bool(canvases),
                canvas_width=max((_int(c.attrs.get("width")) for c in canvases), default=0),
                canvas_height=max((_int(c.attrs.get("height")) for c in canvases), default=0),
                probe=by_id.get(str(chart_id)) if probe is not None else None,
            )
        )
    return checks


# --- internals ----------------------------------------------------------------------------------


def _chromium(
    prefix: list[str], chromium: str, tmp: str, args: list[str], window: tuple[int, int], budget: int, timeout: float
) -> str:
    profile = tempfile.mkdtemp(prefix="profile-", dir=tmp)
    command = [
        *prefix,
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-sync",
        "--hide-scrollbars",
        "--mute-audio",
        f"--user-data-dir={profile}",
        f"--window-size={window[0]},{window[1]}",
        f"--virtual-time-budget={budget}",
        *args,
    ]
    env = {**os.environ, "HOME": tmp}
    completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    if completed.returncode != 0:
        tail = "\n".join(completed.stderr.strip().splitlines()[-15:])
        msg = f"chromium failed with exit status {completed.returncode}: {' '.join(command)}\n{tail}"
        raise RuntimeError(msg)
    return completed.stdout


def _probe_result(dom: str) -> list[dict[str, Any]]:
    start = dom.find(_PROBE_PRE)
    if start < 0:
        msg = "the chart probe did not run (no #gatestats-probe in the DOM)"
        raise RuntimeError(msg)
    start += len(_PROBE_PRE)
    end = dom.index("</pre>", start)
    result: list[dict[str, Any]] = json.loads(html.unescape(dom[start:end]))
    return result


def _int(value: str | None) -> int:
    try:
        return int(float(value or 0))
    except ValueError:
        return 0


@dataclass(slots=True)
class _Node:
    tag: str
    attrs: dict[str, str]
    children: list[_Node]

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("#document", {}, [])
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = _Node(tag, {k: v or "" for k, v in attrs}, [])
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(_Node(tag, {k: v or "" for k, v in attrs}, []))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return


def _parse(dom: str) -> _Node:
    builder = _TreeBuilder()
    builder.feed(dom)
    builder.close()
    return builder.root


def _walk(node: _Node) -> list[_Node]:
    out: list[_Node] = []
    todo = list(reversed(node.children))
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(reversed(current.children))
    return out


def _find_all(node: _Node, predicate: Any) -> list[_Node]:
    return [n for n in _walk(node) if predicate(n)]
