"""Render a Quarto ``.qmd`` report to one self-contained HTML file: Quarto when installed, else Jupyter.

Two renderers produce the same document:

``quarto``
    ``quarto render FILE --to html --output TMP --execute-params params.yml -M embed-resources:true
    -M html-math-method:plain`` in the file's directory (Quarto passes parameters with ``-P key:value``
    or a YAML file given to ``--execute-params``; the file keeps strings and nested values intact).
    MathJax is Quarto's one default network resource for HTML, hence ``html-math-method: plain``.
``jupyter``
    :func:`~gatestats.report.quarto.qmd.to_notebook` with the parameters injected, executed with nbclient
    (kernel ``python3`` or the front matter's ``jupyter:``, working directory = the ``.qmd``'s
    directory) honouring Quarto's ``eval``/``echo``/``output``/``include``/``warning``/``error``
    options, then exported by nbconvert with the ``gatestats`` template: no script, stylesheet or
    font from the network, images as data URIs, SVG inline.

Both write the page atomically (temporary file + rename): a failed render leaves no HTML, and
both refuse a page that would fetch anything from the network
(:func:`~gatestats.report.quarto._html.find_network_references`).

References
----------
- Quarto, "Parameters", https://quarto.org/docs/computations/parameters.html
- Quarto, "Execution Options", https://quarto.org/docs/computations/execution-options.html
- Quarto, "External servers used by Quarto documents",
  https://quarto.org/docs/advanced/html/external-sources.html
- nbclient, "Executing notebooks", https://nbclient.readthedocs.io/en/latest/client.html
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal, TypeAlias

import nbclient
import nbconvert
import nbformat
import yaml  # type: ignore[import-untyped]
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from traitlets.config import Config

import gatestats
from gatestats._typing import JSONObject
from gatestats.io.files import write_atomic
from gatestats.report.quarto._html import export_html, network_scan, prepare_for_export
from gatestats.report.quarto.qmd import QmdDocument, _LocatedError, read_qmd, to_notebook, validate_params
from gatestats.report.quarto.splicing import PLACEHOLDER, HeldOut, splice

__all__ = [
    "RenderError",
    "RenderResult",
    "Renderer",
    "ResolvedRenderer",
    "StartedKernel",
    "render_qmd",
    "resolve_renderer",
    "start_kernel",
]

#: ``auto``: ``quarto`` when the Quarto CLI is on ``PATH``, else ``jupyter``.
Renderer: TypeAlias = Literal["auto", "quarto", "jupyter"]
ResolvedRenderer: TypeAlias = Literal["quarto", "jupyter"]
_RENDERERS = ("auto", "quarto", "jupyter")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_KERNEL_STARTUP_S = 60


class RenderError(_LocatedError, RuntimeError):
    """A report could not be rendered; no HTML was written.

    ``file`` and ``line`` locate the failing cell in the ``.qmd`` (``line`` is ``None`` when the
    failure has no cell, e.g. a Quarto crash); ``ename``/``evalue``/``traceback`` describe a cell's
    exception (traceback without terminal colours).
    """

    def __init__(
        self,
        message: str,
        *,
        file: str,
        line: int | None = None,
        ename: str | None = None,
        evalue: str | None = None,
        traceback: str | None = None,
    ) -> None:
        self.ename = ename
        self.evalue = evalue
        self.traceback = traceback
        super().__init__(file, line, message)


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderResult:
    """What a render produced, with which renderer and how long each phase took (seconds).

    ``executed_cells`` counts the code cells the kernel ran (the injected parameters cell
    included); ``None`` with Quarto, which does not report it. ``notebook`` is the executed notebook
    (Jupyter renderer only; ``notebook_path`` when it was written). Kernel start, execution and
    export times are ``None`` with Quarto.
    """

    renderer: ResolvedRenderer
    renderer_version: str
    qmd_path: Path
    html_path: Path
    params: Mapping[str, Any]
    seconds: float
    seconds_kernel_start: float | None = None
    seconds_execute: float | None = None
    seconds_export: float | None = None
    executed_cells: int | None = None
    notebook_path: Path | None = None
    notebook: nbformat.NotebookNode | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict (paths as strings, without the notebook).

        Returns
        -------
        JSONObject
            Renderer, paths, ``params`` and the timings of each step (``None`` where not measured).
        """
        return {
            "renderer": self.renderer,
            "renderer_version": self.renderer_version,
            "qmd_path": str(self.qmd_path),
            "html_path": str(self.html_path),
            "params": dict(self.params),
            "seconds": self.seconds,
            "seconds_kernel_start": self.seconds_kernel_start,
            "seconds_execute": self.seconds_execute,
            "seconds_export": self.seconds_export,
            "executed_cells": self.executed_cells,
            "notebook_path": None if self.notebook_path is None else str(self.notebook_path),
        }


