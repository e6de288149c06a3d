"""The versioned release report: ``reports/<release>/<version>/`` made from one verdict file.

:func:`build_release_report` reads a verdict written by ``gatestats gate -o`` (format and own digest
checked), re-digests every record file it names (a missing or changed file is a
:class:`ReportInputError` naming the file, the expected and the actual digest, and nothing is
written), loads both record sets, computes the report's data and builds, in a hidden directory
beside the target (``.building-<hex>/``, locked while it is built: one left by a killed build is
removed by the next, :func:`gatestats.io.files.new_build_directory`), then renames into place as the
next free version (1, 2, …; never overwritten):

- ``report.qmd`` — the Quarto source (Jupyter engine): ``params`` in the front matter and a cell
  tagged ``parameters`` holding its inputs (``data_dir``, ``verdict_path``, ``verdict_digest``, the
  renderer named in the provenance, and ``page``: ``None`` in the file; the Jupyter render passes the
  page made here, :func:`release_page_parts`, so that its kernel draws and computes nothing);
  ``quarto render report.qmd`` re-renders it (making the page from ``data/``: :func:`release_page`);
- ``data/`` — ``verdict.json`` (the verdict's bytes), ``provenance.json``, one Parquet file per table
  (``rules``, ``checks``, ``severe_slices``, ``severe_failures``, ``flips``, ``curves``, ``slices``,
  ``cost``, ``judges``, ``infra``, ``bounds``; sorted, fixed writer settings), ``flips.csv`` (every
  flipped case for a spreadsheet; the page lists the first ``FLIPS_SHOWN`` of each direction) and
  ``digests.json`` (``sha256`` of each). The same inputs give byte-identical data files;
- ``charts/`` — ``pass_hat_k``, ``pass_at_k``, ``slices``, ``cost`` as SVG and PNG
  (:func:`~gatestats.report.charts.save_chart`);
- ``report.html`` — rendered by :func:`~gatestats.report.render_qmd` (Quarto when installed, else
  Jupyter), one offline page; ``report.json`` — what was built with which renderer.

The report's sections, their order and their charts are one table, :data:`SECTIONS`; the body of
``report.qmd`` is generated from it (:mod:`gatestats.report._release_sections`). How numbers, money,
durations and case ids are written is in :mod:`gatestats.report._release_format`.

The release name defaults to :func:`default_release_name`: the slug of the policy name and the
candidate's system label (``bugfix-agent-release-candidate``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import nbclient
import nbconvert
import polars as pl

import gatestats
from gatestats._typing import JSONObject
from gatestats.errors import GatestatsError
from gatestats.gate import VerdictFile
from gatestats.io.digest import digest_bytes
from gatestats.io.files import new_build_directory, rename_directory_once
from gatestats.report._release_charts import CHART_NAMES, ChartSpec, release_chart_set
from gatestats.report._release_data import (
    TABLES,
    ReleaseData,
    ReportInputError,
    check_record_files,
    json_bytes,
    load_release_data,
    load_sides,
    read_verdict,
    release_data,
    write_data,
)
from gatestats.report._release_format import side_system
from gatestats.report._release_sections import SECTIONS, Section, qmd_body, section_html
from gatestats.report._release_tables import compute_tables
from gatestats.report.page import ReleasePage
from gatestats.report.quarto import (
    Renderer,
    RenderResult,
    ResolvedRenderer,
    chart_svg,
    render_qmd,
    resolve_renderer,
    save_chart,
    start_kernel,
)
from gatestats.report.quarto.splicing import HeldOut, hold_out

__all__ = [
    "CHART_NAMES",
    "KERNEL",
    "REPORT_FORMAT",
    "SECTIONS",
    "TEMPLATE",
    "ReleaseData",
    "ReleaseReport",
    "ReportInputError",
    "Section",
    "build_release_report",
    "check_release_name",
    "default_release_name",
    "load_release_data",
    "release_charts",
    "release_page",
    "release_page_parts",
    "section_html",
]

#: The ``.qmd`` template of a release report.
TEMPLATE: Final = Path(__file__).resolve().parent / "templates" / "release" / "report.qmd"
#: The Jupyter kernel of the template (its front matter's ``jupyter:``).
KERNEL: Final = "python3"
#: ``format`` of ``report.json`` in a report directory.
REPORT_FORMAT: Final = "gatestats-release-report/1"
_RELEASE_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_TOKEN: Final = re.compile(r"@@([A-Z_]+)@@")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReleaseReport:
    """A built release report: where it is, which version, what it was made from and with what.

    ``data_digests`` maps each file of ``data/`` to its ``sha256:`` digest (identical for identical
    inputs); ``data_digest`` is the digest of ``data/digests.json``. ``seconds`` is the whole build,
    ``seconds_render`` the render alone.
    """

    directory: Path
    release: str
    version: int
    html_path: Path
    qmd_path: Path
    renderer: ResolvedRenderer
    renderer_version: str
    verdict: str
    verdict_digest: str
    data_digests: Mapping[str, str]
    data_digest: str
    charts: tuple[str, ...]
    seconds: float
    seconds_render: float

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping (``gatestats report --json``).

        Returns
        -------
        JSONObject
            The report's fields as JSON values (paths as strings).
        """
        return {
            "directory": str(self.directory),
            "release": self.release,
            "version": self.version,
            "html_path": str(self.html_path),
            "qmd_path": str(self.qmd_path),
            "renderer": self.renderer,
            "renderer_version": self.renderer_version,
            "verdict": self.verdict,
            "verdict_digest": self.verdict_digest,
            "data_digests": dict(self.data_digests),
            "data_digest": self.data_digest,
            "charts": list(self.charts),
            "seconds": self.seconds,
            "seconds_render": self.seconds_render,
        }


