"""Quarto ``.qmd`` documents: parse them, and turn them into Jupyter notebooks with parameters.

A ``.qmd`` file is YAML front matter, Markdown, and executable code cells fenced as
```` ```{python} ```` whose leading ``#| key: value`` lines are Quarto cell options (YAML). This module
reads that structure into a frozen :class:`QmdDocument` and converts it, with parameter values, to
an nbformat v4 notebook the way Quarto's Jupyter engine does (papermill's parameter injection):
the cell tagged ``parameters`` is followed by a cell tagged ``injected-parameters`` that assigns
the given values.

Execution options honoured downstream (:mod:`gatestats.report.quarto.render`), with Quarto's defaults:
``eval`` (true), ``echo`` (true), ``output`` (true; ``asis`` treats the output as Markdown),
``include`` (true), ``warning`` (true), ``error`` (false: an error halts rendering). Document-wide
defaults come from the front matter's ``execute:`` mapping, overridden per cell.

References
----------
- Quarto, "Execution Options", https://quarto.org/docs/computations/execution-options.html
- Quarto, "Code Cells: Jupyter", https://quarto.org/docs/reference/cells/cells-jupyter.html
- Quarto, "Parameters", https://quarto.org/docs/computations/parameters.html (Jupyter: papermill's
  ``parameters`` tag, an injected cell overriding the defaults; ``-P key:value`` or
  ``--execute-params file.yml`` on the command line).
- papermill, "Parameterize", https://papermill.readthedocs.io/en/latest/usage-parameterize.html
"""

from __future__ import annotations

import ast
import keyword
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, cast

import nbformat
import yaml  # type: ignore[import-untyped]

from gatestats._typing import JSONObject
from gatestats.errors import GatestatsError

__all__ = [
    "EXECUTION_OPTIONS",
    "CellKind",
    "QmdCell",
    "QmdDocument",
    "QmdError",
    "execution_options",
    "parse_qmd",
    "read_qmd",
    "strip_option_lines",
    "to_notebook",
    "validate_params",
]

CellKind: TypeAlias = Literal["markdown", "code"]

#: Quarto's execution options and their defaults for HTML output (see the module references).
EXECUTION_OPTIONS: Mapping[str, bool] = MappingProxyType(
    {"eval": True, "echo": True, "output": True, "include": True, "warning": True, "error": False}
)
#: Values other than booleans that Quarto accepts (``echo: fenced`` is shown like ``echo: true``).
_EXTRA_VALUES: Mapping[str, tuple[str, ...]] = MappingProxyType({"echo": ("fenced",), "output": ("asis",)})

_CELL_OPEN = re.compile(r"^(?P<fence>`{3,})\s*\{(?P<lang>[^}\s]*)(?P<rest>[^}]*)\}\s*$")
_MD_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})")
_OPTION_LINE = re.compile(r"^#\|(?: |$)?(?P<text>.*)$")
_CELL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_FRONT_MATTER_END = ("---", "...")


class _LocatedError(GatestatsError):
    """An error at a place of a ``.qmd``: ``file`` and its 1-based ``line`` (``None``: the whole file)."""

    def __init__(self, file: str, line: int | None, message: str) -> None:
        self.file = file
        self.line = line
        self.message = message
        where = file if line is None else f"{file}:{line}"
        super().__init__(f"{where}: {message}")