def resolve_renderer(renderer: Renderer = "auto") -> ResolvedRenderer:
    """``quarto`` or ``jupyter``: ``auto`` picks ``quarto`` when the ``quarto`` CLI is on ``PATH``.

    Parameters
    ----------
    renderer
        ``auto``, ``quarto`` or ``jupyter``.

    Returns
    -------
    ResolvedRenderer
        ``quarto`` or ``jupyter``.

    Raises
    ------
    ValueError
        ``renderer`` is none of these.

    Examples
    --------
    >>> resolve_renderer("jupyter")
    'jupyter'
    """
    if renderer not in _RENDERERS:
        msg = f"renderer must be one of {', '.join(_RENDERERS)} (got {renderer!r})"
        raise ValueError(msg)
    if renderer == "auto":
        return "quarto" if shutil.which("quarto") else "jupyter"
    return renderer


@dataclass(frozen=True, slots=True, kw_only=True)
class StartedKernel:
    """A Jupyter kernel started ahead of :func:`render_qmd` (see :func:`start_kernel`)."""

    kernel_name: str
    directory: Path
    client: nbclient.NotebookClient = field(repr=False, compare=False)
    connection: Path = field(repr=False, compare=False)


@contextlib.contextmanager
def start_kernel(
    directory: str | os.PathLike[str], *, kernel_name: str = "python3", timeout_s: float = 600.0
) -> Iterator[StartedKernel]:
    """Start the kernel of a later ``render_qmd(..., renderer="jupyter", kernel=...)`` now.

    The kernel process starts (working directory ``directory``, where the ``.qmd`` will be) while
    the caller goes on preparing the document; :func:`render_qmd` then connects to it instead of
    starting one and waiting for it. The kernel is shut down when the render ends, or at the end
    of the ``with`` block when there was no render (its connection file removed either way).

    Parameters
    ----------
    directory : str or PathLike
        The directory of the ``.qmd`` that will be rendered (an existing directory).
    kernel_name : str
        The kernel (the document's ``jupyter:``; ``render_qmd`` refuses a kernel of another name).
    timeout_s : float
        The budget of the kernel's start-up (at most 60 s are waited for it to answer).

    Yields
    ------
    StartedKernel

    Raises
    ------
    RenderError
        There is no such kernel, or it could not be started.
    """
    folder = Path(directory)
    file = str(folder)
    client, connection = _client(nbformat.v4.new_notebook(), kernel_name, folder, timeout_s)  # type: ignore[no-untyped-call]
    try:
        client.create_kernel_manager()
        client.start_new_kernel(cwd=str(folder.resolve()))
    except Exception as exc:  # no such kernel, or its process did not start
        connection.unlink(missing_ok=True)
        msg = f"the {kernel_name!r} kernel did not start ({type(exc).__name__}: {exc})"
        raise RenderError(msg, file=file) from None
    try:
        yield StartedKernel(kernel_name=kernel_name, directory=folder.resolve(), client=client, connection=connection)
    finally:
        if client.km is not None:  # not used by a render (which shuts it down), or the render failed
            client._cleanup_kernel()  # nbclient's own clean-up of the kernel it started
        connection.unlink(missing_ok=True)