def check_release_name(name: str) -> str:
    """Check a release name: letters, digits, ``.``, ``_``, ``-``, starting with a letter or digit, ≤ 100.

    Parameters
    ----------
    name
        The release name, as ``gatestats report --release`` takes it.

    Returns
    -------
    str
        ``name``, unchanged.

    Raises
    ------
    ValueError
        ``name`` is not such a name (the message says what is allowed).

    Examples
    --------
    >>> check_release_name("agent-2026.11")
    'agent-2026.11'
    """
    if not isinstance(name, str) or not _RELEASE_NAME.match(name):
        msg = (
            "release: expected 1-100 letters, digits, '.', '_' or '-' starting with a letter or digit "
            f"(a directory name under --out; got {name!r})"
        )
        raise ValueError(msg)
    return name


def _slug(text: str) -> str:
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9._-]", "-", text.lower())).strip("-._")


def default_release_name(verdict: Mapping[str, Any]) -> str:
    """The default release name: slug of the policy name, ``-``, slug of the candidate's system label.

    Lower case; every character other than ``a-z 0-9 . _ -`` becomes ``-``; runs of ``-`` collapse;
    at most 100 characters; ``release`` when nothing is left.

    Parameters
    ----------
    verdict
        The verdict body (its ``policy`` and ``candidate``).

    Returns
    -------
    str
        The release name.

    Examples
    --------
    >>> default_release_name({"policy": {"name": "Bug-fix agent"}, "candidate": {"system": "gpt 4o/v2"}})
    'bug-fix-agent-gpt-4o-v2'
    """
    policy = verdict.get("policy") or {}
    candidate = verdict.get("candidate") or {}
    system = candidate.get("system") or (policy.get("candidate") or {}).get("system") or "candidate"
    parts = [p for p in (_slug(str(policy.get("name") or "")), _slug(str(system))) if p]
    return ("-".join(parts) or "release")[:100].strip("-._") or "release"


def release_charts(data: ReleaseData) -> dict[str, ChartSpec]:
    """The report's charts as Vega-Lite specs (stems of :data:`CHART_NAMES` that have something to draw).

    Plain dicts, drawn by :func:`~gatestats.report.quarto.chart_svg` (vl-convert, no Altair);
    ``altair.LayerChart.from_dict(spec)`` makes the Altair chart of one.

    Parameters
    ----------
    data
        The report's data (:func:`load_release_data`).

    Returns
    -------
    dict[str, ChartSpec]
        Chart stem → Vega-Lite spec.
    """
    level = data.verdict.policy.confidence_level
    return release_chart_set({name: data.table(name) for name in TABLES}, confidence_level=level)


