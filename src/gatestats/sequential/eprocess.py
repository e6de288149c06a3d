"""Mixture e-processes for 0/1 outcomes: a Bernoulli confidence sequence and a paired discordant test.

:func:`bernoulli_confidence_sequence` is the conjugate beta-binomial mixture of Howard, Ramdas,
McAuliffe & Sekhon (2021, section 3.2 and Proposition 6) for exact Bernoulli observations: with
:math:`S_t` successes in :math:`t` trials and the prior :math:`q \\sim \\mathrm{Beta}(r/(1-p), r/p)`
(mean :math:`p`),

.. math::

    M_t(p) = \\frac{B(r/p + t - S_t,\\ r/(1-p) + S_t)}{B(r/p,\\ r/(1-p))\\, p^{S_t} (1-p)^{t-S_t}},

a nonnegative martingale with :math:`M_0 = 1` when the success probability is :math:`p`; the
sequence is :math:`\\{p : M_t(p) < 1/\\alpha\\}`. The prior's concentration is tuned as in the
authors' package (confseq 0.0.11, ``bernoulli_confidence_interval``):
:math:`r = \\max\\{\\rho - p(1-p),\\ 10^{-3} p(1-p)\\}` with
:math:`\\rho = v_{opt} / (2\\log(1/\\alpha_{opt}) + \\log(1 + 2\\log(1/\\alpha_{opt})))` and
:math:`v_{opt} = t_{opt}\\, p(1-p)`, so the boundary is tightest near :math:`t_{opt}` trials.

:func:`discordant_eprocess` tests, with the case as the unit, whether the candidate wins more
discordant cases than it loses. Each discordant case contributes its sign (``+1``: the candidate
passes where the baseline fails). Under :math:`H_0: q = P(+ \\mid \\text{discordant}) \\le 1/2`, the
mixture over :math:`q' \\in [1/2, 1]` of the likelihood ratios
:math:`\\prod (q'/\\tfrac12)^{[+]} ((1-q')/\\tfrac12)^{[-]}` — prior :math:`\\mathrm{Beta}(a, a)`
restricted to :math:`[1/2, 1]` — is a nonnegative supermartingale (each factor has conditional
expectation :math:`2(q q' + (1-q)(1-q')) \\le 1` when :math:`q \\le 1/2 \\le q'`):

.. math::

    E_n^{better} = 2^{n} \\cdot \\frac{B(a + n_+,\\ a + n_-)\\, P(Q \\ge 1/2)}{B(a, a) / 2},
    \\qquad Q \\sim \\mathrm{Beta}(a + n_+,\\ a + n_-),

and :math:`E^{worse}` the same with the signs swapped. Concordant cases leave it unchanged.

References
----------
Howard, S. R., Ramdas, A., McAuliffe, J. and Sekhon, J. (2021). Time-uniform, nonparametric,
nonasymptotic confidence sequences. *The Annals of Statistics* 49(2), 1055-1080.
doi:10.1214/20-AOS1991.

Robbins, H. (1970). Statistical methods related to the law of the iterated logarithm. *The Annals
of Mathematical Statistics* 41(5), 1397-1409.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special, stats

from gatestats.vocabulary import check_open_unit

__all__ = [
    "BernoulliConfidenceSequence",
    "DiscordantEProcess",
    "bernoulli_confidence_sequence",
    "bernoulli_log_mixture",
    "bernoulli_mixture_prior",
    "discordant_eprocess",
]

_Array = NDArray[np.float64]
_EDGE = 1e-12
_BISECTIONS = 60


def _mixture_r(p: _Array, t_opt: float, alpha_opt: float) -> _Array:
    log_a = math.log(1 / alpha_opt)
    rho = t_opt * p * (1 - p) / (2 * log_a + math.log(1 + 2 * log_a))
    return np.asarray(np.maximum(rho - p * (1 - p), 1e-3 * p * (1 - p)))


def bernoulli_mixture_prior(p: ArrayLike, *, t_opt: float, alpha_opt: float) -> tuple[_Array, _Array]:
    """The mixing prior of :func:`bernoulli_log_mixture` for the null ``p``: its Beta shapes.

    Parameters
    ----------
    p
        The null success probability, in (0, 1).
    t_opt
        The number of trials the boundary is tuned for.
    alpha_opt
        The level the boundary is tuned for.

    Returns
    -------
    tuple of numpy.ndarray
        :math:`(r/(1-p), r/p)`: the prior of the success probability is
        :math:`\\mathrm{Beta}(r/(1-p), r/p)` (mean :math:`p`), :math:`r` as in the module docstring.
    """
    q = np.asarray(p, dtype=np.float64)
    r = _mixture_r(q, t_opt, alpha_opt)
    return np.asarray(r / (1 - q)), np.asarray(r / q)


def bernoulli_log_mixture(
    successes: ArrayLike, trials: ArrayLike, p: ArrayLike, *, t_opt: float, alpha_opt: float
) -> _Array:
    """The logarithm of the beta-binomial mixture martingale :math:`M_t(p)` (module docstring).

    Parameters
    ----------
    successes
        :math:`S_t`, successes so far.
    trials
        :math:`t`, trials so far.
    p
        The null success probability, in (0, 1).
    t_opt
        The number of trials the boundary is tuned for.
    alpha_opt
        The level the boundary is tuned for.

    Returns
    -------
    numpy.ndarray
        :math:`\\log M_t(p)`, broadcast over the arguments.

    Examples
    --------
    >>> float(bernoulli_log_mixture(0, 0, 0.3, t_opt=100, alpha_opt=0.05))
    0.0
    """
    s = np.asarray(successes, dtype=np.float64)
    t = np.asarray(trials, dtype=np.float64)
    q = np.asarray(p, dtype=np.float64)
    r = _mixture_r(q, t_opt, alpha_opt)
    a, b = r / q, r / (1 - q)
    out = special.betaln(a + t - s, b + s) - special.betaln(a, b) - s * np.log(q) - (t - s) * np.log1p(-q)
    return np.asarray(out, dtype=np.float64)


@dataclass(frozen=True, slots=True, kw_only=True)
class BernoulliConfidenceSequence:
    """Bounds on a success probability after each trial (running intersection if asked)."""

    alpha: float
    t_opt: float
    lower: _Array
    upper: _Array


def bernoulli_confidence_sequence(
    outcomes: ArrayLike, *, alpha: float = 0.05, t_opt: float = 100.0, running_intersection: bool = False
) -> BernoulliConfidenceSequence:
    """The beta-binomial mixture confidence sequence for a success probability.

    Parameters
    ----------
    outcomes
        0/1 outcomes in arrival order.
    alpha
        :math:`P(\\exists t: p \\notin [L_t, U_t]) \\le \\alpha` (two-sided).
    t_opt
        The number of trials the boundary is tuned for (``>= 1``).
    running_intersection
        Intersect the sets over time.

    Returns
    -------
    BernoulliConfidenceSequence
        The bounds after each trial (found by bisection on each side of :math:`S_t / t`, as the
        authors' package does).

    Raises
    ------
    ValueError
        An outcome is not 0 or 1, or ``alpha`` / ``t_opt`` is out of range.

    Examples
    --------
    >>> cs = bernoulli_confidence_sequence([1, 0, 1, 1] * 25, alpha=0.05, t_opt=100)
    >>> round(float(cs.lower[-1]), 3), round(float(cs.upper[-1]), 3)
    (0.607, 0.866)
    """
    alpha = check_open_unit(alpha, "alpha")
    if isinstance(t_opt, bool) or not isinstance(t_opt, int | float) or not (math.isfinite(t_opt) and t_opt >= 1):
        msg = f"t_opt: expected a number >= 1 (got {t_opt!r})"
        raise ValueError(msg)
    x = np.asarray(outcomes, dtype=np.float64)
    if x.ndim != 1 or not np.all((x == 0) | (x == 1)):
        msg = f"outcomes: expected a one-dimensional sequence of 0/1 values (got {np.asarray(outcomes)!r})"
        raise ValueError(msg)
    t = np.arange(1, x.size + 1, dtype=np.float64)
    s = np.cumsum(x)
    phat = np.clip(s / t, _EDGE, 1 - _EDGE) if x.size else np.zeros(0)
    target = math.log(1 / alpha)

    def bound(inner: _Array, outer: _Array) -> _Array:
        """Bisect between ``inner`` (in the set) and ``outer`` (the edge of [0, 1])."""
        edge = bernoulli_log_mixture(s, t, outer, t_opt=t_opt, alpha_opt=alpha) < target
        for _ in range(_BISECTIONS):
            mid = (inner + outer) / 2
            rejected = bernoulli_log_mixture(s, t, mid, t_opt=t_opt, alpha_opt=alpha) >= target
            outer = np.where(rejected, mid, outer)
            inner = np.where(rejected, inner, mid)
        return np.asarray(np.where(edge, np.round(outer), inner))

    lower = bound(phat.copy(), np.full_like(phat, _EDGE))
    upper = bound(phat.copy(), np.full_like(phat, 1 - _EDGE))
    if running_intersection:
        lower, upper = np.maximum.accumulate(lower), np.minimum.accumulate(upper)
    return BernoulliConfidenceSequence(alpha=alpha, t_opt=float(t_opt), lower=lower, upper=upper)


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscordantEProcess:
    """The paired discordant e-processes after each case.

    ``better[i]`` is the e-value against "the candidate wins at most half of the discordant cases"
    after case ``i + 1``, ``worse[i]`` against "it loses at most half"; ``wins`` and ``losses``
    count the discordant cases so far.
    """

    prior: float
    wins: NDArray[np.int64]
    losses: NDArray[np.int64]
    better: _Array
    worse: _Array


def _half_mixture(wins: _Array, losses: _Array, a: float) -> _Array:
    """Log of the mixture over :math:`q' \\in [1/2, 1]` (prior Beta(a, a) restricted), see the module."""
    n = wins + losses
    tail = stats.beta.logsf(0.5, a + wins, a + losses)
    return np.asarray(
        n * math.log(2) + special.betaln(a + wins, a + losses) + tail - special.betaln(a, a) + math.log(2)
    )


def discordant_eprocess(differences: ArrayLike, *, prior: float = 0.5) -> DiscordantEProcess:
    """The e-processes of a sequential paired sign test on discordant cases.

    Parameters
    ----------
    differences
        Per case, candidate minus baseline (any real number; only its sign counts: a case with
        difference 0 is concordant), in arrival order.
    prior
        :math:`a` of the symmetric :math:`\\mathrm{Beta}(a, a)` prior restricted to each half
        (``> 0``; 1/2 is Jeffreys').

    Returns
    -------
    DiscordantEProcess
        The e-values after each case (``better``: evidence the candidate wins more discordant
        cases; ``worse``: that it loses more).

    Raises
    ------
    ValueError
        A difference is NaN or infinite, or ``prior`` is not positive.

    Examples
    --------
    >>> e = discordant_eprocess([1, 0, 1, 1, -1, 1, 1, 1, 1, 1, 1, 1])
    >>> int(e.wins[-1]), int(e.losses[-1]), round(float(e.better[-1]), 2), round(float(e.worse[-1]), 3)
    (10, 1, 32.74, 0.063)
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1 or not np.all(np.isfinite(d)):
        msg = f"differences: expected a one-dimensional sequence of finite numbers (got {np.asarray(differences)!r})"
        raise ValueError(msg)
    if isinstance(prior, bool) or not isinstance(prior, int | float) or not (math.isfinite(prior) and prior > 0):
        msg = f"prior: expected a number > 0 (got {prior!r})"
        raise ValueError(msg)
    wins = np.cumsum(d > 0, dtype=np.int64)
    losses = np.cumsum(d < 0, dtype=np.int64)
    # A concordant case repeats the counts before it: each mixture is evaluated once per distinct (wins, losses),
    # elementwise the same doubles, then spread over the cases (issue 28, item 3, session 46).
    changed = d != 0
    changed[:1] = True
    w, lo = wins[changed].astype(np.float64), losses[changed].astype(np.float64)
    spread = np.cumsum(changed) - 1
    return DiscordantEProcess(
        prior=float(prior),
        wins=wins,
        losses=losses,
        better=np.exp(_half_mixture(w, lo, prior)[spread]),
        worse=np.exp(_half_mixture(lo, w, prior)[spread]),
    )