def render_qmd(
    qmd_path: str | os.PathLike[str],
    *,
    params: Mapping[str, Any],
    renderer: Renderer = "auto",
    timeout_s: float = 600.0,
    output: str | os.PathLike[str] | None = None,
    notebook_output: str | os.PathLike[str] | None = None,
    kernel: StartedKernel | None = None,
    spliced: HeldOut | None = None,
) -> RenderResult:
    """Execute a ``.qmd`` with parameters and write one self-contained, offline HTML page.

    Parameters
    ----------
    qmd_path : str or PathLike
        The Quarto document (Jupyter engine, Python cells). Code runs in its directory.
    params : Mapping[str, Any]
        Values for the names assigned in the cell tagged ``parameters`` (JSON-able values); a
        name that cell does not assign is an error.
    renderer : {'auto', 'quarto', 'jupyter'}
        ``auto``: Quarto when its CLI is on ``PATH``, else Jupyter (nbclient + nbconvert).
    timeout_s : float
        Budget for the whole render (kernel start and every cell, or the Quarto process).
    output : str or PathLike, optional
        The HTML file (default: the ``.qmd`` with suffix ``.html``). Replaced atomically.
    notebook_output : str or PathLike, optional
        Also write the executed notebook there (``jupyter`` renderer only).
    kernel : StartedKernel, optional
        A kernel started ahead by :func:`start_kernel` in the ``.qmd``'s directory, of the
        document's kernel name (``jupyter`` renderer only); ``None``: one is started here.
    spliced : HeldOut, optional
        Inert fragments whose placeholders the parameters carry (``splicing.hold_out``; ``jupyter``
        renderer only): each is put in place of its placeholder in the exported page, after the
        export and the network check (the same page byte for byte, see ``quarto/splicing.py``). A
        placeholder not found exactly once, as an element of the page, is a ``RenderError``. The
        executed notebook (``notebook_output``, ``RenderResult.notebook``) shows the placeholders.

    Returns
    -------
    RenderResult

    Raises
    ------
    QmdError
        The document cannot be parsed (file and line named).
    RenderError
        A cell raised (its ``.qmd`` line, exception name and value; ``#| error: true`` shows
        errors instead), the budget ran out, the kernel died, Quarto failed, or the page would
        load something from the network. No HTML is written.
    """
    qmd = Path(qmd_path)
    if qmd.suffix != ".qmd" or not qmd.is_file():
        msg = f"qmd_path: expected an existing .qmd file (got {str(qmd)!r})"
        raise ValueError(msg)
    resolved = resolve_renderer(renderer)
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not math.isfinite(timeout_s):
        msg = f"timeout_s must be a positive number of seconds (got {timeout_s!r})"
        raise ValueError(msg)
    if timeout_s <= 0:
        msg = f"timeout_s must be a positive number of seconds (got {timeout_s!r})"
        raise ValueError(msg)
    html_path = Path(output) if output is not None else qmd.with_suffix(".html")
    if html_path.suffix != ".html" or not html_path.parent.is_dir():
        msg = f"output: expected a .html path in an existing directory (got {str(html_path)!r})"
        raise ValueError(msg)
    if notebook_output is not None and resolved != "jupyter":
        msg = "notebook_output: the executed notebook is only available with the jupyter renderer"
        raise ValueError(msg)
    if spliced is not None and (resolved != "jupyter" or not isinstance(spliced, HeldOut)):
        msg = "spliced: held-out fragments (hold_out) are only put back by the jupyter renderer"
        raise ValueError(msg)
    if kernel is not None and (resolved != "jupyter" or kernel.directory != qmd.parent.resolve()):
        msg = f"kernel: expected a kernel started in {qmd.parent} for the jupyter renderer (start_kernel)"
        raise ValueError(msg)
    doc = read_qmd(qmd)
    values = validate_params(params, allowed=doc.parameter_names())
    if resolved == "quarto":
        return _render_quarto(doc, qmd, html_path, values, timeout_s)
    return _render_jupyter(doc, qmd, html_path, values, timeout_s, notebook_output, kernel, spliced)


# --- Jupyter ------------------------------------------------------------------------------------


