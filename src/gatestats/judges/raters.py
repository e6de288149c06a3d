r"""Several human raters: the majority label, their agreement with each other, and a judge against them.

The honest ceiling for a judge is the humans' agreement with each other: a judge that agrees with
each rater about as well as the raters agree among themselves is as good as another rater.

- :func:`majority_labels` — per item the label most raters gave. **Tie policy**: when no label has
  a strict plurality (e.g. 1 / 2 / tie from three raters, or 1 / 2 from two), the item has *no*
  majority label: it is counted (``n_rater_ties``) and left out of the judge-vs-majority
  statistics, never broken at random or by a fixed preference. Missing ratings (``None``) are
  skipped; an item with no rating is an error.
- :func:`rater_agreement` — Fleiss' kappa (Fleiss 1971; items rated by every rater), Krippendorff's
  alpha (nominal, or ordinal for an ordered scale; missing ratings allowed), each with a percentile
  bootstrap interval over items (Zapf et al. 2016), and Cohen's kappa of every pair of raters with
  its asymptotic interval (plus quadratic weighted kappa on an ordinal scale).
- :func:`judge_vs_raters` — the judge's agreement and Cohen's kappa with each rater.

Fleiss' kappa, with :math:`n_{ij}` the raters who put item :math:`i` in class :math:`j` and
:math:`m` raters per item:

.. math::

    P_i = \frac{\sum_j n_{ij}^2 - m}{m(m-1)}, \quad p_j = \frac{\sum_i n_{ij}}{N m}, \quad
    \kappa = \frac{\bar P - \sum_j p_j^2}{1 - \sum_j p_j^2}.

Krippendorff's alpha from the coincidence matrix :math:`o_{ck} = \sum_u (n_{uc} n_{uk} -
[c = k]\, n_{uc}) / (m_u - 1)` over units with :math:`m_u \ge 2` ratings, :math:`n_c = \sum_k o_{ck}`,
:math:`n = \sum_c n_c`:

.. math::

    \alpha = 1 - (n - 1)\frac{\sum_{c,k} o_{ck}\,\delta^2_{ck}}{\sum_{c,k} n_c n_k\,\delta^2_{ck}},

with :math:`\delta^2_{ck} = [c \ne k]` (nominal) or, for ranks :math:`c \le k`,
:math:`\delta^2_{ck} = (\sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2` (ordinal).

References
----------
Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psychological Bulletin
    76(5), 378-382.
Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School for
    Communication, University of Pennsylvania, departmental paper 43.
Zapf, A., Castell, S., Morawietz, L. & Karch, A. (2016). Measuring inter-rater reliability for
    nominal data: which coefficients and confidence intervals are appropriate? BMC Medical Research
    Methodology 16, 93.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import numpy as np
import numpy.typing as npt

from gatestats._typing import JSONObject
from gatestats.judges._stats import Kappa, Proportion, _json_fields, cohens_kappa, proportion
from gatestats.judges.multiclass import DEFAULT_SEED, BootstrapDraw, BootstrapEstimate, bootstrap_estimate
from gatestats.judges.weighted_kappa import WeightedKappa, weighted_kappa
from gatestats.vocabulary import check_confidence_level

__all__ = [
    "MajorityLabels",
    "PairAgreement",
    "RaterAgreement",
    "fleiss_kappa_counts",
    "judge_vs_raters",
    "krippendorff_alpha_counts",
    "majority_labels",
    "rater_agreement",
    "rating_counts",
]

Ratings = Sequence[Sequence[str | None]]


@dataclass(frozen=True, slots=True, kw_only=True)
class MajorityLabels:
    """Per item the majority label (``None`` on a rater tie), and how often raters tied or agreed."""

    labels: tuple[str | None, ...]
    n_items: int
    n_rater_ties: int
    n_unanimous: int
    #: Indices (0-based) of the first 20 items without a majority.
    rater_tie_items: tuple[int, ...]

    def to_dict(self) -> JSONObject:
        """JSON-ready summary (without the per-item labels)."""
        return {
            "n_items": self.n_items,
            "n_rater_ties": self.n_rater_ties,
            "n_unanimous": self.n_unanimous,
            "rater_tie_items": list(self.rater_tie_items),
            "tie_policy": "no strict plurality -> no majority label; counted and left out",
        }


def _check_ratings(ratings: Ratings, classes: Sequence[str]) -> None:
    levels = set(classes)
    if len(classes) < 2 or len(levels) != len(classes):
        msg = f"classes must list at least 2 distinct classes (got {list(classes)!r})"
        raise ValueError(msg)
    widths = {len(r) for r in ratings}
    if len(widths) > 1:
        msg = f"every item needs one entry per rater (got rows of {sorted(widths)} entries)"
        raise ValueError(msg)
    for item, row in enumerate(ratings):
        if all(v is None for v in row):
            msg = f"item {item} has no rating"
            raise ValueError(msg)
        for rater, value in enumerate(row):
            if value is not None and value not in levels:
                msg = f"rating of item {item} by rater {rater} is not a class {list(classes)!r} (got {value!r})"
                raise ValueError(msg)


def majority_labels(ratings: Ratings, *, classes: Sequence[str]) -> MajorityLabels:
    """The majority label of each item (module docstring for the tie policy).

    Parameters
    ----------
    ratings
        One row per item, one entry per rater (``None``: not rated).
    classes
        Every class.

    Returns
    -------
    MajorityLabels
        The labels and the counts of rater ties and unanimous items.

    Raises
    ------
    ValueError
        Ragged rows, an item without ratings, or a rating that is not a class.

    Examples
    --------
    >>> m = majority_labels([["1", "1", "2"], ["1", "2", "0"], ["2", "2", None]], classes=["1", "2", "0"])
    >>> m.labels, m.n_rater_ties, m.n_unanimous
    (('1', None, '2'), 1, 1)
    """
    _check_ratings(ratings, classes)
    labels: list[str | None] = []
    ties: list[int] = []
    unanimous = 0
    for item, row in enumerate(ratings):
        top = Counter(v for v in row if v is not None).most_common()
        if len(top) > 1 and top[0][1] == top[1][1]:
            labels.append(None)
            ties.append(item)
        else:
            labels.append(top[0][0])
            unanimous += len(top) == 1
    return MajorityLabels(
        labels=tuple(labels),
        n_items=len(labels),
        n_rater_ties=len(ties),
        n_unanimous=unanimous,
        rater_tie_items=tuple(ties[:20]),
    )


def rating_counts(ratings: Ratings, *, classes: Sequence[str]) -> npt.NDArray[np.float64]:
    """Items x classes: how many raters put each item in each class (missing ratings skipped).

    Parameters
    ----------
    ratings
        One row per item, one entry per rater (``None``: not rated).
    classes
        Every class, in order.

    Returns
    -------
    numpy.ndarray
        The counts.

    Examples
    --------
    >>> rating_counts([["a", "a", None], ["a", "b", "b"]], classes=["a", "b"]).tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    _check_ratings(ratings, classes)
    index = {c: i for i, c in enumerate(classes)}
    counts = np.zeros((len(ratings), len(classes)))
    for item, row in enumerate(ratings):
        for value in row:
            if value is not None:
                counts[item, index[value]] += 1
    return counts


