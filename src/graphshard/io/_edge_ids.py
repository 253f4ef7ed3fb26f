"""Node ID columns of edge lists: explicit integer-or-string parsing and ID-space bounds.

Text files have no declared types, so each ID column is judged on its tokens: integers
stay integers, a column with no numeric token at all holds string IDs (logged), and a
column mixing the two is refused naming the first bad row.  Typed files (Parquet,
NumPy) keep their declared type: integers (unsigned ones only while they fit in int64,
unless the IDs are relabelled), floats only when every value is an exact integer, and
strings.  :func:`check_id_space` refuses an unrelabelled ID space far larger than the
edges that use it, before anything is allocated per node.
"""

from __future__ import annotations

import bz2
import gzip
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._common import column_to_numpy, fail, scan_lines

log = logging.getLogger(__name__)

#: How IDs are read: "auto" (integers, or strings when a whole column is non-numeric),
#: "int" (integers only) or "str" (every ID is a string).
ID_MODES = ("auto", "int", "str")
#: An unrelabelled integer ID space may imply up to this many nodes whatever the edges ...
MIN_ID_SPACE = 1 << 20
#: ... and beyond it at most this many nodes per edge (SNAP's sparsest graphs need < 4).
NODES_PER_EDGE = 64
INT_TOKEN = r"^\s*[+-]?[0-9]+\s*$"
NUMBER_TOKEN = r"^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*$"
_EXACT_FLOAT = float(1 << 53)  # floats above this are not exact integers

#: ``line_of(row)`` -> the file's 1-based line of a data row (text files; None otherwise).
LineOf = Callable[[int], int | None]


@dataclass(frozen=True)
class IdColumn:
    """One parsed ID column: ``kind`` is "int" (int64 ``values``), "u64" (uint64 values
    that need relabelling) or "str" (``values`` is an Arrow string array)."""

    kind: str
    values: np.ndarray | pa.Array


def _first(mask: pa.Array) -> int:
    return int(np.flatnonzero(column_to_numpy(mask))[0])


def _bad(path: Path, line_of: LineOf, field: str, row: int, message: str,
         value: object = None) -> Exception:
    return fail(path, f"row {row + 1}: {message}", line=line_of(row), field=field, value=value)


def parse_ids(col: pa.ChunkedArray | pa.Array, *, path: Path, field: str, line_of: LineOf,
              text: bool, mode: str, relabel: bool, has_ids_option: bool = True) -> IdColumn:
    """Parse one non-null ID column (``field`` names it in errors; ``has_ids_option``: the
    reader takes ``ids=``, so errors may suggest ``ids='str'``).

    Raises:
        FormatError: a token that is not an integer in an integer column, a float that is not
            an exact integer, an integer that does not fit in 64 bits (or in int64 without
            relabelling), or a column type that cannot hold IDs; naming file, row and column.
    """
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    t = col.type
    if mode == "str":
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            return IdColumn("str", _utf8(col, path, field, line_of))
        return IdColumn("str", pc.cast(col, pa.large_string()))
    if pa.types.is_integer(t):
        return _integers(col, path, field, line_of, relabel)
    if text or pa.types.is_string(t) or pa.types.is_large_string(t) or \
            pa.types.is_binary(t) or pa.types.is_large_binary(t):
        strings = _utf8(col, path, field, line_of)
        if text:
            return _tokens(strings, path, field, line_of, mode, relabel, has_ids_option)
        if mode == "int":
            raise _bad(path, line_of, field, 0, f"column holds strings ({strings[0].as_py()!r}) "
                       "but ids='int' asks for integer node IDs", strings[0].as_py())
        log.info("%s: column %r holds strings: node IDs are mapped to 0..n-1 in sorted order "
                 "(the originals kept as node feature 'node_id')", path, field)
        return IdColumn("str", strings)
    if pa.types.is_floating(t):
        vals = column_to_numpy(col).astype(np.float64, copy=False)
        bad = ~np.isfinite(vals) | (vals != np.floor(vals)) | (np.abs(vals) > _EXACT_FLOAT)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise _bad(path, line_of, field, row, f"node ID {float(vals[row])!r} is not an exact "
                       "integer (float column); write integer IDs, or pass ids='str' "
                       "(CLI: -O ids=str)",
                       float(vals[row]))
        return IdColumn("int", vals.astype(np.int64))
    raise fail(path, f"column type {t} cannot hold node IDs; expected integers or strings",
               field=field, value=str(t))