def _render_jupyter(
    doc: QmdDocument,
    qmd: Path,
    html_path: Path,
    params: JSONObject,
    timeout_s: float,
    notebook_output: str | os.PathLike[str] | None,
    kernel: StartedKernel | None = None,
    spliced: HeldOut | None = None,
) -> RenderResult:
    started = time.perf_counter()
    deadline = started + timeout_s
    nb = to_notebook(doc, params)
    kernel_name = str(nb.metadata["kernelspec"]["name"])
    client, connection = _render_client(nb, kernel_name, qmd, timeout_s, kernel)
    with _start_kernel(client, doc.file, connection):
        kernel_started = time.perf_counter()
        reply = client.wait_for_reply(client.kc.kernel_info())  # type: ignore[union-attr]
        if reply is not None and "language_info" in reply["content"]:
            nb.metadata["language_info"] = reply["content"]["language_info"]
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or not cell.metadata["gatestats"]["options"]["eval"]:
                continue
            line = cell.metadata["gatestats"]["qmd_line"]
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                msg = f"the render budget of {timeout_s:g} s ran out before this cell (timeout_s)"
                raise RenderError(msg, file=doc.file, line=line)
            client.timeout = max(1, math.ceil(remaining))
            try:
                client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
            except CellTimeoutError:
                msg = f"the cell did not finish within the render budget of {timeout_s:g} s (timeout_s)"
                raise RenderError(msg, file=doc.file, line=line) from None
            except DeadKernelError:
                raise RenderError("the kernel died while running this cell", file=doc.file, line=line) from None
            _raise_cell_error(cell, doc.file, line)
    executed_at = time.perf_counter()
    language = nb.metadata.get("language_info", {})
    kernel_text = f"kernel {kernel_name}"
    if language.get("version"):
        kernel_text += f", {str(language.get('name', 'python')).capitalize()} {language['version']}"
    version = f"nbclient {nbclient.__version__}, nbconvert {nbconvert.__version__}"
    page = export_html(
        prepare_for_export(nb, resource_dir=qmd.parent),
        title=doc.title or qmd.stem,
        subtitle=_optional_text(doc.front_matter.get("subtitle")),
        byline=_byline(doc.front_matter),
        renderer_line=f"Rendered by gatestats {gatestats.__version__} with Jupyter ({version}; {kernel_text}).",
        generator=f"gatestats {gatestats.__version__} (jupyter renderer: {version})",
    )
    _refuse_network(page, doc.file, spliced)
    if spliced is not None:
        page = splice(page, spliced)
    notebook_path = None
    if notebook_output is not None:
        notebook_path = Path(notebook_output)
        write_atomic(notebook_path, nbformat.writes(nb).encode("utf-8"))  # type: ignore[no-untyped-call]
    write_atomic(html_path, page.encode("utf-8"))
    finished = time.perf_counter()
    return RenderResult(
        renderer="jupyter",
        renderer_version=version,
        qmd_path=qmd,
        html_path=html_path,
        params=params,
        seconds=finished - started,
        seconds_kernel_start=kernel_started - started,
        seconds_execute=executed_at - kernel_started,
        seconds_export=finished - executed_at,
        executed_cells=client.code_cells_executed,  # non-empty cells sent to the kernel
        notebook_path=notebook_path,
        notebook=nb,
    )


def _render_client(
    nb: nbformat.NotebookNode, kernel_name: str, qmd: Path, timeout_s: float, kernel: StartedKernel | None
) -> tuple[nbclient.NotebookClient, Path]:
    """The client of a render: a new one, or that of the kernel started ahead (:func:`start_kernel`)."""
    if kernel is None:
        return _client(nb, kernel_name, qmd.parent, timeout_s)
    if kernel.kernel_name != kernel_name or kernel.client.km is None:
        msg = f"the kernel started ahead is {kernel.kernel_name!r} (or was used), the document's is {kernel_name!r}"
        raise RenderError(msg, file=str(qmd))
    kernel.client.nb = nb
    return kernel.client, kernel.connection


def _client(
    nb: nbformat.NotebookNode, kernel_name: str, directory: Path, timeout_s: float
) -> tuple[nbclient.NotebookClient, Path]:
    """The notebook client of a render of a .qmd in ``directory``, and where its kernel's connection file will be.

    The connection file is beside the .qmd (in a report's build directory), not in the system's
    temporary directory: left by a killed render, it goes with the build (gatestats.io.files.sweep_builds).
    """
    connection = directory / f".kernel-{secrets.token_hex(8)}.json"
    client = nbclient.NotebookClient(
        nb,
        kernel_name=kernel_name,
        timeout=max(1, math.ceil(timeout_s)),
        startup_timeout=max(1, min(_KERNEL_STARTUP_S, math.ceil(timeout_s))),
        allow_errors=True,
        record_timing=False,
        resources={"metadata": {"path": str(directory.resolve())}},
        # the kernel is local and private to this render; keep its "TCP without encryption" notice off stderr
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
        config=Config({"KernelManager": {"connection_file": str(connection)}}),
    )
    return client, connection


def _start_kernel(client: nbclient.NotebookClient, file: str, connection: Path) -> contextlib.ExitStack:
    stack = contextlib.ExitStack()
    stack.callback(connection.unlink, missing_ok=True)  # after the kernel's shutdown, which removes it too
    try:
        stack.enter_context(client.setup_kernel())
    except Exception as exc:  # no such kernel, or it did not answer within startup_timeout
        msg = f"the {client.kernel_name!r} kernel did not start ({type(exc).__name__}: {exc})"
        raise RenderError(msg, file=file) from None
    return stack


def _raise_cell_error(cell: nbformat.NotebookNode, file: str, line: int | None) -> None:
    errors = [o for o in cell.outputs if o.output_type == "error"]
    if not errors or cell.metadata["gatestats"]["options"]["error"] is True:
        return
    error = errors[0]
    traceback = _ANSI.sub("", "\n".join(error.get("traceback", [])))
    what = "the injected parameters cell" if "injected-parameters" in cell.metadata.get("tags", []) else "cell"
    msg = (
        f"{what} raised {error.ename}: {error.evalue} "
        "(add '#| error: true' to the cell to show the error in the report instead)"
    )
    raise RenderError(msg, file=file, line=line, ename=error.ename, evalue=error.evalue, traceback=traceback)