def fleiss_kappa_counts(counts: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> npt.NDArray[np.float64]:
    """Fleiss' kappa of an items x classes count table with the same number of raters per item.

    Parameters
    ----------
    counts
        Items x classes rating counts (every row the same total, at least 2).
    weights
        Optional stack (replicates x items) of item multiplicities, for the bootstrap.

    Returns
    -------
    numpy.ndarray
        Kappa (one value, or one per replicate); NaN where undefined (expected agreement 1).

    Examples
    --------
    >>> round(float(fleiss_kappa_counts([[3, 0], [0, 3], [2, 1], [3, 0]])[0]), 4)
    0.625
    """
    n = np.asarray(counts, dtype=np.float64)
    m = n.sum(axis=1)
    if n.ndim != 2 or n.shape[0] == 0 or np.any(m != m[0]) or m[0] < 2:
        msg = f"Fleiss' kappa needs items rated by the same number (>= 2) of raters (got totals {np.unique(m)[:5]})"
        raise ValueError(msg)
    w = np.ones((1, n.shape[0])) if weights is None else np.atleast_2d(np.asarray(weights, dtype=np.float64))
    raters = m[0]
    agreement = ((n**2).sum(axis=1) - raters) / (raters * (raters - 1))
    total = w.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_bar = (w @ agreement) / total
        p_j = (w @ n) / (total * raters)[:, None]
        p_e = (p_j**2).sum(axis=1)
        return np.where(p_e < 1 - 1e-12, (p_bar - p_e) / (1 - p_e), np.nan)


def krippendorff_alpha_counts(
    counts: npt.ArrayLike, *, level: Literal["nominal", "ordinal"] = "nominal", weights: npt.ArrayLike | None = None
) -> npt.NDArray[np.float64]:
    """Krippendorff's alpha of a units x values count table (values in scale order when ordinal).

    Parameters
    ----------
    counts
        Units x values: how many raters gave each value to each unit (missing ratings are simply
        not counted; units with fewer than 2 ratings carry no information and are ignored).
    level
        ``nominal`` or ``ordinal`` difference function.
    weights
        Optional stack (replicates x units) of unit multiplicities, for the bootstrap.

    Returns
    -------
    numpy.ndarray
        Alpha (one value, or one per replicate); NaN where undefined (no disagreement expected).

    Examples
    --------
    Krippendorff (2011), the 4 observers x 12 units example with missing data (nominal 0.743):

    >>> table = [[3, 0, 0, 0, 0], [0, 3, 1, 0, 0], [0, 0, 4, 0, 0], [0, 0, 4, 0, 0], [0, 4, 0, 0, 0],
    ...          [1, 1, 1, 1, 0], [0, 0, 0, 4, 0], [3, 1, 0, 0, 0], [0, 4, 0, 0, 0], [0, 0, 0, 0, 3],
    ...          [2, 0, 0, 0, 0], [0, 0, 1, 0, 0]]
    >>> nominal, ordinal = krippendorff_alpha_counts(table), krippendorff_alpha_counts(table, level="ordinal")
    >>> round(float(nominal[0]), 3), round(float(ordinal[0]), 3)
    (0.743, 0.815)
    """
    n_uc = np.asarray(counts, dtype=np.float64)
    m_u = n_uc.sum(axis=1)
    keep = m_u >= 2
    n_uc, m_u = n_uc[keep], m_u[keep]
    w = (
        np.ones((1, n_uc.shape[0]))
        if weights is None
        else np.atleast_2d(np.asarray(weights, dtype=np.float64))[:, keep]
    )
    scaled = w / (m_u - 1)  # replicates x units
    # o_ck = sum_u w_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)
    coincidence = np.einsum("bu,uc,uk->bck", scaled, n_uc, n_uc) - np.einsum("bu,uc->bc", scaled, n_uc)[
        :, :, None
    ] * np.eye(n_uc.shape[1])
    n_c = coincidence.sum(axis=2)
    n = n_c.sum(axis=1)
    k = n_uc.shape[1]
    if level == "nominal":
        delta = np.broadcast_to(1.0 - np.eye(k), (w.shape[0], k, k))
    else:
        cum = np.cumsum(n_c, axis=1)
        # sum_{g=c}^{k} n_g - (n_c + n_k)/2 for c <= k, symmetric
        lo, hi = np.minimum.outer(np.arange(k), np.arange(k)), np.maximum.outer(np.arange(k), np.arange(k))
        between = cum[:, hi] - cum[:, lo] + n_c[:, lo]
        delta = (between - (n_c[:, :, None] + n_c[:, None, :]) / 2) ** 2
    observed = (coincidence * delta).sum(axis=(1, 2))
    expected = (n_c[:, :, None] * n_c[:, None, :] * delta).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1 - (n - 1) * observed / expected, np.nan)


