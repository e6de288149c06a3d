"""Recalibration: has a judge's calibration moved since its stored artifact?

A judge (same model, same rubric) is calibrated again on a new labelled sample. For the false-pass
and the false-fail rate, the stored calibration's counts (x₁ of n₁) and the new one's (x₂ of n₂)
are two independent binomial samples; the change is tested with **Fisher's exact test** (two-sided,
conditional on the margins; R ``fisher.test(matrix(c(x1, n1 - x1, x2, n2 - x2), 2))``), and the two
p-values are adjusted with **Holm** (the family is the two rates). A rate with no labelled item in
either calibration is ``insufficient_evidence``.

A calibration **moved beyond a limit** when some rate's Holm-adjusted p-value is at most α *and*
its absolute change exceeds the limit: a change that is both real (not sampling noise) and large.
The gate refuses such a judge (``[judges.NAME] recalibrations`` and ``max_calibration_change``,
docs/gate.md).

References
----------
Fisher, R. A. (1935). The logic of inductive inference. JRSS 98(1), 39-82.
Holm, S. (1979). Scand. J. Statist. 6(2), 65-70.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gatestats._typing import JSONObject
from gatestats.judges._stats import Proportion, _json_fields, fisher_exact_2x2
from gatestats.judges.calibration import JudgeCalibration
from gatestats.paired.multiplicity import adjust_pvalues
from gatestats.vocabulary import Status, check_alpha

__all__ = ["RateChange", "RecalibrationChange", "recalibration_change"]

_RATES = ("false_pass_rate", "false_fail_rate")


@dataclass(frozen=True, slots=True, kw_only=True)
class RateChange:
    """One error rate in the stored and the new calibration, the change and its exact test."""

    rate: str
    stored: Proportion
    new: Proportion
    change: float | None
    pvalue: float | None
    adjusted_pvalue: float | None
    status: Status
    reason: str | None

    def to_dict(self) -> JSONObject:
        """JSON-ready dict."""
        return _json_fields(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class RecalibrationChange:
    """The stored and the new calibration of one judge compared, rate by rate."""

    stored_version: str
    new_version: str
    judge_model: str | None
    rubric_digest: str | None
    alpha: float
    rates: tuple[RateChange, ...]

    def moved_beyond(self, limit: float) -> list[str]:
        """The rates whose change is significant (Holm p ≤ α) and larger than ``limit`` in absolute value.

        Parameters
        ----------
        limit
            The largest tolerated absolute change of a rate.

        Returns
        -------
        list of str
            One sentence per rate that moved beyond the limit (empty: the calibration holds).
        """
        out = []
        for r in self.rates:
            if r.adjusted_pvalue is None or r.change is None:
                continue
            if r.adjusted_pvalue <= self.alpha and abs(r.change) > limit:
                out.append(
                    f"{r.rate.replace('_', '-')} moved {r.change:+.3f} "
                    f"({r.stored.numerator}/{r.stored.n} -> {r.new.numerator}/{r.new.n}, Fisher exact p "
                    f"{r.pvalue:.2g}, Holm {r.adjusted_pvalue:.2g}) beyond the limit {limit:g}"
                )
        return out

    def to_dict(self) -> JSONObject:
        """JSON-ready dict."""
        out = _json_fields(self, exclude=("rates",))
        out["rates"] = [r.to_dict() for r in self.rates]
        return out


def recalibration_change(
    stored: JudgeCalibration, new: JudgeCalibration, *, alpha: float = 0.05
) -> RecalibrationChange:
    """Compare a judge's new calibration with its stored one: Fisher's exact test per rate, Holm.

    Parameters
    ----------
    stored
        The stored calibration artifact (``load_calibration``).
    new
        The calibration on the new labelled sample.
    alpha
        Level of the Holm-adjusted tests (used by :meth:`RecalibrationChange.moved_beyond`).

    Returns
    -------
    RecalibrationChange
        Per rate: both proportions, the change (new minus stored), the p-value and Holm's.

    Raises
    ------
    ValueError
        The two calibrations are of different judges (model or rubric digest) or of different
        kinds, or ``alpha`` is outside (0, 1).

    Examples
    --------
    >>> import polars as pl
    >>> from gatestats.judges import calibrate
    >>> def cal(fp):
    ...     labels = ["pass"] * 50 + ["fail"] * 50
    ...     verdicts = ["pass"] * 45 + ["fail"] * 5 + ["pass"] * fp + ["fail"] * (50 - fp)
    ...     frame = pl.DataFrame({"item": [str(i) for i in range(100)], "label": labels, "verdict": verdicts})
    ...     return calibrate(frame, positive="pass", negative="fail", judge_model="m", rubric_digest="sha256:r")
    >>> c = recalibration_change(cal(5), cal(20))
    >>> round(c.rates[0].change, 3), round(c.rates[0].pvalue, 5), c.moved_beyond(0.1) != []
    (0.3, 0.00097, True)
    """
    check_alpha(alpha)
    for field in ("judge_model", "rubric_digest", "kind", "positive", "negative"):
        if getattr(stored, field) != getattr(new, field):
            msg = (
                f"recalibration: the calibrations differ in {field} ({getattr(stored, field)!r} stored, "
                f"{getattr(new, field)!r} new): compare a judge with itself"
            )
            raise ValueError(msg)
    tested = [_rate_change(name, getattr(stored, name), getattr(new, name)) for name in _RATES]
    pvalues = [r.pvalue for r in tested if r.pvalue is not None]
    adjusted = iter(adjust_pvalues(pvalues, method="holm").tolist() if pvalues else [])
    rates = tuple(r if r.pvalue is None else replace(r, adjusted_pvalue=float(next(adjusted))) for r in tested)
    return RecalibrationChange(
        stored_version=stored.version,
        new_version=new.version,
        judge_model=new.judge_model,
        rubric_digest=new.rubric_digest,
        alpha=alpha,
        rates=rates,
    )


def _rate_change(name: str, stored: Proportion, new: Proportion) -> RateChange:
    """One rate's change and Fisher's exact test (insufficient evidence when a denominator is 0)."""
    if not stored.n or not new.n:
        which = "stored" if not stored.n else "new"
        return RateChange(
            rate=name,
            stored=stored,
            new=new,
            change=None,
            pvalue=None,
            adjusted_pvalue=None,
            status="insufficient_evidence",
            reason=f"the {which} calibration has no labelled item for the {name.replace('_', '-')}",
        )
    x1, n1, x2, n2 = stored.numerator, stored.n, new.numerator, new.n
    _, p = fisher_exact_2x2(x1, n1 - x1, x2, n2 - x2)
    return RateChange(
        rate=name,
        stored=stored,
        new=new,
        change=x2 / n2 - x1 / n1,
        pvalue=float(min(1.0, p)),
        adjusted_pvalue=None,
        status="ok",
        reason=None,
    )
