"""Executed notebook → one self-contained, offline HTML page (the Jupyter renderer's export step).

Quarto's output options are applied to a copy of the executed notebook (:func:`prepare_for_export`),
Quarto Markdown that nbconvert's Markdown renderer does not know is translated
(:func:`quarto_markdown`), and the page is made with the ``gatestats`` nbconvert template (the
JupyterLab template minus every network resource). :func:`find_network_references` lists what a
browser would fetch from the network; the renderer refuses to write a page that has any.
"""

from __future__ import annotations

import base64
import copy
import html
import mimetypes
import re
import threading
from collections.abc import Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
from nbconvert import HTMLExporter

from gatestats.report.quarto.qmd import EXECUTION_OPTIONS, _nb_new, strip_option_lines

__all__ = [
    "TEMPLATES",
    "export_html",
    "find_network_references",
    "network_scan",
    "prepare_for_export",
    "quarto_markdown",
]

#: Directory holding the ``gatestats`` nbconvert template.
TEMPLATES = Path(__file__).resolve().parent / "templates"

_EXTERNAL = re.compile(r"^\s*(?:https?:)?//", re.IGNORECASE)
# The spaces after ``url(`` are read once (``\s*``, then a quote and its own ``\s*``). ``\s*['"]?\s*`` read them
# two ways at every split: a ``url(`` and 8,000 spaces took 3 s, a million would not end (same language and matches).
_CSS_EXTERNAL = re.compile(r"(?:url\(\s*(?:['\"]\s*)?|@import\s+['\"])(?:https?:)?//[^'\")\s;]*", re.IGNORECASE)
_SCRIPT_URL = re.compile(r"[\"'`](?:https?:)?//[^\"'`\s]+", re.IGNORECASE)
_FETCHING_ATTRS = {"src", "href", "data", "srcset", "poster", "xlink:href", "background"}
_FETCHING_TAGS = {"script", "img", "iframe", "audio", "video", "source", "track", "embed", "object", "link", "image"}
_XML_PROLOGUE = re.compile(r"^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!DOCTYPE[^>]*>\s*)?", re.IGNORECASE)
_DIV_OPEN = re.compile(r"^(?P<colons>:{3,})\s*(?:\{(?P<attrs>[^}]*)\}|(?P<cls>[\w-]+))\s*$")
_DIV_CLOSE = re.compile(r"^:{3,}\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_HEADING_ATTRS = re.compile(r"^(#{1,6}\s.*?)\s*\{[^}]*\}\s*$")
_MD_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
_ATTR = re.compile(r"""(?P<key>[\w-]+)=(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>\S+))|(?P<token>[.#][\w:-]+)""")


def prepare_for_export(nb: nbformat.NotebookNode, *, resource_dir: Path | None = None) -> nbformat.NotebookNode:
    """Apply Quarto's output options to a copy of an executed notebook, for display.

    Per code cell (options from ``metadata["gatestats"]["options"]``): ``include: false`` drops the
    cell; ``output: false`` drops its outputs; ``warning: false`` drops its stderr streams (what
    Quarto's Jupyter engine treats as warnings); ``echo: false`` hides its source; ``output: asis``
    turns stdout and Markdown/HTML outputs into a Markdown cell. ``#|`` option lines are removed
    from displayed sources, the front-matter raw cell is dropped, Markdown goes through
    :func:`quarto_markdown` and its local images (``![alt](path)``, relative to ``resource_dir``)
    become data URIs, and every ``image/svg+xml`` output gets a chart id
    (``<cell id>-<n>``) and loses its XML prologue so that it can be inlined.

    Parameters
    ----------
    nb
        An executed notebook (:func:`~gatestats.report.quarto.to_notebook`, then run); not changed.
    resource_dir
        The directory local images are relative to (``None``: images are left as they are).

    Returns
    -------
    nbformat.NotebookNode
        The copy, ready for :func:`export_html`.
    """
    out = copy.deepcopy(nb)
    cells: list[nbformat.NotebookNode] = []
    for cell in out.cells:
        if cell.cell_type == "raw":
            continue
        if cell.cell_type == "markdown":
            cell.source = _embed_markdown_images(quarto_markdown(cell.source), resource_dir)
            cells.append(cell)
            continue
        cells += _export_code_cell(cell)
    out.cells = cells
    return out


def _export_code_cell(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The cells one code cell becomes for display (none, itself, and/or its ``asis`` Markdown); edits ``cell``."""
    options = {**EXECUTION_OPTIONS, **cell.metadata.get("gatestats", {}).get("options", {})}
    if options["include"] is False:
        return []
    outputs = list(cell.get("outputs", []))
    if options["output"] is False:
        outputs = []
    if options["warning"] is False:
        outputs = [o for o in outputs if not (o.output_type == "stream" and o.get("name") == "stderr")]
    asis = _asis_markdown(outputs) if options["output"] == "asis" else None
    if asis is not None:
        outputs = []
    _name_charts(outputs, cell.id)
    cell.outputs = outputs
    cell.source = strip_option_lines(cell.source)
    show_source = options["echo"] is not False and bool(cell.source.strip())
    if not show_source:
        cell.metadata["transient"] = {"remove_source": True}
    shown = [cell] if show_source or outputs else []
    return shown + ([_nb_new("markdown_cell", asis)] if asis else [])


def _name_charts(outputs: list[nbformat.NotebookNode], cell_id: str) -> None:
    """Give each SVG output the chart id ``<cell id>-<n>`` and drop its XML prologue (to inline it)."""
    n_chart = 0
    for output in outputs:
        data = output.get("data", {})
        if "image/svg+xml" in data:
            n_chart += 1
            data["image/svg+xml"] = _XML_PROLOGUE.sub("", _text(data["image/svg+xml"]))
            output.setdefault("metadata", {})["gatestats"] = {"chart_id": f"{cell_id}-{n_chart}"}


def export_html(
    nb: nbformat.NotebookNode,
    *,
    title: str,
    renderer_line: str,
    generator: str,
    subtitle: str | None = None,
    byline: str | None = None,
) -> str:
    """Render a prepared notebook (see :func:`prepare_for_export`) to one offline HTML page.

    PNG/JPEG outputs are data URIs; SVG outputs are inline ``<svg>`` in ``div.gatestats-chart``;
    prompts are hidden. (nbconvert's own ``embed_images`` is off: it re-parses each HTML block on
    its own and would close the ``<div>`` of a fenced div before its content.)

    Parameters
    ----------
    nb
        A notebook prepared by :func:`prepare_for_export`.
    title, subtitle, byline
        The page's title block.
    renderer_line
        The line naming the renderer and its version, shown on the page.
    generator
        The content of the page's ``<meta name="generator">``.

    Returns
    -------
    str
        The HTML page.
    """
    resources: dict[str, object] = {
        "metadata": {"name": title},
        "gatestats": {
            "title": title,
            "subtitle": subtitle,
            "byline": byline,
            "renderer_line": renderer_line,
            "generator": generator,
        },
    }
    with _EXPORTER_LOCK:
        exporter = _exporter()
        try:
            body, _ = exporter.from_notebook_node(nb, resources=resources)
        finally:
            exporter._nb_metadata.clear()  # what it keeps of each page, by title: nothing carries to the next
    return str(body)


# One exporter per process: it loads and compiles the template on its first page (~0.1 CPU-s); nbconvert's own
# command exports every notebook it is given with one exporter. Each page's filters, resources and notebook metadata
# are its own (set again on every call); the lock keeps two threads from exporting through it at once.
_EXPORTER_LOCK = threading.Lock()
_EXPORTER: list[HTMLExporter] = []


def _exporter() -> HTMLExporter:
    """The process's ``gatestats``-template exporter (made on first use; call with :data:`_EXPORTER_LOCK` held)."""
    if not _EXPORTER:
        _EXPORTER.append(_new_exporter())
    return _EXPORTER[0]


def _new_exporter() -> HTMLExporter:
    """A new nbconvert exporter with the ``gatestats`` template, prompts, anchor links and sanitizing off."""
    return HTMLExporter(  # type: ignore[no-untyped-call]
        template_name="gatestats",
        extra_template_basedirs=[str(TEMPLATES)],
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        exclude_anchor_links=True,
        embed_images=False,
        sanitize_html=False,
    )


def quarto_markdown(text: str) -> str:
    """Translate the Quarto/Pandoc Markdown that nbconvert's renderer (mistune) does not know.

    Fenced divs (``::: {.callout-note title="..."}`` … ``:::``, ``::: warning``) become ``<div>``
    blocks (a callout's ``title`` becomes a ``div.callout-title``), raw blocks
    (```` ```{=html} ````) are passed through (other raw formats are dropped), and heading
    attributes (``## Title {#sec-x .unnumbered}``) are removed. Code blocks are left alone.

    Parameters
    ----------
    text
        A Markdown cell's source.

    Returns
    -------
    str
        Markdown that mistune renders as Quarto would.

    Examples
    --------
    >>> print(quarto_markdown("::: {.callout-note title='Verdict'}\\nPass.\\n:::"))
    <BLANKLINE>
    <div class="callout callout-note">
    <div class="callout-title">Verdict</div>
    <BLANKLINE>
    Pass.
    <BLANKLINE>
    </div>
    <BLANKLINE>
    """
    out: list[str] = []
    fence: str | None = None
    raw: str | None = None
    for line in text.splitlines():
        if fence is not None:
            stripped = line.strip()
            if len(stripped) >= len(fence) and set(stripped) == {fence[0]}:
                fence = None
                if raw is not None:
                    raw = None
                    out.append("")
                    continue
            if raw is None or raw == "html":
                out.append(line)
            continue
        match = _FENCE.match(line)
        if match is not None:
            fence = match[1]
            info = match[2].strip()
            if info.startswith("{=") and info.endswith("}"):
                raw = info[2:-1].strip().lower()
                out.append("")
                continue
            out.append(line)
            continue
        opening = _DIV_OPEN.match(line)
        if opening is not None:
            out.extend(_div_open(opening["attrs"], opening["cls"]))
            continue
        if _DIV_CLOSE.match(line):
            out.extend(["", "</div>", ""])
            continue
        heading = _HEADING_ATTRS.match(line)
        out.append(heading[1] if heading is not None else line)
    return "\n".join(out)


def find_network_references(page: str) -> list[str]:
    """Everything in an HTML page that a browser would fetch from the network.

    Looks at fetching elements (``script``, ``link``, ``img``, ``iframe``, media, ``object``,
    ``embed``, SVG ``image``) whose ``src``/``href``/``data``/``srcset``/``poster`` is an absolute
    ``http(s)`` or protocol-relative URL, and at CSS ``url(...)`` / ``@import`` of such URLs in
    ``<style>`` blocks and ``style`` attributes, and at quoted absolute URLs inside inline
    ``<script>`` code (how CDN loaders such as Altair's ``html`` renderer fetch vega). Hyperlinks
    (``<a href>``) and XML namespaces are not fetches and are not reported.

    Parameters
    ----------
    page
        An HTML page.

    Returns
    -------
    list[str]
        Each fetching reference as found (the tag or CSS text); empty for an offline page.

    Examples
    --------
    >>> find_network_references('<script src="https://cdn.example/x.js"></script><a href="https://a.b">ok</a>')
    ['<script src="https://cdn.example/x.js">']
    >>> find_network_references('<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>')
    []
    """
    return network_scan(page)[0]


def network_scan(page: str, placeholders: frozenset[str] = frozenset()) -> tuple[list[str], dict[str, int]]:
    """:func:`find_network_references` of ``page``, and how often each placeholder id was read as a tag.

    ``placeholders`` are the ids of ``splicing`` placeholders (``<div id="...">``): each is counted
    when the parser reads it as a start tag outside any ``script`` or ``style``, i.e. as an element
    of the page, where an inert fragment can take its place.

    Parameters
    ----------
    page
        HTML text.
    placeholders
        Ids of the placeholders to count.

    Returns
    -------
    tuple
        What the page would fetch (as :func:`find_network_references`), and ``id -> times read as
        an element`` for each placeholder.
    """
    finder = _NetworkFinder(placeholders)
    finder.feed(page)
    finder.close()
    return finder.found, finder.placeholders


# --- internals ----------------------------------------------------------------------------------


class _NetworkFinder(HTMLParser):
    def __init__(self, placeholders: frozenset[str] = frozenset()) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.placeholders = dict.fromkeys(placeholders, 0)
        self._in_style = False
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        placeholder = tag == "div" and len(attrs) == 1 and attrs[0][0] == "id" and attrs[0][1] in self.placeholders
        if placeholder and not (self._in_style or self._in_script):
            self.placeholders[str(attrs[0][1])] += 1
        if tag == "style":
            self._in_style = True
        if tag == "script":
            self._in_script = True
        for name, value in attrs:
            if value is None:
                continue
            if name == "style":
                self.found.extend(m.group(0) for m in _CSS_EXTERNAL.finditer(value))
            elif tag in _FETCHING_TAGS and name in _FETCHING_ATTRS:
                urls = [part.strip().split(" ")[0] for part in value.split(",")] if name == "srcset" else [value]
                if any(_EXTERNAL.match(url) for url in urls):
                    self.found.append(f'<{tag} {name}="{value}">')

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag == "style":
            self._in_style = False
        if tag == "script":
            self._in_script = False

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.found.extend(m.group(0) for m in _CSS_EXTERNAL.finditer(data))
        if self._in_script:
            self.found.extend(f"<script> {m.group(0)[1:]}" for m in _SCRIPT_URL.finditer(data))


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _asis_markdown(outputs: list[Any]) -> str:
    parts: list[str] = []
    for output in outputs:
        if output.output_type == "stream" and output.get("name") == "stdout":
            parts.append(_text(output.text))
        elif output.output_type in {"display_data", "execute_result"}:
            data: Mapping[str, Any] = output.get("data", {})
            for mime in ("text/markdown", "text/html", "text/plain"):
                if mime in data:
                    parts.append(_text(data[mime]))
                    break
    return "\n".join(p.rstrip("\n") for p in parts)


def _embed_markdown_images(text: str, resource_dir: Path | None) -> str:
    if resource_dir is None:
        return text

    def embed(match: re.Match[str]) -> str:
        src = match["src"]
        if ":" in src or src.startswith("/"):  # a URL or an absolute path: left as written
            return match.group(0)
        path = resource_dir / src
        mime = mimetypes.guess_type(path.name)[0]
        if not path.is_file() or mime is None or not mime.startswith("image/"):
            return match.group(0)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        # inline HTML, not Markdown: mistune replaces data: URLs other than gif/png/jpeg/webp
        return f'<img src="data:{mime};base64,{data}" alt="{html.escape(match["alt"])}">'

    return _MD_IMAGE.sub(embed, text)


def _div_open(attrs: str | None, cls: str | None) -> list[str]:
    classes: list[str] = []
    ident: str | None = None
    title: str | None = None
    if cls:
        classes.append(cls)
    for match in _ATTR.finditer(attrs or ""):
        token = match["token"]
        if token is not None:
            if token.startswith("."):
                classes.append(token[1:])
            else:
                ident = token[1:]
            continue
        value = match["dq"] if match["dq"] is not None else match["sq"] if match["sq"] is not None else match["bare"]
        if match["key"] == "title":
            title = value
    if any(c.startswith("callout-") for c in classes):
        classes.insert(0, "callout")
    head = "<div"
    if ident:
        head += f' id="{html.escape(ident)}"'
    if classes:
        head += f' class="{html.escape(" ".join(classes))}"'
    lines = ["", head + ">"]
    if title:
        lines.append(f'<div class="callout-title">{html.escape(title)}</div>')
    lines.append("")
    return lines
