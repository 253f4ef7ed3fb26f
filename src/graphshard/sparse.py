"""Sparse feature rows (CSR): one row per node or edge, a few non-zero columns each.

Bag-of-words features (the gnn-benchmark graphs: 6805 columns, about 60 non-zeros a row)
take a fraction of their dense size as ``indptr`` + ``indices`` + ``values``.  A
:class:`SparseRows` column is stored, partitioned and served as such; a trainer turns a
mini-batch's rows into a dense or sparse tensor with :meth:`SparseRows.to_dense` or
:meth:`SparseRows.to_torch`.  SciPy is imported only by the methods that convert to or from
it, so ``import graphshard`` does not load it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._util.optional import import_optional
from .errors import ValidationError, check_choice
from .typing import IdArray

__all__ = ["TORCH_LAYOUTS", "SparseRows", "as_sparse_rows", "is_scipy_sparse"]

#: Layouts :meth:`SparseRows.to_torch` makes.
TORCH_LAYOUTS = ("sparse_csr", "sparse_coo", "dense")


@dataclass(frozen=True, eq=False)
class SparseRows:
    """Rows of a ``(len(self), num_cols)`` matrix stored as CSR.

    Row ``i`` has the columns ``indices[indptr[i]:indptr[i + 1]]`` with the values
    ``values[indptr[i]:indptr[i + 1]]``; columns of a row need not be sorted, and a column
    given twice in a row adds up (as in SciPy).  The arrays are kept as given when their
    dtypes fit (no copy: memory maps stay memory maps): ``indptr`` int64 of length
    ``len(self) + 1``, ``indices`` int32 or int64 (other integer types become int64),
    ``values`` 1-D numbers or bools of any dtype.

    Raises:
        ValidationError: naming the field and the first bad position: ``indptr`` not
            starting at 0, decreasing, or not ending at ``len(indices)``; ``indices`` and
            ``values`` of different lengths; a column outside ``[0, num_cols)``.

    Example:
        >>> x = SparseRows([0, 2, 2, 3], [1, 4, 0], np.array([1.0, 2.0, 3.0], np.float32), 5)
        >>> len(x), x.shape, x.nnz
        (3, (3, 5), 3)
        >>> x.take([2, 0]).to_dense().tolist()
        [[3.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 2.0]]
        >>> SparseRows([0, 1], [5], [1.0], 5)
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: SparseRows indices[0] = 5 is not a column in [0, 5)
    """

    indptr: IdArray
    indices: npt.NDArray[np.integer]
    values: npt.NDArray
    num_cols: int

    def __post_init__(self) -> None:
        indptr = _int_array(self.indptr, "indptr", np.int64)
        indices = _int_array(self.indices, "indices", None)
        values = np.ascontiguousarray(self.values)
        num_cols = self.num_cols
        if isinstance(num_cols, (bool, np.bool_)) or not isinstance(num_cols, (int, np.integer)) \
                or num_cols < 0:
            raise ValidationError(f"SparseRows num_cols must be an integer >= 0, got "
                                  f"{num_cols!r}", field="num_cols", value=num_cols)
        if indptr.size == 0:
            raise ValidationError("SparseRows indptr must have len(rows) + 1 >= 1 entries, "
                                  "got none", field="indptr")
        if values.ndim != 1 or values.dtype.kind not in "biuf":
            raise ValidationError(f"SparseRows values must be a 1-D array of numbers, got "
                                  f"dtype {values.dtype} shape {values.shape}", field="values")
        if len(values) != len(indices):
            raise ValidationError(f"SparseRows has {len(indices)} indices but {len(values)} "
                                  "values", field="values")
        if indptr[0] != 0 or indptr[-1] != len(indices):
            raise ValidationError(f"SparseRows indptr must start at 0 and end at "
                                  f"len(indices)={len(indices)}, got {indptr[0]}..{indptr[-1]}",
                                  field="indptr")
        if len(indptr) > 1 and (indptr[1:] < indptr[:-1]).any():
            bad = int(np.flatnonzero(indptr[1:] < indptr[:-1])[0])
            raise ValidationError(f"SparseRows indptr decreases at position {bad + 1} "
                                  f"({indptr[bad]} -> {indptr[bad + 1]})", field="indptr")
        # min/max first: no boolean mask over the columns unless one is bad
        if len(indices) and (indices.min() < 0 or indices.max() >= num_cols):
            bad = int(np.flatnonzero((indices < 0) | (indices >= num_cols))[0])
            raise ValidationError(f"SparseRows indices[{bad}] = {indices[bad]} is not a column "
                                  f"in [0, {num_cols})", field="indices", value=int(indices[bad]))
        object.__setattr__(self, "indptr", indptr)
        object.__setattr__(self, "indices", indices)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "num_cols", int(num_cols))

    # ----- construction -------------------------------------------------------------------
    @classmethod
    def from_scipy(cls, mat: Any) -> SparseRows:
        """The rows of a SciPy sparse matrix or array (any format; converted to CSR).

        The result shares ``indices`` and ``values`` with a CSR input whose index dtype is
        int32 or int64; ``indptr`` is int64 (a copy when the input's is int32).

        Raises:
            ValidationError: ``mat`` is not a 2-D SciPy sparse matrix.

        Example:
            >>> import scipy.sparse as sp
            >>> x = SparseRows.from_scipy(sp.coo_array(([5], ([1], [2])), shape=(2, 3)))
            >>> x.indptr.tolist(), x.indices.tolist(), x.values.tolist()
            ([0, 0, 1], [2], [5])
        """
        if not is_scipy_sparse(mat) or len(mat.shape) != 2:
            raise ValidationError(f"expected a 2-D SciPy sparse matrix, got "
                                  f"{type(mat).__name__}", field="mat")
        csr = mat.tocsr()
        return cls(csr.indptr, csr.indices, csr.data, int(csr.shape[1]))

    @classmethod
    def concat(cls, parts: Sequence[SparseRows]) -> SparseRows:
        """Rows of ``parts`` one after the other (new arrays); all must have the same
        ``num_cols``.

        Example:
            >>> a = SparseRows([0, 1], [0], [1.0], 2)
            >>> SparseRows.concat([a, a]).indptr.tolist()
            [0, 1, 2]
        """
        if not parts:
            raise ValidationError("SparseRows.concat needs at least one part", field="parts")
        cols = {p.num_cols for p in parts}
        if len(cols) != 1:
            raise ValidationError(f"SparseRows.concat: parts have num_cols {sorted(cols)}",
                                  field="num_cols")
        starts = np.cumsum([0] + [p.nnz for p in parts[:-1]])
        indptr = np.concatenate([[0]] + [p.indptr[1:] + s for p, s in zip(parts, starts,
                                                                          strict=True)])
        return cls(indptr.astype(np.int64), np.concatenate([p.indices for p in parts]),
                   np.concatenate([p.values for p in parts]), cols.pop())

    # ----- sizes --------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.indptr) - 1

    @property
    def shape(self) -> tuple[int, int]:
        """``(rows, num_cols)``: the shape of :meth:`to_dense`."""
        return (len(self), self.num_cols)

    @property
    def nnz(self) -> int:
        """Stored entries (explicit zeros included)."""
        return len(self.indices)

    @property
    def dtype(self) -> np.dtype:
        """dtype of ``values`` (and of :meth:`to_dense` by default)."""
        return self.values.dtype

    @property
    def nbytes(self) -> int:
        """Bytes of ``indptr``, ``indices`` and ``values`` together."""
        return int(self.indptr.nbytes + self.indices.nbytes + self.values.nbytes)

    @property
    def lengths(self) -> IdArray:
        """Stored entries of each row (int64, a new array)."""
        return np.diff(self.indptr)

    # ----- rows ---------------------------------------------------------------------------
    def take(self, rows: npt.ArrayLike) -> SparseRows:
        """Rows ``rows`` in that order (repeats allowed), as new arrays.

        Raises:
            ValidationError: a row is negative or ``>= len(self)``, naming its position.
        """
        ids = np.asarray(rows)
        if ids.dtype.kind not in "iu" and ids.size:
            raise ValidationError(f"SparseRows.take: rows must be integers, got dtype "
                                  f"{ids.dtype}", field="rows")
        ids = ids.astype(np.int64, copy=False).reshape(-1)
        if len(ids) and (ids.min() < 0 or ids.max() >= len(self)):
            bad = int(np.flatnonzero((ids < 0) | (ids >= len(self)))[0])
            raise ValidationError(f"SparseRows.take: rows[{bad}] = {ids[bad]} is not a row in "
                                  f"[0, {len(self)})", field="rows", value=int(ids[bad]))
        starts = self.indptr[ids]
        lengths = self.indptr[ids + 1] - starts
        indptr = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        # position of every kept entry: start of its row + its place inside the row
        pos = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1], dtype=np.int64)
        return SparseRows(indptr, self.indices[pos], self.values[pos], self.num_cols)

    def row_ids(self) -> IdArray:
        """The row of every stored entry (int64, length :attr:`nnz`, a new array)."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.lengths)

    def canonical(self) -> SparseRows:
        """The same matrix with the columns of each row sorted and distinct (entries of a
        repeated column summed): ``self`` when it is so already, else new arrays.

        Example:
            >>> x = SparseRows([0, 3], [2, 0, 2], [1, 2, 3], 3).canonical()
            >>> x.indices.tolist(), x.values.tolist()
            ([0, 2], [2, 4])
        """
        rows = self.row_ids()
        cols = self.indices.astype(np.int64, copy=False)
        if not (rows[1:] == rows[:-1]) @ (cols[1:] <= cols[:-1]):
            return self  # no entry is at or left of the one before it in the same row
        order = np.lexsort((cols, rows))
        rows, cols = rows[order], cols[order]
        first = np.ones(len(rows), dtype=bool)
        first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
        starts = np.flatnonzero(first)
        values = np.add.reduceat(self.values[order], starts) if self.values.dtype != bool \
            else np.logical_or.reduceat(self.values[order], starts)
        indptr = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows[starts], minlength=len(self)), out=indptr[1:])
        return SparseRows(indptr, cols[starts].astype(self.indices.dtype), values,
                          self.num_cols)

    # ----- conversion ---------------------------------------------------------------------
    def to_dense(self, dtype: npt.DTypeLike | None = None) -> np.ndarray:
        """The ``(len(self), num_cols)`` array (new), entries of a repeated column summed.

        Example:
            >>> SparseRows([0, 2], [1, 1], [1, 2], 3).to_dense("float32").tolist()
            [[0.0, 3.0, 0.0]]
        """
        out = np.zeros(self.shape, dtype=dtype or self.values.dtype)
        if self.nnz:
            flat = self.row_ids() * self.num_cols + self.indices
            np.add.at(out.reshape(-1), flat, self.values.astype(out.dtype, copy=False))
        return out

    def to_scipy(self) -> Any:
        """A ``scipy.sparse.csr_array`` of the rows (sharing the arrays)."""
        sp = import_optional("scipy.sparse", "SparseRows.to_scipy")
        return sp.csr_array((self.values, self.indices, self.indptr), shape=self.shape)

    def to_torch(self, layout: str = "sparse_csr") -> Any:
        """A torch tensor of the rows: ``"sparse_csr"`` (of :meth:`canonical`),
        ``"sparse_coo"`` (coalesced) or ``"dense"``.  Index tensors are int64; read-only
        arrays (memory maps) are copied.

        Raises:
            ValidationError: an unknown ``layout``.
            MissingDependencyError: torch is not installed.

        Example:
            >>> x = SparseRows([0, 1, 2], [2, 0], [1.0, 2.0], 3)
            >>> x.to_torch("sparse_coo").to_dense().tolist()  # doctest: +SKIP
            [[0.0, 0.0, 1.0], [2.0, 0.0, 0.0]]
        """
        check_choice(layout, TORCH_LAYOUTS, "layout")
        torch = import_optional("torch", "SparseRows.to_torch")
        if layout == "dense":
            return torch.from_numpy(self.to_dense())
        if layout == "sparse_csr":  # torch wants sorted, distinct columns in a row
            x = self.canonical()
            return torch.sparse_csr_tensor(
                torch.from_numpy(_writable(x.indptr)),
                torch.from_numpy(_writable(x.indices.astype(np.int64, copy=False))),
                torch.from_numpy(_writable(x.values)), size=self.shape, check_invariants=False)
        values = torch.from_numpy(_writable(self.values))
        cols = torch.from_numpy(_writable(self.indices.astype(np.int64, copy=False)))
        rows = torch.from_numpy(self.row_ids())
        return torch.sparse_coo_tensor(torch.stack([rows, cols]), values, size=self.shape,
                                       check_invariants=False).coalesce()

    def equals(self, other: object) -> bool:
        """Exact equality of ``num_cols``, arrays and dtypes (not of the matrices: the same
        matrix stored with another column order is not equal)."""
        return (isinstance(other, SparseRows) and self.num_cols == other.num_cols
                and self.values.dtype == other.values.dtype
                and np.array_equal(self.indptr, other.indptr)
                and np.array_equal(self.indices, other.indices)
                and np.array_equal(self.values, other.values))

    def __repr__(self) -> str:
        return (f"SparseRows(rows={len(self)}, num_cols={self.num_cols}, nnz={self.nnz}, "
                f"dtype={self.values.dtype})")