def _utf8(col: pa.Array, path: Path, field: str, line_of: LineOf) -> pa.Array:
    try:
        return pc.cast(col, pa.large_string())
    except pa.ArrowInvalid as exc:  # binary that is not UTF-8: find the row
        for start in range(0, len(col), 65536):
            try:
                pc.cast(col.slice(start, 65536), pa.large_string())
            except pa.ArrowInvalid:
                rows = col.slice(start, 65536).to_pylist()
                for k, v in enumerate(rows):
                    try:
                        v.decode("utf-8")
                    except UnicodeDecodeError:
                        raise _bad(path, line_of, field, start + k, "node ID is not UTF-8 "
                                   f"text ({v[:40]!r})") from exc
        raise fail(path, f"node IDs are not UTF-8 text ({exc})", field=field) from exc


def _integers(col: pa.Array, path: Path, field: str, line_of: LineOf, relabel: bool
              ) -> IdColumn:
    if col.type == pa.uint64() and len(col):
        vals = column_to_numpy(col)
        big = vals >= np.uint64(1 << 63)
        if big.any():
            if relabel:
                return IdColumn("u64", vals)
            row = int(np.flatnonzero(big)[0])
            raise _bad(path, line_of, field, row, f"node ID {int(vals[row])} does not fit in "
                       "int64; pass relabel=True (CLI: --relabel) to map IDs to 0..n-1, "
                       "keeping the originals exactly (uint64) in node feature 'node_id'",
                       int(vals[row]))
    return IdColumn("int", column_to_numpy(col).astype(np.int64, copy=False))


def _tokens(strings: pa.Array, path: Path, field: str, line_of: LineOf, mode: str,
            relabel: bool, has_ids_option: bool) -> IdColumn:
    """Text tokens: integers, or (in "auto" mode) strings when no token is a number."""
    is_int = pc.match_substring_regex(strings, INT_TOKEN)
    if pc.all(is_int).as_py() or len(strings) == 0:
        return _big_tokens(pc.utf8_trim_whitespace(strings), path, field, line_of, relabel,
                           has_ids_option)
    numeric = pc.match_substring_regex(strings, NUMBER_TOKEN)
    if mode == "auto" and not pc.any(numeric).as_py() and not pc.any(is_int).as_py():
        log.info("%s: column %r holds no numbers: node IDs are read as strings and mapped to "
                 "0..n-1 in sorted order (the originals kept as node feature 'node_id')",
                 path, field)
        return IdColumn("str", strings)
    row = _first(pc.invert(is_int))
    token = strings[row].as_py()
    hint = (", or pass ids='str' (CLI: -O ids=str) to read every ID as a string"
            if has_ids_option else "")
    raise _bad(path, line_of, field, row, f"{token!r} is not an integer node ID (the column "
               f"holds integers); fix the row{hint}", token)


