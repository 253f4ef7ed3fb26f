"""Reading one chunk file of the chunked format (csv / numpy / parquet) into NumPy."""

from __future__ import annotations

import ast
import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ..errors import FormatError
from ..ragged import Ragged
from ..storage.files import load_npy
from ._common import PathLike, column_to_numpy, fail, list_to_ragged, regular_file

FORMATS = ("csv", "numpy", "parquet")


@dataclass(frozen=True)
class FileSpec:
    """One ``ChunkFileSpec``: the format, its CSV delimiter and the resolved chunk paths."""

    fmt: str
    delimiter: str
    files: tuple[Path, ...]
    field: str
    owner: Path | None = None  # the metadata file naming these paths (for errors)
    #: URI of the remote folder of the metadata: ``files`` are then node-local copy paths
    #: under this process's cache, fetched when read (:func:`local_chunk`)
    source: str | None = None


# ----- one chunk file ------------------------------------------------------------------------
def _read_csv(file: Path, delimiter: str, field: str) -> pa.Table:
    if file.stat().st_size == 0:
        return pa.table({})
    try:
        table = pacsv.read_csv(
            file, read_options=pacsv.ReadOptions(autogenerate_column_names=True),
            parse_options=pacsv.ParseOptions(delimiter=delimiter))
        table.column_names  # noqa: B018 - decodes the names: invalid UTF-8 fails here
        return table
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError) as exc:
        raise fail(file, f"unreadable CSV ({exc})".replace("\n", " "), field=field) from exc


_fetch_lock = threading.Lock()
_fetch_users: dict[Path, int] = {}


@contextlib.contextmanager
def local_chunk(spec: FileSpec, i: int) -> Iterator[Path]:
    """Chunk file ``i`` of ``spec`` as a local path for the ``with`` block.  A chunk of a
    remote folder (``spec.source``) is copied from its URI to node-local scratch (size
    checked: the chunked format records no checksum) and removed after the block, so
    that a task holds only the chunks it reads; threads of one process reading the same
    chunk share one copy.  A local chunk is used in place."""
    file = spec.files[i]
    if spec.source is None:
        yield file
        return
    from ..storage import fsys

    base = spec.owner.parent if spec.owner is not None else file.parent
    rel = Path(os.path.relpath(file, base))
    if rel.is_absolute() or ".." in rel.parts:
        raise fail(spec.owner or file, f"chunk path {str(rel)!r} leads outside the folder of "
                   f"a remote metadata.json ({fsys.shown(spec.source)}); give paths inside it",
                   field=f"{spec.field}.data[{i}]")
    with _fetch_lock:
        _fetch_users[file] = _fetch_users.get(file, 0) + 1
        if _fetch_users[file] == 1:
            fsys.download_sized(fsys.open_location(spec.source).child(rel.as_posix()), file)
    try:
        yield file
    finally:
        with _fetch_lock:
            _fetch_users[file] -= 1
            if not _fetch_users[file]:
                del _fetch_users[file]
                file.unlink(missing_ok=True)  # open memory maps keep their pages


def _read_table(spec: FileSpec, i: int) -> tuple[Path, Any]:
    """Load chunk ``i`` of ``spec``: a pyarrow Table (csv/parquet) or a NumPy array."""
    with local_chunk(spec, i) as file:
        return _read_local_table(spec, i, file)


def _read_local_table(spec: FileSpec, i: int, file: Path) -> tuple[Path, Any]:
    field = f"{spec.field}.data[{i}]"
    regular_file(file, field=field, owner=spec.owner or file)
    if spec.fmt == "csv":
        return file, _read_csv(file, spec.delimiter, field)
    if spec.fmt == "numpy":
        try:
            return file, load_npy(file, mmap_mode="r")
        except FormatError as exc:
            raise fail(file, f"unreadable numpy chunk ({exc.__cause__})", field=field) from exc
    try:
        table = pq.read_table(file)
        table.column_names  # noqa: B018 - decodes the names: invalid UTF-8 fails here
        return file, table
    except (ValueError, OSError, EOFError, pa.ArrowException) as exc:
        raise fail(file, f"unreadable {spec.fmt} chunk ({exc})", field=field) from exc


#: Fewest bytes a row takes in a chunk file: (edge rows, feature rows) per format.  A CSV
#: edge row is at least ``0 0`` and its line end, a feature row ``0`` and its line end; a
#: NumPy row at least one int8 per column.  Parquet compresses: its footer gives the rows.
_MIN_ROW_BYTES = {"csv": (4, 2), "numpy": (2, 1)}


def row_capacity(spec: FileSpec, i: int, *, edges: bool) -> int:
    """The most rows chunk file ``i`` of ``spec`` can hold, known before reading it: by its
    size, or for Parquet by its footer.  The file must be a regular file."""
    file, field = spec.files[i], f"{spec.field}.data[{i}]"
    st = regular_file(file, field=field, owner=spec.owner or file)
    if spec.fmt == "parquet":
        try:
            return int(pq.read_metadata(file).num_rows)
        except (ValueError, OSError, EOFError, pa.ArrowException) as exc:
            raise fail(file, f"unreadable parquet chunk ({exc})", field=field) from exc
    per_row = _MIN_ROW_BYTES[spec.fmt][0 if edges else 1]
    return (st.st_size + 1) // per_row