def is_scipy_sparse(value: Any) -> bool:
    """Whether ``value`` is a SciPy sparse matrix or array (without importing SciPy: a
    value can be one only once SciPy is loaded).

    Example:
        >>> is_scipy_sparse(np.zeros((2, 2)))
        False
    """
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and bool(sp.issparse(value))


def as_sparse_rows(value: Any) -> SparseRows | None:
    """``value`` as a :class:`SparseRows` if it is one or a SciPy sparse matrix, else None.

    Example:
        >>> import scipy.sparse as sp
        >>> as_sparse_rows(sp.eye(2, format="csr")).shape, as_sparse_rows([1, 2])
        ((2, 2), None)
    """
    if isinstance(value, SparseRows):
        return value
    if is_scipy_sparse(value):
        return SparseRows.from_scipy(value)
    return None


def _int_array(value: Any, name: str, dtype: Any) -> np.ndarray:
    """A contiguous 1-D integer array (int32 kept when ``dtype`` is None, else int64)."""
    arr = np.asarray(value)
    if arr.size == 0 and arr.dtype.kind not in "iu":
        arr = arr.astype(np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise ValidationError(f"SparseRows {name} must be a 1-D integer array, got dtype "
                              f"{arr.dtype} shape {arr.shape}", field=name)
    if dtype is None and arr.dtype == np.int32:
        return np.ascontiguousarray(arr)
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValidationError(f"SparseRows {name} has values past int64", field=name)
    return np.ascontiguousarray(arr, dtype=np.int64)


def _writable(arr: np.ndarray) -> np.ndarray:
    return arr if arr.flags.writeable else arr.copy()
