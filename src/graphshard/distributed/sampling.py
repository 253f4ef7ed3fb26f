"""Sampling on the graph servers: one batched request per server per hop.

:func:`sample_hop` (what :func:`graphshard.sampling.sample_blocks` calls on a
:class:`DistGraph`) and :func:`sample_blocks` give the same result for a seed as the local
engine on the whole graph: the keys of a hop are grouped by owning partition and every
server runs the sampling kernels on its in-CSR, keyed by (seed, hop and edge type, node ID)
exactly as the local engine does.  Only sampled edges travel, not whole neighbourhoods.

:func:`sample_blocks` here also fetches the input nodes' features, and does so inside the
sampling calls: each round asks a server, in one call, for the next hop around the nodes it
owns and for the features of the nodes that the previous round added; one last round fetches
the features of the nodes the last hop added.  A sample of ``L`` hops takes ``L + 1`` rounds
of one call per server.  The rounds are written as a generator (:func:`blocks_steps`), so that
:class:`~graphshard.distributed.loader.BlockLoader` can keep several batches in flight and send the
calls of all of them to a server as one.

:func:`sample_neighbors` is DGL's ``dgl.distributed.sample_neighbors``: one hop around
per-type IDs, or around *homogeneous* (shuffled) node IDs of a heterogeneous graph, as a
frontier graph for :func:`graphshard.sampling.to_block` (the flow of seed 001).

Anything else (out-edge sampling, walks, negative sampling, degrees) runs through the
GraphStore protocol, which a :class:`DistGraph` implements: call :mod:`graphshard.sampling`
on it directly.

Example:
    >>> import graphshard as gs
    >>> dg = gs.distributed.DistGraph("parts/shop.json")  # doctest: +SKIP
    >>> batch = gs.distributed.sample_blocks(dg, {"item": [0, 1]}, [10, 25],
    ...                                      features="feat", seed=0)  # doctest: +SKIP
    >>> batch.features["item"].shape[0] == len(batch.blocks.input_nodes["item"])  # doctest: +SKIP
    True
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .._util.arrays import as_ids
from ..errors import ValidationError
from ..graph import Graph, graph, heterograph
from ..sampling import Block, SampledBlocks
from ..sampling import sample_neighbors as sample_by_type
from ..sampling.backend import get_backend
from ..sampling.blocks import reindex_sources
from ..sampling.neighbors import exclude_by_type
from ..sampling.subgraph import SampledSubgraph, subgraph_rounds
from ..sampling.validate import etype_salt, layer_fanouts, resolve_seed, seeds_by_type
from ..store import Hop
from ..typing import EdgeType, IdArray
from ._index import scatter_ragged, scatter_sparse
from ._rpc import Call, group_by_owner, merge_calls, split_results
from .kernels import put_rows

if TYPE_CHECKING:
    from .graph import DistGraph

__all__ = ["DistBatch", "blocks_steps", "run_steps", "sample_blocks", "sample_hop",
           "sample_neighbors", "subgraph_steps"]

#: Per part: the ``(etype, positions)`` of each request sent to it.
_Where = list[list[tuple[EdgeType, IdArray]]]
_T = TypeVar("_T")
#: The rounds of one sample: yields calls, receives their results, returns the sample.
Steps = Generator[list[Call], list[Any], "DistBatch"]


@dataclass(frozen=True)
class DistBatch:
    """A sampled mini-batch with its input features.

    Attributes:
        blocks: The sampled blocks (as :func:`graphshard.sampling.sample_blocks` gives).
        features: Per node type that has the requested feature, its rows for
            ``blocks.input_nodes[ntype]``, in that order (new arrays, or
            :class:`~graphshard.ragged.Ragged` for a variable-length feature,
            :class:`~graphshard.sparse.SparseRows` for a sparse one); empty when
            no feature was requested.
    """

    blocks: SampledBlocks
    features: dict[str, Any]

    def __repr__(self) -> str:
        shapes = {t: tuple(x.shape) for t, x in self.features.items()}
        return f"DistBatch({self.blocks!r}, features={shapes})"


def _split_hop(g: DistGraph, hop: Hop) -> tuple[list[list[Any]], _Where]:
    """Requests of ``hop`` grouped by the partition owning each key."""
    num_parts = g.num_partitions()
    per_part: list[list[Any]] = [[] for _ in range(num_parts)]
    where: _Where = [[] for _ in range(num_parts)]
    for et, (keys, k, salt) in hop.items():
        owner = g.owners(keys, et[2])
        for p, idx in enumerate(group_by_owner(owner, num_parts)):
            if len(idx):
                per_part[p].append((et, keys[idx], k, salt))
                where[p].append((et, idx))
    return per_part, where


def _merge_hop(hop: Hop, where: _Where, results: Mapping[int, list[Any]]
               ) -> dict[EdgeType, tuple[IdArray, IdArray, IdArray]]:
    """The servers' answers put back in key order: ``{etype: (nbrs, eids, counts)}``."""
    pieces: dict[EdgeType, list[tuple[IdArray, Any]]] = {et: [] for et in hop}
    for p, res in results.items():
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


