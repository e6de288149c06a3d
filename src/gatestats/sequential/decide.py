"""The sequential decision of one gate rule from case-level values in arrival order.

A rule compares the mean :math:`\\mu` of a bounded case-level value with a boundary :math:`b`
(threshold rule: the case's pass rate, pass^k or pass@k estimate in [0, 1] against the threshold;
paired rule: candidate minus baseline per case in [-1, 1] against ``-margin``). After every batch
(each ``checkpoint``) two e-processes are read:

- ``e_pass``, against :math:`H_0^{pass}: \\mu \\le b` (higher is better); the rule stops with
  ``pass`` when :math:`e^{pass} \\ge 1/\\alpha_{pass}`;
- ``e_fail``, against :math:`H_0^{fail}: \\mu \\ge b`; the rule stops with ``fail`` when
  :math:`e^{fail} \\ge 1/\\alpha_{fail}`.

By Ville's inequality :math:`P(\\exists t: e_t \\ge 1/\\alpha) \\le \\alpha` for a nonnegative
supermartingale with :math:`e_0 = 1`, so the probability of ever stopping with a false ``pass`` is at
most :math:`\\alpha_{pass}`, whatever the monitoring. See :mod:`gatestats.sequential.confseq` for the
e-processes and docs/sequential.md ("Statistics") for the conventions.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gatestats._typing import JSONObject
from gatestats.sequential.confseq import as_numbers, check_method, expected_cases_to_cross, log_eprocess, lower_bound
from gatestats.sequential.design import SequentialMethod
from gatestats.vocabulary import check_open_unit

__all__ = [
    "E_VALUE_CAP",
    "SequencePoint",
    "SequentialDecision",
    "SequentialStatus",
    "decide_rule",
    "split_alpha",
]

SequentialStatus: TypeAlias = Literal["pass", "fail", "undecided"]

#: e-values are reported capped at this value (a JSON number; the decision uses the logarithm).
E_VALUE_CAP = 1e300
_LOG_CAP = math.log(E_VALUE_CAP)


@dataclass(frozen=True, slots=True, kw_only=True)
class SequencePoint:
    """The state of one rule after one batch.

    ``lower`` and ``upper`` are the running intersection (over the checkpoints so far) of the
    one-sided confidence sequences, in the values' own scale: for a higher-is-better rule ``lower``
    is at level :math:`1-\\alpha_{pass}` and ``upper`` at :math:`1-\\alpha_{fail}` (the other way round
    for a lower-is-better rule). ``e_pass`` and ``e_fail`` are the e-process values at this
    checkpoint, capped at :data:`E_VALUE_CAP`.
    """

    n_cases: int
    estimate: float
    lower: float
    upper: float
    e_pass: float
    e_fail: float

    def to_dict(self) -> JSONObject:
        """JSON-ready form.

        Returns
        -------
        JSONObject
            The six fields by name.
        """
        return asdict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialDecision:
    """The sequential decision of one rule.

    ``status`` is ``pass`` or ``fail`` from the first checkpoint where a side crossed
    (``decided_at``; the path ends there: stopping is final), else ``undecided``. For an undecided
    rule ``cases_needed`` estimates the cases still needed beyond the last checkpoint (see
    :func:`gatestats.sequential.confseq.expected_cases_to_cross`); ``None`` when no estimate can be
    given (no data, or an estimate exactly at the boundary).
    """

    status: SequentialStatus
    decided_at: int | None
    method: SequentialMethod
    alpha_pass: float
    alpha_fail: float
    boundary: float
    path: tuple[SequencePoint, ...]
    cases_needed: int | None

    def to_dict(self) -> JSONObject:
        """JSON-ready form (as a verdict binds it).

        Returns
        -------
        JSONObject
            The fields by name; ``path`` as a list of :meth:`SequencePoint.to_dict`.
        """
        return {
            "status": self.status,
            "decided_at": self.decided_at,
            "method": self.method,
            "alpha_pass": self.alpha_pass,
            "alpha_fail": self.alpha_fail,
            "boundary": self.boundary,
            "path": [p.to_dict() for p in self.path],
            "cases_needed": self.cases_needed,
        }


def split_alpha(rule_alpha: float, n_rules: int, share: float) -> tuple[float, float]:
    """The pass-side and fail-side alphas of one rule (Bonferroni across ``n_rules`` rules).

    .. math:: \\alpha_{pass} = s\\,\\alpha_j / m, \\qquad \\alpha_{fail} = (1 - s)\\,\\alpha_j / m

    Parameters
    ----------
    rule_alpha
        The rule's alpha :math:`\\alpha_j`, in (0, 1).
    n_rules
        The number :math:`m \\ge 1` of rules decided sequentially.
    share
        The design's ``alpha_pass_share`` :math:`s`, in (0, 1).

    Returns
    -------
    tuple[float, float]
        ``(alpha_pass, alpha_fail)``.

    Raises
    ------
    ValueError
        An argument is out of range.

    Examples
    --------
    >>> split_alpha(0.05, 2, 0.5)
    (0.0125, 0.0125)
    """
    rule_alpha = check_open_unit(rule_alpha, "rule_alpha")
    if isinstance(n_rules, bool) or not isinstance(n_rules, int) or n_rules < 1:
        msg = f"n_rules: expected an integer >= 1 (got {n_rules!r})"
        raise ValueError(msg)
    share = check_open_unit(share, "share")
    return share * rule_alpha / n_rules, (1 - share) * rule_alpha / n_rules


def _check_values(values: ArrayLike, lo: float, hi: float) -> NDArray[np.float64]:
    for name, v in (("lo", lo), ("hi", hi)):
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            msg = f"{name}: expected a finite number (got {v!r})"
            raise ValueError(msg)
    if not lo < hi:
        msg = f"lo, hi: expected lo < hi (got lo={lo!r}, hi={hi!r})"
        raise ValueError(msg)
    x = as_numbers("values", values)
    if x.ndim != 1:
        msg = f"values: expected a one-dimensional sequence (got shape {x.shape})"
        raise ValueError(msg)
    bad = np.flatnonzero(~np.isfinite(x) | (x < lo) | (x > hi))
    if bad.size:
        i = int(bad[0])
        msg = f"values[{i}]: expected a finite number in [{lo:g}, {hi:g}] (got {float(x[i])!r})"
        raise ValueError(msg)
    return x


def _check_checkpoints(checkpoints: Sequence[int]) -> tuple[int, ...]:
    ends = tuple(checkpoints)
    ok = all(isinstance(c, int | np.integer) and not isinstance(c, bool) and c >= 1 for c in ends)
    if not ends or not ok or any(b <= a for a, b in itertools.pairwise(ends)):
        msg = f"checkpoints: expected increasing integers >= 1 (got {list(ends)!r})"
        raise ValueError(msg)
    return tuple(int(c) for c in ends)


def _check_data(
    values: ArrayLike, checkpoints: Sequence[int], boundary: float, lo: float, hi: float
) -> tuple[NDArray[np.float64], tuple[int, ...]]:
    """The values and checkpoints, checked (a :class:`ValueError` naming the argument)."""
    x = _check_values(values, lo, hi)
    ends = _check_checkpoints(checkpoints)
    if isinstance(boundary, bool) or not isinstance(boundary, int | float) or not lo <= boundary <= hi:
        msg = f"boundary: expected a number in [{lo:g}, {hi:g}] (got {boundary!r})"
        raise ValueError(msg)
    return x, ends


def decide_rule(
    values: ArrayLike,
    *,
    checkpoints: Sequence[int],
    boundary: float,
    higher_is_better: bool,
    lo: float,
    hi: float,
    alpha_pass: float,
    alpha_fail: float,
    method: SequentialMethod,
) -> SequentialDecision:
    """Decide one rule sequentially from case-level values in arrival order.

    Parameters
    ----------
    values
        Case-level values in the order the cases ran, each in ``[lo, hi]``.
    checkpoints
        Cumulative case counts at which the rule is read (the ends of the batches), increasing;
        only those ``<= len(values)`` are evaluated.
    boundary
        The rule's boundary :math:`b` in ``[lo, hi]`` (a threshold, ``-margin`` or 0).
    higher_is_better
        ``True``: ``pass`` means the mean is above ``boundary``; ``False``: below it.
    lo, hi
        The range of a case-level value (``0, 1`` for rates, ``-1, 1`` for paired differences).
    alpha_pass
        The error allowed for a false ``pass`` (see :func:`split_alpha`).
    alpha_fail
        The error allowed for a false ``fail``.
    method
        ``"betting"``, ``"empirical_bernstein"`` or ``"hoeffding"``.

    Returns
    -------
    SequentialDecision
        The status, the checkpoint that decided it and the path up to it.

    Raises
    ------
    ValueError
        A value is NaN, infinite or outside ``[lo, hi]``; an alpha is outside (0, 1); the boundary
        is outside ``[lo, hi]``; the checkpoints are not increasing positive integers; the method
        is unknown. The message names the argument (and the index of a bad value).

    Notes
    -----
    Values are rescaled to :math:`y = (x - lo)/(hi - lo)` (:math:`(hi - x)/(hi - lo)` when lower is
    better), the boundary to :math:`m`. Pass side: :func:`~gatestats.sequential.confseq.log_eprocess`
    on :math:`y` against :math:`m` at :math:`\\alpha_{pass}`; fail side: on :math:`1 - y` against
    :math:`1 - m` at :math:`\\alpha_{fail}`. Both crossing at one checkpoint: ``fail``.

    Examples
    --------
    >>> d = decide_rule([1.0] * 60, checkpoints=[20, 40, 60], boundary=0.7, higher_is_better=True,
    ...                 lo=0.0, hi=1.0, alpha_pass=0.025, alpha_fail=0.025, method="betting")
    >>> d.status, d.decided_at, len(d.path)
    ('pass', 20, 1)
    """
    method = check_method(method)
    a_pass, a_fail = check_open_unit(alpha_pass, "alpha_pass"), check_open_unit(alpha_fail, "alpha_fail")
    x, ends = _check_data(values, checkpoints, boundary, lo, hi)
    width = hi - lo
    y = (x - lo) / width if higher_is_better else (hi - x) / width
    m = (boundary - lo) / width if higher_is_better else (hi - boundary) / width
    reached = [c for c in ends if c <= x.size]
    path, status, decided = _walk(x, y, m, reached, (a_pass, a_fail), method, (lo, hi, higher_is_better))
    needed = _needed(y, m, path, status, (a_pass, a_fail), method)
    return SequentialDecision(
        status=status,
        decided_at=decided,
        method=method,
        alpha_pass=a_pass,
        alpha_fail=a_fail,
        boundary=float(boundary),
        path=tuple(path),
        cases_needed=needed,
    )


def _needed(
    y: NDArray[np.float64],
    m: float,
    path: list[SequencePoint],
    status: SequentialStatus,
    alphas: tuple[float, float],
    method: SequentialMethod,
) -> int | None:
    """``cases_needed`` of an undecided rule with data (else ``None``)."""
    if status != "undecided" or not path:
        return None
    return expected_cases_to_cross(y[: path[-1].n_cases], m, alpha_pass=alphas[0], alpha_fail=alphas[1], method=method)


def _walk(
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    m: float,
    reached: list[int],
    alphas: tuple[float, float],
    method: SequentialMethod,
    scale: tuple[float, float, bool],
) -> tuple[list[SequencePoint], SequentialStatus, int | None]:
    """The path over the checkpoints reached, up to the first that decides the rule."""
    if not reached:
        return [], "undecided", None
    a_pass, a_fail = alphas
    lo, hi, higher = scale
    at = np.asarray(reached) - 1
    log_pass = log_eprocess(y, m, alpha=a_pass, method=method)[at]
    log_fail = log_eprocess(1 - y, 1 - m, alpha=a_fail, method=method)[at]
    crossed = np.flatnonzero((log_pass >= -math.log(a_pass)) | (log_fail >= -math.log(a_fail)))
    if crossed.size:  # the path ends at the stop: no bound is computed past it
        at = at[: crossed[0] + 1]
    low_y = np.maximum.accumulate(lower_bound(y, at, alpha=a_pass, method=method))
    high_y = 1 - np.maximum.accumulate(lower_bound(1 - y, at, alpha=a_fail, method=method))
    path: list[SequencePoint] = []
    for j, n in enumerate(reached[: at.size]):
        lower, upper = (lo + low_y[j] * (hi - lo), lo + high_y[j] * (hi - lo))
        if not higher:
            lower, upper = hi - high_y[j] * (hi - lo), hi - low_y[j] * (hi - lo)
        path.append(
            SequencePoint(
                n_cases=n,
                estimate=float(np.mean(x[:n])),
                lower=float(lower),
                upper=float(upper),
                e_pass=math.exp(min(float(log_pass[j]), _LOG_CAP)),
                e_fail=math.exp(min(float(log_fail[j]), _LOG_CAP)),
            )
        )
        failed = log_fail[j] >= -math.log(a_fail)
        if failed or log_pass[j] >= -math.log(a_pass):
            return path, "fail" if failed else "pass", n
    return path, "undecided", None