# --- Quarto -------------------------------------------------------------------------------------


def _render_quarto(doc: QmdDocument, qmd: Path, html_path: Path, params: JSONObject, timeout_s: float) -> RenderResult:
    started = time.perf_counter()
    quarto = shutil.which("quarto")
    if quarto is None:
        raise RenderError("renderer 'quarto' needs the quarto CLI on PATH (not found)", file=doc.file)
    version = "quarto " + _run_quarto([quarto, "--version"], qmd.parent, timeout_s, doc.file).strip()
    temp_name = f".{qmd.stem}.gatestats-{os.getpid()}-{time.monotonic_ns()}.html"
    temp_html = qmd.parent / temp_name
    with tempfile.TemporaryDirectory(prefix="gatestats-quarto-") as tmp:
        command = [quarto, "render", qmd.name, "--to", "html", "--output", temp_name]
        if params:
            params_file = Path(tmp) / "params.yml"
            params_file.write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
            command += ["--execute-params", str(params_file)]
        command += ["-M", "embed-resources:true", "-M", "html-math-method:plain"]
        try:
            _run_quarto(command, qmd.parent, timeout_s - (time.perf_counter() - started), doc.file)
            if not temp_html.is_file():
                raise RenderError(f"quarto render wrote no {temp_name}", file=doc.file)
            page = temp_html.read_text(encoding="utf-8")
        finally:
            temp_html.unlink(missing_ok=True)
            shutil.rmtree(qmd.parent / f"{Path(temp_name).stem}_files", ignore_errors=True)
    line = f'<p class="gatestats-renderer">Rendered by gatestats {gatestats.__version__} with {version}.</p>'
    anchor = "</main>" if "</main>" in page else "</body>"
    page = page.replace(anchor, line + "\n" + anchor, 1)
    _refuse_network(page, doc.file)
    write_atomic(html_path, page.encode("utf-8"))
    return RenderResult(
        renderer="quarto",
        renderer_version=version,
        qmd_path=qmd,
        html_path=html_path,
        params=params,
        seconds=time.perf_counter() - started,
    )


def _run_quarto(command: list[str], cwd: Path, timeout_s: float, file: str) -> str:
    if timeout_s <= 0:
        raise RenderError("the render budget ran out before quarto started (timeout_s)", file=file)
    with subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            msg = f"{' '.join(command[:2])} did not finish within {timeout_s:g} s (timeout_s)"
            raise RenderError(msg, file=file) from None
    if process.returncode != 0:
        tail = "\n".join(_ANSI.sub("", stderr).strip().splitlines()[-20:])
        msg = f"{' '.join(command[:2])} failed with exit status {process.returncode}:\n{tail}"
        raise RenderError(msg, file=file)
    return stdout


# --- shared -------------------------------------------------------------------------------------


def _refuse_network(page: str, file: str, spliced: HeldOut | None = None) -> None:
    """Refuse a page that would fetch from the network, or whose placeholders are not each one element of it."""
    matches = [PLACEHOLDER.fullmatch(p) for p in (spliced.fragments if spliced is not None else ())]
    if None in matches:
        raise RenderError("spliced: a key is not a placeholder made by hold_out", file=file)
    ids = frozenset(m[1] for m in matches if m is not None)
    found, seen = network_scan(page, ids)
    wrong = sorted(i for i, n in seen.items() if n != 1 or page.count(i) != 1)
    if wrong:
        msg = f"the page does not hold each placeholder exactly once as an element: {', '.join(wrong[:3])}"
        raise RenderError(msg, file=file)
    if found:
        shown = "; ".join(found[:5])
        msg = (
            f"the page would load {len(found)} resource(s) from the network ({shown}); "
            "render charts offline (gatestats.report.quarto.enable_offline_altair()) and embed every resource"
        )
        raise RenderError(msg, file=file)


def _optional_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, date | datetime):
        return value.isoformat()
    return str(value)


def _byline(front_matter: Mapping[str, Any]) -> str | None:
    author = front_matter.get("author")
    if isinstance(author, list):
        author = ", ".join(str(a.get("name", a)) if isinstance(a, dict) else str(a) for a in author)
    parts = [p for p in (_optional_text(author), _optional_text(front_matter.get("date"))) if p]
    return " · ".join(parts) or None