def _exclude_arg(g: DistGraph, exclude: Mapping[EdgeType, IdArray]) -> Any:
    excl = dict(exclude)
    if excl and sum(len(v) for v in excl.values()) > 10_000:
        return g.router.put(excl)  # sent once, not once per server
    return excl


def sample_hop(g: DistGraph, hop: Hop, *, replace: bool, prob: str | None,
               exclude: Mapping[EdgeType, IdArray], seed: int, backend: str = "cpu"
               ) -> dict[EdgeType, tuple[IdArray, IdArray, IdArray]]:
    """Sample in-edges of every edge type of ``hop`` on the servers, one call per server.

    Returns ``{etype: (neighbours, eids, counts)}`` in key order, as
    :func:`graphshard.sampling.neighbors.sample_etype` returns for each edge type.
    """
    per_part, where = _split_hop(g, hop)
    excl = _exclude_arg(g, exclude)
    todo = [p for p in range(g.num_partitions()) if per_part[p]]
    results = g.router.call([(p, "sample", (per_part[p], replace, prob, excl, seed, backend,
                                             p not in g.router.local)) for p in todo])
    return _merge_hop(hop, where, dict(zip(todo, results, strict=True)))


def _feature_types(g: DistGraph, name: str | None
                   ) -> dict[str, tuple[tuple[int, ...] | None, str, str]]:
    """``{ntype: (row shape, dtype, layout)}`` of the node types that have feature
    ``name``."""
    if name is None:
        return {}
    found = {t: g._schema["node"][f"{t}/{name}"] for t in g.ntypes
             if f"{t}/{name}" in g._schema["node"]}
    if not found:
        raise ValidationError(f"no node type has a feature {name!r}; node features are "
                              f"{sorted(g._schema['node'])}", field="features", value=name)
    return {t: (None if shape is None else tuple(shape), dtype, layout)
            for t, (shape, dtype, layout) in found.items()}


def _feature_calls(g: DistGraph, name: str | None, nodes: Mapping[str, IdArray],
                   have: dict[str, int], types: Mapping[str, Any], got: list[Any]
                   ) -> tuple[list[Call], list[tuple[str, int, IdArray]]]:
    """Calls for the features of ``nodes[t][have[t]:]`` (the nodes added since the last
    round), and where each answer goes: ``(ntype, offset, positions)``; rows held in the
    feature cache go to ``got`` at once."""
    calls: list[Call] = []
    where: list[tuple[str, int, IdArray]] = []
    for t in types:
        if t not in nodes:
            continue
        lo = have.get(t, 0)
        new = nodes[t][lo:]
        have[t] = len(nodes[t])
        if not len(new):
            continue
        pos = None
        cache = g.feature_cache(t, name) if name is not None else None
        if cache is not None:
            hit, rows = cache.split(new)
            if len(hit):
                got.append(((t, lo, hit), _Source(cache.rows, rows)))
                keep = np.ones(len(new), dtype=bool)
                keep[hit] = False
                pos = np.flatnonzero(keep)
                new = new[pos]
        for p, idx in enumerate(group_by_owner(g.owners(new, t), g.num_partitions())):
            if not len(idx):
                continue
            at = idx if pos is None else pos[idx]
            srv = g.router.local.get(p)
            if srv is not None and types[t][2] == "dense":  # read in place, copied once
                got.append(((t, lo, at), _Source(*srv.index.node_feature_rows(t, name,
                                                                               new[idx]))))
            else:
                calls.append((p, "node_features", (t, name, new[idx])))
                where.append((t, lo, at))
    return calls, where


@dataclass(frozen=True)
class _Source:
    """Rows ``rows`` of ``src``, copied straight into the batch's feature array."""

    src: Any
    rows: IdArray


