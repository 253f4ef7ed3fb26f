"""Feature columns as the dense tensors other systems' partition files hold.

DGL's ``node_feat.dgl`` and PyG's ``node_feats.pt`` hold dense numeric tensors only: a
Ragged or sparse column, a string column or unsigned values beyond int64 (torch has no
unsigned type above uint8) have no place there.  Both exports check every column with
:func:`check_dense` before they write anything and copy it with :func:`dense_copy`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ValidationError
from ..ragged import Ragged
from ..sparse import SparseRows

__all__ = ["check_dense", "dense_copy"]


def check_dense(key: str, col: Any, *, target: str = "DGL") -> None:
    """Refuse a feature column ``target``'s feature files cannot hold (no copy is made).

    Raises:
        ValidationError: a Ragged or sparse column, a non-numeric dtype, or unsigned values
            beyond int64, naming the feature.

    Example:
        >>> check_dense("_N/x", np.zeros((2, 3), np.float32))
        >>> check_dense("_N/name", np.array(["a", "b"]), target="PyG")
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: feature '_N/name' has dtype <U1; PyG's feature \
files hold numbers and bools
    """
    if isinstance(col, (Ragged, SparseRows)):
        raise ValidationError(f"feature {key!r} is {type(col).__name__}; {target}'s feature "
                              "files hold dense tensors only (store it dense to export)",
                              field=key)
    arr = np.asarray(col)
    if arr.dtype.kind not in "biuf":
        raise ValidationError(f"feature {key!r} has dtype {arr.dtype}; {target}'s feature "
                              "files hold numbers and bools", field=key)
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arr.size \
            and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValidationError(f"feature {key!r} has values above int64's range, which "
                              "torch cannot hold", field=key)


def dense_copy(key: str, col: Any, *, target: str = "DGL") -> np.ndarray:
    """A writable dense copy torch can hold (uint16/32/64 as int64), after
    :func:`check_dense`.

    Example:
        >>> dense_copy("_N/n", np.array([1, 2], np.uint32)).dtype
        dtype('int64')
    """
    check_dense(key, col, target=target)
    arr = np.asarray(col)
    if arr.dtype.kind == "u" and arr.dtype != np.uint8:
        return arr.astype(np.int64)
    return np.array(arr)
