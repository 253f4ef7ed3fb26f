"""Feature containers attached to a :class:`~graphshard.graph.Graph`.

A :class:`FeatureDict` holds the columns of one node type or edge type and checks that
each column has one row per node/edge.  Columns are NumPy arrays (torch tensors are
converted on assignment), :class:`~graphshard.ragged.Ragged` or
:class:`~graphshard.sparse.SparseRows` (a SciPy sparse matrix is stored as one).
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

import numpy as np

from ._util.arrays import as_array
from .errors import ValidationError
from .ragged import Ragged
from .sparse import SparseRows, as_sparse_rows

__all__ = ["FeatureDict", "MultiTypeData"]


class FeatureDict(MutableMapping[str, Any]):
    """Columns of one node or edge type; every column has ``num_rows`` rows.

    Example:
        >>> d = FeatureDict(2, "node type 'user'")
        >>> d["age"] = [30, 40]
        >>> d["age"].tolist()
        [30, 40]
        >>> import scipy.sparse as sp
        >>> d["bow"] = sp.eye(2, 5, format="csr")
        >>> d["bow"]
        SparseRows(rows=2, num_cols=5, nnz=2, dtype=float64)
        >>> d["bad"] = [1, 2, 3]
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: node type 'user': feature 'bad' has 3 rows, expected 2
    """

    def __init__(self, num_rows: int, owner: str) -> None:
        self._num_rows = num_rows
        self._owner = owner
        self._data: dict[str, Any] = {}

    def __setitem__(self, name: str, value: Any) -> None:
        if not isinstance(name, str) or not name or "/" in name:
            raise ValidationError(f"{self._owner}: feature name {name!r} must be a non-empty "
                                  "string without '/'", field=str(name))
        try:
            sparse = as_sparse_rows(value)
        except ValidationError as exc:
            raise ValidationError(f"{self._owner}: feature {name!r}: {exc}",
                                  field=name) from exc
        col = value if isinstance(value, Ragged) else sparse if sparse is not None \
            else as_array(value)
        if isinstance(col, np.ndarray) and (col.ndim == 0 or col.dtype == object):
            raise ValidationError(f"{self._owner}: feature {name!r} must be an array with one "
                                  f"row per item, got dtype {col.dtype} shape {col.shape}",
                                  field=name)
        if len(col) != self._num_rows:
            raise ValidationError(f"{self._owner}: feature {name!r} has {len(col)} rows, "
                                  f"expected {self._num_rows}", field=name)
        self._data[name] = col

    def __getitem__(self, name: str) -> Any:
        try:
            return self._data[name]
        except KeyError:
            raise KeyError(f"{self._owner} has no feature {name!r}; it has "
                           f"{sorted(self._data)}") from None

    def __delitem__(self, name: str) -> None:
        del self._data[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        cols = ", ".join(f"{k}: {_describe(v)}" for k, v in self._data.items())
        return f"{{{cols}}}"


class MultiTypeData(MutableMapping[str, dict]):
    """``g.ndata`` / ``g.edata`` of a graph with several types: ``name -> {type: column}``.

    Setting ``data[name] = {type: column}`` sets the column on each listed type.
    """

    def __init__(self, frames: dict[Any, FeatureDict]) -> None:
        self._frames = frames

    def __getitem__(self, name: str) -> dict:
        found = {t: f[name] for t, f in self._frames.items() if name in f}
        if not found:
            raise KeyError(f"no type has feature {name!r}")
        return found

    def __setitem__(self, name: str, value: Any) -> None:
        # Any, not dict: a column assigned as on a one-type graph is checked here and refused
        if not isinstance(value, dict):
            raise ValidationError(f"feature {name!r}: this graph has several types; assign a "
                                  "dict {type: column}", field=name)
        for t, col in value.items():
            if t not in self._frames:
                raise ValidationError(f"feature {name!r}: unknown type {t!r}; types are "
                                      f"{list(self._frames)}", field=name, value=t)
            self._frames[t][name] = col

    def __delitem__(self, name: str) -> None:
        for f in self._frames.values():
            f.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        seen: dict[str, None] = {}
        for f in self._frames.values():
            seen.update(dict.fromkeys(f))
        return iter(seen)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _describe(col: Any) -> str:
    if isinstance(col, (Ragged, SparseRows)):
        return repr(col)
    return f"{col.dtype}{list(col.shape[1:])}"