def blocks_steps(g: DistGraph, seeds: Any, fanouts: Any, *, features: str | None = None,
                 replace: bool = False, prob: str | None = None, exclude_edges: Any = None,
                 seed: int | None = None, backend: str = "cpu") -> Steps:
    """The rounds of :func:`sample_blocks` as a generator of calls (see :func:`run_steps`).

    Each ``yield`` hands out a list of calls (at most two per server: a hop and a feature
    read) and receives their results in order; the generator returns the
    :class:`DistBatch`.  Arguments are those of :func:`sample_blocks`, validated before
    the first yield.
    """
    layers = layer_fanouts(g, fanouts)
    bk = get_backend(backend)
    excl = _exclude_arg(g, exclude_by_type(g, exclude_edges))
    s = resolve_seed(seed)
    types = _feature_types(g, features)
    empty = np.zeros(0, dtype=np.int64)
    cur = {t: bk.relabel(empty, ids)[0] for t, ids in seeds_by_type(g, seeds).items()}
    output = cur
    have: dict[str, int] = {}
    got: list[tuple[tuple[str, int, IdArray], np.ndarray]] = []
    blocks: list[Block] = []
    for h, fan in enumerate(reversed(layers)):
        hop = {et: (cur[et[2]], fan[et], etype_salt(g, et, "in", h))
               for et in g.canonical_etypes if et[2] in cur}
        todo = {et: v for et, v in hop.items() if v[1] != 0}
        per_part, where = _split_hop(g, todo)
        parts = [p for p in range(g.num_partitions()) if per_part[p]]
        calls: list[Call] = [(p, "sample", (per_part[p], replace, prob, excl, s, backend,
                                            p not in g.router.local)) for p in parts]
        fcalls, fwhere = _feature_calls(g, features, cur, have, types, got)
        results = yield calls + fcalls
        got += zip(fwhere, results[len(calls):], strict=True)
        sampled = _merge_hop(todo, where, dict(zip(parts, results[:len(calls)], strict=True)))
        nbrs: dict[EdgeType, IdArray] = {}
        dst: dict[EdgeType, IdArray] = {}
        eids: dict[EdgeType, IdArray] = {}
        for et, (keys, _, _) in hop.items():
            nbrs[et], eids[et], counts = sampled.get(
                et, (empty, empty, np.zeros(len(keys), dtype=np.int64)))
            dst[et] = np.repeat(np.arange(len(keys), dtype=np.int64), counts)
        src_nodes, src = reindex_sources(bk, cur, nbrs, empty)
        blocks.insert(0, Block(src_nodes, dict(cur), src, dst, eids))
        cur = src_nodes
    fcalls, fwhere = _feature_calls(g, features, cur, have, types, got)
    if fcalls:
        results = yield fcalls
        got += zip(fwhere, results, strict=True)
    return DistBatch(SampledBlocks(dict(cur), dict(output), blocks),
                     _assemble(types, cur, got))


def _assemble(types: Mapping[str, tuple[tuple[int, ...] | None, str, str]],
              nodes: Mapping[str, IdArray],
              got: list[tuple[tuple[str, int, IdArray], Any]]) -> dict[str, Any]:
    """Feature rows of ``nodes`` per type from the answers of every round."""
    feats: dict[str, Any] = {}
    scattered: dict[str, list[tuple[IdArray, Any]]] = {}  # Ragged or SparseRows pieces
    for t, (shape, dtype, layout) in types.items():
        if t in nodes:
            if layout != "dense":
                scattered[t] = []
            else:
                feats[t] = np.empty((len(nodes[t]), *(shape or ())), dtype=dtype)
    for (t, lo, idx), rows in got:
        if t in scattered:
            scattered[t].append((lo + idx, rows))
        elif isinstance(rows, _Source):
            put_rows(feats[t], lo + idx, rows.src, rows.rows)
        else:
            put_rows(feats[t], lo + idx, rows)
    for t, pieces in scattered.items():
        shape, dtype, layout = types[t]
        feats[t] = (scatter_ragged(len(nodes[t]), pieces, dtype) if layout == "ragged"
                    else scatter_sparse(len(nodes[t]), pieces, dtype, (shape or (0,))[0]))
    return feats