@dataclass(frozen=True, slots=True, kw_only=True)
class PairAgreement:
    """Agreement of two raters (or a rater and the judge) on the items both rated."""

    first: str
    second: str
    n: int
    agreement: Proportion
    kappa: Kappa
    weighted_kappa: WeightedKappa | None

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict."""
        return _json_fields(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class RaterAgreement:
    """Inter-rater agreement of several raters (module docstring)."""

    raters: tuple[str, ...]
    classes: tuple[str, ...]
    ordinal: bool
    majority: MajorityLabels
    #: Items rated by every rater (Fleiss' kappa uses only these).
    n_complete: int
    fleiss_kappa: BootstrapEstimate
    krippendorff_alpha: BootstrapEstimate
    krippendorff_level: Literal["nominal", "ordinal"]
    pairwise: tuple[PairAgreement, ...]

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict."""
        return _json_fields(self)


def _pair(
    first: str,
    second: str,
    a: Sequence[str | None],
    b: Sequence[str | None],
    classes: Sequence[str],
    *,
    ordinal: bool,
    confidence_level: float,
) -> PairAgreement:
    index = {c: i for i, c in enumerate(classes)}
    table = np.zeros((len(classes), len(classes)))
    for x, y in zip(a, b, strict=True):
        if x is not None and y is not None:
            table[index[x], index[y]] += 1
    n = int(table.sum())
    return PairAgreement(
        first=first,
        second=second,
        n=n,
        agreement=proportion(
            int(np.trace(table)),
            n,
            confidence_level=confidence_level,
            undefined_reason=f"no item rated by both {first} and {second}",
        ),
        kappa=cohens_kappa(table, confidence_level=confidence_level),
        weighted_kappa=weighted_kappa(table, weights="quadratic", confidence_level=confidence_level)
        if ordinal
        else None,
    )


