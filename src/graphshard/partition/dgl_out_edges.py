"""The out-edges DGL's own partitions hold and ours do not: added to a DGL export.

A part of ours holds the in-edges of its inner nodes (edges belong to the part of their
destination) and, with ``num_hops > 1``, the in-edges of its halo nodes.  DGL 2.1's
``partition_graph`` also puts the out-edges of inner nodes into each part (their
destinations as halo nodes, the edges with ``inner_edge`` 0), and DGL's ``DistGraph``
answers ``out_degrees`` and ``sample_neighbors(edge_dir="out")`` from them: without them
it silently misses every out-edge that leaves the part.  :func:`cross_edges` collects, from
each part, the inner edges whose source another part owns; :func:`with_out_edges` adds to
a part those whose source it owns (skipping edges it holds already), new destinations as
halo nodes after the existing ones, new edges after the existing ones in edge-ID order.

Example:
    >>> import numpy as np
    >>> from graphshard.partition.dgl_layout import DGLPart
    >>> def part(ids, inner, owner, src, dst, eids):  # one node and edge type
    ...     n, m = len(ids), len(src)
    ...     return DGLPart(np.array(src), np.array(dst),
    ...                    {"_ID": np.array(ids), "inner_node": np.array(inner, np.uint8),
    ...                     "part_id": np.array(owner)},
    ...                    {"_ID": np.array(eids), "inner_edge": np.ones(m, np.uint8)}, {}, {})
    >>> # nodes 0, 1 in part 0, node 2 in part 1; edges 0: 0->1 (part 0), 1: 1->2 (part 1)
    >>> p0 = part([0, 1], [1, 1], [0, 0], [0], [1], [0])
    >>> p1 = part([2, 1], [1, 0], [1, 0], [1], [0], [1])
    >>> cross = concat_cross_edges([cross_edges(p0, 0), cross_edges(p1, 1)])
    >>> out = with_out_edges(p0, 0, cross)
    >>> out.ndata["_ID"].tolist(), out.src.tolist(), out.dst.tolist(), out.edata["_ID"].tolist()
    ([0, 1, 2], [0, 1], [1, 2], [0, 1])
    >>> out.edata["inner_edge"].tolist(), out.ndata["inner_node"].tolist()
    ([1, 0], [1, 1, 0])
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..typing import IdArray
from .dgl_layout import DGLPart

__all__ = ["CrossEdges", "concat_cross_edges", "cross_edges", "with_out_edges"]


@dataclass(frozen=True)
class CrossEdges:
    """Edges whose source and destination have different owners, in global IDs.

    Attributes:
        src, dst, eid: Global source, destination and edge ID of each edge (int64).
        etype: Edge type ID of each edge (int32).
        src_part, dst_part: Owner of the source and of the destination (int64).
        dst_type: Node type ID of the destination (int16).
    """

    src: IdArray
    dst: IdArray
    eid: IdArray
    etype: np.ndarray
    src_part: IdArray
    dst_part: IdArray
    dst_type: np.ndarray


def cross_edges(part: DGLPart, part_id: int) -> CrossEdges:
    """The inner edges of ``part`` (of ``part_id``) whose source another part owns."""
    nd, ed = part.ndata, part.edata
    inner = ed["inner_edge"].astype(bool)
    src_local, dst_local = part.src[inner], part.dst[inner]
    owner = nd["part_id"][src_local]
    keep = owner != part_id
    s, d = src_local[keep], dst_local[keep]
    types = nd.get("_TYPE")
    etypes = ed.get("_TYPE")
    return CrossEdges(
        src=nd["_ID"][s].astype(np.int64), dst=nd["_ID"][d].astype(np.int64),
        eid=ed["_ID"][inner][keep].astype(np.int64),
        etype=(np.zeros(len(s), np.int32) if etypes is None
               else etypes[inner][keep].astype(np.int32)),
        src_part=owner[keep].astype(np.int64),
        dst_part=np.full(len(s), part_id, dtype=np.int64),
        dst_type=(np.zeros(len(s), np.int16) if types is None else types[d].astype(np.int16)))


def concat_cross_edges(pieces: list[CrossEdges]) -> CrossEdges:
    """One :class:`CrossEdges` of several (field by field)."""
    names = CrossEdges.__dataclass_fields__
    return CrossEdges(**{n: np.concatenate([getattr(p, n) for p in pieces])
                         for n in names})


def _local_of(ids: IdArray, wanted: IdArray) -> IdArray:
    """Position in ``ids`` (distinct) of each of ``wanted`` (all present)."""
    order = np.argsort(ids, kind="stable")
    return order[np.searchsorted(ids[order], wanted)]


def with_out_edges(part: DGLPart, part_id: int, cross: CrossEdges) -> DGLPart:
    """``part`` plus the out-edges of its inner nodes that it lacks (see the module)."""
    nd, ed = part.ndata, part.edata
    sel = np.flatnonzero(cross.src_part == part_id)
    sel = sel[~np.isin(cross.eid[sel], ed["_ID"])]  # held already (a halo's in-edge)
    if sel.size == 0:
        return part
    sel = sel[np.argsort(cross.eid[sel], kind="stable")]
    dst = cross.dst[sel]
    new_nodes, first = np.unique(dst[~np.isin(dst, nd["_ID"])], return_index=True)
    new_rows = np.flatnonzero(~np.isin(dst, nd["_ID"]))[first]
    ids = np.concatenate([nd["_ID"], new_nodes])
    ndata = dict(nd)
    ndata["_ID"] = ids.astype(np.int64)
    ndata["inner_node"] = np.concatenate([nd["inner_node"],
                                          np.zeros(len(new_nodes), nd["inner_node"].dtype)])
    ndata["part_id"] = np.concatenate([nd["part_id"],
                                       cross.dst_part[sel][new_rows].astype(nd["part_id"].dtype)])
    if "_TYPE" in nd:
        ndata["_TYPE"] = np.concatenate([nd["_TYPE"],
                                         cross.dst_type[sel][new_rows].astype(nd["_TYPE"].dtype)])
    edata = dict(ed)
    edata["_ID"] = np.concatenate([ed["_ID"], cross.eid[sel]]).astype(np.int64)
    edata["inner_edge"] = np.concatenate([ed["inner_edge"],
                                          np.zeros(len(sel), ed["inner_edge"].dtype)])
    if "_TYPE" in ed:
        edata["_TYPE"] = np.concatenate([ed["_TYPE"], cross.etype[sel].astype(ed["_TYPE"].dtype)])
    src = np.concatenate([part.src, _local_of(ids, cross.src[sel])])
    dst_local = np.concatenate([part.dst, _local_of(ids, dst)])
    return replace(part, src=src.astype(np.int64), dst=dst_local.astype(np.int64),
                   ndata=ndata, edata=edata)
