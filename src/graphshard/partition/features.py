"""Split node and edge features per part, rows in new (shuffled) ID order."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..graph import Graph
from ..ragged import Ragged
from ..sparse import SparseRows
from ..typing import IdArray
from .reshuffle import Reshuffle

__all__ = ["part_edge_features", "part_node_features", "per_type_orig_ids"]


def per_type_orig_ids(new2orig: IdArray, ranges: IdArray, type_offsets: IdArray,
                      type_index: int, part_id: int) -> IdArray:
    """Original per-type IDs of the items of one type owned by one part, in new-ID order."""
    start, end = ranges[type_index, part_id]
    return new2orig[start:end] - type_offsets[type_index]


def _take(column: Any, rows: IdArray) -> Any:
    if isinstance(column, (Ragged, SparseRows)):
        return column.take(rows)
    return np.ascontiguousarray(column[rows])


def part_node_features(g: Graph, shuffle: Reshuffle, part_id: int,
                       extra: dict[str, dict[str, np.ndarray]] | None = None
                       ) -> dict[str, Any]:
    """Inner-node features of ``part_id`` keyed ``"<ntype>/<name>"``.

    ``extra`` adds per-type columns given over all nodes of the type in original order
    (``trainer_id`` uses it).
    """
    offsets = g.node_type_offsets()
    out: dict[str, Any] = {}
    for t, ntype in enumerate(g.ntypes):
        rows = per_type_orig_ids(shuffle.node_new2orig, shuffle.node_ranges, offsets, t,
                                 part_id)
        columns = dict(g.node_frame(ntype))
        columns.update((extra or {}).get(ntype, {}))
        for name, column in columns.items():
            out[f"{ntype}/{name}"] = _take(column, rows)
    return out


def part_edge_features(g: Graph, shuffle: Reshuffle, part_id: int) -> dict[str, Any]:
    """Inner-edge features of ``part_id`` keyed ``"<src:rel:dst>/<name>"``."""
    offsets = g.edge_type_offsets()
    out: dict[str, Any] = {}
    for t, etype in enumerate(g.canonical_etypes):
        frame = g.edge_frame(etype)
        if not frame:
            continue
        rows = per_type_orig_ids(shuffle.edge_new2orig, shuffle.edge_ranges, offsets, t,
                                 part_id)
        for name, column in frame.items():
            out[f"{':'.join(etype)}/{name}"] = _take(column, rows)
    return out
