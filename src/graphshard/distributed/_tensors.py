"""One server's rows of every distributed tensor, kept in memory-mapped ``.npy`` files.

Files survive a server restart (the restarted server reopens them by name), and a trainer
co-located with the server opens the same files: both processes share the pages.  Sparse
optimizer updates run here, on the rows a server owns, so that duplicate IDs of a batch are
summed before one update per row (as DGL's and PGL's sparse optimizers do).

Example:
    >>> import tempfile, numpy as np
    >>> shard = TensorShard(tempfile.mkdtemp())
    >>> shard.create("w", (3, 2), "float32")
    >>> shard.write("w", np.array([2]), np.ones((1, 2), np.float32))
    >>> shard.read("w", np.array([2, 0])).tolist()
    [[1.0, 1.0], [0.0, 0.0]]
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from .._util.arrays import as_ids
from ..errors import ValidationError
from ..storage.files import check_path_name

__all__ = ["OPTIMIZERS", "TensorShard", "check_name"]

_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
#: Sparse optimizers the servers apply: name -> whether it keeps a squared-gradient state.
OPTIMIZERS = {"sgd": False, "adagrad": True}


def check_name(name: str) -> str:
    """``name`` if it is a valid tensor name, else raise ValidationError.

    A tensor name becomes the file ``<name>.npy``: it passes the one check of names that
    become paths (:func:`graphshard.storage.files.check_path_name`: no ``/``, no leading ``.``,
    ...) and is made of letters, digits, ``_ . -`` only.

    Example:
        >>> check_name("emb-1")
        'emb-1'
        >>> check_name("..")
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: name must be a plain file name (no '/', '\\', \
control characters, leading '.'), got '..'
    """
    check_path_name(name, field="name")
    if not _NAME.match(name):
        raise ValidationError(f"tensor name {name!r} must be letters, digits, '_', '.' or '-'",
                              field="name", value=name)
    return name


class TensorShard:
    """Tensors of one partition in ``directory`` (one ``<name>.npy`` memory map each).

    Args:
        directory: Folder of the files (created if missing).
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._open: dict[str, tuple[np.ndarray, int]] = {}

    def _path(self, name: str) -> Path:
        return self.dir / f"{check_name(name)}.npy"

    def get(self, name: str) -> np.ndarray:
        """The memory map of ``name`` (opened on first use, e.g. after a restart)."""
        path = self._path(name)
        try:  # another process (co-located trainer, restarted server) may have replaced it
            inode = path.stat().st_ino
        except FileNotFoundError:
            self._open.pop(name, None)
            raise ValidationError(f"no distributed tensor {name!r} in {self.dir}",
                                  field="name", value=name) from None
        entry = self._open.get(name)
        if entry is None or entry[1] != inode:
            entry = self._open[name] = (np.load(path, mmap_mode="r+", allow_pickle=False),
                                        inode)
        return entry[0]

    def exists(self, name: str) -> tuple[tuple[int, ...], str] | None:
        """``(shape, dtype)`` of ``name`` or None."""
        try:
            arr = self.get(name)
        except ValidationError:
            return None
        return tuple(arr.shape), str(arr.dtype)

    def create(self, name: str, shape: tuple[int, ...], dtype: str) -> None:
        """Create ``name`` filled with zeros, or keep an existing one of the same layout.

        Raises:
            ValidationError: ``name`` exists with another shape or dtype.
        """
        have = self.exists(name)
        want = (tuple(int(s) for s in shape), str(np.dtype(dtype)))
        if have is not None:
            if have != want:
                raise ValidationError(f"distributed tensor {name!r} exists with shape/dtype "
                                      f"{have}, not {want}", field="name", value=name)
            return
        path = self._path(name)
        # a leading '.' no tensor name may have: the temp file of "x" is no tensor's file
        tmp = path.with_name(f".{path.stem}.tmp.npy")
        arr = np.lib.format.open_memmap(tmp, mode="w+", dtype=want[1], shape=want[0])
        arr.flush()
        del arr
        os.replace(tmp, path)

    def delete(self, name: str) -> None:
        """Forget ``name`` and remove its file (no error if absent)."""
        self._open.pop(name, None)
        self._path(name).unlink(missing_ok=True)

    def read(self, name: str, rows: Any) -> np.ndarray:
        """Rows of ``name`` (a copy)."""
        arr = self.get(name)
        return np.asarray(arr[self._rows(arr, rows, name)])

    def write(self, name: str, rows: Any, values: Any) -> None:
        """Set rows of ``name``; a row repeated in ``rows`` takes its last value."""
        arr = self.get(name)
        arr[self._rows(arr, rows, name)] = np.asarray(values, dtype=arr.dtype)

    def update(self, name: str, rows: Any, grads: Any, optimizer: str, lr: float,
               state: str | None = None, eps: float = 1e-10) -> None:
        """One sparse optimizer step on the rows of ``name`` (duplicates summed first).

        ``"sgd"``: ``w -= lr * g``; ``"adagrad"``: ``s += g * g`` then
        ``w -= lr * g / (sqrt(s) + eps)`` with the state ``s`` in tensor ``state``.
        """
        arr = self.get(name)
        idx = self._rows(arr, rows, name)
        uniq, inv = np.unique(idx, return_inverse=True)
        g = np.zeros((len(uniq), *arr.shape[1:]), dtype=np.float64)
        np.add.at(g, inv.reshape(-1), np.asarray(grads, dtype=np.float64))
        w = arr[uniq].astype(np.float64)
        if optimizer == "sgd":
            w -= lr * g
        elif optimizer == "adagrad":
            st = self.get(state or f"{name}.adagrad")
            s = st[uniq].astype(np.float64) + g * g
            st[uniq] = s.astype(st.dtype)
            w -= lr * g / (np.sqrt(s) + eps)
        else:
            raise ValidationError(f"unknown sparse optimizer {optimizer!r}; choices are "
                                  f"{sorted(OPTIMIZERS)}", field="optimizer", value=optimizer)
        arr[uniq] = w.astype(arr.dtype)

    @staticmethod
    def _rows(arr: np.ndarray, rows: Any, name: str) -> np.ndarray:
        idx = as_ids(rows, f"rows of {name!r}")
        bad = np.flatnonzero((idx < 0) | (idx >= arr.shape[0]))
        if bad.size:
            raise ValidationError(f"tensor {name!r}: local row {idx[bad[0]]} at position "
                                  f"{bad[0]} is out of range [0, {arr.shape[0]})", field="rows")
        return idx

    def __repr__(self) -> str:
        return f"TensorShard({str(self.dir)!r})"