def release_page_parts(
    data: ReleaseData, charts: Mapping[str, str], *, renderer: str | None = None, renderer_version: str | None = None
) -> ReleasePage:
    """The parts of the page: every section's HTML (:func:`section_html`) and the charts' SVG.

    Parameters
    ----------
    data
        The report's data.
    charts
        Chart stem → SVG (the stems with something to draw).
    renderer, renderer_version
        The renderer and its version, shown in the ``provenance`` section.

    Returns
    -------
    ReleasePage
    """
    names = [section.name for section in SECTIONS]
    sections = {n: section_html(data, n, renderer=renderer, renderer_version=renderer_version) for n in names}
    return ReleasePage(sections=sections, charts=dict(charts))


def release_page(
    data_dir: str | os.PathLike[str],
    *,
    verdict_path: str | os.PathLike[str] | None = None,
    verdict_digest: str | None = None,
    renderer: str | None = None,
    renderer_version: str | None = None,
) -> dict[str, dict[str, str]]:
    """The page's parts made from a report's ``data/``: what ``report.qmd`` does when rendered on its own.

    ``gatestats report`` passes the parts it made while building (the ``.qmd``'s ``page``
    parameter); ``quarto render report.qmd`` leaves ``page`` at ``None``, and the ``.qmd`` calls
    this: ``data/`` read back (:func:`load_release_data`: every file checked against
    ``data/digests.json``), the sections made and the charts drawn in the kernel (as the report
    draws them: vl-convert, without Altair or its schema check; the specs are checked in the tests).

    Parameters
    ----------
    data_dir : str or PathLike
        The report's ``data`` directory.
    verdict_path, verdict_digest
        As :func:`load_release_data` takes them.
    renderer, renderer_version
        The renderer and its version, shown in the ``provenance`` section.

    Returns
    -------
    dict
        ``{"sections": {name: html}, "charts": {stem: svg}}``
        (:meth:`gatestats.report.page.ReleasePage.from_dict` reads it).
    """
    data = load_release_data(data_dir, verdict_path=verdict_path, verdict_digest=verdict_digest)
    charts = {stem: chart_svg(chart, validate=False) for stem, chart in release_charts(data).items()}
    return release_page_parts(data, charts, renderer=renderer, renderer_version=renderer_version).to_dict()


def _renderer_version(renderer: ResolvedRenderer) -> str:
    """What :func:`render_qmd` will report as the renderer version (named in the provenance before rendering)."""
    if renderer == "jupyter":
        return f"nbclient {nbclient.__version__}, nbconvert {nbconvert.__version__}"
    quarto = shutil.which("quarto")
    if quarto is None:
        return "quarto (not found)"
    done = subprocess.run([quarto, "--version"], capture_output=True, text=True, timeout=60, check=False)
    return "quarto " + done.stdout.strip()


def _qmd_text(values: Mapping[str, str]) -> str:
    """The template with ``@@BODY@@`` replaced by the sections (:func:`qmd_body`) and each other
    ``@@NAME@@`` by a JSON string (a valid YAML and Python literal)."""
    template = TEMPLATE.read_text(encoding="utf-8")
    body = qmd_body()

    def value(match: re.Match[str]) -> str:
        return body if match[1] == "BODY" else json.dumps(values[match[1].lower()], ensure_ascii=True)

    return _TOKEN.sub(value, template)


def _next_version(release_dir: Path) -> int:
    versions = [int(p.name) for p in release_dir.iterdir() if p.name.isdigit() and p.name == str(int(p.name))]
    return max(versions, default=0) + 1


def _move_into_place(built: Path, release_dir: Path) -> tuple[int, Path]:
    """Rename ``built`` to the next free ``release_dir/<n>``; a lost race takes the next number."""
    version = _next_version(release_dir)
    while True:
        target = release_dir / str(version)
        if not target.exists():
            try:
                rename_directory_once(built, target)  # never replaces, not even an empty directory
            except FileExistsError:  # another build took this number between the check and the rename
                pass
            else:
                return version, target
        version = max(version + 1, _next_version(release_dir))


def _make_parents(path: Path) -> list[Path]:
    created: list[Path] = []
    for parent in reversed([path, *path.parents]):
        if not parent.exists():
            created.append(parent)
    path.mkdir(parents=True, exist_ok=True)
    return created


