"""Checks of what a partition config and its part files hold: the JSON types of the
config's keys (for :func:`graphshard.partition.config.read_config`), and, when a part is
loaded (:mod:`graphshard.partition.files`), the arrays of a part against each other and
against the partition book, so that a file that passes its checksum but holds inconsistent
data raises a FormatError naming the file instead of giving wrong IDs later.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FormatError
from ..partition_book import RangePartitionBook
from ..ragged import Ragged
from ..sparse import SparseRows

__all__ = ["bad_value", "check_features", "check_part_arrays", "check_ranges",
           "check_type_ids", "is_int"]


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def bad_value(path: Path, field: str, expectation: str, value: Any) -> FormatError:
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return FormatError(f"{path}: {field} {expectation}, got {shown}", path=str(path),
                       field=field)


def check_ranges(path: Path, mapping: Any, key: str, num_parts: int) -> None:
    """``{type: [[start, end] per part]}`` with integers in ``[0, 2**63)``."""
    if not isinstance(mapping, dict):
        raise bad_value(path, key, "must be an object {type: [[start, end] per part]}", mapping)
    for type_name, ranges in mapping.items():
        if not isinstance(ranges, list) or len(ranges) != num_parts:
            count = len(ranges) if isinstance(ranges, list) else type(ranges).__name__
            raise FormatError(f"{path}: {key}[{type_name!r}] has {count} ranges, but "
                              f"num_parts is {num_parts}", path=str(path), field=key)
        for p, pair in enumerate(ranges):
            if not (isinstance(pair, list) and len(pair) == 2
                    and all(is_int(x) and 0 <= x < 1 << 63 for x in pair)):
                raise bad_value(path, f"{key}[{type_name!r}][{p}]",
                           "must be a [start, end] pair of non-negative integers", pair)


def check_type_ids(path: Path, mapping: Any, key: str, types: list[str], map_key: str) -> None:
    """``{type: 0, ...}``: the types of ``map_key`` numbered in their order."""
    if not isinstance(mapping, dict) or list(mapping) != types \
            or list(mapping.values()) != list(range(len(types))):
        raise bad_value(path, key, f"must number the types of {map_key} {types} as 0, 1, ... in "
                   "that order", mapping)


def check_part_arrays(file: Path, tensors: dict[str, np.ndarray], book: RangePartitionBook,
                      part_id: int) -> None:
    """One part's structure and node/edge data agree with each other and with ``book``.

    Inner nodes (edges) come first, and their ``_ID`` are the part's range in the book;
    every ``_ID`` is a valid ID whose ``part_id`` and ``_TYPE`` are the book's; ``src``,
    ``dst`` are local IDs; ``orig_id`` are valid IDs.

    Raises:
        FormatError: naming ``file`` and the first bad tensor (and position).
    """
    def fail(field: str, finding: str) -> FormatError:
        return FormatError(f"{file}: {field} {finding}", path=str(file), field=field)

    for key, arr in tensors.items():
        if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool):
            raise fail(key, f"must be a 1-D integer array, got {arr.dtype} of shape "
                       f"{arr.shape}")
    num_nodes, num_edges = len(tensors["node/_ID"]), len(tensors["src"])
    for kind, count, what in (("node", num_nodes, "nodes"), ("edge", num_edges, "edges")):
        for key in (k for k in tensors if k.startswith(f"{kind}/") or
                    (kind == "edge" and k == "dst")):
            if len(tensors[key]) != count:
                raise fail(key, f"has {len(tensors[key])} entries for {count} {what}")
    for key in ("src", "dst"):
        bad = _first_outside(tensors[key], num_nodes)
        if bad is not None:
            raise fail(key, f"[{bad}] = {tensors[key][bad]} is not a local node ID in "
                       f"[0, {num_nodes})")
    for kind, per_type in (("node", book.map_to_per_ntype), ("edge", book.map_to_per_etype)):
        counts = [m[f"num_{kind}s"] for m in book.metadata()]  # no arrays of declared size
        total, first, owned = sum(counts), sum(counts[:part_id]), counts[part_id]
        inner = tensors[f"{kind}/inner_{kind}"]
        ids = tensors[f"{kind}/_ID"]
        marked = int(np.count_nonzero(inner))
        if marked != owned or not np.all(inner[:owned]):
            raise fail(f"{kind}/inner_{kind}", f"must mark the first {owned} {kind}s "
                       f"(the part's {kind}s in the partition book), got {marked} marked")
        for block in _blocks(owned):
            if not np.array_equal(ids[block], np.arange(first + block.start, first + block.stop)):
                raise fail(f"{kind}/_ID", f"of the inner {kind}s must be {first}, "
                           f"{first + 1}, ... (the book's range of part {part_id})")
        for key in (f"{kind}/_ID", f"{kind}/orig_id"):
            bad = _first_outside(tensors[key], total)
            if bad is not None:
                raise fail(key, f"[{bad}] = {tensors[key][bad]} is not an ID in [0, {total})")
        for block in _blocks(len(ids) if total else 0):
            types = per_type(ids[block])[0]
            wrong = np.flatnonzero(tensors[f"{kind}/_TYPE"][block] != types)
            if wrong.size:
                at = block.start + int(wrong[0])
                raise fail(f"{kind}/_TYPE", f"[{at}] = {tensors[f'{kind}/_TYPE'][at]}, but "
                           f"the partition book gives type {types[wrong[0]]}")
    for block in _blocks(num_nodes):
        owner = book.nid2partid(tensors["node/_ID"][block])
        wrong = np.flatnonzero(tensors["node/part_id"][block] != owner)
        if wrong.size:
            at = block.start + int(wrong[0])
            raise fail("node/part_id", f"[{at}] = {tensors['node/part_id'][at]}, but the "
                       f"partition book gives part {owner[wrong[0]]}")


#: Entries per block of the part checks: their scratch stays a few MiB whatever the part's
#: size (a server checks its part while the other servers of the machine load theirs).
CHECK_BLOCK = 1 << 20


def _blocks(n: int) -> list[slice]:
    return [slice(i, min(i + CHECK_BLOCK, n)) for i in range(0, n, CHECK_BLOCK)]


def _first_outside(arr: np.ndarray, bound: int) -> int | None:
    """Position of the first entry of ``arr`` outside ``[0, bound)``, or None (a min and a
    max over the whole array, then one block search where they fail: no array-sized
    scratch)."""
    if not len(arr) or (int(arr.min()) >= 0 and int(arr.max()) < bound):
        return None
    for block in _blocks(len(arr)):
        bad = np.flatnonzero((arr[block] < 0) | (arr[block] >= bound))
        if bad.size:
            return block.start + int(bad[0])
    return None


def check_features(file: Path, feats: dict[str, Any], type_map: dict[str, list[list[int]]],
                   part_id: int, kind: str) -> None:
    """Feature columns ``"<type>/<name>"`` of the types of ``type_map`` (the config's
    ``node_map`` or ``edge_map``), one row per inner node (edge) of that type in the part.

    Raises:
        FormatError: naming ``file`` and the first bad column.
    """
    types = list(type_map)
    for key, col in feats.items():
        type_name = next((t for t in types if key.startswith(f"{t}/")), None)
        if type_name is None:
            raise FormatError(f"{file}: feature {key!r} is not '<type>/<name>' for a {kind} "
                              f"type of the config {types}", path=str(file), field=key)
        start, end = type_map[type_name][part_id]
        rows = end - start
        have = len(col) if isinstance(col, (Ragged, SparseRows)) or col.ndim else None
        if have != rows:
            raise FormatError(f"{file}: feature {key!r} has {have} rows, but part {part_id} "
                              f"has {rows} {type_name!r} {kind}s", path=str(file), field=key)