def _numeric(col: pa.ChunkedArray, file: Path, field: str, what: str) -> np.ndarray:
    if col.null_count or not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)
                              or pa.types.is_boolean(col.type)):
        bad = col.is_null() if col.null_count else None
        row = int(np.flatnonzero(column_to_numpy(bad))[0]) + 1 if bad is not None else None
        raise fail(file, f"{what}: expected numbers, got column type {col.type}"
                   + (" with missing values" if col.null_count else ""), line=row, field=field)
    return column_to_numpy(col)


Views = list[np.ndarray]


def _edge_views(spec: FileSpec, i: int) -> tuple[Views, Views, Path]:
    """Chunk ``i`` as lists of NumPy views (zero-copy over Arrow's record batches)."""
    file, tab = _read_table(spec, i)
    field = f"{spec.field}.data[{i}]"
    if isinstance(tab, np.ndarray):
        if tab.ndim != 2 or tab.shape[1] != 2 or tab.dtype.kind not in "iu":
            raise fail(file, f"expected an integer array of shape (n, 2), got {tab.dtype} "
                       f"{tab.shape}", field=field)
        return [tab[:, 0]], [tab[:, 1]], file
    if tab.num_columns == 0:
        return [], [], file
    if tab.num_columns < 2:
        raise fail(file, f"expected 2 columns (src dst), found {tab.num_columns}", field=field)
    out = []
    for k, name in enumerate(("src", "dst")):
        col = tab.column(k)
        if col.null_count or not pa.types.is_integer(col.type):
            _numeric(col, file, field, name)  # names the missing value
            raise fail(file, f"{name} column holds {col.type} values, expected integer IDs",
                       field=field)
        out.append([c.to_numpy(zero_copy_only=False) for c in col.chunks])
    return out[0], out[1], file


def _join(views: Views) -> np.ndarray:
    if len(views) == 1:
        return np.ascontiguousarray(views[0], dtype=np.int64)
    return np.concatenate(views).astype(np.int64, copy=False) if views else \
        np.zeros(0, np.int64)


def _feature(spec: FileSpec, i: int) -> tuple[np.ndarray | Ragged, Path]:
    file, tab = _read_table(spec, i)
    if isinstance(tab, np.ndarray):
        return np.array(tab), file
    field = f"{spec.field}.data[{i}]"
    shape = declared_shape(tab.schema.metadata, file, field)
    if tab.num_columns == 0:
        return np.zeros(0, np.float64), file
    if tab.num_columns == 1:
        col = tab.column(0)
        if pa.types.is_large_list(col.type) or pa.types.is_list(col.type):
            # the element dtype without pandas (pyarrow < 26's to_pandas_dtype imports it)
            dtype = pa.array([], type=col.type.value_type).to_numpy(
                zero_copy_only=False).dtype
            rag = list_to_ragged(col, dtype)
            return (rag if shape is None else _reshape(rag, shape, file, field)), file
        arr = _numeric(col, file, field, tab.column_names[0])
        if shape is not None:
            return _reshape(arr, shape, file, field), file
        return (arr.reshape(-1, 1) if tab.column_names[0] == "0" else arr), file
    cols = [_numeric(tab.column(k), file, field, n) for k, n in enumerate(tab.column_names)]
    arr = np.stack(cols, axis=1)
    return (arr if shape is None else _reshape(arr, shape, file, field)), file


def declared_shape(metadata: dict[bytes, bytes] | None, file: PathLike,
                   field: str) -> tuple[int, ...] | None:
    """The array shape a Parquet chunk declares in its schema metadata (key ``shape``, a
    Python tuple literal such as ``"(100,)"``, as DGL's ``chunk_graph`` tool writes it), or
    None when it declares none.  A value that is not a tuple of non-negative integers is a
    FormatError naming the file.

    Example:
        >>> declared_shape({b"shape": b"(4,)"}, "f.parquet", "label")
        (4,)
    """
    raw = (metadata or {}).get(b"shape")
    if raw is None:
        return None
    try:
        value = ast.literal_eval(raw.decode("utf-8"))
    except (ValueError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError):
        value = None
    if not isinstance(value, (tuple, list)) or not value or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        raise fail(file, f"schema metadata 'shape' is {raw[:100]!r}; expected a tuple of "
                   "non-negative integers such as (100,) or (100, 16)", field=field)
    return tuple(int(v) for v in value)


def _reshape(data: np.ndarray | Ragged, shape: tuple[int, ...], file: Path,
             field: str) -> np.ndarray:
    """``data`` (one row per node/edge) in the declared ``shape``; rows must match."""
    width = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    if isinstance(data, Ragged):
        ok = len(data) == shape[0] and bool((data.lengths == width).all())
        flat = data.values
    else:
        ok = data.shape[0] == shape[0] and int(np.prod(data.shape[1:])) == width
        flat = data
    if not ok:
        rows = len(data)
        raise fail(file, f"schema metadata declares shape {shape}, but the chunk holds {rows} "
                   f"rows of {flat.size // max(rows, 1) if rows else 0} values", field=field)
    return np.ascontiguousarray(flat).reshape(shape)
