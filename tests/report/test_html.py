"""The export step without a kernel: Quarto output options on an executed notebook, Quarto Markdown,
the offline template and the network-reference finder.

Quarto's Jupyter engine treats stderr streams as warnings (``isWarningOutput`` in quarto-cli
``src/core/jupyter/jupyter.ts``: ``output_type == "stream" && name == "stderr"``), which is what
``warning: false`` drops here.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.report import find_network_references, parse_qmd, to_notebook
from gatestats.report.quarto._html import (
    _CSS_EXTERNAL,
    _new_exporter,
    export_html,
    prepare_for_export,
    quarto_markdown,
)
from tests.deadline import passes_within
from tests.hypothesis_counts import examples

SVG = '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="5"/></svg>'


def _executed(options: str) -> nbformat.NotebookNode:
    """A one-code-cell notebook whose cell 'ran' and printed, warned and drew an SVG."""
    nb = to_notebook(parse_qmd(f"# T\n\n```{{python}}\n{options}print('hi')\n```\n"))
    cell = nb.cells[-1]
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="STDOUT-TEXT\n"),
        nbformat.v4.new_output("stream", name="stderr", text="STDERR-TEXT\n"),
        nbformat.v4.new_output("display_data", data={"image/svg+xml": SVG, "text/plain": "<chart>"}),
    ]
    return nb


def _page(nb: nbformat.NotebookNode) -> str:
    """The exported page's body (the inline CSS before it mentions class names and words like 'print')."""
    page = export_html(prepare_for_export(nb), title="T", renderer_line="RENDERER-LINE", generator="test")
    return page[page.index("<main>") :]


def test_default_options_show_source_outputs_and_warnings() -> None:
    page = _page(_executed(""))
    assert "STDOUT-TEXT" in page
    assert "STDERR-TEXT" in page
    assert "print" in page
    assert "RENDERER-LINE" in page


@pytest.mark.parametrize(
    ("options", "absent", "present"),
    [
        ("#| echo: false\n", ["print"], ["STDOUT-TEXT", "STDERR-TEXT", "gatestats-chart"]),
        ("#| output: false\n", ["STDOUT-TEXT", "STDERR-TEXT", "gatestats-chart"], ["print"]),
        ("#| warning: false\n", ["STDERR-TEXT"], ["STDOUT-TEXT", "print", "gatestats-chart"]),
        ("#| include: false\n", ["STDOUT-TEXT", "STDERR-TEXT", "print", "gatestats-chart"], []),
    ],
)
def test_quarto_output_options_are_applied(options: str, absent: list[str], present: list[str]) -> None:
    page = _page(_executed(options))
    for text in absent:
        assert text not in page, text
    for text in present:
        assert text in page, text
    assert "#|" not in page  # option lines never shown


def test_output_asis_turns_stdout_into_markdown() -> None:
    nb = _executed("#| output: asis\n#| echo: false\n")
    nb.cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="| a | b |\n|---|---|\n| 1 | 2 |\n")]
    page = _page(nb)
    assert "<td>1</td>" in page
    assert "| a | b |" not in page


def test_svg_outputs_are_inlined_in_a_chart_container_with_the_cell_label() -> None:
    nb = _executed("#| label: fig-x\n")
    page = _page(nb)
    assert 'data-chart-id="fig-x-1"' in page
    assert "<?xml" not in page  # prologue removed so the SVG can be inline
    assert re.search(r'<div [^>]*gatestats-chart[^>]*>\s*<svg [^>]*><rect [^>]*height="5"', page)


def test_exported_page_has_no_network_reference_and_no_script_tag() -> None:
    nb = _executed("")
    page = export_html(prepare_for_export(nb), title="T", renderer_line="r", generator="g")
    assert find_network_references(page) == []
    assert "<script" not in page  # no require.js, MathJax or Mermaid loader, inline or not


_WIDGET = "application/vnd.jupyter.widget-view+json"


def _page_of_a_fresh_exporter(nb: nbformat.NotebookNode, *, title: str, renderer_line: str) -> str:
    """The page as ``export_html`` made it before session 46, with an exporter of its own (the oracle)."""
    exporter = _new_exporter()
    gatestats = {"title": title, "subtitle": None, "byline": None, "renderer_line": renderer_line, "generator": "g"}
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}, "gatestats": gatestats})
    return str(body)


def test_pages_exported_one_after_the_other_are_each_what_a_fresh_exporter_makes() -> None:
    """export_html keeps one exporter per process: no page's title, code language, options or notebook metadata
    may carry into the next (the widget state is looked up by title: the second page, titled alike, has none)."""
    with_state, without = _executed(""), _executed("#| warning: false\n")
    for nb in (with_state, without):
        view = {"model_id": "m1", "version_major": 2, "version_minor": 0}
        nb.cells[-1].outputs.append(
            nbformat.v4.new_output("display_data", data={_WIDGET: view, "text/plain": "W-TEXT"})
        )
    with_state.metadata["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {"state": {"m1": {}}, "version_major": 2, "version_minor": 0}
    }
    with_state.metadata["language_info"] = {"name": "python", "pygments_lexer": "ipython3"}
    without.metadata["language_info"] = {"name": "r", "pygments_lexer": "r"}
    pages = [(prepare_for_export(nb), title) for nb in (with_state, without) for title in ("T", "<b>x</b> & 'y'")]
    expected = [_page_of_a_fresh_exporter(nb, title=title, renderer_line=title) for nb, title in pages]
    assert len(set(expected)) == 4
    assert ["W-TEXT" in page for page in expected] == [False, False, True, True]
    for _ in range(2):
        got = [export_html(nb, title=title, renderer_line=title, generator="g") for nb, title in pages]
        assert got == expected


