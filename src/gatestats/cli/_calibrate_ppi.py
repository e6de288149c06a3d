"""``calibrate --correct PRODUCTION --estimator ppi``: prediction-powered pass rate beside the other estimates.

The calibration set (its items labelled by people and graded by the judge) is PPI's labelled
subset; the ``--correct`` file's verdicts are the unlabelled items. The labelled subset must have
been drawn at random from the same population as the production sample: the command cannot check
that, and says so under the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from gatestats._typing import JSONObject

if TYPE_CHECKING:
    from gatestats.judges import JudgmentSet
    from gatestats.judges.ppi import MeanEstimate
    from gatestats.judges.ppi_items import PPIComparison

__all__ = ["ESTIMATORS", "PPIOutput", "ppi_production", "render_ppi"]

#: ``--estimator`` values: Rogan-Gladen alone (the default, unchanged output) or the PPI table.
ESTIMATORS: tuple[str, ...] = ("rogan-gladen", "ppi")


@dataclass(frozen=True, slots=True, kw_only=True)
class PPIOutput:
    """The side-by-side estimates and, with ``--label-budget``, the labels each estimator needs.

    ``budget`` is ``((method, labels or None), ...)`` for human-only, PPI and PPI++ (``None``:
    unreachable with this many production verdicts), from the calibration set as the pilot.
    """

    comparison: PPIComparison
    half_width: float | None
    budget: tuple[tuple[str, int | None], ...]

    def to_dict(self) -> JSONObject:
        """The comparison's dict, with ``label_budget`` when asked."""
        out = self.comparison.to_dict()
        if self.half_width is not None:
            out["label_budget"] = {"half_width": self.half_width, "labels": dict(self.budget)}
        return out


def ppi_production(
    production: Path,
    judged: JudgmentSet,
    *,
    verdict: str,
    aliases: Mapping[str, str],
    unparseable: Sequence[str],
    confidence_level: float,
    half_width: float | None = None,
) -> PPIOutput:
    """The production file's pass rate by human-only, judge-only, Rogan-Gladen, PPI and PPI++.

    Parameters
    ----------
    production
        The ``--correct`` file (its verdict column is the calibration's).
    judged
        The calibration set just read: its items are the labelled subset.
    verdict, aliases, unparseable
        As for :func:`gatestats.judges.rated_inputs.read_production_verdicts`.
    confidence_level
        In (0, 1).
    half_width
        When given, the labels a ±half_width interval needs by each estimator
        (:func:`gatestats.judges.budget.labels_for_half_width`, the calibration set as the pilot and
        the production verdicts as the judge-only items).

    Returns
    -------
    PPIOutput

    Raises
    ------
    RecordFileError
        A defect in the production file (file, line, field).
    """
    import polars as pl

    from gatestats.judges.ppi_items import ppi_pass_rate
    from gatestats.judges.rated_inputs import read_production_verdicts

    classes = [c for c in (judged.positive, judged.negative, judged.tie) if c is not None]
    read = read_production_verdicts(
        production, verdict=verdict, classes=classes, aliases=aliases, unparseable=unparseable
    )
    frame = judged.frame
    labelled_ids = [f"labelled:{item}" for item in frame["item"].to_list()]
    labelled_pass = [None if v is None else v == judged.positive for v in frame["verdict"].to_list()]
    production_ids = [f"production:{row}" for row in range(len(read.verdicts))]
    production_pass = [None if v is None else v == judged.positive for v in read.verdicts]
    all_items = pl.DataFrame(
        {"item": labelled_ids + production_ids, "verdict": labelled_pass + production_pass},
        schema={"item": pl.String, "verdict": pl.Boolean},
    )
    labels = pl.DataFrame(
        {"item": labelled_ids, "label": [v == judged.positive for v in frame["label"].to_list()]},
        schema={"item": pl.String, "label": pl.Boolean},
    )
    comparison = ppi_pass_rate(all_items, labels, confidence_level=confidence_level)
    budget: tuple[tuple[str, int | None], ...] = ()
    if half_width is not None:
        from gatestats.judges.budget import BUDGET_METHODS, labels_for_half_width, pilot_moments

        moments = pilot_moments(
            labels["label"].to_numpy(), [bool(v) for v in labelled_pass], confidence_level=confidence_level
        )
        budget = tuple(
            (m, labels_for_half_width(moments, half_width=half_width, n_unlabelled=len(read.verdicts), method=m))
            for m in BUDGET_METHODS
        )
    return PPIOutput(comparison=comparison, half_width=half_width, budget=budget)


def _cell(e: MeanEstimate) -> str:
    if e.status != "ok" or e.estimate is None or e.ci_low is None or e.ci_high is None:
        return "insufficient evidence"
    return f"{e.estimate:.3f} [{e.ci_low:.3f}, {e.ci_high:.3f}]"


_LABELS = {
    "human-only": "human labels only (Wilson)",
    "judge-only": "judge only (biased by its errors)",
    "rogan-gladen": "Rogan-Gladen (Lang-Reiczigel)",
    "ppi": "PPI (lambda = 1)",
    "ppi++": "PPI++ (tuned lambda)",
}


def render_ppi(output: PPIOutput, console: Console, production: Path) -> None:
    """Print the five estimates side by side, then every reason and note.

    Parameters
    ----------
    output
        What :func:`ppi_production` returned.
    console
        Where to print.
    production
        The production file, named in the heading.
    """
    result = output.comparison
    level = f"{result.confidence_level:.0%}"
    console.print(
        f"pass rate of {production}: {result.n_judged - result.n_labelled} production verdicts "
        f"({result.n_unparseable} unparseable in all), {result.n_labelled} labelled calibration items",
        highlight=False,
    )
    table = Table()
    table.add_column("estimator")
    table.add_column(f"estimate [{level} CI]", justify="right", no_wrap=True)
    table.add_column("labelled", justify="right")
    table.add_column("judge-only items", justify="right")
    table.add_column("lambda", justify="right")
    for e in result.estimates():
        lam = "—" if e.lam is None else f"{e.lam:.3f}"
        table.add_row(_LABELS[e.method], _cell(e), str(e.n_labelled), str(e.n_unlabelled), lam)
    console.print(table)
    for e in result.estimates():
        if e.reason:
            console.print(f"  {e.method}: insufficient evidence: {e.reason}", highlight=False)
        elif e.note and e.method in ("ppi", "ppi++"):
            console.print(f"  {e.method}: {e.note}", highlight=False)
    if output.half_width is not None:
        needs = ", ".join(f"{m} {'unreachable' if n is None else n}" for m, n in output.budget)
        console.print(
            f"  labels for a ±{output.half_width:g} interval ({level}; this calibration set as the pilot, "
            f"{result.n_judged - result.n_labelled} production verdicts): {needs}",
            highlight=False,
        )
    console.print(
        "  PPI assumes the labelled calibration items are a random sample of the population the production "
        "verdicts come from; an unparseable verdict counts as not passing.",
        highlight=False,
    )