def _big_tokens(strings: pa.Array, path: Path, field: str, line_of: LineOf, relabel: bool,
                has_ids_option: bool = True) -> IdColumn:
    try:
        return IdColumn("int", column_to_numpy(pc.cast(strings, pa.int64())))
    except pa.ArrowInvalid:
        pass
    approx = column_to_numpy(pc.cast(strings, pa.float64()))
    for row in np.flatnonzero(np.abs(approx) >= 9.0e18).tolist():  # exact check, few rows
        value = int(strings[row].as_py())
        if not -(1 << 63) <= value < (1 << 63) and (not relabel or not 0 <= value < (1 << 64)):
            as_str = ("pass ids='str' (CLI: -O ids=str) to read the IDs as strings"
                      if has_ids_option else "IDs must fit in 64 bits")
            hint = as_str if relabel or value < 0 or \
                value >= (1 << 64) else "pass relabel=True (CLI: --relabel) to map " \
                "IDs to 0..n-1, keeping the originals exactly (uint64) in node feature 'node_id'"
            raise _bad(path, line_of, field, row, f"node ID {value} does not fit in int64; "
                       f"{hint}", value)
    try:  # every ID fits in uint64 and relabel is on
        return IdColumn("u64", column_to_numpy(pc.cast(strings, pa.uint64())))
    except pa.ArrowInvalid as exc:  # negative and >= 2**63 together
        raise fail(path, "node IDs span more than 64 bits (negative ones and ones >= 2**63); "
                   "pass ids='str' (CLI: -O ids=str)", field=field) from exc


def check_id_space(path: Path, field: str, top: int, num_edges: int, row: int | None,
                   line_of: LineOf, ntype: str | None = None) -> None:
    """Refuse ``top`` (largest ID + 1) nodes when far more than ``num_edges`` can use.

    Raises:
        FormatError: naming file, row of the largest ID, the node count and its size.
    """
    limit = max(MIN_ID_SPACE, NODES_PER_EDGE * num_edges)
    if top <= limit:
        return
    of = f" of type {ntype!r}" if ntype else ""
    msg = (f"the largest node ID{of}, {top - 1}, implies {top:,} nodes for {num_edges:,} "
           f"edges ({_size(8 * top)} for each int64 array over the nodes; at most "
           f"max({MIN_ID_SPACE:,}, {NODES_PER_EDGE} x edges) = {limit:,} without a declared "
           "count); pass relabel=True (CLI: --relabel) to map the IDs to 0..n-1 and "
           "keep the originals as node feature 'node_id', or num_nodes=N (CLI: -O "
           "num_nodes=N) to keep this sparse ID space")
    if row is None:
        raise fail(path, msg, field=field, value=top - 1)
    raise _bad(path, line_of, field, row, msg, top - 1)


def _size(num_bytes: int) -> str:
    size: float = num_bytes
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if size < 1000 or unit == "PB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{size} B"
        size /= 1000
    return f"{size:.1f} PB"  # pragma: no cover


def unify(columns: list[IdColumn], path: Path, field: str) -> list[pa.Array]:
    """ID columns that share a node type as Arrow arrays of one type: strings if any holds
    strings, else uint64 if any needs it (refusing negative IDs then), else int64."""
    kinds = {c.kind for c in columns}
    if "str" in kinds:
        return [pc.cast(c.values, pa.large_string()) if c.kind == "str"
                else pa.array(c.values).cast(pa.large_string()) for c in columns]
    if "u64" in kinds:
        for c in columns:
            if c.kind == "int" and len(c.values) and c.values.min() < 0:
                raise fail(path, "node IDs span more than 64 bits (negative ones and ones "
                           ">= 2**63); pass ids='str' (CLI: -O ids=str)", field=field)
        return [pa.array(c.values.astype(np.uint64, copy=False)) for c in columns]
    return [pa.array(c.values, pa.int64()) for c in columns]


def open_text(path: Path, mode: str = "rb") -> Any:
    """Open a text file, decompressing ``.gz`` and ``.bz2``."""
    if path.suffix.lower() == ".gz":
        return gzip.open(path, mode)
    if path.suffix.lower() == ".bz2":
        return bz2.open(path, mode)
    return open(path, mode)


def text_line(path: Path, row: int, skip: int = 0, header: bool = False) -> int:
    """1-based line of data row ``row`` in a text file read with pyarrow: ``skip`` lines
    skipped at the top, then an optional header, blank lines ignored."""
    with open_text(path) as handle:
        numbers = scan_lines(handle.read())[0]
    numbers = numbers[numbers > skip]
    k = row + int(header)
    return int(numbers[k]) if k < len(numbers) else row + 1 + int(header) + skip
