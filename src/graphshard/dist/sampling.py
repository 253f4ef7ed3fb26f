"""Sampling on the graph servers: one batched request per server per hop.

:func:`sample_neighbors` and :func:`sample_blocks` take the same arguments as their local
counterparts in :mod:`graphshard.sampling` and give the same result for a seed: the seeds of
a hop are grouped by owning partition and every server runs the sampling kernels on its
in-CSR, keyed by (seed, hop and edge type, node ID) exactly as the local engine does on the
whole graph.  Only sampled edges travel, not whole neighbourhoods.  Anything else (out-edge
sampling, walks, negative sampling, degrees) runs through the GraphStore protocol, which a
:class:`DistGraph` implements: call :mod:`graphshard.sampling` on it directly.

Example:
    >>> import graphshard as gs
    >>> dg = gs.dist.DistGraph("parts/shop.json")  # doctest: +SKIP
    >>> gs.dist.sample_blocks(dg, {"item": [0, 1]}, [10, 25], seed=0)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import sampling as local
from ..sampling._validate import (
    etype_salt,
    layer_fanouts,
    one_fanout,
    resolve_seed,
    seeds_by_type,
)
from ..sampling.backend import get_backend
from ..sampling.blocks import Block, SampledBlocks, _reindex
from ..sampling.neighbors import SampledEdges, _exclude_by_type
from ..store import check_edge_dir
from ..typing import EdgeType, IdArray
from ._rpc import group_by_owner
from .graph import DistGraph

__all__ = ["sample_blocks", "sample_neighbors"]

_Hop = dict[EdgeType, tuple[IdArray, int, int]]  # etype -> (keys, fanout, salt)


def sample_hop(g: DistGraph, hop: _Hop, *, replace: bool, prob: str | None,
               exclude: Mapping[EdgeType, IdArray], seed: int, backend: str = "cpu"
               ) -> dict[EdgeType, tuple[IdArray, IdArray, IdArray]]:
    """Sample in-edges of every edge type of ``hop`` on the servers, one call per server.

    Returns ``{etype: (neighbours, eids, counts)}`` in key order, as
    :func:`graphshard.sampling.neighbors.sample_etype` returns for each edge type.
    """
    book = g.get_partition_book()
    num_parts = g.num_partitions()
    per_part: list[list[tuple[EdgeType, IdArray, int, int]]] = [[] for _ in range(num_parts)]
    where: list[list[tuple[EdgeType, IdArray]]] = [[] for _ in range(num_parts)]
    for et, (keys, k, salt) in hop.items():
        owner = book.nid2partid(keys, et[2]) if len(keys) else keys
        for p, idx in enumerate(group_by_owner(owner, num_parts)):
            if len(idx):
                per_part[p].append((et, keys[idx], k, salt))
                where[p].append((et, idx))
    excl = dict(exclude)
    if excl and sum(len(v) for v in excl.values()) > 10_000:
        excl = g.router.put(excl)
    todo = [p for p in range(num_parts) if per_part[p]]
    results = g.router.call([(p, "sample", (per_part[p], replace, prob, excl, seed, backend))
                             for p in todo])
    pieces: dict[EdgeType, list[tuple[IdArray, tuple[IdArray, IdArray, IdArray]]]] = {
        et: [] for et in hop}
    for p, res in zip(todo, results, strict=True):
        for (et, idx), r in zip(where[p], res, strict=True):
            pieces[et].append((idx, r))
    out = {}
    for et, (keys, _, _) in hop.items():
        counts = np.zeros(len(keys), dtype=np.int64)
        for idx, (_, _, c) in pieces[et]:
            counts[idx] = c
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        nbr = np.empty(offsets[-1], dtype=np.int64)
        eid = np.empty(offsets[-1], dtype=np.int64)
        for idx, (n, e, c) in pieces[et]:
            start = np.zeros(len(c), dtype=np.int64)
            np.cumsum(c[:-1], out=start[1:])
            pos = np.repeat(offsets[idx] - start, c) + np.arange(len(n), dtype=np.int64)
            nbr[pos], eid[pos] = n, e
        out[et] = (nbr, eid, counts)
    return out


def sample_neighbors(g: Any, seeds: Any, fanout: int | Mapping[Any, int], edge_dir: str = "in",
                     replace: bool = False, prob: str | None = None, exclude_edges: Any = None,
                     *, seed: int | None = None, backend: str = "cpu") -> SampledEdges:
    """:func:`graphshard.sampling.sample_neighbors`, run on the servers for ``edge_dir="in"``.

    Any other store, or out-edges (spread over all partitions), go through the local engine
    and the store protocol.  The result is the same for a seed either way.
    """
    if not isinstance(g, DistGraph) or edge_dir != "in":
        return local.sample_neighbors(g, seeds, fanout, edge_dir, replace, prob, exclude_edges,
                                      seed=seed, backend=backend)
    check_edge_dir(edge_dir)
    fan = one_fanout(g, fanout)
    by_type = seeds_by_type(g, seeds)
    excl = _exclude_by_type(g, exclude_edges)
    s = resolve_seed(seed)
    hop = {et: (by_type[et[2]], fan[et], etype_salt(g, et, "in"))
           for et in g.canonical_etypes if et[2] in by_type and fan[et] != 0}
    res = sample_hop(g, hop, replace=replace, prob=prob, exclude=excl, seed=s, backend=backend)
    src: dict[EdgeType, IdArray] = {}
    dst: dict[EdgeType, IdArray] = {}
    eids: dict[EdgeType, IdArray] = {}
    empty = np.zeros(0, dtype=np.int64)
    for et in g.canonical_etypes:
        if et[2] not in by_type:
            continue
        nbr, e, counts = res.get(et, (empty, empty, np.zeros(len(by_type[et[2]]), np.int64)))
        src[et], dst[et], eids[et] = nbr, np.repeat(by_type[et[2]], counts), e
    return SampledEdges(src, dst, eids)


def sample_blocks(g: Any, seeds: Any, fanouts: Any, *, replace: bool = False,
                  prob: str | None = None, exclude_edges: Any = None, seed: int | None = None,
                  backend: str = "cpu") -> SampledBlocks:
    """:func:`graphshard.sampling.sample_blocks` with every hop sampled on the servers.

    One request per server per hop; reindexing runs in the caller.  Same result as the
    local engine on the whole graph for a seed.  Other stores go to the local engine.
    """
    if not isinstance(g, DistGraph):
        return local.sample_blocks(g, seeds, fanouts, replace=replace, prob=prob,
                                   exclude_edges=exclude_edges, seed=seed, backend=backend)
    layers = layer_fanouts(g, fanouts)
    bk = get_backend(backend)
    excl = _exclude_by_type(g, exclude_edges)
    s = resolve_seed(seed)
    empty = np.zeros(0, dtype=np.int64)
    cur = {t: bk.relabel(empty, ids)[0] for t, ids in seeds_by_type(g, seeds).items()}
    output = cur
    blocks: list[Block] = []
    for h, fan in enumerate(reversed(layers)):
        hop = {et: (cur[et[2]], fan[et], etype_salt(g, et, "in", h))
               for et in g.canonical_etypes if et[2] in cur and fan[et] != 0}
        res = sample_hop(g, hop, replace=replace, prob=prob, exclude=excl, seed=s,
                         backend=backend)
        nbrs: dict[EdgeType, IdArray] = {}
        dst: dict[EdgeType, IdArray] = {}
        eids: dict[EdgeType, IdArray] = {}
        for et in g.canonical_etypes:
            keys = cur.get(et[2])
            if keys is None:
                continue
            nbrs[et], eids[et], counts = res.get(et, (empty, empty,
                                                      np.zeros(len(keys), np.int64)))
            dst[et] = np.repeat(np.arange(len(keys), dtype=np.int64), counts)
        src_nodes, src = _reindex(bk, cur, nbrs, empty)
        blocks.insert(0, Block(src_nodes, dict(cur), src, dst, eids))
        cur = src_nodes
    return SampledBlocks(dict(cur), dict(output), blocks)
