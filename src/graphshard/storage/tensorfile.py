"""safetensors files: streamed atomic writes, memory-mapped reads with validated headers.

The safetensors layout is small (8-byte little-endian header length, a JSON header naming
each tensor's dtype, shape and byte range, then the raw little-endian data), so both sides
are done here: the writer streams every array straight from memory into the file (the
``safetensors`` package first copies all tensors into one ``bytes`` object, doubling peak
memory for a partition), and the reader returns read-only ``np.memmap`` views and turns any
inconsistency into a :class:`FormatError` naming the file.  Files are checked to load with
the ``safetensors`` package itself in the test suite.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import mmap
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..errors import FormatError
from .direct import DIRECT_MIN_BYTES, DirectWriter
from .files import atomic_path, atomic_write

__all__ = ["load_tensors", "release_pages", "save_tensors"]

_DTYPES = {
    "BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "U16": np.uint16, "I16": np.int16,
    "U32": np.uint32, "I32": np.int32, "U64": np.uint64, "I64": np.int64,
    "F16": np.float16, "F32": np.float32, "F64": np.float64,
}
_CODES = {np.dtype(t).type: code for code, t in _DTYPES.items()}


def save_tensors(path: str | os.PathLike[str], tensors: dict[str, np.ndarray],
                 metadata: dict[str, str] | None = None, *,
                 reuse: str | os.PathLike[str] | None = None, durable: bool = True) -> str:
    """Write ``tensors`` as one safetensors file, atomically, without copying the data.

    A durable file of at least :data:`~graphshard.storage.direct.DIRECT_MIN_BYTES` goes around
    the page cache (:class:`~graphshard.storage.direct.DirectWriter`): output, not read again
    here.  ``durable=False`` skips the fsync, for work files whose checksum is verified
    before any reuse (a crash that loses their data costs a recomputation, never a wrong
    result); they are written over a freed file of the scratch pool ``reuse`` when it
    has one (:mod:`graphshard.storage.scratch`).

    Returns the SHA-256 (hex) of the bytes written, computed while writing.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.safetensors"
        >>> digest = save_tensors(p, {"a": np.arange(3)}, {"k": "v"})
        >>> t, meta = load_tensors(p)
        >>> t["a"].tolist(), meta
        ([0, 1, 2], {'k': 'v'})
    """
    header: dict[str, object] = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    arrays = []
    offset = 0
    for name in sorted(tensors):
        arr = np.asarray(tensors[name])
        code = _CODES.get(arr.dtype.newbyteorder("=").type)
        if code is None:
            raise TypeError(f"tensor {name!r}: dtype {arr.dtype} has no safetensors code")
        arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
        header[name] = {"dtype": code, "shape": list(arr.shape),
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
        arrays.append(arr)
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    size = 8 + len(blob) + offset
    if durable and size >= DIRECT_MIN_BYTES:
        with atomic_path(path, durable=False) as tmp, DirectWriter(tmp) as handle:
            return _write_file(handle, blob, arrays)  # the writer fsyncs
    with atomic_write(path, reuse=reuse, size=size, durable=durable) as handle:
        return _write_file(handle, blob, arrays)


def _write_file(handle: IO[bytes] | DirectWriter, header: bytes,
                arrays: list[np.ndarray]) -> str:
    """Write the length of ``header``, ``header`` and ``arrays``' bytes to ``handle``;
    returns their SHA-256 (hex)."""
    digest = hashlib.sha256()
    for chunk in (len(header).to_bytes(8, "little"), header):
        handle.write(chunk)
        digest.update(chunk)
    for arr in arrays:
        if arr.nbytes:
            view = arr.reshape(-1).data.cast("B")
            handle.write(view)
            digest.update(view)
    return digest.hexdigest()


def load_tensors(path: str | os.PathLike[str], *, mmap: bool = True
                 ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Read every tensor of a safetensors file: read-only memory maps, or copies.

    Raises:
        FormatError: the file is truncated, its header is not valid JSON, or a tensor's
            dtype, shape or byte range is inconsistent.
    """
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as handle:
        raw = handle.read(8)
        if len(raw) < 8:
            raise FormatError(f"{path}: truncated safetensors file ({size} bytes)",
                              path=str(path))
        header_len = int.from_bytes(raw, "little")
        if header_len <= 0 or 8 + header_len > size:
            raise FormatError(f"{path}: header length {header_len} exceeds the file size "
                              f"{size}", path=str(path))
        try:
            header = json.loads(handle.read(header_len))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise FormatError(f"{path}: header is not valid JSON ({exc})",
                              path=str(path)) from exc
    if not isinstance(header, dict):
        raise FormatError(f"{path}: header is not a JSON object", path=str(path))
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise FormatError(f"{path}: __metadata__ must be an object of strings, got "
                          f"{metadata!r:.60}", path=str(path), field="__metadata__")
    base = 8 + header_len
    data_len = size - base
    tensors: dict[str, np.ndarray] = {}
    whole: np.ndarray | None = None
    if mmap and data_len > 0:
        whole = np.memmap(path, dtype=np.uint8, mode="r", offset=base, shape=(data_len,))
    elif data_len > 0:
        whole = np.fromfile(path, dtype=np.uint8, offset=base)
    for name, info in header.items():
        tensors[name] = _tensor(path, name, info, whole, data_len)
    return tensors, {str(k): str(v) for k, v in metadata.items()}