def _rater_names(raters: Sequence[str] | None, width: int) -> tuple[str, ...]:
    """The raters' names (default ``rater1``, ``rater2``, ...); one for each of the ``width`` raters."""
    names = tuple(raters) if raters is not None else tuple(f"rater{i + 1}" for i in range(width))
    if len(names) != width:
        msg = f"raters must name every rater (got {len(names)} names for {width} raters)"
        raise ValueError(msg)
    return names


def _item_weights(n_items: int, *, n_resamples: int, seed: int) -> npt.NDArray[np.float64]:
    """How often each item is drawn in each bootstrap resample (one row per resample)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_items, np.full(n_items, 1 / n_items), size=n_resamples).astype(np.float64)


def _fleiss(
    counts: npt.NDArray[np.float64],
    complete: npt.NDArray[np.bool_],
    weights: npt.NDArray[np.float64],
    boot: BootstrapDraw,
) -> BootstrapEstimate:
    """Fleiss' kappa over the items every rater rated, with its bootstrap interval."""
    if complete.any():
        fk_rep = fleiss_kappa_counts(counts[complete], weights[:, complete])
        fleiss = bootstrap_estimate(
            float(fleiss_kappa_counts(counts[complete])[0]),
            fk_rep,
            n=int(complete.sum()),
            undefined_reason="Fleiss' kappa is undefined: every rating is one class",
            **boot,
        )
    else:
        fleiss = bootstrap_estimate(
            float("nan"),
            np.full(1, np.nan),
            n=0,
            undefined_reason=("Fleiss' kappa needs items rated by every rater (got none)"),
            **boot,
        )
    return fleiss


def _alpha(
    counts: npt.NDArray[np.float64],
    level: Literal["nominal", "ordinal"],
    weights: npt.NDArray[np.float64],
    boot: BootstrapDraw,
) -> BootstrapEstimate:
    """Krippendorff's alpha over the items rated at least twice, with its bootstrap interval."""
    return bootstrap_estimate(
        float(krippendorff_alpha_counts(counts, level=level)[0]),
        krippendorff_alpha_counts(counts, level=level, weights=weights),
        n=int((counts.sum(axis=1) >= 2).sum()),
        undefined_reason=(
            "Krippendorff's alpha is undefined: no disagreement is possible (one value, or no unit rated twice)"
        ),
        **boot,
    )


