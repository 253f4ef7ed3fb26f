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
from typing import TYPE_CHECKING

import numpy as np

from ..store import Hop
from ..typing import EdgeType, IdArray
from ._rpc import group_by_owner

if TYPE_CHECKING:
    from .graph import DistGraph

__all__ = ["sample_hop"]

def sample_hop(g: DistGraph, hop: Hop, *, replace: bool, prob: str | None,
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
