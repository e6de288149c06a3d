"""Rendering ``.qmd`` reports: the Jupyter renderer end to end, its failures, and the Quarto path
driven through a stand-in ``quarto`` executable (the real CLI cannot be installed on CI).

Quarto semantics (https://quarto.org/docs/computations/execution-options.html): ``echo: false``
hides the source, ``output: false`` the results, ``include: false`` both (the cell still runs),
``eval: false`` does not run the cell, ``warning: false`` drops warnings, ``error: false`` (the
default) halts the render on an exception. Parameters: https://quarto.org/docs/computations/parameters.html.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest
import yaml

from gatestats.report import RenderError, RenderResult, find_network_references, render_qmd, resolve_renderer
from tests.report.conftest import FIXTURE_PARAMS, copy_fixture

# --- the fixture report through the Jupyter renderer ----------------------------------------------


def test_render_result_describes_the_jupyter_render(rendered: RenderResult) -> None:
    assert rendered.renderer == "jupyter"
    assert re.fullmatch(r"nbclient \S+, nbconvert \S+", rendered.renderer_version)
    assert rendered.html_path == rendered.qmd_path.with_suffix(".html")
    # parameters cell, injected cell, 8 more code cells; the eval: false cell is not run
    assert rendered.executed_cells == 10
    assert rendered.seconds_kernel_start is not None
    assert rendered.seconds_kernel_start > 0
    assert rendered.seconds >= rendered.seconds_kernel_start
    assert json.loads(json.dumps(rendered.to_dict()))["params"] == FIXTURE_PARAMS


def test_page_uses_the_parameters_given(page: str) -> None:
    assert "<pre>PARAMS release=r-2025.01 threshold=0.75 systems=['alpha', 'beta']\n</pre>" in page
    assert "ECHO-FALSE-OUTPUT release=r-2025.01" in page
    assert "PARAMS release=r-default" not in page


def test_page_has_title_front_matter_and_renderer_line(page: str) -> None:
    assert "<title>Fixture release report</title>" in page
    assert '<h1 class="gatestats-title">Fixture release report</h1>' in page
    assert "gatestats tests · 2025-01-31" in page
    assert re.search(
        r'<p class="gatestats-renderer">Rendered by gatestats \S+ with Jupyter \(nbclient \S+, nbconvert \S+; '
        r"kernel python3, Python 3\.\d+\.\d+\)\.</p>",
        page,
    )


def test_page_honours_quarto_cell_options(page: str) -> None:
    assert "enable_offline_altair" not in page  # echo: false hides the setup cell's source
    assert "INCLUDE-FALSE-OUTPUT" not in page  # include: false hides source and output ...
    assert "HIDDEN_STATE = 41 + 1" not in page
    assert "WARNING-CELL-STDOUT hidden=42" in page  # ... but the cell ran
    assert '<span class="s2">"OUTPUT-FALSE-OUTPUT"</span>' in page  # output: false: the source is shown ...
    assert page.count("OUTPUT-FALSE-OUTPUT") == 1  # ... and the printed line is not
    assert "WARNING-FALSE-TEXT" in page  # the source of the warning: false cell is shown ...
    assert "UserWarning: WARNING-FALSE-TEXT" not in page  # ... its warning is not
    assert "UserWarning: WARNING-SHOWN-TEXT" in page  # warnings are shown by default
    assert "#|" not in page


def test_eval_false_cell_is_shown_but_not_run(rendered: RenderResult, page: str) -> None:
    assert "EVAL-FALSE-NEVER-RUN" in page
    assert "Traceback" not in page
    assert rendered.notebook is not None
    cell = next(c for c in rendered.notebook.cells if c.get("id") == "not-run")
    assert cell.outputs == []
    assert cell.execution_count is None


def test_markdown_table_and_callout_are_rendered(page: str) -> None:
    assert "<th>pass^k</th>" in page
    assert "<td>0.720</td>" in page
    assert '<div class="callout callout-note">' in page
    assert '<div class="callout-title">Verdict</div>' in page


def test_page_is_offline_and_self_contained(page: str) -> None:
    assert find_network_references(page) == []
    assert not re.search(r"<script[^>]*\bsrc=", page)
    assert not re.search(r"<link[^>]*\bhref=[\"']?(https?:)?//", page)
    assert "mathjax" not in page.lower()
    assert "require.js" not in page
    assert "require.min.js" not in page
    assert page.count('class="jp-RenderedSVG jp-OutputArea-output gatestats-chart') == 2


def test_executed_notebook_is_written_and_valid(rendered: RenderResult) -> None:
    assert rendered.notebook_path is not None
    nb = nbformat.read(rendered.notebook_path, as_version=4)
    nbformat.validate(nb)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1
    assert "release = 'r-2025.01'" in injected[0].source
    assert "INCLUDE-FALSE-OUTPUT" in json.dumps(nb)  # the notebook keeps everything that ran


# --- failures ------------------------------------------------------------------------------------

BROKEN = """---
title: Broken
---

