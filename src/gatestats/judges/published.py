"""The published table of a judge calibration (``JudgeCalibration.table()``).

One row per headline statistic, as the terminal summary shows them: the false-pass and false-fail
rates (each with its interval and its count ``numerator/n``), accuracy, unparseable verdicts,
Cohen's kappa, and for pairwise judges the order-flip rate. A rate that cannot be estimated says
``insufficient evidence`` (never 0). The numeric frame is ``JudgeCalibration.to_frame()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gatestats.publish.cells import MISSING, count_cell, estimate_cell
from gatestats.publish.formats import Column, PublishedTable
from gatestats.publish.labels import Labels

if TYPE_CHECKING:
    from gatestats.judges.calibration import JudgeCalibration

__all__ = ["calibration_table"]

_INSUFFICIENT = "insufficient evidence"


def _rate(value: Any) -> tuple[str, str]:
    """A rate (a ``Proportion`` or its ``to_dict``) as its cell and its count."""
    if value is None:
        return "not measured", MISSING
    data: Mapping[str, Any] = value if isinstance(value, Mapping) else value.to_dict()
    counts = count_cell(data.get("numerator"), data.get("n"))
    if data["status"] != "ok" or data.get("estimate") is None:
        return _INSUFFICIENT, counts
    return estimate_cell(data["estimate"], data.get("ci_low"), data.get("ci_high")), counts


def calibration_table(calibration: JudgeCalibration, labels: Labels | None = None) -> PublishedTable:
    """One row per headline statistic of a judge calibration, with its interval and count.

    Parameters
    ----------
    calibration
        The calibration.
    labels
        Display name of the judge model (the only id the table shows).

    Returns
    -------
    PublishedTable
        The table; its ``data`` is ``calibration.to_frame()``.

    Raises
    ------
    LabelsError
        A labelled name that is not the judge model.
    """
    chosen = labels or Labels()
    model = calibration.judge_model or "(unnamed)"
    chosen.check_known((model,))
    errors = calibration.details["errors"]
    rows = [
        ("false-pass rate P(judge passes | label fails)", *_rate(calibration.false_pass_rate)),
        ("false-fail rate P(judge fails | label passes)", *_rate(calibration.false_fail_rate)),
        ("accuracy (parseable verdicts)", *_rate(errors["accuracy"])),
        ("unparseable verdicts", *_rate(errors["unparseable_rate"])),
    ]
    kappa = calibration.kappa
    cell = estimate_cell(kappa.estimate, kappa.ci_low, kappa.ci_high) if kappa.status == "ok" else _INSUFFICIENT
    rows.append(("Cohen's kappa (asymptotic CI)", cell, str(kappa.n)))
    if calibration.flip_rate is not None:
        rows.append(("order-flip rate (both orders parseable)", *_rate(calibration.flip_rate)))
    notes = [
        f"{_INSUFFICIENT}: {r.reason}"
        for r in (calibration.false_pass_rate, calibration.false_fail_rate)
        if r.status != "ok"
    ]
    notes.append(f"Intervals: {calibration.method}; calibration version {calibration.version}.")
    level = f"{calibration.confidence_level:.0%}"
    return PublishedTable(
        title=f"judge {chosen(model)}, rubric {calibration.rubric_version or '(none)'}: {calibration.n_items} items",
        columns=(
            Column(header="statistic"),
            Column(header=f"estimate [{level} CI]", numeric=True),
            Column(header="count", numeric=True),
        ),
        rows=tuple(rows),
        data=calibration.to_frame(),
        notes=tuple(notes),
    )
