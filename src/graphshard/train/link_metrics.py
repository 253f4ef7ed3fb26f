"""Link-prediction metrics: ROC AUC over all scores, and MRR / Hits@K per positive against
its own negatives.

Ties count half everywhere: AUC is the Mann-Whitney statistic with average ranks (a tied
positive-negative pair counts 1/2), and the rank of a positive among its negatives is
``1 + #(negatives scoring higher) + #(negatives scoring equal) / 2``, the mean of the
optimistic and the pessimistic rank (as OGB's link-prediction evaluator).  MRR is the mean
of ``1 / rank``; Hits@K the share of positives with ``rank <= K``.

Unstable API (issue 26).

Example:
    >>> import numpy as np
    >>> pos, neg = np.array([0.9, 0.2]), np.array([[0.1, 0.5], [0.2, 0.3]])
    >>> auc(pos, neg), ranks(pos, neg).tolist(), mrr(pos, neg)
    (0.6875, [1.0, 2.5], 0.7)
    >>> link_metrics(pos, neg, hits=(1, 2))
    {'auc': 0.6875, 'mrr': 0.7, 'hits@1': 0.5, 'hits@2': 0.5}
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy.stats import rankdata

__all__ = ["auc", "hits_at", "link_metrics", "mrr", "ranks"]

FloatArray = npt.NDArray[np.floating]


def auc(pos: npt.ArrayLike, neg: npt.ArrayLike) -> float:
    """ROC AUC of positive scores ``pos`` against every negative score in ``neg`` (any
    shape): the share of (positive, negative) pairs ordered right, ties counting 1/2; NaN
    without positives or negatives."""
    p = np.asarray(pos, dtype=np.float64).reshape(-1)
    q = np.asarray(neg, dtype=np.float64).reshape(-1)
    if not len(p) or not len(q):
        return float("nan")
    r = rankdata(np.concatenate([p, q]))  # average ranks of ties
    return float((r[:len(p)].sum() - len(p) * (len(p) + 1) / 2) / (len(p) * len(q)))


def ranks(pos: npt.ArrayLike, neg: npt.ArrayLike) -> FloatArray:
    """Rank of each positive ``pos[i]`` among its negatives ``neg[i, :]`` (1 = first; a tie
    counts 1/2): float64 ``(n,)``."""
    p = np.asarray(pos, dtype=np.float64).reshape(-1, 1)
    q = np.asarray(neg, dtype=np.float64)
    q = q.reshape(len(p), -1) if len(p) else q.reshape(0, 0)
    return 1.0 + (q > p).sum(axis=1) + 0.5 * (q == p).sum(axis=1)


def mrr(pos: npt.ArrayLike, neg: npt.ArrayLike) -> float:
    """Mean reciprocal rank (:func:`ranks`); NaN without positives."""
    r = ranks(pos, neg)
    return float((1.0 / r).mean()) if len(r) else float("nan")


def hits_at(pos: npt.ArrayLike, neg: npt.ArrayLike, k: int) -> float:
    """Share of positives ranked ``k``-th or better (:func:`ranks`); NaN without positives."""
    r = ranks(pos, neg)
    return float((r <= k).mean()) if len(r) else float("nan")


def link_metrics(pos: npt.ArrayLike, neg: npt.ArrayLike, *, hits: Sequence[int] = (10, 50)
                 ) -> dict[str, float]:
    """``{"auc", "mrr", "hits@K" for K in hits}`` of positives ``pos`` (``(n,)``) against
    their negatives ``neg`` (``(n, k)``)."""
    r = ranks(pos, neg)
    out = {"auc": auc(pos, neg), "mrr": float((1.0 / r).mean()) if len(r) else float("nan")}
    for k in hits:
        out[f"hits@{int(k)}"] = float((r <= k).mean()) if len(r) else float("nan")
    return out
