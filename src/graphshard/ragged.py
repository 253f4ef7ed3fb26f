"""Ragged (variable-length) feature columns: one row per node or edge, rows of any length."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .errors import ValidationError

__all__ = ["Ragged"]


@dataclass(frozen=True, eq=False)
class Ragged:
    """A column of variable-length rows stored as flat ``values`` plus ``offsets``.

    Row ``i`` is ``values[offsets[i]:offsets[i + 1]]``.  ``offsets`` is int64 of length
    ``len(self) + 1``, starting at 0 and non-decreasing.

    Example:
        >>> r = Ragged.from_rows([[1, 2], [], [3]], dtype="uint64")
        >>> len(r), r[0].tolist(), r.take([2, 0]).offsets.tolist()
        (3, [1, 2], [0, 1, 3])
    """

    values: npt.NDArray
    offsets: npt.NDArray[np.int64]

    def __post_init__(self) -> None:
        offsets = np.ascontiguousarray(self.offsets, dtype=np.int64)
        values = np.ascontiguousarray(self.values)
        if offsets.ndim != 1 or offsets.size == 0:
            raise ValidationError("Ragged offsets must be a non-empty 1-D array", field="offsets")
        if offsets[0] != 0 or offsets[-1] != len(values):
            raise ValidationError(
                f"Ragged offsets must start at 0 and end at len(values)={len(values)}, "
                f"got {offsets[0]}..{offsets[-1]}", field="offsets")
        bad = np.flatnonzero(np.diff(offsets) < 0)
        if bad.size:
            raise ValidationError(f"Ragged offsets decrease at position {bad[0]}", field="offsets")
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "values", values)

    @classmethod
    def from_rows(cls, rows: list, dtype: npt.DTypeLike | None = None) -> Ragged:
        """Build from a list of sequences (or bytes/str for binary rows: str rows are
        stored as their UTF-8 bytes, and each row's length counts those bytes).

        Example:
            >>> r = Ragged.from_rows(["né", "a"])
            >>> r.offsets.tolist(), bytes(r[0]).decode()
            ([0, 3, 4], 'né')
        """
        if rows and isinstance(rows[0], (bytes, str)):
            rows = [r.encode() if isinstance(r, str) else r for r in rows]
        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if rows and isinstance(rows[0], bytes):
            values = np.frombuffer(b"".join(rows), dtype=np.uint8).copy()
        else:
            flat = [x for r in rows for x in r]
            values = np.asarray(flat, dtype=dtype)
            if values.size == 0:
                values = np.zeros(0, dtype=dtype or np.float64)
        return cls(values, offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def shape(self) -> tuple[int]:
        """``(num_rows,)``: lets code that reads ``x.shape[0]`` treat it like an array."""
        return (len(self),)

    @property
    def lengths(self) -> npt.NDArray[np.int64]:
        """Length of each row (int64, a new array)."""
        return np.diff(self.offsets)

    def __getitem__(self, i: int) -> npt.NDArray:
        return self.values[self.offsets[i]:self.offsets[i + 1]]

    def take(self, rows: npt.ArrayLike) -> Ragged:
        """Rows ``rows`` in that order, as a new Ragged (a copy)."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = self.offsets[rows]
        lengths = self.offsets[rows + 1] - starts
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        # index of every kept value: start of its row + position inside the row
        pos = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1], lengths)
        return Ragged(self.values[np.repeat(starts, lengths) + pos], offsets)

    def slice(self, start: int, stop: int) -> Ragged:
        """Rows ``start:stop`` as a new Ragged (values are a view)."""
        off = self.offsets[start:stop + 1]
        return Ragged(self.values[off[0]:off[-1]], off - off[0])

    def equals(self, other: object) -> bool:
        """Exact equality of offsets, dtype and values."""
        return (isinstance(other, Ragged) and self.values.dtype == other.values.dtype
                and np.array_equal(self.offsets, other.offsets)
                and np.array_equal(self.values, other.values))

    def __repr__(self) -> str:
        return f"Ragged(rows={len(self)}, values={self.values.size}, dtype={self.values.dtype})"
