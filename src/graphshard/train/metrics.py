"""Classification metrics in NumPy: Micro-F1 and Macro-F1 for single- and multi-label output.

Both work on 0/1 indicator matrices ``(N, C)``; class IDs ``(N,)`` are turned into one-hot
rows first.  The definitions follow scikit-learn's ``f1_score`` (HGB reports its numbers
with it): per class ``F1 = 2 TP / (2 TP + FP + FN)`` (0 when the class is neither true nor
predicted); Micro-F1 pools TP, FP and FN over classes (for single-label output it equals
accuracy); Macro-F1 is the unweighted mean over classes, where for class IDs the classes are
those present in the true or predicted labels (scikit-learn's default ``labels``) and for
indicator matrices every column.

Unstable API (issue 26).

Example:
    >>> f = f1_scores([0, 1, 2, 2], [0, 2, 2, 2])
    >>> round(f.micro, 4), round(f.macro, 4)
    (0.75, 0.6)
    >>> f = f1_scores([[1, 1], [1, 0]], [[1, 0], [1, 0]])  # class 1 is never predicted
    >>> round(f.micro, 4), round(f.macro, 4), f.per_class.tolist()
    (0.8, 0.5, [1.0, 0.0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import ValidationError

__all__ = ["F1Scores", "f1_scores"]


@dataclass(frozen=True)
class F1Scores:
    """What :func:`f1_scores` returns.

    Attributes:
        micro: Micro-F1 in [0, 1] (NaN without rows).
        macro: Macro-F1 in [0, 1] (NaN without rows).
        per_class: F1 of each class counted in ``macro`` (float64 ``(K,)``).
    """

    micro: float
    macro: float
    per_class: npt.NDArray[np.float64]

    def __repr__(self) -> str:
        return f"F1Scores(micro={self.micro:.4f}, macro={self.macro:.4f})"


def _indicator(y: np.ndarray, num_classes: int) -> np.ndarray:
    out = np.zeros((len(y), num_classes), dtype=bool)
    out[np.arange(len(y)), y] = True
    return out


def f1_scores(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> F1Scores:
    """Micro- and Macro-F1 of predictions against true labels.

    Args:
        y_true: Class IDs (int ``(N,)``, >= 0) or a 0/1 indicator matrix ``(N, C)``.
        y_pred: The same kind and shape as ``y_true``.

    Returns:
        F1Scores (NaN scores for ``N = 0``).

    Raises:
        ValidationError: shapes differ, negative class IDs, or a matrix not of 0/1.
    """
    t, p = np.asarray(y_true), np.asarray(y_pred)
    if t.shape != p.shape or t.ndim not in (1, 2):
        raise ValidationError(f"f1_scores: y_true has shape {t.shape}, y_pred {p.shape}; "
                              "expected equal (N,) or (N, C) shapes", field="y_pred")
    if t.shape[0] == 0:
        return F1Scores(float("nan"), float("nan"), np.zeros(0))
    if t.ndim == 1:
        if t.dtype.kind not in "iu" or p.dtype.kind not in "iu" or min(t.min(), p.min()) < 0:
            raise ValidationError("f1_scores: class IDs must be integers >= 0", field="y_true")
        k = int(max(t.max(), p.max())) + 1
        used = np.bincount(t, minlength=k).astype(bool) | np.bincount(p, minlength=k).astype(bool)
        t, p = _indicator(t, k)[:, used], _indicator(p, k)[:, used]
    else:
        for name, m in (("y_true", t), ("y_pred", p)):
            if not np.isin(m, (0, 1)).all():
                raise ValidationError(f"f1_scores: {name} must be a 0/1 matrix", field=name)
        t, p = t.astype(bool), p.astype(bool)
    tp = (t & p).sum(0).astype(np.float64)
    fp = (~t & p).sum(0).astype(np.float64)
    fn = (t & ~p).sum(0).astype(np.float64)
    denom = 2 * tp + fp + fn
    per_class = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    total = 2 * tp.sum() + fp.sum() + fn.sum()
    micro = float(2 * tp.sum() / total) if total > 0 else 0.0
    return F1Scores(micro, float(per_class.mean()) if per_class.size else 0.0, per_class)