def latest_reading(watch: str | os.PathLike[str], verdict_digest: str) -> bytes:
    """The bytes of a rollout's latest decision file, checked and bound to ``verdict_digest``.

    Parameters
    ----------
    watch
        The observation log.
    verdict_digest
        The digest of the verdict the report shows.

    Returns
    -------
    bytes
        The decision file as written (its digest and format checked).

    Raises
    ------
    ReportInputError
        No reading yet, an edited decision file, or a rollout that follows another verdict.
    """
    from gatestats.rollout.record import decision_files, read_decision  # noqa: PLC0415 - only with --watch

    files = decision_files(watch)
    if not files:
        msg = f"{watch}: no reading of the rollout yet (run `gatestats watch status {watch} --plan PLAN` first)"
        raise ReportInputError(msg)
    try:
        body = read_decision(files[-1])
    except (GatestatsError, ValueError) as exc:
        raise ReportInputError(str(exc)) from None
    if body.get("verdict_digest") != verdict_digest:
        msg = (
            f"{files[-1]}: field 'verdict_digest': the rollout follows the verdict {body.get('verdict_digest')}, "
            f"not this one ({verdict_digest})"
        )
        raise ReportInputError(msg)
    return files[-1].read_bytes()


def _inputs(
    verdict_path: str | os.PathLike[str], watch: str | os.PathLike[str] | None
) -> tuple[VerdictFile, dict[str, pl.DataFrame], JSONObject, bytes | None]:
    """Everything a report shows, checked before anything is written: verdict, tables, provenance, reading."""
    verdict = read_verdict(verdict_path)
    sides = load_sides(verdict, check_record_files(verdict))
    reading = None if watch is None else latest_reading(watch, verdict.digest)
    tables, provenance = compute_tables(verdict, sides)
    return verdict, tables, provenance, reading


def build_release_report(
    verdict_path: str | os.PathLike[str],
    *,
    release: str | None = None,
    out: str | os.PathLike[str] = Path("reports"),
    renderer: Renderer = "auto",
    timeout_s: float = 600.0,
    watch: str | os.PathLike[str] | None = None,
) -> ReleaseReport:
    """Build ``out/<release>/<version>/`` from a verdict file (see the module docstring).

    Parameters
    ----------
    verdict_path : str or PathLike
        A ``gatestats-verdict/1`` file (``gatestats gate -o``).
    release : str, optional
        Directory name of the release (default :func:`default_release_name` of the verdict).
    out : str or PathLike
        Root of the reports (default ``reports``).
    renderer : {'auto', 'quarto', 'jupyter'}
        ``auto``: Quarto when its CLI is on ``PATH``, else Jupyter (nbclient + nbconvert).
    timeout_s : float
        Budget of the render.
    watch : str or PathLike, optional
        A rollout's observation log: its latest reading (:func:`latest_reading`) is copied into
        ``data/watch.json`` and shown in "After the gate".

    Returns
    -------
    ReleaseReport

    Raises
    ------
    ReportInputError
        The verdict is not a valid verdict file, or a record file it names is missing or changed
        (file, expected and actual digest named). Nothing is written.
    RenderError
        The report could not be rendered; the half-built directory is removed, no version is taken.

    Examples
    --------
    >>> report = build_release_report("verdict.json", out="reports")  # doctest: +SKIP
    >>> report.directory, report.version, report.renderer  # doctest: +SKIP
    (PosixPath('reports/bugfix-agent-release-candidate/1'), 1, 'jupyter')
    """
    started = time.perf_counter()
    resolved = resolve_renderer(renderer)
    if release is not None:
        check_release_name(release)
    root = Path(out)
    verdict, tables, provenance, reading = _inputs(verdict_path, watch)
    name = release if release is not None else default_release_name(verdict.body)
    renderer_version = _renderer_version(resolved)
    release_dir = root / name
    created = _make_parents(release_dir)
    building = new_build_directory(release_dir, ".building-")  # a killed build's directory is swept by the next
    build = building.path
    try:
        built = _write_report(
            build, verdict, tables, provenance, name, resolved, renderer_version, timeout_s=timeout_s, watch=reading
        )
        version, directory = _move_into_place(build, release_dir)
    except BaseException:
        building.discard()
        _remove_partial(build, created)
        raise
    building.release()
    return _release_report(directory, name, version, built, verdict, started)


