"""A kernel started ahead of the render (``start_kernel``): it gets ready while the caller works.

``gatestats report`` starts the kernel before it writes the data and draws the charts, so that the
two run side by side on two cores (issue 28, item 4); the render connects to it instead of starting
one. The page is the same either way, and the kernel never outlives the ``with`` block.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gatestats.report import RenderError, RenderResult, render_qmd, start_kernel
from gatestats.report.release import KERNEL, TEMPLATE
from tests.report.conftest import FIXTURE_PARAMS, copy_fixture

SIMPLE = "---\ntitle: t\njupyter: python3\n---\n\n```{python}\nprint(6 * 7)\n```\n"


def _pid(kernel_client: object) -> int:
    provisioner = kernel_client.km.provisioner  # type: ignore[attr-defined]
    return int(provisioner.process.pid)


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


def test_a_render_on_a_started_kernel_gives_the_same_page(rendered: RenderResult, tmp_path: Path) -> None:
    qmd = copy_fixture("report.qmd", tmp_path)
    with start_kernel(tmp_path, kernel_name="python3", timeout_s=300) as kernel:
        pid = _pid(kernel.client)
        result = render_qmd(qmd, params=FIXTURE_PARAMS, renderer="jupyter", timeout_s=300, kernel=kernel)
        assert not _alive(pid)  # the render shut it down
    kernel_pid = re.compile(r"ipykernel_\d+")  # a warning's source file names the kernel's process
    again, first = (kernel_pid.sub("ipykernel_N", r.html_path.read_text(encoding="utf-8")) for r in (result, rendered))
    assert again == first
    assert not list(tmp_path.glob(".kernel-*.json"))


def test_a_kernel_that_no_render_used_is_shut_down_and_leaves_no_file(tmp_path: Path) -> None:
    with start_kernel(tmp_path) as kernel:
        pid = _pid(kernel.client)
        assert _alive(pid)
    assert not _alive(pid)
    assert not list(tmp_path.glob(".kernel-*.json"))


def test_a_kernel_is_shut_down_when_the_work_before_the_render_fails(tmp_path: Path) -> None:
    pids = []

    def fail_while_the_kernel_starts() -> None:
        with start_kernel(tmp_path) as kernel:
            pids.append(_pid(kernel.client))
            _ = 1 / 0

    with pytest.raises(ZeroDivisionError):
        fail_while_the_kernel_starts()
    (pid,) = pids
    assert not _alive(pid)
    assert not list(tmp_path.glob(".kernel-*.json"))


def test_a_kernel_that_does_not_exist_is_a_render_error(tmp_path: Path) -> None:
    expected = (
        f"{tmp_path}: the 'no-such-kernel' kernel did not start (NoSuchKernel: No such kernel named no-such-kernel)"
    )
    with (
        pytest.raises(RenderError, match=f"^{re.escape(expected)}$"),
        start_kernel(tmp_path, kernel_name="no-such-kernel"),
    ):
        pass
    assert not list(tmp_path.glob(".kernel-*.json"))


def test_a_kernel_of_another_directory_or_renderer_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    qmd = tmp_path / "a" / "doc.qmd"
    qmd.write_text(SIMPLE, encoding="utf-8")
    with start_kernel(tmp_path) as kernel:
        with pytest.raises(ValueError, match=r"^kernel: expected a kernel started in"):
            render_qmd(qmd, params={}, renderer="jupyter", kernel=kernel)
        with pytest.raises(ValueError, match=r"^kernel: expected a kernel started in"):
            render_qmd(tmp_path / "a" / "doc.qmd", params={}, renderer="quarto", kernel=kernel)


def test_a_kernel_of_another_name_or_used_twice_is_refused(tmp_path: Path) -> None:
    qmd = tmp_path / "doc.qmd"
    qmd.write_text(SIMPLE.replace("jupyter: python3", "jupyter: python3-other"), encoding="utf-8")
    with start_kernel(tmp_path) as kernel:
        with pytest.raises(RenderError, match="the kernel started ahead is 'python3'"):
            render_qmd(qmd, params={}, renderer="jupyter", kernel=kernel)
        qmd.write_text(SIMPLE, encoding="utf-8")
        assert "42" in render_qmd(qmd, params={}, renderer="jupyter", kernel=kernel).html_path.read_text(
            encoding="utf-8"
        )
        with pytest.raises(RenderError, match=r"\(or was used\)"):
            render_qmd(qmd, params={}, renderer="jupyter", kernel=kernel)


def test_the_release_reports_kernel_is_the_templates() -> None:
    assert re.search(rf"^jupyter: {KERNEL}$", TEMPLATE.read_text(encoding="utf-8"), re.MULTILINE)
