"""Private helpers shared by the readers and writers: Arrow <-> NumPy/Ragged, errors, IDs."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import FormatError
from ..ragged import Ragged
from ..storage.files import regular_file_stat

PathLike = str | os.PathLike[str]


def fail(path: PathLike | None, message: str, *, line: int | None = None,
         field: str | None = None, value: Any = None) -> FormatError:
    """A FormatError whose message starts with ``path[:line]`` (and names ``field``)."""
    where = "" if path is None else f"{path}" + (f":{line}" if line is not None else "") + ": "
    what = f"field {field!r}: " if field else ""
    return FormatError(f"{where}{what}{message}", path=None if path is None else str(path),
                       line=line, field=field, value=value)


def require_file(path: Path, field: str, owner: PathLike | None = None) -> Path:
    """Return ``path`` if it is a file, else a FormatError naming the metadata field."""
    if not path.is_file():
        raise fail(owner if owner is not None else path, f"file {path} does not exist",
                   field=field, value=str(path))
    return path


def regular_file(path: Path, *, field: str, owner: PathLike) -> os.stat_result:
    """``os.stat`` of ``path``, a path read from the file ``owner``, if it is a regular file
    (symbolic links followed); else a FormatError naming ``owner``, ``field`` and what the
    path is.  Checked before opening: reading a FIFO would block, a device never ends
    (the check: :func:`graphshard.storage.files.regular_file_stat`).
    """
    st, problem = regular_file_stat(path)
    if st is not None:
        return st
    raise fail(owner, f"file {str(path)[:300]} {problem}", field=field, value=str(path)[:300])


def physical_memory() -> int | None:
    """Bytes of RAM of this machine, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def check_fits_memory(need: int, *, path: PathLike, field: str, what: str) -> None:
    """FormatError naming ``path`` and ``field`` when ``need`` bytes (what a file declares,
    estimated before any work) exceed this machine's RAM."""
    ram = physical_memory()
    if ram is not None and need > ram:
        raise fail(path, f"{what} needs at least {need / 2**30:,.1f} GiB of memory, more than "
                   f"this machine's {ram / 2**30:,.1f} GiB", field=field, value=need)


def column_to_numpy(col: pa.Array | pa.ChunkedArray, dtype: npt.DTypeLike | None = None
                    ) -> np.ndarray:
    """A non-null Arrow column as NumPy (zero-copy where Arrow allows it)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    out = col.to_numpy(zero_copy_only=False)
    if dtype is not None and out.dtype != dtype:
        out = out.astype(dtype)
    return out


def list_to_ragged(col: pa.Array | pa.ChunkedArray, dtype: npt.DTypeLike) -> Ragged:
    """An Arrow list column (nulls = empty rows) as a Ragged of ``dtype``."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    lengths = pc.fill_null(pc.list_value_length(col), 0).to_numpy(zero_copy_only=False)
    offsets = np.zeros(len(col) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    values = col.flatten().to_numpy(zero_copy_only=False)
    return Ragged(np.ascontiguousarray(values, dtype=dtype), offsets)


def strings_to_ragged(col: pa.Array | pa.ChunkedArray) -> Ragged:
    """An Arrow string/binary column (nulls = empty) as a Ragged of UTF-8 bytes (uint8)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    col = pc.fill_null(col.cast(pa.large_binary()), b"")
    bufs = col.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64)[col.offset:col.offset + len(col) + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else \
        np.zeros(0, dtype=np.uint8)
    values = data[offsets[0]:offsets[-1]].copy()
    return Ragged(values, offsets - offsets[0])


def ragged_to_arrow(r: Ragged) -> pa.Array:
    """A Ragged as an Arrow large_list column (values keep their dtype)."""
    return pa.LargeListArray.from_arrays(pa.array(r.offsets, pa.int64()), pa.array(r.values))


def concat_ragged(parts: Iterable[Ragged], dtype: npt.DTypeLike) -> Ragged:
    """Concatenate Ragged columns row-wise."""
    parts = list(parts)
    if not parts:
        return Ragged(np.zeros(0, dtype=dtype), np.zeros(1, dtype=np.int64))
    lengths = np.concatenate([p.lengths for p in parts])
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    values = np.concatenate([p.values.astype(dtype, copy=False) for p in parts])
    return Ragged(values, offsets)


def dense_ids(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(unique_sorted, codes)`` so that ``unique_sorted[codes] == values``."""
    uniq, codes = np.unique(values, return_inverse=True)
    return uniq, codes.astype(np.int64, copy=False).reshape(-1)


def id_column(uniq: pa.Array) -> Any:
    """Original IDs as a feature: numbers as a NumPy array, strings as Ragged UTF-8 bytes."""
    if pa.types.is_integer(uniq.type) or pa.types.is_floating(uniq.type):
        return uniq.to_numpy(zero_copy_only=False)
    return strings_to_ragged(uniq.cast(pa.large_string()))


def ragged_to_strings(r: Ragged) -> list[str]:
    """Decode a Ragged of UTF-8 bytes (as stored in ``node_id``) into Python strings.

    Example:
        >>> ragged_to_strings(Ragged.from_rows(["ab", "c"]))
        ['ab', 'c']
    """
    blob = r.values.tobytes()
    return [blob[a:b].decode("utf-8") for a, b in zip(r.offsets[:-1], r.offsets[1:], strict=False)]


def scan_lines(buf: Any) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """Lines of ``buf``: 1-based numbers of the non-blank ones, the longest length, and the
    start and end offset of every line."""
    arr = np.frombuffer(buf, dtype=np.uint8)
    nl = np.flatnonzero(arr == 10)
    starts = np.concatenate([[0], nl + 1])
    ends = np.append(nl, len(arr))
    lens = ends - starts
    first = arr[np.minimum(starts, max(len(arr) - 1, 0))] if len(arr) else \
        np.zeros(len(starts), np.uint8)
    ws = (first == 32) | (first == 9) | (first == 13)
    nonblank = (lens > 0) & ~ws
    for i in np.flatnonzero((lens > 0) & ws).tolist():  # rare: lines starting with spaces
        nonblank[i] = bool(bytes(buf[starts[i]:ends[i]]).strip())
    return np.flatnonzero(nonblank) + 1, int(lens.max()) if len(lens) else 0, starts, ends
