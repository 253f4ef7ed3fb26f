"""One-hop neighbour sampling and the small structural helpers (degrees, in_subgraph,
find_edges), on any :class:`~graphshard.store.GraphStore`.

Example:
    >>> import graphshard as gs
    >>> g = gs.graph(([0, 1, 2, 3], [3, 3, 3, 0]))
    >>> res = sample_neighbors(g, [3], 2, seed=1)
    >>> res.num_edges(), set(res.edges()[1].tolist())
    (2, {3})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._util.arrays import as_ids, check_id_range
from ..errors import ValidationError
from ..graph import CSR
from ..store import (
    GraphStore,
    Hop,
    HopSampler,
    LocalAdjacency,
    as_store,
    check_edge_dir,
    check_weights,
)
from ..typing import EdgeType, EdgeTypeLike, IdArray
from .backend import get_backend
from .tables import weight_table
from .validate import checked_csr, etype_salt, one_fanout, resolve_seed, seeds_by_type

__all__ = ["SampledEdges", "degrees", "find_edges", "in_subgraph", "sample_etype",
           "sample_neighbors"]


@dataclass(frozen=True)
class SampledEdges:
    """Sampled edges per canonical edge type (global per-type IDs, int64, new arrays).

    Attributes:
        src: Source node IDs per edge type.
        dst: Destination node IDs per edge type.
        eids: Per-type edge IDs of the sampled edges (``Graph.find_edges`` maps them back).
    """

    src: dict[EdgeType, IdArray]
    dst: dict[EdgeType, IdArray]
    eids: dict[EdgeType, IdArray]

    def edges(self, etype: EdgeTypeLike | None = None) -> tuple[IdArray, IdArray, IdArray]:
        """``(src, dst, eids)`` of one edge type (the only one when None)."""
        if etype is None:
            if len(self.src) != 1:
                raise ValidationError(f"the result has edge types {list(self.src)}: name one",
                                      field="etype")
            et = next(iter(self.src))
        else:
            matches = [e for e in self.src if etype in (e, e[1], ":".join(e))]
            if len(matches) != 1:
                raise ValidationError(f"edge type {etype!r} is not (uniquely) in the result; "
                                      f"edge types are {list(self.src)}", field="etype")
            et = matches[0]
        return self.src[et], self.dst[et], self.eids[et]

    def num_edges(self) -> int:
        """Sampled edges over all types."""
        return sum(len(v) for v in self.src.values())

    def __repr__(self) -> str:
        sizes = {":".join(et): len(v) for et, v in self.src.items()}
        return f"SampledEdges(num_edges={sizes})"


def sample_etype(store: GraphStore, et: EdgeType, edge_dir: str, keys: IdArray, k: int, *,
                 replace: bool, prob: str | None, exclude: IdArray | None, seed: int,
                 salt: int, backend: str = "cpu") -> tuple[IdArray, IdArray, IdArray]:
    """Sample ``k`` edges of type ``et`` around each validated node of ``keys``.

    Returns ``(neighbours, eids, counts)``: flat int64 arrays in seed order, and per-seed
    counts.  With a local adjacency the kernel runs on the whole CSR; otherwise (a remote
    store, or excluded edges) on the sub-CSR the store returns for ``keys``, with the same
    draws since they are keyed by node ID.
    """
    bk = get_backend(backend)
    n = len(keys)
    table = None
    if isinstance(store, LocalAdjacency) and exclude is None:
        csr = store.adjacency(et, edge_dir)
        rows = keys
        if prob is not None:
            rec, nnz = weight_table(store, et, edge_dir, prob)
            build = lambda: bk.row_inv_weights(csr.indptr, rec)  # noqa: E731
            invw = store.cached(("inv-weights", et, edge_dir, prob), build)
            table = (rec, nnz, invw)
    else:
        csr = checked_csr(store.neighbors(keys, et, edge_dir=edge_dir), n, f"neighbors of {et}")
        rows = np.arange(n, dtype=np.int64)
        if prob is not None or exclude is not None:
            w = (np.ones(len(csr.eids)) if prob is None else
                 check_weights(store.edge_features(et, prob, csr.eids), csr.eids, et, prob))
            if exclude is not None and len(exclude):
                w[np.isin(csr.eids, exclude)] = 0.0
            rec, nnz = bk.row_alias(csr.indptr, w, np.empty(0, dtype=np.int64),
                                    np.empty(len(w), dtype=np.int64))
            table = (rec, nnz, bk.row_inv_weights(csr.indptr, rec))
    if table is None:
        counts = bk.sample_counts(csr.indptr, rows, k, replace)
    else:
        counts = bk.weighted_counts(csr.indptr, table[1], rows, k, replace)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    nbr = np.empty(offsets[-1], dtype=np.int64)
    eid = np.empty(offsets[-1], dtype=np.int64)
    if table is None:
        bk.fill_uniform(csr.indptr, csr.indices, csr.eids, rows, keys, offsets, k, replace,
                        seed, salt, nbr, eid)
    else:
        bk.fill_weighted(csr.indptr, csr.indices, csr.eids, *table, rows, keys, offsets, k,
                         replace, seed, salt, nbr, eid)
    return nbr, eid, counts


def exclude_by_type(store: GraphStore, exclude_edges: Any) -> dict[EdgeType, IdArray]:
    if exclude_edges is None:
        return {}
    if not isinstance(exclude_edges, Mapping):
        exclude_edges = {store.to_canonical_etype(None): exclude_edges}
    out = {}
    for key, ids in exclude_edges.items():
        et = store.to_canonical_etype(key)
        arr = as_ids(ids, f"exclude_edges[{key!r}]")
        check_id_range(arr, store.num_edges(et), f"exclude_edges of {et}")
        out[et] = arr
    return out


def sample_hop(store: GraphStore, hop: Hop, *, edge_dir: str = "in", replace: bool,
               prob: str | None, exclude: Mapping[EdgeType, IdArray], seed: int,
               backend: str = "cpu") -> dict[EdgeType, tuple[IdArray, IdArray, IdArray]]:
    """Sample every edge type of one hop: ``{etype: (neighbours, eids, counts)}``.

    A store that implements :class:`~graphshard.store.HopSampler` samples in-edge hops
    itself (e.g. on its graph servers); otherwise each edge type goes through
    :func:`sample_etype`.  Fanout 0 gives empty results.
    """
    empty = np.zeros(0, dtype=np.int64)
    out = {et: (empty, empty, np.zeros(len(keys), dtype=np.int64))
           for et, (keys, k, _) in hop.items() if k == 0}
    todo = {et: v for et, v in hop.items() if v[1] != 0}
    if todo and edge_dir == "in" and isinstance(store, HopSampler):
        out.update(store.sample_hop(todo, replace=replace, prob=prob, exclude=exclude,
                                    seed=seed, backend=backend))
        return out
    for et, (keys, k, salt) in todo.items():
        out[et] = sample_etype(store, et, edge_dir, keys, k, replace=replace, prob=prob,
                               exclude=exclude.get(et), seed=seed, salt=salt, backend=backend)
    return out


def sample_neighbors(g: Any, seeds: Any, fanout: int | Mapping[EdgeTypeLike, int],
                     edge_dir: str = "in", replace: bool = False, prob: str | None = None,
                     exclude_edges: Any = None, *, seed: int | None = None,
                     backend: str = "cpu") -> SampledEdges:
    """Sample up to ``fanout`` in- (or out-) edges of every seed node, per edge type.

    Args:
        g: A Graph or any GraphStore.
        seeds: Node IDs (int array) for a graph with one node type, else ``{ntype: IDs}``.
        fanout: Edges per seed and edge type: an int for all types or ``{etype: int}``
            (missing types: 0); ``-1`` takes all edges.
        edge_dir: ``"in"``: edges whose destination is a seed; ``"out"``: whose source is.
        replace: Sample with replacement (then every seed with a neighbour gets exactly
            ``fanout`` edges; without, ``min(fanout, degree)`` distinct edges).
        prob: Name of a non-negative edge feature; edges are drawn proportionally to it
            and zero-weight edges never.
        exclude_edges: Edge IDs never to sample: an array (one edge type) or ``{etype: IDs}``.
        seed: Random seed; the same seed gives the same result on any thread count.
        backend: Kernel backend name (see :func:`~graphshard.sampling.available_backends`).

    Returns:
        SampledEdges with, per edge type, the edges of each seed in seed order.

    Raises:
        ValidationError: an ID is out of range, a type, direction or fanout is invalid, or
            the prob feature is missing, negative or not finite.

    Example:
        >>> import numpy as np, graphshard as gs
        >>> g = gs.heterograph({("u", "click", "i"): ([0, 1, 1], [0, 0, 1])})
        >>> g.edges["click"].data["w"] = np.array([0.0, 1.0, 1.0])
        >>> res = sample_neighbors(g, {"i": [0]}, 5, prob="w", seed=0)
        >>> res.edges("click")[0].tolist(), res.edges("click")[2].tolist()
        ([1], [1])
    """
    store = as_store(g)
    check_edge_dir(edge_dir)
    fan = one_fanout(store, fanout)
    by_type = seeds_by_type(store, seeds)
    excl = exclude_by_type(store, exclude_edges)
    s = resolve_seed(seed)
    src: dict[EdgeType, IdArray] = {}
    dst: dict[EdgeType, IdArray] = {}
    eids: dict[EdgeType, IdArray] = {}
    hop = {et: (by_type[et[2] if edge_dir == "in" else et[0]], fan[et],
                etype_salt(store, et, edge_dir))
           for et in store.canonical_etypes if (et[2] if edge_dir == "in" else et[0]) in by_type}
    sampled = sample_hop(store, hop, edge_dir=edge_dir, replace=replace, prob=prob,
                         exclude=excl, seed=s, backend=backend)
    for et, (keys, _, _) in hop.items():
        nbr, e, counts = sampled[et]
        own = np.repeat(keys, counts)
        src[et], dst[et] = (nbr, own) if edge_dir == "in" else (own, nbr)
        eids[et] = e
    return SampledEdges(src, dst, eids)


def in_subgraph(g: Any, nodes: Any) -> SampledEdges:
    """All in-edges of ``nodes`` (array or ``{ntype: IDs}``), per edge type, in seed order.

    Example:
        >>> import graphshard as gs
        >>> in_subgraph(gs.graph(([0, 1, 2], [2, 2, 0])), [2]).edges()[0].tolist()
        [0, 1]
    """
    return sample_neighbors(g, nodes, -1, "in", seed=0)


def degrees(g: Any, ids: Any, etype: EdgeTypeLike | None = None, edge_dir: str = "in", *,
            backend: str = "cpu") -> IdArray:
    """In- (or out-) degrees of ``ids`` for one edge type (int64, new array).

    ``backend`` other than ``"cpu"`` reads the degrees with that backend's ``row_degrees``
    kernel (on a local graph: the cuda backend reads its device copy of the CSR).

    Example:
        >>> import graphshard as gs
        >>> degrees(gs.graph(([0, 1, 2], [2, 2, 0])), [2, 0, 1]).tolist()
        [2, 1, 0]
    """
    store = as_store(g)
    et = store.to_canonical_etype(etype)
    bk = get_backend(backend)
    if bk.name == "cpu" or not isinstance(store, LocalAdjacency):
        return store.degrees(ids, et, edge_dir=edge_dir)
    check_edge_dir(edge_dir)
    rows = as_ids(ids, "ids")
    ntype = et[2] if edge_dir == "in" else et[0]
    check_id_range(rows, store.num_nodes(ntype), f"{ntype!r} node IDs")
    out = np.empty(len(rows), dtype=np.int64)
    bk.row_degrees(store.adjacency(et, edge_dir).indptr, rows, out)
    return out


def find_edges(g: Any, eids: Any, etype: EdgeTypeLike | None = None
               ) -> tuple[IdArray, IdArray]:
    """Endpoints ``(src, dst)`` of per-type edge IDs (new arrays).

    Example:
        >>> import graphshard as gs
        >>> [a.tolist() for a in find_edges(gs.graph(([0, 1], [1, 0])), [1])]
        [[1], [0]]
    """
    store = as_store(g)
    return store.find_edges(eids, store.to_canonical_etype(etype))


def neighborhood(g: Any, ids: Any, etype: EdgeTypeLike | None = None, edge_dir: str = "in"
                 ) -> CSR:
    """Sub-CSR of ``ids`` for one edge type (see :meth:`GraphStore.neighbors`)."""
    store = as_store(g)
    return store.neighbors(ids, store.to_canonical_etype(etype), edge_dir=edge_dir)
