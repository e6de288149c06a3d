"""Parsing ``.qmd`` documents and turning them into notebooks with injected parameters.

Quarto semantics checked here (https://quarto.org/docs/computations/execution-options.html,
https://quarto.org/docs/computations/parameters.html): ``#|`` lines at the top of a cell are YAML
options; ``execute:`` in the front matter sets document defaults; the cell tagged ``parameters`` is
followed by an injected cell tagged ``injected-parameters`` (papermill's convention).
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatestats.report import (
    QmdError,
    execution_options,
    parse_qmd,
    read_qmd,
    strip_option_lines,
    to_notebook,
    validate_params,
)
from tests.report.conftest import FIXTURES

DOC = """---
title: "A report"
execute:
  echo: false
---

# Heading

```{python}
#| tags: [parameters]
alpha = 0.1
name: str = "x"
```

Text with a fence:

````markdown
```{python}
this is not a cell
```
````

```{python}
#| label: fig-a
#| echo: true
#| fig-cap: |
#|   A caption
#|   on two lines
print(alpha)
```
"""


def test_parse_splits_front_matter_markdown_and_code_cells_with_their_lines() -> None:
    doc = parse_qmd(DOC, file="doc.qmd")
    assert doc.title == "A report"
    assert [(c.kind, c.line) for c in doc.cells] == [
        ("markdown", 7),
        ("code", 9),
        ("markdown", 15),
        ("code", 23),
    ]
    assert "this is not a cell" in doc.cells[2].source  # a ```{python} inside a ```` fence is text
    figure = doc.cells[3]
    assert dict(figure.options) == {"label": "fig-a", "echo": True, "fig-cap": "A caption\non two lines"}
    assert figure.code == "print(alpha)"
    assert figure.source.startswith("#| label: fig-a")


def test_execution_options_layer_defaults_front_matter_and_cell() -> None:
    doc = parse_qmd(DOC, file="doc.qmd")
    parameters, figure = doc.cells[1], doc.cells[3]
    assert execution_options(doc, parameters)["echo"] is False  # front matter execute: echo: false
    assert execution_options(doc, figure)["echo"] is True  # the cell's own option wins
    assert execution_options(doc, figure)["error"] is False  # Quarto's default: errors halt


def test_parameter_names_are_the_top_level_assignments_of_the_parameters_cell() -> None:
    assert parse_qmd(DOC).parameter_names() == ("alpha", "name")
    assert parse_qmd("# no parameters\n").parameter_names() == ()


def test_strip_option_lines_keeps_comments_that_are_not_options() -> None:
    assert strip_option_lines("#| echo: false\n# a comment\nx = 1") == "# a comment\nx = 1"
    assert strip_option_lines("x = 1\n#| echo: false") == "x = 1\n#| echo: false"


def test_fixture_report_parses_with_every_option_the_renderer_honours() -> None:
    doc = read_qmd(FIXTURES / "report.qmd")
    seen = {key: value for cell in doc.cells for key, value in cell.options.items()}
    for option in ("echo", "include", "output", "eval", "warning"):
        assert seen[option] is False
    assert doc.parameter_names() == ("release", "threshold", "systems")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "# t\n```{python}\nx = 1\n",
            "bad.qmd:2: code cell opened with ```{python} is never closed (expected ```)",
        ),
        (
            "---\ntitle: a\nauthor: [b\n---\n",
            "bad.qmd:3: front matter is not valid YAML (expected ',' or ']', but got '<stream end>')",
        ),
        ("---\ntitle: a\n", "bad.qmd:1: front matter opened with '---' is never closed (expected '---' or '...')"),
        ("---\n- a\n---\n", "bad.qmd:2: front matter must be a YAML mapping of key: value (got list)"),
        (
            "x\n\n```{python}\n#| echo: false\n#| label: [a\nprint(1)\n```\n",
            "bad.qmd:5: cell options ('#|' lines) is not valid YAML (expected ',' or ']', but got '<stream end>')",
        ),
        (
            "```{python}\n#| echo: maybe\n1\n```\n",
            "bad.qmd:2: cell option 'echo' must be true or false or fenced (got 'maybe')",
        ),
        (
            "---\nexecute:\n  warning: 0\n---\n",
            "bad.qmd:2: cell option 'warning' must be true or false (got 0)",
        ),
        (
            "a\n```{r}\n1\n```\n",
            "bad.qmd:2: code cell in language 'r': the Jupyter engine runs only ```{python} cells",
        ),
        (
            "```{python echo=FALSE}\n1\n```\n",
            "bad.qmd:1: chunk options in the cell header ('echo=FALSE') are not supported: "
            "write them as '#| key: value' lines",
        ),
    ],
)
def test_parse_errors_name_the_file_and_line(text: str, expected: str) -> None:
    with pytest.raises(QmdError, match=f"^{re.escape(expected)}$") as caught:
        parse_qmd(text, file="bad.qmd")
    assert caught.value.line == int(expected.split(":")[1])


def test_parameters_cell_with_a_syntax_error_is_reported_at_its_line() -> None:
    doc = parse_qmd("# t\n\n```{python}\n#| tags: [parameters]\nalpha = = 1\n```\n", file="p.qmd")
    with pytest.raises(QmdError, match=r"^p\.qmd:5: the parameters cell is not valid Python \(invalid syntax\)$"):
        doc.parameter_names()


def test_read_qmd_names_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.qmd"
    with pytest.raises(QmdError, match=f"^{re.escape(str(missing))}: no such file \\(expected a .qmd document\\)$"):
        read_qmd(missing)


def test_to_notebook_injects_parameters_right_after_the_parameters_cell() -> None:
    doc = parse_qmd(DOC, file="doc.qmd")
    nb = to_notebook(doc, {"alpha": 0.5, "name": "it's"})
    nbformat.validate(nb)
    kinds = [(c.cell_type, c.metadata.get("tags")) for c in nb.cells]
    assert kinds == [
        ("raw", None),  # the front matter, as Quarto's own .qmd -> .ipynb conversion keeps it
        ("markdown", None),
        ("code", ["parameters"]),
        ("code", ["injected-parameters"]),
        ("markdown", None),
        ("code", None),
    ]
    assert nb.cells[3].source == '# Parameters\nalpha = 0.5\nname = "it\'s"\n'
    assert nb.cells[1].source == doc.cells[0].source  # Markdown unchanged
    assert nb.cells[5].id == "fig-a"  # the label becomes the cell id
    assert nb.cells[3].metadata["gatestats"] == nb.cells[2].metadata["gatestats"]  # inherits options
    assert nb.cells[5].metadata["gatestats"]["qmd_line"] == 23
    assert nb.metadata["kernelspec"]["name"] == "python3"


def test_to_notebook_injects_at_the_top_without_a_parameters_cell_like_papermill() -> None:
    nb = to_notebook(parse_qmd("# t\n```{python}\n1\n```\n"), {"x": 1})
    assert [c.metadata.get("tags") for c in nb.cells] == [["injected-parameters"], None, None]


def test_to_notebook_is_deterministic() -> None:
    doc = parse_qmd(DOC)
    assert nbformat.writes(to_notebook(doc, {"alpha": 1})) == nbformat.writes(to_notebook(doc, {"alpha": 1}))


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"not valid": 1}, "params: 'not valid' is not a Python identifier (expected a variable name)"),
        ({"class": 1}, "params: 'class' is not a Python identifier (expected a variable name)"),
        ({"alpha": float("nan")}, "params['alpha']: expected a finite number (got nan)"),
        ({"alpha": {1: 2}}, "params['alpha']: dict keys must be str (got 1)"),
        (
            {"alpha": [1, object()]},
            "params['alpha'][1]: expected a JSON-able value (None, bool, int, float, str, list, dict; got object)",
        ),
        ({"beta": 1}, "params: 'beta' is not assigned in the document's parameters cell (it assigns alpha, name)"),
    ],
)
def test_validate_params_rejects_what_cannot_be_injected(params: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        validate_params(params, allowed=("alpha", "name"))


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)
_NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(lambda n: not keyword.iskeyword(n))


@given(st.dictionaries(_NAMES, _JSON, min_size=1, max_size=5))
def test_injected_cell_assigns_exactly_the_given_values(params: dict[str, Any]) -> None:
    nb = to_notebook(parse_qmd("```{python}\n#| tags: [parameters]\nx = 0\n```\n"), params)
    namespace: dict[str, Any] = {}
    exec(nb.cells[1].source, namespace)  # the injected cell is plain Python literals
    assert {name: namespace[name] for name in params} == params
