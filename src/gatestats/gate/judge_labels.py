"""Judge rules on human labels: the labels file a policy names, and the prediction-powered threshold row.

``[judges.NAME] labels = "FILE"`` names a table of people's verdicts on cases (``case_id``,
``label`` 0 or 1). A ``pass_rate`` threshold rule graded by that judge then decides on the
prediction-powered estimate over its cases (Angelopoulos et al. 2023; PPI++, Angelopoulos, Duchi &
Zrnic 2023): the judge's per-case pass fraction is the prediction, the person's label the truth,
the labelled cases a simple random sample of the run set's cases. The estimate and its interval are
:func:`gatestats.judges.ppi.ppi_mean`'s (small-sample t interval); the one-sided p-values invert
that interval (:func:`gatestats.gate.rules.interval_pvalues`), at the rule's alpha, and go to the
multiplicity families like every threshold row (docs/gate.md, "Judge rules on human labels").

The gate command reads the files (:func:`load_judge_labels`) after the record sets; the engine
reads none.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Mapping

import numpy as np
import numpy.typing as npt
import polars as pl

from gatestats.errors import MAX_PROBLEMS, GatestatsError, RecordFileError, RecordProblem
from gatestats.gate.bindings import LabelsBinding
from gatestats.gate.policy import Policy, Rule
from gatestats.gate.rules import RuleEvidence
from gatestats.io.digest import digest_file
from gatestats.judges.ppi import MIN_LABELS, ppi_mean
from gatestats.paired.noninferiority import bounded_mean_evalues
from gatestats.tables.inputs import read_input_table, typed_cell

__all__ = [
    "JudgeLabels",
    "label_blocks",
    "load_bound_judge_labels",
    "load_judge_labels",
    "ppi_threshold_evidence",
    "read_case_labels",
]

#: The test named on a row that names no estimate.
_TEST = "PPI (λ = 1), betting test on human labels"

#: Per judge grader with ``labels`` in the policy: its human labels by case id (0.0 or 1.0).
JudgeLabels = Mapping[str, Mapping[str, float]]


def read_case_labels(path: str | os.PathLike[str], case_ids: Collection[str]) -> dict[str, float]:
    """Read a labels table (``case_id``, ``label`` 0 or 1) whose ids must be cases of the run set.

    Parameters
    ----------
    path
        The table (CSV, JSONL or Parquet; :func:`gatestats.tables.inputs.read_input_table`).
    case_ids
        The cases of the candidate's run set.

    Returns
    -------
    dict
        ``{case id: 0.0 or 1.0}``.

    Raises
    ------
    RecordFileError
        Every problem with its file, line (Parquet: row) and field: a missing column, an empty
        table, a missing or duplicate case id, an id that is not a case of the run set, a label
        that is not 0 or 1 (NaN, 0.5, text, a boolean, null).
    """
    table = read_input_table(path, ["case_id", "label"])
    if not table.rows:
        raise RecordFileError.single(path, "<file>", "no labelled case (the table is empty)")
    known = set(case_ids)
    out: dict[str, float] = {}
    first: dict[str, int] = {}
    problems: list[RecordProblem] = []
    for i, row in enumerate(table.rows):
        cid, why = typed_cell(row["case_id"], "id", text=table.text)
        label, bad = typed_cell(row["label"], "number", text=table.text)
        if cid is None:
            problems.append(table.problem(i, "case_id", why or "missing case id"))
        elif cid in first:
            problems.append(
                table.problem(i, "case_id", f"duplicate case id {cid!r} (first at {table.where(first[cid])})")
            )
        elif cid not in known:
            problems.append(table.problem(i, "case_id", f"{cid!r} is not a case of the candidate's run set"))
        if label not in (0, 1) or isinstance(label, bool):
            problems.append(table.problem(i, "label", bad or f"expected 0 or 1 (got {label!r})"))
        if cid is not None and cid not in first:
            first[cid] = i
            out[cid] = float(label) if label in (0, 1) else math.nan
    if problems:
        raise RecordFileError(problems[:MAX_PROBLEMS], total=len(problems))
    return out


def load_judge_labels(policy: Policy, case_ids: Collection[str]) -> dict[str, dict[str, float]]:
    """Read the labels file of every judge grader whose policy table names one.

    Parameters
    ----------
    policy
        The gate policy (its ``[judges.NAME] labels``).
    case_ids
        The cases of the candidate's run set.

    Returns
    -------
    dict
        ``{grader: {case id: label}}`` for every judge with ``labels``.

    Raises
    ------
    RecordFileError
        A labels file that cannot be read or breaks the format (:func:`read_case_labels`).
    """
    return {name: read_case_labels(req.labels, case_ids) for name, req in sorted(policy.judges.items()) if req.labels}


def load_bound_judge_labels(
    policy: Policy, case_ids: Collection[str]
) -> tuple[dict[str, dict[str, float]], tuple[LabelsBinding, ...]]:
    """:func:`load_judge_labels`, and each file as the verdict binds it (path, digest, labels read).

    Each file is digested before and after it is read; a file that changed in between is refused,
    so the digest the verdict binds (and ``gatestats verify`` re-checks) is that of the labels used.

    Parameters
    ----------
    policy, case_ids
        As for :func:`load_judge_labels` (which raises the ``RecordFileError`` of a bad file).

    Returns
    -------
    tuple
        ``{grader: {case id: label}}`` and one :class:`LabelsBinding` per judge with ``labels``.

    Raises
    ------
    GatestatsError
        A labels file that changed while it was read (its path and both digests named).
    """
    files = {name: req.labels for name, req in sorted(policy.judges.items()) if req.labels is not None}
    before = {name: digest_file(path) for name, path in files.items()}
    labels = load_judge_labels(policy, case_ids)
    bound: list[LabelsBinding] = []
    for name, path in files.items():
        after = digest_file(path)
        if after != before[name]:
            msg = (
                f"{path}: the labels file of judge {name!r} changed while the gate read it "
                f"(digest {before[name]} before, {after} after); run the gate again"
            )
            raise GatestatsError(msg)
        bound.append(LabelsBinding(judge=name, path=str(path), digest=after, n_labels=len(labels[name])))
    return labels, tuple(bound)


def _insufficient(rule: Rule, reason: str, n_cases: int) -> RuleEvidence:
    threshold = float(rule.threshold if rule.threshold is not None else math.nan)
    return RuleEvidence.insufficient("threshold", test=_TEST, threshold=threshold, reason=reason, n_cases=n_cases)


def label_blocks(
    f: npt.NDArray[np.float64], labelled: npt.NDArray[np.bool_], y: npt.NDArray[np.float64], seed: int
) -> npt.NDArray[np.float64]:
    """One PPI unit per labelled case: its rectifier plus the judge's mean over its block of unlabelled cases.

    The unlabelled cases are dealt at random (seeded) into as many blocks as there are labels; the
    unit of label j is ``mean(f over block j) + (y_j - f_j)`` (``y_j`` when its block is empty). With
    cases drawn independently and the labelled cases a random subset, the units are independent, in
    [-1, 2], and each has mean E[Y]: classical PPI (lambda = 1) cut into independent pieces.

    Parameters
    ----------
    f
        The judge's per-case pass fractions, every case of the rule.
    labelled
        Which cases carry a human label (in the order of ``f``).
    y
        The labels of the labelled cases, in the order of ``f``.
    seed
        The policy's seed (the deal of the unlabelled cases).

    Returns
    -------
    numpy.ndarray
        One unit per label.
    """
    rest = f[~labelled][np.random.default_rng(seed).permutation(int((~labelled).sum()))]
    chunks = np.array_split(rest, int(labelled.sum()))
    fl = f[labelled]
    means = np.array([c.mean() if c.size else fl[j] for j, c in enumerate(chunks)], dtype=np.float64)
    return means + (y - fl)


def _pvalues(units: npt.NDArray[np.float64], value: float) -> tuple[float, float]:
    """(p of mean > value, p of mean < value): the bounded-mean betting test on units in [-1, 2]."""
    return _pvalue(units, value, 0), _pvalue(units, value, 1)


def _pvalue(units: npt.NDArray[np.float64], value: float, side: int) -> float:
    """``_pvalues(units, value)[side]``, the other side not computed (side 0: mean > value, 1: mean < value)."""
    if side == 0:
        above = float(bounded_mean_evalues(units - value, lower=1 + value))
        return min(1.0, 1 / above)
    below = float(bounded_mean_evalues(value - units, lower=2 - value))
    return min(1.0, 1 / below)


def _bound(units: npt.NDArray[np.float64], alpha: float, side: int) -> float:
    """The one-sided 1 - alpha bound (side 0: lower, 1: upper) of the units' mean, by bisection on the test.

    Each step computes the test of its side only (:func:`_pvalue`; the other side's e-value was
    computed and never read).
    """
    lo, hi = -1.0, 2.0
    for _ in range(40):
        mid = (lo + hi) / 2
        excluded = _pvalue(units, mid, side) <= alpha
        if excluded == (side == 0):
            lo = mid
        else:
            hi = mid
    return lo if side == 0 else hi


def ppi_threshold_evidence(
    values: pl.DataFrame,
    labels: Mapping[str, float] | None,
    *,
    rule: Rule,
    grouped: bool,
    confidence_level: float,
    seed: int,
) -> RuleEvidence:
    """Evidence that the people's pass rate over the rule's cases is above ``rule.threshold``, by PPI.

    Parameters
    ----------
    values
        The candidate's per-case judge pass fractions (columns ``case_id``, ``value``; no null).
    labels
        The judge's human labels by case id (``None``: the policy names a file the gate was not given).
    rule
        The ``pass_rate`` threshold rule graded by the judge.
    grouped
        Whether the cases carry groups (refused: the units treat cases as independent).
    confidence_level
        The level of the interval shown.
    seed
        The policy's seed (:func:`label_blocks`).

    Returns
    -------
    RuleEvidence
        ``observed``: the classical PPI estimate (:func:`gatestats.judges.ppi.ppi_mean`, lambda = 1);
        the p-values: the betting test on :func:`label_blocks`' units; the interval: that test
        inverted, so the two agree. ``insufficient_evidence`` with fewer than :data:`MIN_LABELS`
        labelled cases, no unlabelled case, grouped cases or no labels given.
    """
    n_cases = values.height
    if labels is None:
        return _insufficient(rule, f"the human labels of judge {rule.grader!r} were not given to the gate", n_cases)
    if grouped:
        return _insufficient(rule, "grouped cases: the PPI units treat cases as independent", n_cases)
    ids = values.get_column("case_id").to_list()
    f = values.get_column("value").to_numpy().astype(np.float64)
    mask = np.array([c in labels for c in ids], dtype=bool)
    y = np.array([labels[c] for c in ids if c in labels], dtype=np.float64)
    n = int(mask.sum())
    if n < MIN_LABELS or n == n_cases:
        why = "no case is left without a label" if n == n_cases and n >= MIN_LABELS else f"at least {MIN_LABELS}"
        return _insufficient(rule, f"{n} human label(s) among the rule's {n_cases} cases: {why} needed", n_cases)
    point = ppi_mean(y, f[mask], f[~mask], lam=1.0, min_labels=MIN_LABELS, bounds=(0.0, 1.0), small_sample=True)
    units = label_blocks(f, mask, y, seed)
    threshold = float(rule.threshold if rule.threshold is not None else math.nan)
    p_pass, p_fail = _pvalues(units, threshold)
    tail = (1 - confidence_level) / 2
    return RuleEvidence(
        kind="threshold",
        baseline=None,
        test=f"PPI (λ = 1), betting test on {n} human labels of {n_cases} cases",
        observed=None if point.estimate is None else min(1.0, max(0.0, point.estimate)),
        ci_low=max(0.0, _bound(units, tail, 0)),
        ci_high=min(1.0, _bound(units, tail, 1)),
        threshold=threshold,
        pvalue_pass=p_pass,
        pvalue_fail=p_fail,
        status="ok",
        reason=None,
        n_cases=n_cases,
        details={"estimator": "ppi", "n_labels": n, "units": "label blocks", "note": point.note},
    )
