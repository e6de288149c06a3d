"""Did the baseline move? An exact paired test of a stored baseline against its re-run on a sample of cases.

``gatestats run --baseline-sample N --against STORED`` re-runs a seeded random sample of the
stored baseline run set's cases, with its own candidate bytes and trials, under today's
infrastructure (:mod:`gatestats_runner.baseline`). If the baseline's outcomes moved, the sandbox,
the machine or a verifier changed under it (environment or evaluator drift), and a comparison of
a candidate against the stored baseline would blame the candidate for it: the check blocks
(``insufficient_evidence``) with that reason.

The test (the case is the unit). For every sampled case with at least one valid trial (passed,
failed or ``resource_killed``; ``infra_error`` is not an outcome) on both sides, the pass fraction
of its final trials is compared: ``b`` cases fell in the re-run, ``c`` rose, the rest are tied.
Under no drift the stored and re-run trials of a case are exchangeable, so each untied case is
equally likely to have fallen or risen, independently of the others: conditional on ``b + c``,
``c ~ Binomial(b + c, 1/2)``, and the two-sided exact conditional McNemar (sign) test
(:func:`gatestats.paired.mcnemar.mcnemar_test`, the exact p-value, not the mid-p) never exceeds
its level. With one trial per case this is McNemar's test on the discordant pairs. The baseline
moved when ``p <= alpha``.

A sample in which even ``b + c`` = every compared case all in one direction could not reach
``alpha`` (fewer than :func:`~gatestats.paired.mcnemar.min_discordant_for` cases, 6 at 0.05) cannot
show drift: the check is ``insufficient_evidence`` and says how many cases to sample, rather than
``ok`` on a test that could not fire.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from gatestats._typing import JSONObject
from gatestats.errors import RecordFileError
from gatestats.gate.recordset import MANIFEST, RecordSet, load_record_set
from gatestats.gate.verdict import CheckResult
from gatestats.paired.mcnemar import mcnemar_test, min_discordant_for
from gatestats.vocabulary import INFRA_ERROR, PASSED, VALID_OUTCOMES, check_open_unit
from gatestats_runner.runsets import BASELINE_SAMPLE_FORMAT

__all__ = ["BASELINE_SAMPLE_FORMAT", "DriftResult", "baseline_drift", "drift_counts", "drift_decision", "drift_test"]

_SHOWN = 8


@dataclass(frozen=True, slots=True, kw_only=True)
class DriftResult:
    """The drift test of a stored baseline against its re-run on the sampled cases."""

    status: Literal["stable", "moved", "insufficient_evidence"]
    reason: str
    alpha: float
    seed: int | None
    stored_run_set_id: str | None
    rerun_run_set_id: str | None
    #: The sampled case ids (from the re-run's manifest).
    case_ids: tuple[str, ...]
    #: Sampled cases with a valid trial on both sides.
    n_compared: int
    #: Sampled cases without a valid trial on one side (infrastructure errors only), not compared.
    not_compared: tuple[str, ...]
    #: Cases whose pass fraction fell in the re-run (b) / rose (c).
    fell: tuple[str, ...]
    rose: tuple[str, ...]
    pvalue: float | None
    #: Re-run trials whose final attempt was ``infra_error`` (today's infrastructure failing).
    rerun_infra_errors: int

    def check(self) -> CheckResult:
        """The gate precondition ``baseline_drift``: ``ok`` when stable, else blocking with the reason.

        Returns
        -------
        CheckResult
            Side ``baseline``.
        """
        status: Literal["ok", "insufficient_evidence"] = "ok" if self.status == "stable" else "insufficient_evidence"
        return CheckResult(name="baseline_drift", side="baseline", status=status, detail=self.reason)

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping of every field.

        Returns
        -------
        JSONObject
            Tuples as lists, ``b``/``c`` as counts beside the case lists.
        """
        return {
            "status": self.status,
            "reason": self.reason,
            "alpha": self.alpha,
            "seed": self.seed,
            "stored_run_set_id": self.stored_run_set_id,
            "rerun_run_set_id": self.rerun_run_set_id,
            "case_ids": list(self.case_ids),
            "n_compared": self.n_compared,
            "not_compared": list(self.not_compared),
            "b": len(self.fell),
            "c": len(self.rose),
            "fell": list(self.fell),
            "rose": list(self.rose),
            "pvalue": self.pvalue,
            "rerun_infra_errors": self.rerun_infra_errors,
        }


