"""Multi-hop neighbour sampling into message-flow blocks with compact local IDs.

Each hop samples the in-edges of the current nodes and reindexes them as DGL's ``to_block``
and PGL's reindex do: a block's source nodes are its destination nodes first, then the new
neighbours in order of first appearance; the next hop samples around all of them.  A block
reads both ways: DGL-style (``src_nodes``, ``dst_nodes``, local ``src``/``dst`` per edge
type) and PyG-style (``node_ids`` and a ``2 x E`` ``edge_index`` into them).

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
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ValidationError
from ..store import as_store
from ..typing import EdgeType, EdgeTypeLike, IdArray
from .backend import get_backend
from .neighbors import exclude_by_type, sample_hop
from .validate import etype_salt, layer_fanouts, resolve_seed, seeds_by_type

if TYPE_CHECKING:
    import torch

__all__ = ["Block", "SampledBlocks", "sample_blocks"]


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