def _tensor(path: Path, name: str, info: object, whole: np.ndarray | None,
            data_len: int) -> np.ndarray:
    try:
        dtype = np.dtype(_DTYPES[info["dtype"]])  # type: ignore[index]
        shape = tuple(info["shape"])  # type: ignore[index]
        start, end = info["data_offsets"]  # type: ignore[index]
        if not all(_is_int(x) for x in (*shape, start, end)):
            raise TypeError("shape and data_offsets must hold integers")
    except (KeyError, TypeError, ValueError) as exc:
        raise FormatError(f"{path}: tensor {name!r} has a malformed header entry {info!r:.200}",
                          path=str(path), field=name) from exc
    count = math.prod(shape)  # Python ints: a product past 2**63 must not wrap
    if min(shape, default=0) < 0 or not 0 <= start <= end <= data_len \
            or end - start != count * dtype.itemsize:
        raise FormatError(f"{path}: tensor {name!r} ({info!r:.200}) does not fit the data section "
                          f"of {data_len} bytes", path=str(path), field=name)
    if count == 0 or whole is None:
        return np.zeros(shape, dtype=dtype)
    return whole[start:end].view(dtype).reshape(shape)


def release_pages(arrays: Iterable[Any]) -> int:
    """Drop the pages of memory-mapped ``arrays`` (views of :func:`load_tensors`' maps) from
    this process's resident set; return how many maps were released.

    The data stay valid: a later read faults its pages back in from the page cache (which
    keeps them while memory allows) or the file.  For a reader that checked whole arrays
    once (a server's load checks) and then touches only the rows it is asked for, so its
    RSS counts what it uses rather than the whole part.  Arrays that are not file maps
    are left alone.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.safetensors"
        >>> _ = save_tensors(p, {"a": np.arange(1 << 16)})
        >>> t, _ = load_tensors(p)
        >>> int(t["a"].sum()), release_pages(t.values()), int(t["a"][-1])
        (2147450880, 1, 65535)
    """
    maps: dict[int, mmap.mmap] = {}
    for arr in arrays:
        base = arr
        while base is not None and not isinstance(base, mmap.mmap):
            base = getattr(base, "base", None)
        if base is not None:
            maps[id(base)] = base
    if not hasattr(mmap, "MADV_DONTNEED"):
        return 0
    for m in maps.values():
        with contextlib.suppress(OSError, ValueError):  # a closed map: nothing resident
            m.madvise(mmap.MADV_DONTNEED)
    return len(maps)


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)