def _release_report(
    directory: Path, name: str, version: int, built: _Built, verdict: VerdictFile, started: float
) -> ReleaseReport:
    """What :func:`build_release_report` returns, from what it built."""
    return ReleaseReport(
        directory=directory,
        release=name,
        version=version,
        html_path=directory / "report.html",
        qmd_path=directory / "report.qmd",
        renderer=built.result.renderer,
        renderer_version=built.result.renderer_version,
        verdict=str(verdict.body["verdict"]),
        verdict_digest=verdict.digest,
        data_digests=built.digests,
        data_digest=built.data_digest,
        charts=built.charts,
        seconds=time.perf_counter() - started,
        seconds_render=built.result.seconds,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Built:
    """What :func:`_write_report` wrote: the data digests, the charts and the render's result."""

    digests: dict[str, str]
    data_digest: str
    charts: tuple[str, ...]
    result: RenderResult


def _write_report(
    build: Path,
    verdict: VerdictFile,
    tables: Mapping[str, pl.DataFrame],
    provenance: Any,
    name: str,
    renderer: ResolvedRenderer,
    renderer_version: str,
    *,
    timeout_s: float,
    watch: bytes | None = None,
) -> _Built:
    """Write ``data/``, ``charts/``, ``report.qmd``, ``report.html`` and ``report.json`` into ``build``.

    With the Jupyter renderer the kernel is started first: it gets ready while the data and the
    charts are written (:func:`~gatestats.report.quarto.start_kernel`), and it is given the page
    made here (the ``.qmd``'s ``page`` parameter), so it reads, computes and draws nothing.
    """
    with contextlib.ExitStack() as stack:
        kernel = None
        spliced: HeldOut | None = None
        if renderer == "jupyter":
            kernel = stack.enter_context(start_kernel(build, kernel_name=KERNEL, timeout_s=timeout_s))
        digests = write_data(build / "data", verdict, tables, provenance, watch=watch)
        (build / "charts").mkdir()
        charts = release_chart_set(tables, confidence_level=verdict.verdict.policy.confidence_level)
        svgs = {
            stem: save_chart(chart, build / "charts", stem, validate=False)[0].read_text(encoding="utf-8")
            for stem, chart in charts.items()
        }
        body, policy = verdict.body, verdict.body["policy"]
        params: dict[str, Any] = {
            "data_dir": "data",
            "verdict_path": "data/verdict.json",
            "verdict_digest": verdict.digest,
            "renderer": renderer,
            "renderer_version": renderer_version,
        }
        sides = [side_system(side, body[side].get("system")) for side in ("candidate", "baseline")]
        subtitle = f"Policy {policy.get('name')} v{policy.get('version')}: {sides[0]} vs {sides[1]}"
        texts = {"title": f"Release report: {name}", "subtitle": subtitle, "date": str(body["created_at"])[:10]}
        qmd = build / "report.qmd"
        qmd.write_text(_qmd_text({**texts, **params}), encoding="utf-8")
        if kernel is not None:  # the kernel shows the parts made here (Quarto's kernel makes them from data/)
            data = release_data(build / "data", verdict, tables, provenance, digests, watch=watch)
            page = release_page_parts(data, svgs, renderer=renderer, renderer_version=renderer_version).to_dict()
            # inert sections go around the kernel and the export, into the finished page (quarto/splicing.py)
            page["sections"], spliced = hold_out(page["sections"])
            params["page"] = page
        output = build / "report.html"
        result = render_qmd(
            qmd, params=params, renderer=renderer, timeout_s=timeout_s, output=output, kernel=kernel, spliced=spliced
        )
    data_digest = digest_bytes((build / "data" / "digests.json").read_bytes())
    manifest = {
        "format": REPORT_FORMAT,
        "release": name,
        "verdict": body["verdict"],
        "verdict_digest": verdict.digest,
        "data_digest": data_digest,
        "charts": sorted(charts),
        "renderer": result.renderer,
        "renderer_version": result.renderer_version,
        "gatestats_version": gatestats.__version__,
    }
    (build / "report.json").write_bytes(json_bytes(manifest))
    build.chmod(0o755)
    return _Built(digests=digests, data_digest=data_digest, charts=tuple(sorted(charts)), result=result)


def _remove_partial(build: Path, created: list[Path]) -> None:
    """Remove a half-built report and the parent directories this build created (innermost first)."""
    shutil.rmtree(build, ignore_errors=True)
    for path in reversed(created):
        try:
            path.rmdir()
        except OSError:
            break