def subgraph_steps(g: DistGraph, seeds: Any, num_neighbors: Any, *,
                   features: Sequence[str] = (), replace: bool = False,
                   prob: str | None = None, exclude_edges: Any = None,
                   seed: int | None = None, backend: str = "cpu"
                   ) -> Generator[list[Call], list[Any],
                                  tuple[SampledSubgraph, dict[str, dict[str, Any]]]]:
    """The rounds of :func:`~graphshard.sampling.sample_subgraph` (PyG's hop semantics) on
    the servers, with the node features ``features`` of every sampled node fetched in the
    same calls, as a generator of calls (driven by :func:`run_steps` or
    :class:`~graphshard.distributed.loader.BlockLoader`'s pipeline).

    As :func:`blocks_steps`: each round asks a server for the next hop around the nodes it
    owns and for the features of the nodes that the previous round added; ``L`` hops take
    ``L + 1`` rounds.  The subgraph equals ``sample_subgraph(g, seeds, num_neighbors,
    seed=seed, ...)``.  Returns it and ``{feature: {ntype: rows of sub.nodes[ntype]}}``
    (node types that have the feature; arrays, Ragged or SparseRows as
    :meth:`DistGraph.node_features` gives them).
    """
    excl = _exclude_arg(g, exclude_by_type(g, exclude_edges))
    s = resolve_seed(seed)
    types = {name: _feature_types(g, name) for name in features}
    have: dict[str, dict[str, int]] = {name: {} for name in features}
    got: dict[str, list[tuple[tuple[str, int, IdArray], Any]]] = {n: [] for n in features}

    def feature_calls(nodes: Mapping[str, IdArray]) -> tuple[list[Call], list[Any]]:
        calls: list[Call] = []
        where: list[tuple[str, tuple[str, int, IdArray]]] = []
        for name in features:
            c, w = _feature_calls(g, name, nodes, have[name], types[name], got[name])
            calls += c
            where += [(name, x) for x in w]
        return calls, where

    rounds = subgraph_rounds(g, seeds, num_neighbors, backend=backend)
    try:
        hop, nodes = next(rounds)
        while True:
            per_part, where = _split_hop(g, hop)
            parts = [p for p in range(g.num_partitions()) if per_part[p]]
            calls: list[Call] = [(p, "sample", (per_part[p], replace, prob, excl, s, backend,
                                                p not in g.router.local)) for p in parts]
            fcalls, fwhere = feature_calls(nodes)
            results = yield calls + fcalls
            for (name, w), rows in zip(fwhere, results[len(calls):], strict=True):
                got[name].append((w, rows))
            hop, nodes = rounds.send(_merge_hop(hop, where, dict(
                zip(parts, results[:len(calls)], strict=True))))
    except StopIteration as stop:
        sub: SampledSubgraph = stop.value
    fcalls, fwhere = feature_calls(sub.nodes)
    if fcalls:
        results = yield fcalls
        for (name, w), rows in zip(fwhere, results, strict=True):
            got[name].append((w, rows))
    return sub, {name: _assemble(types[name], sub.nodes, got[name]) for name in features}


def run_steps(g: DistGraph, steps: Generator[list[Call], list[Any], _T]) -> _T:
    """Drive ``steps`` (:func:`blocks_steps`, :func:`subgraph_steps`) to the end, one
    merged call per server per round; their result."""
    try:
        calls = next(steps)
        while True:
            merged, where = merge_calls(calls)
            calls = steps.send(split_results(g.router.call(merged), where))
    except StopIteration as stop:
        return stop.value


def sample_blocks(g: DistGraph, seeds: Any, fanouts: Any, *, features: str | None = None,
                  replace: bool = False, prob: str | None = None, exclude_edges: Any = None,
                  seed: int | None = None, backend: str = "cpu") -> DistBatch:
    """Sample blocks on the servers and fetch the input nodes' features in the same calls.

    The blocks equal :func:`graphshard.sampling.sample_blocks` on the whole graph for the
    same arguments and ``seed``; ``L`` hops take ``L + 1`` rounds of one call per server.

    Args:
        g: The DistGraph.
        seeds: Output node IDs (array, one node type) or ``{ntype: IDs}``.
        fanouts: As in :func:`graphshard.sampling.sample_blocks` (input layer first).
        features: Name of a node feature to fetch for the input nodes (every node type
            that has it), or None.
        replace: Sample with replacement.
        prob: Name of an edge feature to sample proportionally to.
        exclude_edges: Edge IDs never to sample (array or ``{etype: IDs}``).
        seed: Random seed.
        backend: Kernel backend name (on the servers and for the reindex here).

    Returns:
        A :class:`DistBatch`.

    Raises:
        ValidationError: bad IDs, fanouts, or no node type has feature ``features``.
    """
    return run_steps(g, blocks_steps(g, seeds, fanouts, features=features, replace=replace,
                                     prob=prob, exclude_edges=exclude_edges, seed=seed,
                                     backend=backend))