class QmdError(_LocatedError, ValueError):
    """A ``.qmd`` document cannot be read: the message names the file and the 1-based line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class QmdCell:
    """One chunk of a ``.qmd``: Markdown text or an executable code cell.

    ``line`` is the 1-based line where the chunk starts (for code: the opening fence). ``source`` is
    the code as written, option lines included (Python ignores ``#|`` comments, and Quarto reads
    them again from a notebook); ``code`` is the same without the leading option lines.
    ``options`` are the cell's own ``#|`` options (YAML-parsed), before document defaults.
    """

    kind: CellKind
    line: int
    source: str
    language: str | None = None
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def code(self) -> str:
        """The cell's source without its leading ``#|`` option lines."""
        return strip_option_lines(self.source) if self.kind == "code" else self.source

    @property
    def tags(self) -> tuple[str, ...]:
        """The cell's ``tags`` option (e.g. ``("parameters",)``)."""
        tags = self.options.get("tags", ())
        return tuple(str(t) for t in tags)

    def to_dict(self) -> JSONObject:
        """Plain dict (options copied).

        Returns
        -------
        JSONObject
            ``kind``, ``line``, ``source``, ``language`` and a copy of ``options``.
        """
        return {
            "kind": self.kind,
            "line": self.line,
            "source": self.source,
            "language": self.language,
            "options": dict(self.options),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class QmdDocument:
    """A parsed ``.qmd``: front matter, then Markdown and code cells in document order."""

    file: str
    front_matter: Mapping[str, Any]
    front_matter_text: str | None
    cells: tuple[QmdCell, ...]

    @property
    def title(self) -> str | None:
        """The front matter's ``title`` (``None`` when absent)."""
        title = self.front_matter.get("title")
        return None if title is None else str(title)

    @property
    def parameters_cell(self) -> QmdCell | None:
        """The first code cell tagged ``parameters`` (``None`` when there is none)."""
        return next((c for c in self.cells if c.kind == "code" and "parameters" in c.tags), None)

    def parameter_names(self) -> tuple[str, ...]:
        """Names assigned at top level in the ``parameters`` cell, in order (empty without one).

        Returns
        -------
        tuple[str, ...]
            The names the parameters cell assigns (empty without one).

        Raises
        ------
        QmdError
            The parameters cell is not valid Python (file and line named).
        """
        cell = self.parameters_cell
        if cell is None:
            return ()
        try:
            tree = ast.parse(cell.source)
        except SyntaxError as exc:
            line = cell.line + (exc.lineno or 1)
            raise QmdError(self.file, line, f"the parameters cell is not valid Python ({exc.msg})") from None
        names: list[str] = []
        for node in tree.body:
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            else:
                continue
            for target in targets:
                if isinstance(target, ast.Name) and target.id not in names:
                    names.append(target.id)
        return tuple(names)

    def to_dict(self) -> JSONObject:
        """Plain dict (front matter and cells copied).

        Returns
        -------
        JSONObject
            ``file``, a copy of ``front_matter`` and ``cells`` (each :meth:`QmdCell.to_dict`).
        """
        return {
            "file": self.file,
            "front_matter": dict(self.front_matter),
            "cells": [c.to_dict() for c in self.cells],
        }


def read_qmd(path: str | os.PathLike[str]) -> QmdDocument:
    """Read and parse a ``.qmd`` file (UTF-8). Errors name the file and line.

    Parameters
    ----------
    path : str or PathLike
        The ``.qmd`` file.

    Returns
    -------
    QmdDocument
        The parsed document (:func:`parse_qmd`), its ``file`` the path.

    Raises
    ------
    QmdError
        The file is missing or not UTF-8 (file named), or its text fails :func:`parse_qmd`.
    """
    file = Path(path)
    if not file.is_file():
        raise QmdError(str(file), None, "no such file (expected a .qmd document)")
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise QmdError(str(file), None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_qmd(text, file=str(file))


def parse_qmd(text: str, *, file: str = "<string>") -> QmdDocument:
    """Parse ``.qmd`` text into front matter, Markdown chunks and ```` ```{python} ```` cells.

    Parameters
    ----------
    text : str
        The document.
    file : str
        Name used in error messages.

    Returns
    -------
    QmdDocument

    Raises
    ------
    QmdError
        Unclosed front matter or code fence, front matter or ``#|`` options that are not a YAML
        mapping, a non-boolean execution option, a code cell in another language than Python.

    Examples
    --------
    >>> doc = parse_qmd('---\\ntitle: T\\n---\\n# Hi\\n```{python}\\n#| echo: false\\n1 + 1\\n```\\n')
    >>> doc.title, [(c.kind, c.line) for c in doc.cells]
    ('T', [('markdown', 4), ('code', 5)])
    >>> dict(doc.cells[1].options), doc.cells[1].code
    ({'echo': False}, '1 + 1')
    """
    if not isinstance(text, str):
        msg = f"text must be a str (got {type(text).__name__})"
        raise TypeError(msg)
    lines = text.splitlines()
    front_matter, front_matter_text, start = _front_matter(lines, file)
    cells: list[QmdCell] = []
    markdown: list[str] = []
    markdown_line = start + 1
    md_fence: str | None = None
    index = start
    while index < len(lines):
        line = lines[index]
        if md_fence is not None:
            markdown.append(line)
            if _closes(line.strip(), md_fence):
                md_fence = None
            index += 1
            continue
        opening = _CELL_OPEN.match(line)
        if opening is None or opening["lang"].startswith("="):
            # Markdown; a fence there, or a raw block (```{=html}), is Markdown up to its close, not executed
            fence = _MD_FENCE.match(line) if opening is None else opening
            if fence is not None:
                md_fence = fence["fence"]
            if not markdown:
                markdown_line = index + 1
            markdown.append(line)
            index += 1
            continue
        _flush_markdown(cells, markdown, markdown_line)
        markdown = []
        cell, index = _code_cell(lines, index, opening, file)
        cells.append(cell)
    _flush_markdown(cells, markdown, markdown_line)
    return QmdDocument(
        file=file,
        front_matter=MappingProxyType(front_matter),
        front_matter_text=front_matter_text,
        cells=tuple(cells),
    )


def strip_option_lines(source: str) -> str:
    """Remove the leading ``#|`` option lines (and the blank lines right after them).

    Parameters
    ----------
    source
        A code cell's source.

    Returns
    -------
    str
        The source without its option lines.

    Examples
    --------
    >>> strip_option_lines("#| echo: false\\n#| label: a\\n\\nx = 1")
    'x = 1'
    """
    lines = source.splitlines()
    index = 0
    while index < len(lines) and _OPTION_LINE.match(lines[index]):
        index += 1
    if index:
        while index < len(lines) and not lines[index].strip():
            index += 1
    return "\n".join(lines[index:])


def execution_options(doc: QmdDocument, cell: QmdCell) -> dict[str, object]:
    """Effective Quarto execution options of a code cell: defaults < front matter ``execute:`` < cell.

    Parameters
    ----------
    doc
        The document (its front matter's ``execute:`` defaults).
    cell
        A code cell of ``doc``.

    Returns
    -------
    dict[str, object]
        Every option of :data:`EXECUTION_OPTIONS` with its effective value.

    Examples
    --------
    >>> doc = parse_qmd('---\\nexecute:\\n  echo: false\\n---\\n```{python}\\n#| warning: false\\n1\\n```\\n')
    >>> execution_options(doc, doc.cells[0])
    {'eval': True, 'echo': False, 'output': True, 'include': True, 'warning': False, 'error': False}
    """
    options: dict[str, object] = dict(EXECUTION_OPTIONS)
    defaults = doc.front_matter.get("execute")
    if isinstance(defaults, Mapping):
        options.update({k: v for k, v in defaults.items() if k in EXECUTION_OPTIONS})
    options.update({k: v for k, v in cell.options.items() if k in EXECUTION_OPTIONS})
    return options


def validate_params(params: Mapping[str, Any], *, allowed: tuple[str, ...] | None = None) -> JSONObject:
    """Check parameter values before they are injected: identifiers as names, JSON-able values.

    Parameters
    ----------
    params : Mapping[str, Any]
        Parameter name → value (``None``, bool, int, finite float, str, and lists / str-keyed
        dicts of those).
    allowed : tuple of str, optional
        Names the document's ``parameters`` cell assigns; any other name is an error.

    Returns
    -------
    dict
        A plain copy of ``params``.

    Raises
    ------
    TypeError
        ``params`` is not a mapping.
    ValueError
        A name is not a Python identifier, or not one of ``allowed``.

    Examples
    --------
    >>> validate_params({"release": "r1", "ks": [1, 2]}, allowed=("release", "ks"))
    {'release': 'r1', 'ks': [1, 2]}
    """
    if not isinstance(params, Mapping):
        msg = f"params must be a mapping of parameter name to value (got {type(params).__name__})"
        raise TypeError(msg)
    for name, value in params.items():
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            msg = f"params: {name!r} is not a Python identifier (expected a variable name)"
            raise ValueError(msg)
        _check_json_value(value, f"params[{name!r}]")
        if allowed is not None and name not in allowed:
            assigned = ", ".join(allowed) if allowed else "nothing: there is no cell tagged parameters"
            msg = f"params: {name!r} is not assigned in the document's parameters cell (it assigns {assigned})"
            raise ValueError(msg)
    return dict(params)


def to_notebook(doc: QmdDocument, params: Mapping[str, Any] | None = None) -> nbformat.NotebookNode:
    """Convert a parsed ``.qmd`` into an nbformat v4 notebook, injecting parameter values.

    The notebook follows Quarto's own ``.qmd`` ↔ ``.ipynb`` mapping: the front matter is a first
    raw cell, Markdown chunks are Markdown cells (unchanged), code cells keep their ``#|`` lines.
    With ``params``, a code cell tagged ``injected-parameters`` assigning ``name = repr(value)`` is
    inserted right after the cell tagged ``parameters`` (at the top when there is none), as
    papermill and Quarto do. Code cells carry ``metadata["gatestats"] = {"qmd_line", "options"}``:
    the line of the cell in the ``.qmd`` and its effective execution options (the injected cell
    inherits those of the parameters cell). Cell ids are the ``label`` option when it is a valid id,
    else ``cell-<index>`` (deterministic notebooks).

    Parameters
    ----------
    doc : QmdDocument
    params : Mapping[str, Any], optional
        Validated with :func:`validate_params` (names are not checked against the parameters cell).

    Returns
    -------
    nbformat.NotebookNode

    Raises
    ------
    TypeError
        ``doc`` is not a :class:`QmdDocument`.
    ValueError
        ``params`` fails :func:`validate_params`.

    Examples
    --------
    >>> doc = parse_qmd('```{python}\\n#| tags: [parameters]\\nalpha = 0.1\\n```\\n')
    >>> nb = to_notebook(doc, {"alpha": 0.2})
    >>> [(c.cell_type, c.metadata.get("tags")) for c in nb.cells]
    [('code', ['parameters']), ('code', ['injected-parameters'])]
    >>> nb.cells[1].source
    '# Parameters\\nalpha = 0.2\\n'
    """
    if not isinstance(doc, QmdDocument):
        msg = f"doc must be a QmdDocument (got {type(doc).__name__})"
        raise TypeError(msg)
    values = validate_params(params or {})
    nb = _nb_new("notebook")
    kernel = doc.front_matter.get("jupyter")
    kernel_name = kernel if isinstance(kernel, str) else "python3"
    nb.metadata["kernelspec"] = {"name": kernel_name, "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    if doc.title is not None:
        nb.metadata["title"] = doc.title
    cells: list[nbformat.NotebookNode] = []
    if doc.front_matter_text is not None:
        cells.append(_nb_new("raw_cell", f"---\n{doc.front_matter_text}\n---"))
    injected = _injected_cell(values) if values else None
    parameters = doc.parameters_cell
    if injected is not None and parameters is None:
        injected.metadata["gatestats"] = {"qmd_line": None, "options": dict(EXECUTION_OPTIONS)}
        cells.append(injected)
    used_ids: set[str] = set()
    for cell in doc.cells:
        if cell.kind == "markdown":
            cells.append(_nb_new("markdown_cell", cell.source))
            continue
        cells.append(_notebook_code_cell(doc, cell, used_ids))
        if injected is not None and cell is parameters:
            injected.metadata["gatestats"] = {"qmd_line": cell.line, "options": execution_options(doc, cell)}
            cells.append(injected)
    _number_cells(cells, used_ids)
    nb.cells = cells
    return nb


def _notebook_code_cell(doc: QmdDocument, cell: QmdCell, used_ids: set[str]) -> nbformat.NotebookNode:
    """The notebook cell of a code chunk; its ``label`` becomes its id when valid and unused (added to ``used_ids``)."""
    node = _nb_new("code_cell", cell.source)
    if cell.tags:
        node.metadata["tags"] = list(cell.tags)
    label = cell.options.get("label")
    if isinstance(label, str) and _CELL_ID.match(label) and label not in used_ids:
        node.id = label
        used_ids.add(label)
    node.metadata["gatestats"] = {"qmd_line": cell.line, "options": execution_options(doc, cell)}
    return node


def _number_cells(cells: list[nbformat.NotebookNode], used_ids: set[str]) -> None:
    """Give every cell without a label id (or the injected one) the id ``cell-<index>``."""
    for index, node in enumerate(cells):
        if node.get("id") not in used_ids and node.get("id") != "injected-parameters":
            candidate = f"cell-{index}"
            while candidate in used_ids:
                candidate += "-"
            node.id = candidate


# --- internals ----------------------------------------------------------------------------------


def _front_matter(lines: list[str], file: str) -> tuple[dict[str, object], str | None, int]:
    if not lines or lines[0].rstrip() != "---":
        return {}, None, 0
    for end in range(1, len(lines)):
        if lines[end].rstrip() in _FRONT_MATTER_END:
            break
    else:
        raise QmdError(file, 1, "front matter opened with '---' is never closed (expected '---' or '...')")
    body = "\n".join(lines[1:end])
    data = _load_yaml(body, file=file, first_line=2, what="front matter")
    execute = data.get("execute")
    if execute is not None:
        line = next((i + 1 for i in range(1, end) if lines[i].startswith("execute:")), 1)
        if not isinstance(execute, dict):
            raise QmdError(file, line, f"front matter 'execute' must be a mapping of options (got {execute!r})")
        _check_options(execute, file=file, line=line)
    return data, body, end + 1


def _load_yaml(text: str, *, file: str, first_line: int, what: str) -> dict[str, object]:
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + mark.line if mark is not None else first_line
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise QmdError(file, line, f"{what} is not valid YAML ({problem})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise QmdError(file, first_line, f"{what} must be a YAML mapping of key: value (got {type(data).__name__})")
    return data


def _closes(stripped: str, fence: str) -> bool:
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def _flush_markdown(cells: list[QmdCell], markdown: list[str], line: int) -> None:
    while markdown and not markdown[0].strip():
        markdown.pop(0)
        line += 1
    while markdown and not markdown[-1].strip():
        markdown.pop()
    if markdown:
        cells.append(QmdCell(kind="markdown", line=line, source="\n".join(markdown)))


def _code_cell(lines: list[str], index: int, opening: re.Match[str], file: str) -> tuple[QmdCell, int]:
    first = index + 1  # 1-based line of the opening fence
    fence, language, rest = opening["fence"], opening["lang"], opening["rest"].strip()
    if language != "python":
        msg = f"code cell in language {language!r}: the Jupyter engine runs only ```{{python}} cells"
        raise QmdError(file, first, msg)
    if rest:
        msg = f"chunk options in the cell header ({rest!r}) are not supported: write them as '#| key: value' lines"
        raise QmdError(file, first, msg)
    end = index + 1
    while end < len(lines) and not (lines[end].startswith("`") and _closes(lines[end].strip(), fence)):
        end += 1
    if end == len(lines):
        raise QmdError(file, first, f"code cell opened with {fence}{{python}} is never closed (expected {fence})")
    body = lines[index + 1 : end]
    n_options = 0
    while n_options < len(body) and _OPTION_LINE.match(body[n_options]):
        n_options += 1
    option_text = "\n".join(_OPTION_LINE.match(line)["text"] for line in body[:n_options])  # type: ignore[index]
    options = _load_yaml(option_text, file=file, first_line=first + 1, what="cell options ('#|' lines)")
    _check_options(options, file=file, line=first + 1)
    cell = QmdCell(
        kind="code", line=first, source="\n".join(body), language=language, options=MappingProxyType(options)
    )
    return cell, end + 1


def _check_options(options: Mapping[str, object], *, file: str, line: int) -> None:
    for name in EXECUTION_OPTIONS:
        if name not in options:
            continue
        value = options[name]
        if isinstance(value, bool) or value in _EXTRA_VALUES.get(name, ()):
            continue
        allowed = " or ".join(["true", "false", *_EXTRA_VALUES.get(name, ())])
        raise QmdError(file, line, f"cell option '{name}' must be {allowed} (got {value!r})")
    tags = options.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        raise QmdError(file, line, f"cell option 'tags' must be a list of strings (got {tags!r})")


def _check_json_value(value: Any, where: str) -> None:
    if value is None or isinstance(value, bool | int | str):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            msg = f"{where}: expected a finite number (got {value!r})"
            raise ValueError(msg)
        return
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_json_value(item, f"{where}[{i}]")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                msg = f"{where}: dict keys must be str (got {key!r})"
                raise ValueError(msg)
            _check_json_value(item, f"{where}[{key!r}]")
        return
    msg = f"{where}: expected a JSON-able value (None, bool, int, float, str, list, dict; got {type(value).__name__})"
    raise ValueError(msg)


def _nb_new(kind: str, *args: str) -> nbformat.NotebookNode:
    """``nbformat.v4.new_<kind>(...)`` (untyped in nbformat) as a typed call."""
    factory: Callable[..., Any] = getattr(nbformat.v4, f"new_{kind}")
    return cast(nbformat.NotebookNode, factory(*args))


def _injected_cell(values: Mapping[str, Any]) -> nbformat.NotebookNode:
    lines = ["# Parameters", *(f"{name} = {_literal(value)}" for name, value in values.items())]
    cell = _nb_new("code_cell", "\n".join(lines) + "\n")
    cell.metadata["tags"] = ["injected-parameters"]
    cell.id = "injected-parameters"
    return cell


def _literal(value: Any) -> str:
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)