```{python}
x = 1
```

```{python}
#| label: shown-error
#| error: true
1 / 0
```

```{python}
#| label: boom
y = {}
y["missing"]
```
"""


def test_a_cell_error_aborts_with_the_qmd_line_and_writes_no_html(tmp_path: Path) -> None:
    qmd = tmp_path / "broken.qmd"
    qmd.write_text(BROKEN, encoding="utf-8")
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(RenderError) as caught:
        render_qmd(qmd, params={}, renderer="jupyter", timeout_s=120)
    error = caught.value
    assert str(error) == (
        f"{qmd}:15: cell raised KeyError: 'missing' "
        "(add '#| error: true' to the cell to show the error in the report instead)"
    )
    assert (error.line, error.ename, error.evalue) == (15, "KeyError", "'missing'")
    assert error.traceback is not None
    assert 'y["missing"]' in error.traceback
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no HTML, no temporary file


def test_error_true_shows_the_error_and_keeps_rendering(tmp_path: Path) -> None:
    qmd = tmp_path / "shown.qmd"
    qmd.write_text(BROKEN.split("```{python}\n#| label: boom", maxsplit=1)[0], encoding="utf-8")
    result = render_qmd(qmd, params={}, renderer="jupyter", timeout_s=120)
    page = result.html_path.read_text(encoding="utf-8")
    assert "ZeroDivisionError" in page


def test_a_failed_render_leaves_an_existing_page_untouched(tmp_path: Path) -> None:
    qmd = tmp_path / "broken.qmd"
    qmd.write_text(BROKEN, encoding="utf-8")
    (tmp_path / "broken.html").write_text("previous", encoding="utf-8")
    with pytest.raises(RenderError):
        render_qmd(qmd, params={}, renderer="jupyter", timeout_s=120)
    assert (tmp_path / "broken.html").read_text(encoding="utf-8") == "previous"


def test_render_budget_stops_a_cell_that_runs_too_long(tmp_path: Path) -> None:
    # A budget of 4 s (5 s until session 43: the test waits it out): the kernel's start-up (~1 s, ~2 s on a loaded
    # machine) is inside it, so the cell itself still starts and is stopped by what is left of the budget (3 s was
    # tried: too little margin for a kernel started on a loaded machine).
    qmd = tmp_path / "slow.qmd"
    qmd.write_text("# Slow\n\n```{python}\nimport time\ntime.sleep(120)\n```\n", encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(RenderError, match=r"slow\.qmd:3: the cell did not finish within the render budget of 4 s"):
        render_qmd(qmd, params={}, renderer="jupyter", timeout_s=4)
    # The cell ran until the budget was spent, and was stopped soon after: a budget four times too loose (16 s) fails.
    assert 4 <= time.perf_counter() - started < 15
    assert not (tmp_path / "slow.html").exists()


def test_unknown_parameter_is_refused_before_anything_runs(tmp_path: Path) -> None:
    qmd = copy_fixture("report.qmd", tmp_path)
    expected = (
        "params: 'relase' is not assigned in the document's parameters cell (it assigns release, threshold, systems)"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        render_qmd(qmd, params={"relase": "x"}, renderer="jupyter")


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"renderer": "pandoc"}, "renderer must be one of auto, quarto, jupyter (got 'pandoc')"),
        ({"timeout_s": 0}, "timeout_s must be a positive number of seconds (got 0)"),
        ({"timeout_s": float("inf")}, "timeout_s must be a positive number of seconds (got inf)"),
        ({"output": "report.pdf"}, "output: expected a .html path in an existing directory (got 'report.pdf')"),
    ],
)
def test_render_arguments_are_validated(tmp_path: Path, kwargs: dict[str, object], expected: str) -> None:
    qmd = copy_fixture("report.qmd", tmp_path)
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        render_qmd(qmd, params={}, **kwargs)  # type: ignore[arg-type]


def test_render_refuses_a_page_that_loads_from_the_network(tmp_path: Path) -> None:
    qmd = tmp_path / "cdn.qmd"
    qmd.write_text(
        '# CDN\n\n```{python}\nimport altair as alt\nalt.renderers.enable("html")\n'
        'alt.Chart(alt.Data(values=[{"a": 1}])).mark_point().encode(x="a:Q")\n```\n',
        encoding="utf-8",
    )
    with pytest.raises(
        RenderError,
        match=r"the page would load \d+ resource\(s\) from the network \(<script> https://cdn\.jsdelivr\.net/npm/vega",
    ):
        render_qmd(qmd, params={}, renderer="jupyter", timeout_s=120)
    assert not (tmp_path / "cdn.html").exists()


# --- the Quarto path, through a stand-in quarto executable -----------------------------------------

FAKE_QUARTO = '''#!{python}
"""Stand-in for the quarto CLI: logs its arguments, writes the --output page in the cwd."""
import json, os, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("1.6.40")
    sys.exit(0)
log = {{"args": args, "cwd": os.getcwd()}}
if "--execute-params" in args:
    log["params_yaml"] = open(args[args.index("--execute-params") + 1]).read()
open(os.environ["FAKE_QUARTO_LOG"], "w").write(json.dumps(log))
if os.environ.get("FAKE_QUARTO_FAIL"):
    print("ERROR: something broke in cell 3", file=sys.stderr)
    sys.exit(1)
extra = os.environ.get("FAKE_QUARTO_EXTRA", "")
page = "<html><head><title>T</title>" + extra + "</head><body><main><h1>T</h1></main></body></html>"
open(args[args.index("--output") + 1], "w").write(page)
'''


@pytest.fixture
def fake_quarto(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``quarto`` on PATH that behaves like ``quarto render`` for our purposes; returns its log file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "quarto"
    script.write_text(textwrap.dedent(FAKE_QUARTO.format(python=sys.executable)), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "quarto-log.json"
    monkeypatch.setenv("FAKE_QUARTO_LOG", str(log))
    return log


def test_auto_picks_quarto_when_on_path_and_jupyter_otherwise(
    fake_quarto: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert resolve_renderer("auto") == "quarto"
    monkeypatch.setenv("PATH", "/nonexistent")
    assert resolve_renderer("auto") == "jupyter"


def test_quarto_path_passes_params_file_and_embeds_resources(fake_quarto: Path, tmp_path: Path) -> None:
    directory = tmp_path / "rep"
    directory.mkdir()
    qmd = copy_fixture("report.qmd", directory)
    result = render_qmd(qmd, params=FIXTURE_PARAMS, renderer="auto")
    log = json.loads(fake_quarto.read_text(encoding="utf-8"))
    args = log["args"]
    assert args[:4] == ["render", "report.qmd", "--to", "html"]
    assert args[args.index("-M") :] == ["-M", "embed-resources:true", "-M", "html-math-method:plain"]
    assert yaml.safe_load(log["params_yaml"]) == FIXTURE_PARAMS
    assert Path(log["cwd"]) == directory
    assert result.renderer == "quarto"
    assert result.renderer_version == "quarto 1.6.40"
    assert result.executed_cells is None
    page = result.html_path.read_text(encoding="utf-8")
    assert re.search(
        r'<p class="gatestats-renderer">Rendered by gatestats \S+ with quarto 1\.6\.40\.</p>\n</main>', page
    )
    assert sorted(p.name for p in directory.iterdir()) == ["report.html", "report.qmd"]  # temp page removed


def test_quarto_failure_is_a_render_error_with_its_stderr(
    fake_quarto: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_QUARTO_FAIL", "1")
    qmd = copy_fixture("report.qmd", tmp_path)
    with pytest.raises(
        RenderError, match=r"quarto render failed with exit status 1:\nERROR: something broke in cell 3"
    ):
        render_qmd(qmd, params={}, renderer="quarto")
    assert not (tmp_path / "report.html").exists()


def test_quarto_page_with_a_cdn_script_is_refused(
    fake_quarto: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_QUARTO_EXTRA", '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex.js"></script>')
    qmd = copy_fixture("report.qmd", tmp_path)
    with pytest.raises(RenderError, match=r"the page would load 1 resource\(s\) from the network"):
        render_qmd(qmd, params={}, renderer="quarto")
    assert not (tmp_path / "report.html").exists()


def test_notebook_output_needs_the_jupyter_renderer(fake_quarto: Path, tmp_path: Path) -> None:
    qmd = copy_fixture("report.qmd", tmp_path)
    expected = "notebook_output: the executed notebook is only available with the jupyter renderer"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        render_qmd(qmd, params={}, renderer="quarto", notebook_output=tmp_path / "x.ipynb")


def test_a_kernel_that_does_not_exist_is_a_render_error(tmp_path: Path) -> None:
    qmd = tmp_path / "nk.qmd"
    qmd.write_text("---\njupyter: no-such-kernel\n---\n\n```{python}\n1\n```\n", encoding="utf-8")
    expected = f"{qmd}: the 'no-such-kernel' kernel did not start (NoSuchKernel: No such kernel named no-such-kernel)"
    with pytest.raises(RenderError, match=f"^{re.escape(expected)}$"):
        render_qmd(qmd, params={}, renderer="jupyter", timeout_s=60)
    assert not (tmp_path / "nk.html").exists()
