"""Multi-hop neighbour sampling into message-flow blocks with compact local IDs.

Each hop samples the in-edges of the current nodes and reindexes them as DGL's ``to_block``
and PGL's reindex do: a block's source nodes are its destination nodes first, then the new
neighbours in order of first appearance; the next hop samples around all of them.  A block
reads both ways: DGL-style (``src_nodes``, ``dst_nodes``, local ``src``/``dst`` per edge
type) and PyG-style (``node_ids`` and a ``2 x E`` ``edge_index`` into them).

:func:`to_block` turns a sampled frontier graph into a block as DGL's ``to_block`` does (the
flow of seed 001: ``sample_neighbors`` on a :class:`~graphshard.distributed.DistGraph`, then
``to_block``, then ``map_to_per_etype`` / ``map_to_per_ntype`` on the block's data).  A
block's ``srcdata`` / ``dstdata`` / ``edata`` hold columns keyed by :data:`NID` (node IDs),
:data:`EID` (edge IDs) and whatever the caller stores, :data:`NTYPE` / :data:`ETYPE` by
convention.

Example:
    >>> import graphshard as gs
    >>> g = gs.graph(([1, 2, 3, 4], [0, 0, 1, 1]))
    >>> out = sample_blocks(g, [0], [-1, -1], seed=0)
    >>> [b.src_nodes["_N"].tolist() for b in out.blocks]
    [[0, 1, 2, 3, 4], [0, 1, 2]]
    >>> out.blocks[1].edge_index().tolist()
    [[1, 2], [0, 0]]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from .._util.arrays import as_ids, check_id_range
from ..errors import ValidationError
from ..frames import FeatureDict, MultiTypeData
from ..graph import Graph
from ..store import as_store
from ..typing import EdgeType, EdgeTypeLike, IdArray
from .backend import get_backend
from .neighbors import exclude_by_type, sample_hop
from .validate import etype_salt, layer_fanouts, resolve_seed, seeds_by_type

if TYPE_CHECKING:
    import torch

__all__ = ["EID", "ETYPE", "NID", "NTYPE", "Block", "SampledBlocks", "sample_blocks",
           "to_block"]

#: Key of node IDs in a block's ``srcdata`` / ``dstdata`` (DGL's ``dgl.NID``).
NID = "_ID"
#: Key of edge IDs in a block's ``edata`` (DGL's ``dgl.EID``).
EID = "_ID"
#: Key of node type IDs (DGL's ``dgl.NTYPE``), as partition files name them.
NTYPE = "_TYPE"
#: Key of edge type IDs (DGL's ``dgl.ETYPE``).
ETYPE = "_TYPE"


@dataclass(frozen=True)
class Block:
    """One message-flow layer: edges from source nodes to destination nodes, local IDs.

    Attributes:
        src_nodes: Global IDs of the source nodes per node type; the destination nodes of
            that type come first (``src_nodes[t][:len(dst_nodes[t])] == dst_nodes[t]``).
        dst_nodes: Global IDs of the destination nodes per node type.
        src: Per edge type, local source IDs (positions in ``src_nodes[src_type]``).
        dst: Per edge type, local destination IDs (positions in ``dst_nodes[dst_type]``).
        eids: Per edge type, global per-type edge IDs.
    """

    src_nodes: dict[str, IdArray]
    dst_nodes: dict[str, IdArray]
    src: dict[EdgeType, IdArray]
    dst: dict[EdgeType, IdArray]
    eids: dict[EdgeType, IdArray]

    def _et(self, etype: EdgeTypeLike | None) -> EdgeType:
        if etype is None and len(self.src) == 1:
            return next(iter(self.src))
        for et in self.src:
            if etype in (et, et[1], ":".join(et)):
                return et
        raise ValidationError(f"edge type {etype!r} is not in the block; edge types are "
                              f"{list(self.src)}", field="etype", value=etype)

    def num_src_nodes(self, ntype: str | None = None) -> int:
        """Source nodes of ``ntype`` (all types when None)."""
        return (sum(len(v) for v in self.src_nodes.values()) if ntype is None
                else len(self.src_nodes[ntype]))

    def num_dst_nodes(self, ntype: str | None = None) -> int:
        """Destination nodes of ``ntype`` (all types when None)."""
        return (sum(len(v) for v in self.dst_nodes.values()) if ntype is None
                else len(self.dst_nodes[ntype]))

    def num_edges(self) -> int:
        """Edges over all types."""
        return sum(len(v) for v in self.src.values())

    def edge_index(self, etype: EdgeTypeLike | None = None) -> IdArray | torch.Tensor:
        """PyG-style ``(2, E)`` int64 array (a new array; a tensor after ``to_torch``) of local
        ``[src; dst]``; both rows index the source node list, since the destination nodes
        are its prefix."""
        et = self._et(etype)
        src: Any = self.src[et]  # IdArray, or a tensor after to_torch
        dst: Any = self.dst[et]
        if hasattr(src, "detach"):  # a block converted by to_torch
            import torch

            return torch.stack([src, dst])
        return np.stack([src, dst])

    @property
    def node_ids(self) -> dict[str, IdArray]:
        """PyG-style name of :attr:`src_nodes`."""
        return self.src_nodes

    # DGL-style data columns, built on first access (cached_property writes the instance
    # dict directly, which a frozen dataclass allows); each checks its row count.
    @cached_property
    def srcdata(self) -> FeatureDict | MultiTypeData:
        """Columns of the source nodes (DGL's ``block.srcdata``): ``srcdata[NID]`` holds
        :attr:`src_nodes` at first; assign more.  A dict of columns for one node type,
        ``name -> {ntype: column}`` for several."""
        return _columns(self.src_nodes, "block source nodes", NID)

    @cached_property
    def dstdata(self) -> FeatureDict | MultiTypeData:
        """Columns of the destination nodes (``dstdata[NID]``: :attr:`dst_nodes`)."""
        return _columns(self.dst_nodes, "block destination nodes", NID)

    @cached_property
    def edata(self) -> FeatureDict | MultiTypeData:
        """Columns of the edges (``edata[EID]``: :attr:`eids`), per edge type as
        :attr:`srcdata` is per node type."""
        return _columns(self.eids, "block edges", EID)

    def __repr__(self) -> str:
        return (f"Block(num_src_nodes={self.num_src_nodes()}, num_dst_nodes="
                f"{self.num_dst_nodes()}, num_edges={self.num_edges()})")


@dataclass(frozen=True)
class SampledBlocks:
    """Blocks of a multi-hop sample, input layer first (``blocks[-1]`` ends at the seeds).

    Attributes:
        input_nodes: Global IDs of the first block's source nodes, per node type.
        output_nodes: The seeds, deduplicated in first-appearance order, per node type.
        blocks: One :class:`Block` per layer.
    """

    input_nodes: dict[str, IdArray]
    output_nodes: dict[str, IdArray]
    blocks: list[Block]

    def to_pyg(self, etype: EdgeTypeLike | None = None
               ) -> list[tuple[IdArray, IdArray | torch.Tensor]]:
        """Per layer ``(node_ids, edge_index)`` of one edge type (graphs with one node type)."""
        if len(self.input_nodes) != 1:
            raise ValidationError("to_pyg needs a graph with one node type; use the blocks' "
                                  "per-type fields", field="etype")
        return [(next(iter(b.src_nodes.values())), b.edge_index(etype)) for b in self.blocks]

    def __repr__(self) -> str:
        return (f"SampledBlocks(num_layers={len(self.blocks)}, input_nodes="
                f"{sum(len(v) for v in self.input_nodes.values())}, output_nodes="
                f"{sum(len(v) for v in self.output_nodes.values())})")


def sample_blocks(g: Any, seeds: Any, fanouts: Any, *, replace: bool = False,
                  prob: str | None = None, exclude_edges: Any = None, seed: int | None = None,
                  backend: str = "cpu") -> SampledBlocks:
    """Sample a multi-hop neighbourhood of ``seeds`` as blocks (DGL's sample_blocks).

    Args:
        g: A Graph or any GraphStore.
        seeds: Output node IDs (array, one node type) or ``{ntype: IDs}``; duplicates are
            dropped, first occurrence kept.
        fanouts: One fanout per layer, input layer first as in DGL (``fanouts[-1]`` edges
            per seed, ``fanouts[-2]`` per node of the next hop; PyG's ``num_neighbors``
            lists the same numbers in reverse): ints or per-type dicts, or a dict
            ``{etype: [fanout per layer]}``.  ``-1`` takes all in-edges.
        replace: Sample with replacement.
        prob: Name of a non-negative edge feature to sample proportionally to.
        exclude_edges: Edge IDs never to sample (array or ``{etype: IDs}``).
        seed: Random seed; hop ``h`` draws from its own stream.
        backend: Kernel backend name.

    Returns:
        SampledBlocks with ``len(fanouts)`` blocks.

    Raises:
        ValidationError: bad IDs, types or fanouts (per-type lists of different lengths).

    Example:
        >>> import graphshard as gs
        >>> g = gs.graph(([1, 2, 3], [0, 0, 1]))
        >>> out = sample_blocks(g, [0, 0], [2, 2], seed=3)
        >>> out.output_nodes["_N"].tolist(), out.blocks[-1].dst_nodes["_N"].tolist()
        ([0], [0])
    """
    store = as_store(g)
    layers = layer_fanouts(store, fanouts)
    bk = get_backend(backend)
    excl = exclude_by_type(store, exclude_edges)
    s = resolve_seed(seed)
    empty = np.zeros(0, dtype=np.int64)
    cur = {t: bk.relabel(empty, ids)[0] for t, ids in seeds_by_type(store, seeds).items()}
    output = cur
    blocks: list[Block] = []
    for h, fan in enumerate(reversed(layers)):
        hop = {et: (cur[et[2]], fan[et], etype_salt(store, et, "in", h))
               for et in store.canonical_etypes if et[2] in cur}
        sampled = sample_hop(store, hop, replace=replace, prob=prob, exclude=excl, seed=s,
                             backend=backend)
        nbrs: dict[EdgeType, IdArray] = {}
        dst: dict[EdgeType, IdArray] = {}
        eids: dict[EdgeType, IdArray] = {}
        for et, (keys, _, _) in hop.items():
            nbrs[et], eids[et], counts = sampled[et]
            dst[et] = np.repeat(np.arange(len(keys), dtype=np.int64), counts)
        src_nodes, src = reindex_sources(bk, cur, nbrs, empty)
        blocks.insert(0, Block(src_nodes, dict(cur), src, dst, eids))
        cur = src_nodes
    return SampledBlocks(dict(cur), dict(output), blocks)


def reindex_sources(bk: Any, dst_nodes: Mapping[str, IdArray], nbrs: Mapping[EdgeType, IdArray],
             empty: IdArray) -> tuple[dict[str, IdArray], dict[EdgeType, IdArray]]:
    """Local source IDs per edge type, one hash table per source node type: destination
    nodes first, then new sources in order of first appearance (DGL's ``to_block``).
    Shared by the local engine and the distributed sampler."""
    by_src: dict[str, list[EdgeType]] = {}
    for et in nbrs:
        by_src.setdefault(et[0], []).append(et)
    src_nodes = dict(dst_nodes)
    src: dict[EdgeType, IdArray] = {}
    for t, ets in by_src.items():
        flat = nbrs[ets[0]] if len(ets) == 1 else np.concatenate([nbrs[et] for et in ets])
        src_nodes[t], local = bk.relabel(dst_nodes.get(t, empty), flat)
        cuts = np.cumsum([len(nbrs[et]) for et in ets])[:-1]
        for et, part in zip(ets, np.split(local, cuts), strict=True):
            src[et] = part
    return src_nodes, src


def _columns(ids: Mapping[Any, IdArray], owner: str, key: str) -> FeatureDict | MultiTypeData:
    """Feature columns of a block's nodes (edges), one frame per type, ``key`` set to
    ``ids``; a single frame for one type (as ``Graph.ndata`` is)."""
    frames = {}
    for t, v in ids.items():
        frames[t] = FeatureDict(len(v), f"{owner} of type {t!r}")
        frames[t][key] = v
    if len(frames) == 1:
        return next(iter(frames.values()))
    return MultiTypeData(frames)


def to_block(g: Graph, dst_nodes: Any = None, *, backend: str = "cpu") -> Block:
    """The block of a frontier graph: its edges from source nodes into ``dst_nodes``, with
    compact local IDs (DGL's ``to_block``).

    Source nodes are the destination nodes first, then the other edge sources in order of
    first appearance; edges keep the frontier's order, so ``block.edata[EID]`` (the
    frontier's edge IDs ``0..E-1`` per type) lines up with the frontier's own edge data,
    e.g. the global IDs that :func:`graphshard.distributed.sample_neighbors` stores there.

    Args:
        g: The frontier (a :class:`~graphshard.graph.Graph`; every edge must end at a
            node of ``dst_nodes``).
        dst_nodes: Destination node IDs: an array (a graph with one node type) or
            ``{ntype: IDs}``, distinct; None takes the nodes with an in-edge, ascending.
        backend: Kernel backend name (the reindex).

    Returns:
        A :class:`Block` whose ``srcdata[NID]`` / ``dstdata[NID]`` are the frontier's node
        IDs of its source and destination nodes.

    Raises:
        ValidationError: a repeated or out-of-range destination node, or an edge whose
            destination is not in ``dst_nodes`` (named with its position).

    Example:
        >>> import graphshard as gs
        >>> frontier = gs.graph(([5, 7, 5], [2, 2, 7]), num_nodes=8)
        >>> block = to_block(frontier, [2, 7])
        >>> block.srcdata[NID].tolist(), block.dstdata[NID].tolist()
        ([2, 7, 5], [2, 7])
        >>> block.edge_index().tolist(), block.edata[EID].tolist()
        ([[2, 1, 2], [0, 0, 1]], [0, 1, 2])
    """
    if not isinstance(g, Graph):
        raise ValidationError(f"to_block takes a Graph (a sampled frontier), got "
                              f"{type(g).__name__}", field="g")
    bk = get_backend(backend)
    empty = np.zeros(0, dtype=np.int64)
    if dst_nodes is None:
        found: dict[str, list[IdArray]] = {}
        for et in g.canonical_etypes:
            found.setdefault(et[2], []).append(g.edges(etype=et)[1])
        dst = {t: np.unique(np.concatenate(v)) for t, v in found.items()}
    else:
        if not isinstance(dst_nodes, Mapping):
            dst_nodes = {g.types.to_ntype(None): dst_nodes}
        dst = {}
        for t, ids in dst_nodes.items():
            nt = g.types.to_ntype(t)
            arr = as_ids(ids, f"dst_nodes[{nt!r}]")
            check_id_range(arr, g.num_nodes(nt), f"dst_nodes of node type {nt!r}")
            _check_distinct(arr, nt)
            dst[nt] = arr
    nbrs: dict[EdgeType, IdArray] = {}
    local_dst: dict[EdgeType, IdArray] = {}
    eids: dict[EdgeType, IdArray] = {}
    for et in g.canonical_etypes:
        s, d = g.edges(etype=et)
        if et[2] not in dst and not len(d):
            continue
        local_dst[et] = _positions(dst.get(et[2], empty), d, et)
        nbrs[et] = np.asarray(s, dtype=np.int64)
        eids[et] = np.arange(len(s), dtype=np.int64)
    src_nodes, src = reindex_sources(bk, dst, nbrs, empty)
    return Block(src_nodes, dst, src, local_dst, eids)


def _check_distinct(ids: IdArray, ntype: str) -> None:
    order = np.argsort(ids, kind="stable")
    rep = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if rep.size:
        pos = int(order[rep[0] + 1])
        raise ValidationError(f"dst_nodes of node type {ntype!r}: node {ids[pos]} at position "
                              f"{pos} is listed twice", field="dst_nodes", value=int(ids[pos]))


def _positions(dst: IdArray, d: IdArray, et: EdgeType) -> IdArray:
    """Position in ``dst`` of each edge destination ``d`` (each must be there)."""
    order = np.argsort(dst, kind="stable")
    at = np.searchsorted(dst[order], d)
    at_c = np.minimum(at, max(len(dst) - 1, 0))
    bad = np.flatnonzero((at >= len(dst)) | (dst[order][at_c] != d)) if len(dst) else (
        np.arange(len(d)))
    if bad.size:
        i = int(bad[0])
        raise ValidationError(f"to_block: edge {i} of type {et} ends at node {d[i]}, which "
                              "is not in dst_nodes", field="dst_nodes", value=int(d[i]))
    return order[at_c].astype(np.int64, copy=False)
