"""Multi-hop neighbour sampling into one subgraph with compact local IDs (PyG's layout).

Hop 1 samples the in-edges of the seeds, hop ``h`` those of the nodes first reached at hop
``h - 1`` only, so every node's in-edges are sampled at most once and the union of the
hops is one directed subgraph, as PyG's ``NeighborSampler`` returns it: per node type the
seeds first, then the nodes of each hop in order of first appearance; per edge type local
``row`` (source) and ``col`` (destination) positions into those lists, the edges grouped by
hop.  :func:`~graphshard.sampling.sample_blocks` is the DGL-style alternative (one block
per layer, each resampling every node of the previous one).

The draws are the blocks' keyed draws (seed, node ID, edge type, hop), so a seed gives the
same subgraph on a local graph and on a DistGraph over any number of servers, where each
hop is one request per server.

Example:
    >>> import graphshard as gs
    >>> g = gs.graph(([1, 2, 3, 4], [0, 0, 1, 1]))
    >>> sub = sample_subgraph(g, [0], [-1, -1], seed=0)
    >>> sub.nodes["_N"].tolist(), sub.num_sampled_nodes["_N"]
    ([0, 1, 2, 3, 4], [1, 2, 2])
    >>> et = ("_N", "_E", "_N")
    >>> sub.row[et].tolist(), sub.col[et].tolist(), sub.num_sampled_edges[et]
    ([1, 2, 3, 4], [0, 0, 1, 1], [2, 2])
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ValidationError
from ..store import Hop, as_store
from ..typing import EdgeType, IdArray
from .backend import get_backend
from .neighbors import exclude_by_type, sample_hop
from .validate import etype_salt, layer_fanouts, resolve_seed, seeds_by_type

__all__ = ["SampledSubgraph", "sample_subgraph", "subgraph_rounds"]


@dataclass(frozen=True)
class SampledSubgraph:
    """A sampled subgraph (new int64 arrays; every node and edge type present, maybe empty).

    Attributes:
        nodes: Global IDs per node type: the seeds first (deduplicated, first occurrence
            kept), then the nodes reached at hop 1, 2, ...
        row: Per edge type, local source IDs (positions in ``nodes[src_type]``).
        col: Per edge type, local destination IDs (positions in ``nodes[dst_type]``).
        eids: Per edge type, global per-type edge IDs.
        num_sampled_nodes: Per node type, the count of seeds then of new nodes per hop.
        num_sampled_edges: Per edge type, the count of edges sampled at each hop.
    """

    nodes: dict[str, IdArray]
    row: dict[EdgeType, IdArray]
    col: dict[EdgeType, IdArray]
    eids: dict[EdgeType, IdArray]
    num_sampled_nodes: dict[str, list[int]]
    num_sampled_edges: dict[EdgeType, list[int]]

    def num_edges(self) -> int:
        """Sampled edges over all types."""
        return sum(len(v) for v in self.row.values())

    def __repr__(self) -> str:
        hops = len(next(iter(self.num_sampled_nodes.values()), [0])) - 1
        return (f"SampledSubgraph(num_nodes={sum(len(v) for v in self.nodes.values())}, "
                f"num_edges={self.num_edges()}, hops={hops})")


def sample_subgraph(g: Any, seeds: Any, num_neighbors: Any, *, replace: bool = False,
                    prob: str | None = None, exclude_edges: Any = None,
                    seed: int | None = None, backend: str = "cpu") -> SampledSubgraph:
    """Sample a multi-hop in-neighbourhood of ``seeds`` as one subgraph (PyG's semantics).

    Args:
        g: A Graph or any GraphStore (a DistGraph samples on its servers).
        seeds: Seed node IDs (array, one node type) or ``{ntype: IDs}``.
        num_neighbors: Fanouts in PyG's order, hop 1 (around the seeds) first: a list of
            ints or per-type dicts, or ``{etype: [k per hop]}``; ``-1`` takes all in-edges,
            edge types left out of a dict take none.
        replace: Sample with replacement.
        prob: Name of a non-negative edge feature to sample proportionally to.
        exclude_edges: Edge IDs never to sample (array or ``{etype: IDs}``).
        seed: Random seed (the same draws as :func:`~graphshard.sampling.sample_blocks`'
            for a node at the same hop).
        backend: Kernel backend name.

    Returns:
        SampledSubgraph.

    Raises:
        ValidationError: bad IDs, types or fanouts.
    """
    store = as_store(g)
    excl = exclude_by_type(store, exclude_edges)
    s = resolve_seed(seed)
    rounds = subgraph_rounds(store, seeds, num_neighbors, backend=backend)
    try:
        hop, _ = next(rounds)
        while True:
            hop, _ = rounds.send(sample_hop(store, hop, replace=replace, prob=prob,
                                            exclude=excl, seed=s, backend=backend))
    except StopIteration as stop:
        return stop.value


#: The hops of one subgraph sample: yields ``(hop, nodes so far)``, receives the hop's
#: ``{etype: (neighbours, eids, counts)}``, returns the subgraph.
Rounds = Generator[tuple[Hop, dict[str, IdArray]],
                   dict[EdgeType, tuple[IdArray, IdArray, IdArray]], SampledSubgraph]


def subgraph_rounds(store: Any, seeds: Any, num_neighbors: Any, *, backend: str = "cpu"
                    ) -> Rounds:
    """:func:`sample_subgraph` as a generator of hops, so that the caller does the sampling
    (one hop at a time locally, or as calls to graph servers sent together with other
    requests; see :func:`graphshard.distributed.sampling.subgraph_steps`).

    Each ``yield`` hands out the hop to sample (``{etype: (destination IDs, fanout,
    salt)}``, fanout 0 and empty fronts left out) and the node IDs per type known so far
    (seeds first, then each earlier hop's new nodes; later rounds only append), and
    receives the sampled edges of every edge type of the hop.

    Example:
        >>> import graphshard as gs
        >>> from graphshard.sampling.neighbors import sample_hop
        >>> from graphshard.store import as_store
        >>> g = as_store(gs.graph(([1, 2, 3, 4], [0, 0, 1, 1])))
        >>> rounds = subgraph_rounds(g, [0], [-1, -1])
        >>> hop, nodes = next(rounds)
        >>> nodes["_N"].tolist()
        [0]
        >>> try:
        ...     while True:
        ...         hop, nodes = rounds.send(sample_hop(g, hop, replace=False, prob=None,
        ...                                             exclude={}, seed=0))
        ... except StopIteration as stop:
        ...     stop.value.nodes["_N"].tolist()
        [0, 1, 2, 3, 4]
    """
    store = as_store(store)
    hops = layer_fanouts(store, num_neighbors)
    bk = get_backend(backend)
    empty = np.zeros(0, dtype=np.int64)
    by_type = seeds_by_type(store, seeds)
    nodes = {t: empty for t in store.ntypes}
    for t, ids in by_type.items():
        nodes[t] = bk.relabel(empty, ids)[0]
    counts_n = {t: [len(nodes[t])] for t in store.ntypes}
    front = {t: (0, len(nodes[t])) for t in store.ntypes}
    parts: dict[EdgeType, list[tuple[IdArray, IdArray, IdArray]]] = {
        et: [] for et in store.canonical_etypes}
    counts_e: dict[EdgeType, list[int]] = {et: [] for et in store.canonical_etypes}
    for h, fan in enumerate(hops):
        hop = {et: (nodes[et[2]][front[et[2]][0]:front[et[2]][1]], fan[et],
                    etype_salt(store, et, "in", h))
               for et in store.canonical_etypes
               if fan[et] != 0 and front[et[2]][1] > front[et[2]][0]}
        sampled = yield hop, dict(nodes)
        by_src: dict[str, list[EdgeType]] = {}
        for et in hop:
            by_src.setdefault(et[0], []).append(et)
        new_front = {t: (len(nodes[t]), len(nodes[t])) for t in store.ntypes}
        local_src: dict[EdgeType, IdArray] = {}
        for t, ets in by_src.items():
            flat = np.concatenate([sampled[et][0] for et in ets])
            before = len(nodes[t])
            nodes[t], local = bk.relabel(nodes[t], flat)
            new_front[t] = (before, len(nodes[t]))
            cuts = np.cumsum([len(sampled[et][0]) for et in ets])[:-1]
            local_src.update(zip(ets, np.split(local, cuts), strict=True))
        for et in store.canonical_etypes:
            if et not in hop:
                counts_e[et].append(0)
                continue
            keys = hop[et][0]
            _, eid, counts = sampled[et]
            dst = front[et[2]][0] + np.repeat(np.arange(len(keys), dtype=np.int64), counts)
            parts[et].append((local_src[et], dst, eid))
            counts_e[et].append(len(eid))
        for t in store.ntypes:
            counts_n[t].append(new_front[t][1] - new_front[t][0])
        front = new_front
    row, col, eids = {}, {}, {}
    for et, ps in parts.items():
        row[et], col[et], eids[et] = ((np.concatenate([p[i] for p in ps]) if ps else empty)
                                      for i in range(3))
    return SampledSubgraph(nodes, row, col, eids, counts_n, counts_e)


def check_unique_seeds(seeds: IdArray, what: str) -> None:
    """Raise ValidationError naming the first repeated ID of ``seeds`` (PyG's node loaders
    align the first ``batch_size`` outputs with the seeds, so they must be distinct)."""
    if len(seeds) < 2:
        return
    order = np.argsort(seeds, kind="stable")
    dup = np.flatnonzero(seeds[order][1:] == seeds[order][:-1])
    if dup.size:
        raise ValidationError(f"{what}: seed node {int(seeds[order][dup[0]])} appears more than "
                              "once in the batch", field=what, value=int(seeds[order][dup[0]]))
