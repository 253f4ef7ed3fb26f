"""Input normalisation for arrays: torch tensors and lists in, checked NumPy arrays out."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ValidationError

__all__ = ["as_array", "as_ids", "check_id_range", "group_order", "sorted_unique"]


def as_array(x: Any) -> np.ndarray:
    """Return ``x`` as a NumPy array; torch tensors are detached and moved to the CPU.

    Example:
        >>> as_array([1, 2]).tolist()
        [1, 2]
    """
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def as_ids(x: Any, what: str) -> npt.NDArray[np.int64]:
    """Return ``x`` as a contiguous 1-D int64 array (no copy when it already is one).

    Raises:
        ValidationError: ``x`` is not 1-D, not integral, or holds values beyond int64.

    Example:
        >>> as_ids(np.array([3, 1], dtype=np.int32), "seeds").dtype
        dtype('int64')
    """
    arr = as_array(x)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValidationError(f"{what}: expected a 1-D array of IDs, got shape {arr.shape}",
                              field=what)
    if arr.dtype.kind == "b" or (arr.dtype.kind not in "iu" and arr.size > 0):
        raise ValidationError(f"{what}: expected integer IDs, got dtype {arr.dtype}", field=what)
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValidationError(f"{what}: ID {arr.max()} does not fit in int64", field=what)
    return np.ascontiguousarray(arr, dtype=np.int64)


def check_id_range(ids: npt.NDArray[np.int64], upper: int, what: str) -> None:
    """Raise :class:`ValidationError` naming the first ID outside ``[0, upper)``.

    Example:
        >>> check_id_range(np.array([0, 5]), 3, "dst")
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: dst: ID 5 at position 1 is out of range [0, 3)
    """
    if ids.size == 0:
        return
    lo, hi = ids.min(), ids.max()
    if lo >= 0 and hi < upper:
        return
    pos = int(np.flatnonzero((ids < 0) | (ids >= upper))[0])
    raise ValidationError(
        f"{what}: ID {ids[pos]} at position {pos} is out of range [0, {upper})",
        field=what, value=int(ids[pos]))


def sorted_unique(ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Sorted distinct values of ``ids`` (a sort and a pass).

    Not ``np.unique``: numpy 2.x takes a hash path there that is much slower than a sort on
    millions of random int64 IDs (benchmarks/TUNING.md).

    Example:
        >>> sorted_unique(np.array([5, 1, 5, 3])).tolist()
        [1, 3, 5]
    """
    if ids.size == 0:
        return np.zeros(0, dtype=ids.dtype)
    s = np.sort(ids)
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def group_order(keys: np.ndarray, num_groups: int) -> npt.NDArray[np.int64]:
    """Stable order that groups positions by small non-negative integer ``keys``.

    Uses numpy's radix sort on a 16-bit copy of the keys when they fit (linear time).

    Example:
        >>> group_order(np.array([2, 0, 2, 1]), 3).tolist()
        [1, 3, 0, 2]
    """
    if num_groups <= np.iinfo(np.uint16).max:
        keys = keys.astype(np.uint16, copy=False)
    return np.argsort(keys, kind="stable").astype(np.int64, copy=False)