def test_markdown_images_are_embedded_as_data_uris(tmp_path: Path) -> None:
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    )
    (tmp_path / "dot.png").write_bytes(png)
    nb = to_notebook(parse_qmd("![a dot](dot.png)\n"))
    page = export_html(prepare_for_export(nb, resource_dir=tmp_path), title="T", renderer_line="r", generator="g")
    assert 'src="data:image/png;base64,' in page
    assert "dot.png" not in page


def test_quarto_markdown_fenced_divs_raw_blocks_and_heading_attributes() -> None:
    text = "## Results {#sec-results .unnumbered}\n\n::: warning\nCareful.\n:::\n\n```{=html}\n<b>raw</b>\n```\n"
    out = quarto_markdown(text)
    assert "## Results" in out
    assert "{#sec-results" not in out
    assert '<div class="warning">' in out
    assert "<b>raw</b>" in out
    assert "{=html}" not in out


def test_quarto_markdown_leaves_code_blocks_alone() -> None:
    text = "```\n::: {.callout-note}\n## H {#x}\n```"
    assert quarto_markdown(text) == text


@pytest.mark.parametrize(
    ("page", "found"),
    [
        ('<link rel="stylesheet" href="https://cdn.x/a.css">', ['<link href="https://cdn.x/a.css">']),
        ('<script src="//cdn.x/a.js"></script>', ['<script src="//cdn.x/a.js">']),
        ('<img src="http://x/a.png">', ['<img src="http://x/a.png">']),
        ("<style>@import 'https://fonts.x/css';</style>", ["@import 'https://fonts.x/css"]),
        ('<div style="background: url(https://x/bg.png)"></div>', ["url(https://x/bg.png"]),
        ('<svg><image href="https://x/i.png"/></svg>', ['<image href="https://x/i.png">']),
        (
            '<script>s.src = "https://cdn.jsdelivr.net/npm/vega@6";</script>',
            ["<script> https://cdn.jsdelivr.net/npm/vega@6"],
        ),
        ('<a href="https://quarto.org">docs</a><script>var a = 1; // see https://x</script>', []),
        ('<img src="data:image/png;base64,AAAA">', []),
    ],
)
def test_find_network_references(page: str, found: list[str]) -> None:
    assert find_network_references(page) == found


#: The CSS pattern before session 44 (the oracle): ``\s*['"]?\s*`` after ``url(`` split a run of spaces two ways
#: at every point, so a ``url(`` and 8,000 spaces took 3 s (the page scan is public: ``find_network_references``).
_OLD_CSS_EXTERNAL = re.compile(r"(?:url\(\s*['\"]?\s*|@import\s+['\"])(?:https?:)?//[^'\")\s;]*", re.IGNORECASE)
_CSS_PIECES = ["url(", "URL(", "@import", " ", "\t", "\n", "'", '"', "//", "http:", "https:", "x", ";", ")", "/"]
#: A reference as the patterns read it, each part drawn on its own (issue 28, item 3, session 47): texts of loose
#: pieces alone reached a whitespace run before a quote, or ``@import`` and two spaces, too rarely - the session-44
#: planted break (the quote's own ``\s*`` dropped) was missed in 12 of 40 runs at 2,000 texts. Drawn as parts and
#: mixed with the pieces, each of three breaks (that one, ``https?:`` as ``https:``, ``@import\s+`` as ``@import\s``)
#: failed 40 of 40 runs at 500 texts and 37-40 of 40 at the inner loop's 125 (benchmarks/RESULTS.md, session 47).
_CSS_REFERENCES = st.tuples(
    st.sampled_from(["url(", "URL(", "Url(", "@import", "@IMPORT"]),
    st.sampled_from(["", " ", "  ", "\t\n", " \n "]),
    st.sampled_from(["", "'", '"']),
    st.sampled_from(["", "", " ", "\t "]),
    st.sampled_from(["", "http:", "https:", "HTTP:", "Https:", "ftp:", "http", "https"]),
    st.sampled_from(["//", "//", "/", ""]),
    st.sampled_from(["", "x", "x/y.png", "x y", "x;", "x)", "x'", 'x"']),
).map("".join)


@given(st.lists(st.one_of(_CSS_REFERENCES, st.sampled_from(_CSS_PIECES)), max_size=8).map("".join))
@settings(max_examples=examples(500))
def test_the_css_reference_pattern_finds_what_the_old_pattern_found(text: str) -> None:
    assert [m.span() for m in _CSS_EXTERNAL.finditer(text)] == [m.span() for m in _OLD_CSS_EXTERNAL.finditer(text)]


def test_a_style_of_url_and_a_million_spaces_is_scanned_in_linear_time() -> None:
    # Run in a child with a deadline hundreds of times what it takes (~0.2 s), so a pattern that backtracks again
    # fails here instead of holding the suite.
    script = (
        "from gatestats.report import find_network_references as f\n"
        "s = ' ' * 1_000_000\n"
        "assert f('<div style=\"background: url(' + s + '\"></div>') == []\n"
        "assert f('<style>a { b: url(' + s + '\"' + s + '); }</style>') == []\n"
        "assert f('<style>a { b: url(' + s + '\"' + s + '//x/y.png\"); }</style>') == ['url(' + s + '\"' + s + '//x/y.png']\n"
    )
    passes_within(script)