def rater_agreement(
    ratings: Ratings,
    *,
    classes: Sequence[str],
    raters: Sequence[str] | None = None,
    ordinal: bool = False,
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = DEFAULT_SEED,
) -> RaterAgreement:
    """Fleiss' kappa, Krippendorff's alpha and pairwise Cohen's kappa of several raters.

    Parameters
    ----------
    ratings
        One row per item, one entry per rater (``None``: not rated); at least 2 raters.
    classes
        Every class (scale order when ``ordinal``).
    raters
        Rater names (default ``rater1``, ``rater2``, ...).
    ordinal
        Ordered scale: ordinal Krippendorff's alpha and quadratic weighted kappa per pair.
    confidence_level
        In (0, 1).
    n_resamples, seed
        The item bootstrap of Fleiss' kappa and Krippendorff's alpha.

    Returns
    -------
    RaterAgreement
        Fleiss' kappa is ``insufficient_evidence`` without an item rated by every rater.

    Raises
    ------
    ValueError
        Fewer than 2 raters; see :func:`majority_labels`.

    Examples
    --------
    >>> r = rater_agreement([["a", "a"], ["b", "b"], ["a", "b"], ["b", "b"]], classes=["a", "b"], n_resamples=200)
    >>> round(r.fleiss_kappa.estimate, 4), r.pairwise[0].agreement.numerator
    (0.4667, 3)
    """
    check_confidence_level(confidence_level)
    width = len(ratings[0]) if ratings else 0
    if width < 2:
        msg = f"inter-rater agreement needs at least 2 raters (got {width})"
        raise ValueError(msg)
    names = _rater_names(raters, width)
    majority = majority_labels(ratings, classes=classes)  # validates the ratings first
    counts = rating_counts(ratings, classes=classes)
    complete = counts.sum(axis=1) == width
    weights = _item_weights(counts.shape[0], n_resamples=n_resamples, seed=seed)
    boot = BootstrapDraw(confidence_level=confidence_level, seed=seed)
    fleiss = _fleiss(counts, complete, weights, boot)
    level: Literal["nominal", "ordinal"] = "ordinal" if ordinal else "nominal"
    alpha = _alpha(counts, level, weights, boot)
    columns = list(zip(*ratings, strict=True))
    pairwise = tuple(
        _pair(names[i], names[j], columns[i], columns[j], classes, ordinal=ordinal, confidence_level=confidence_level)
        for i, j in combinations(range(width), 2)
    )
    return RaterAgreement(
        raters=names,
        classes=tuple(classes),
        ordinal=ordinal,
        majority=majority,
        n_complete=int(complete.sum()),
        fleiss_kappa=fleiss,
        krippendorff_alpha=alpha,
        krippendorff_level=level,
        pairwise=pairwise,
    )


def judge_vs_raters(
    ratings: Ratings,
    verdicts: Sequence[str | None],
    *,
    classes: Sequence[str],
    raters: Sequence[str] | None = None,
    ordinal: bool = False,
    confidence_level: float = 0.95,
) -> tuple[PairAgreement, ...]:
    """The judge's agreement and Cohen's kappa with each rater (unparseable verdicts left out).

    Parameters
    ----------
    ratings
        One row per item, one entry per rater (``None``: not rated).
    verdicts
        The judge's verdict per item (``None``: unparseable).
    classes, raters, ordinal, confidence_level
        As for :func:`rater_agreement`.

    Returns
    -------
    tuple of PairAgreement
        One per rater (``first``: the rater, ``second``: ``"judge"``).

    Examples
    --------
    >>> [p.agreement.numerator for p in judge_vs_raters([["a", "b"], ["b", "b"]], ["a", "b"], classes=["a", "b"])]
    [2, 1]
    """
    _check_ratings(ratings, classes)
    if len(verdicts) != len(ratings):
        msg = f"verdicts and ratings must describe the same items (got {len(verdicts)} and {len(ratings)})"
        raise ValueError(msg)
    width = len(ratings[0]) if ratings else 0
    names = tuple(raters) if raters is not None else tuple(f"rater{i + 1}" for i in range(width))
    columns = list(zip(*ratings, strict=True))
    return tuple(
        _pair(names[i], "judge", columns[i], verdicts, classes, ordinal=ordinal, confidence_level=confidence_level)
        for i in range(width)
    )