def sample_neighbors(g: DistGraph, nodes: Any, fanout: Any, edge_dir: str = "in",
                     prob: str | None = None, exclude_edges: Any = None,
                     replace: bool = False, *, seed: int | None = None,
                     backend: str = "cpu") -> Graph:
    """Sample up to ``fanout`` edges of each node per edge type, as a frontier graph
    (DGL's ``dgl.distributed.sample_neighbors``, keeping its argument order).

    With ``nodes`` an array, they are *homogeneous* node IDs (the partition book's
    shuffled numbering, e.g. from ``gpb.map_to_homo_nid(ids, ntype)``), and the frontier is
    homogeneous: one node type spanning every node of ``g``, edges in homogeneous node IDs
    and ``frontier.edata[EID]`` their homogeneous edge IDs (``gpb.map_to_per_etype`` maps
    them back).  With ``{ntype: per-type IDs}`` the frontier has ``g``'s types and per-type
    IDs, ``edata[EID]`` per-type edge IDs.  Edges come per edge type (in ``g``'s order),
    each in the order of its seeds.  The draws are those of
    :func:`graphshard.sampling.sample_neighbors` for the same ``seed``.

    Args:
        g: The DistGraph.
        nodes: Homogeneous node IDs (array), or ``{ntype: per-type IDs}``.
        fanout: Edges per node and edge type (int, or ``{etype: int}``); -1 for all.
        edge_dir: ``"in"`` (edges into ``nodes``) or ``"out"``.
        prob: Name of an edge feature to sample proportionally to.
        exclude_edges: Edge IDs never to sample: ``{etype: per-type IDs}``, or an array
            of homogeneous edge IDs with homogeneous ``nodes`` (per-type IDs of the only
            edge type otherwise).
        replace: Sample with replacement.
        seed: Random seed (ours; DGL has none).
        backend: Kernel backend name.

    Returns:
        The frontier, a :class:`~graphshard.graph.Graph` holding only the sampled edges.

    Raises:
        ValidationError: an ID out of range, a bad type, fanout or direction.

    Example:
        >>> gpb = dg.get_partition_book()  # doctest: +SKIP
        >>> cur = gpb.map_to_homo_nid([0, 1], "paper")  # doctest: +SKIP
        >>> frontier = sample_neighbors(dg, cur, 5, seed=0)  # doctest: +SKIP
        >>> block = gs.sampling.to_block(frontier, cur)  # doctest: +SKIP
    """
    if isinstance(nodes, Mapping):
        res = sample_by_type(g, nodes, fanout, edge_dir, replace, prob, exclude_edges,
                             seed=seed, backend=backend)
        none = np.zeros(0, dtype=np.int64)  # every edge type of g, as DGL's frontier has
        front = heterograph({et: (res.src.get(et, none), res.dst.get(et, none))
                             for et in g.canonical_etypes},
                            num_nodes_dict={t: g.num_nodes(t) for t in g.ntypes})
        for et in g.canonical_etypes:
            front.edge_frame(et)["_ID"] = res.eids.get(et, none)
        return front
    book = g.get_partition_book()
    homo = as_ids(nodes, "nodes")
    types, per_type = book.map_to_per_ntype(homo)  # checks the range
    by_type = {t: per_type[types == i] for i, t in enumerate(g.ntypes) if (types == i).any()}
    if exclude_edges is not None and not isinstance(exclude_edges, Mapping):
        # homogeneous in, homogeneous out: an edge ID array is homogeneous edge IDs too
        etypes, per_edge = book.map_to_per_etype(as_ids(exclude_edges, "exclude_edges"))
        exclude_edges = {et: per_edge[etypes == i] for i, et in enumerate(g.canonical_etypes)}
    res = sample_by_type(g, by_type, fanout, edge_dir, replace, prob, exclude_edges,
                         seed=seed, backend=backend)
    ets = list(res.src)
    src = [book.map_to_homo_nid(res.src[et], et[0]) for et in ets]
    dst = [book.map_to_homo_nid(res.dst[et], et[2]) for et in ets]
    eid = [book.map_to_homo_eid(res.eids[et], et) for et in ets]
    empty = np.zeros(0, dtype=np.int64)
    front = graph((np.concatenate([empty, *src]), np.concatenate([empty, *dst])),
                  num_nodes=g.num_nodes())
    front.edata["_ID"] = np.concatenate([empty, *eid])
    return front