def drift_counts(
    stored: Mapping[str, Sequence[bool]], rerun: Mapping[str, Sequence[bool]]
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Compare the pass fractions of each case's valid trials: compared, not compared, fell, rose.

    Parameters
    ----------
    stored, rerun
        Case id -> pass (True) / not pass (False) of each valid final trial. A case missing or
        with no valid trial on a side is not compared.

    Returns
    -------
    tuple
        ``(compared, not_compared, fell, rose)``, each a sorted tuple of case ids.
    """
    compared: list[str] = []
    missing: list[str] = []
    fell: list[str] = []
    rose: list[str] = []
    for case_id in sorted(set(stored) | set(rerun)):
        before, after = stored.get(case_id, ()), rerun.get(case_id, ())
        if not before or not after:
            missing.append(case_id)
            continue
        compared.append(case_id)
        # Compare sum(after)/len(after) with sum(before)/len(before) without rounding.
        lhs, rhs = sum(after) * len(before), sum(before) * len(after)
        if lhs < rhs:
            fell.append(case_id)
        elif lhs > rhs:
            rose.append(case_id)
    return tuple(compared), tuple(missing), tuple(fell), tuple(rose)


def _finals(records: pl.DataFrame, case_ids: Sequence[str]) -> tuple[dict[str, list[bool]], int]:
    """Per sampled case, pass/not pass of each valid final trial; and the number of final ``infra_error`` trials."""
    if records.height == 0:
        return {}, 0
    finals = (
        records.filter(pl.col("case_id").is_in(list(case_ids)))
        .sort("case_id", "trial", "attempt")
        .group_by("case_id", "trial", maintain_order=True)
        .last()
    )
    out: dict[str, list[bool]] = {}
    infra = 0
    for case_id, outcome in finals.select("case_id", "outcome").iter_rows():
        if outcome in VALID_OUTCOMES:
            out.setdefault(str(case_id), []).append(outcome == PASSED)
        elif outcome == INFRA_ERROR:
            infra += 1
    return out, infra


def _shown(ids: Sequence[str]) -> str:
    more = f" (+{len(ids) - _SHOWN} more)" if len(ids) > _SHOWN else ""
    return ", ".join(ids[:_SHOWN]) + more


def _sample_of(stored: RecordSet, rerun: RecordSet) -> dict[str, Any]:
    """The re-run's ``baseline_sample``, checked to name this stored run set (else a RecordFileError)."""
    where = str(rerun.path / MANIFEST)
    if stored.manifest is None:
        raise RecordFileError.single(str(stored.path), "<file>", "the stored baseline must be a run set directory")
    sample = (rerun.manifest or {}).get("baseline_sample")
    if not isinstance(sample, dict) or sample.get("format") != BASELINE_SAMPLE_FORMAT:
        raise RecordFileError.single(
            where,
            "baseline_sample",
            f"not a baseline re-run (expected format {BASELINE_SAMPLE_FORMAT!r}; "
            "make one with `gatestats run --baseline-sample N --against STORED`)",
        )
    given = sample.get("stored")
    ref: dict[str, Any] = given if isinstance(given, dict) else {}
    seal = stored.manifest.get("records_seal") or {}
    for name, expected in (("run_set_id", stored.manifest.get("run_set_id")), ("records_digest", seal.get("digest"))):
        if ref.get(name) != expected:
            raise RecordFileError.single(
                where,
                f"baseline_sample.stored.{name}",
                f"the re-run sampled another run set than {stored.path} (got {ref.get(name)!r}, expected {expected!r})",
            )
    ids = sample.get("case_ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise RecordFileError.single(where, "baseline_sample.case_ids", f"expected a list of case ids (got {ids!r})")
    cases = stored.manifest.get("cases")
    known = {c.get("case_id") for c in cases if isinstance(c, dict)} if isinstance(cases, list) else set()
    unknown = sorted(set(ids) - known - set(stored.records["case_id"].unique().to_list()))
    if unknown or len(set(ids)) != len(ids):
        why = f"not cases of {stored.path}: {unknown[:3]!r}" if unknown else "a case sampled twice"
        raise RecordFileError.single(where, "baseline_sample.case_ids", why)
    return sample


def drift_test(
    stored: RecordSet | str | os.PathLike[str], rerun: RecordSet | str | os.PathLike[str], *, alpha: float = 0.05
) -> DriftResult:
    """Test whether the stored baseline's outcomes moved on its re-run (exact paired test, the case as the unit).

    Parameters
    ----------
    stored
        The stored baseline run set (a directory, or its :class:`RecordSet`).
    rerun
        Its re-run (``gatestats run --baseline-sample``), whose manifest names ``stored``.
    alpha
        Level of the two-sided exact test (0 < alpha < 1).

    Returns
    -------
    DriftResult
        ``stable``, ``moved`` (p <= alpha) or ``insufficient_evidence`` (an incomplete re-run, no
        compared case, or too few cases for the test to be able to fire), with the reason.

    Raises
    ------
    RecordFileError
        A run set is damaged, the stored side is not a run set, or the re-run is not a baseline
        re-run of ``stored`` (file and field named).
    ValueError
        ``alpha`` out of range.
    """
    alpha = check_open_unit(alpha, "alpha")
    stored_set = stored if isinstance(stored, RecordSet) else load_record_set(Path(stored))
    rerun_set = rerun if isinstance(rerun, RecordSet) else load_record_set(Path(rerun))
    sample = _sample_of(stored_set, rerun_set)
    case_ids = tuple(sorted(str(i) for i in sample["case_ids"]))
    before, _ = _finals(stored_set.records, case_ids)
    after, infra = _finals(rerun_set.records, case_ids)
    compared, missing, fell, rose = drift_counts(before, after)
    seed = sample.get("seed")
    base: dict[str, Any] = {
        "alpha": alpha,
        "seed": seed if isinstance(seed, int) else None,
        "stored_run_set_id": (stored_set.manifest or {}).get("run_set_id"),
        "rerun_run_set_id": (rerun_set.manifest or {}).get("run_set_id"),
        "case_ids": case_ids,
        "n_compared": len(compared),
        "not_compared": missing,
        "fell": fell,
        "rose": rose,
        "rerun_infra_errors": infra,
    }
    notes = (
        f"; {len(missing)} sampled case(s) not compared (no valid trial on a side: {_shown(missing)})"
        if missing
        else ""
    )
    if infra:
        notes += f"; {infra} re-run trial(s) ended infra_error"
    if (rerun_set.manifest or {}).get("complete") is not True:
        reason = f"the baseline re-run {rerun_set.path} is incomplete: resume it before the drift test{notes}"
        return DriftResult(status="insufficient_evidence", reason=reason, pvalue=None, **base)
    status, p, needed = drift_decision(len(compared), len(fell), len(rose), alpha=alpha)
    if status == "insufficient_evidence":
        reason = (
            f"baseline drift cannot be tested: {len(compared)} compared case(s), and the exact paired test needs "
            f"at least {needed} at alpha {alpha:g} even if every one moved; re-run a larger --baseline-sample{notes}"
        )
        return DriftResult(status="insufficient_evidence", reason=reason, pvalue=None, **base)
    counts = (
        f"of {len(compared)} sampled cases re-run under today's infrastructure, {len(fell)} fell "
        f"({_shown(fell) or 'none'}) and {len(rose)} rose ({_shown(rose) or 'none'}); exact paired test p = {p:.4g}"
    )
    if status == "moved":
        reason = (
            f"the baseline moved (environment or evaluator drift): {counts} <= alpha {alpha:g}; "
            f"a comparison against the stored baseline would blame the candidate for it{notes}"
        )
        return DriftResult(status="moved", reason=reason, pvalue=p, **base)
    reason = f"no drift shown: {counts} > alpha {alpha:g}{notes}"
    return DriftResult(status="stable", reason=reason, pvalue=p, **base)


def drift_decision(
    n_compared: int, fell: int, rose: int, *, alpha: float = 0.05
) -> tuple[Literal["stable", "moved", "insufficient_evidence"], float | None, int]:
    """The decision of :func:`drift_test` from its counts.

    Parameters
    ----------
    n_compared
        Cases compared.
    fell, rose
        Cases whose pass fraction fell (b) / rose (c) in the re-run.
    alpha
        Level of the two-sided exact conditional test.

    Returns
    -------
    tuple
        ``(status, p-value or None, cases needed)``: ``insufficient_evidence`` (p None) when fewer
        than the cases needed were compared, else ``moved`` when ``p <= alpha``, else ``stable``.
    """
    alpha = check_open_unit(alpha, "alpha")
    needed = min_discordant_for(alpha, alternative="two-sided")
    if n_compared < needed:
        return "insufficient_evidence", None, needed
    p = mcnemar_test(fell, rose, alternative="two-sided", method="exact").pvalue_exact
    return ("moved" if p <= alpha else "stable"), p, needed


def baseline_drift(
    stored: RecordSet | str | os.PathLike[str], rerun: RecordSet | str | os.PathLike[str], *, alpha: float = 0.05
) -> CheckResult:
    """The gate precondition ``baseline_drift`` (see :func:`drift_test`): blocks when the baseline moved.

    Parameters
    ----------
    stored, rerun, alpha
        As in :func:`drift_test`.

    Returns
    -------
    CheckResult
        ``ok`` when stable; ``insufficient_evidence`` with the reason when it moved or cannot be tested.
    """
    return drift_test(stored, rerun, alpha=alpha).check()
