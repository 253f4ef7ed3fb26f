"""Edge splits for link prediction: held-out validation and test edges with fixed negatives.

:func:`split_edges` holds out a share of the *pairs* of one edge type: an undirected
graph stored both ways (every ``u -> v`` has its ``v -> u``, as Coauthor CS) loses both
directions of a held-out pair, a directed one the held-out edge (and its parallel copies).
On a heterogeneous graph the pairs are those of ``etype``, and with ``reverse_etype`` (the
type holding each edge's reverse, e.g. ``author -writes-> paper`` for ``paper
-written_by-> author``) the reverses of held-out pairs leave the training graph too.
The training graph keeps every other edge (self loops always stay) and all node features,
so message passing over it, or over its partitions, never sees a held-out edge.  Each
held-out positive ``(src, dst)`` gets ``num_negatives`` fixed negative destinations, drawn
uniformly (seeded) among nodes that are neither ``src`` nor linked to it in the whole graph
(redrawn up to :data:`_REDRAWS` times; on a graph too dense for that a few may remain).
Everything is in the input graph's node IDs; :mod:`~graphshard.train.link_files` maps
them to a partitioned graph's IDs and stores them beside its partitions.

Unstable API (issue 26).

Example:
    >>> import graphshard as gs
    >>> g = gs.graph(([0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]))
    >>> s = split_edges(g, val_fraction=0.25, test_fraction=0.25, num_negatives=1, seed=0)
    >>> s.undirected, s.train_graph.num_edges(), len(s.held_out.val), len(s.held_out.test)
    (True, 4, 1, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ValidationError
from ..graph import Graph, graph, heterograph
from ..ragged import Ragged
from ..typing import EdgeType, EdgeTypeLike, IdArray

__all__ = ["EdgeSplit", "EvalEdges", "LinkEval", "is_symmetric", "pair_keys", "split_edges"]

#: Rounds of redrawing negatives that hit the source or one of its neighbours.
_REDRAWS = 20


@dataclass(frozen=True)
class EvalEdges:
    """Held-out positives of one split with their fixed negatives.

    Attributes:
        src: Source of each positive (int64, ``(n,)``).
        dst: Destination of each positive (int64, ``(n,)``).
        neg_dst: Negative destinations of each positive's source (int64, ``(n, k)``): the
            positive is ranked against the pairs ``(src[i], neg_dst[i, j])``.
    """

    src: IdArray
    dst: IdArray
    neg_dst: IdArray

    def __len__(self) -> int:
        return len(self.src)

    def remap(self, new_of_old: IdArray, dst_new_of_old: IdArray | None = None) -> EvalEdges:
        """The same edges with node IDs mapped through ``new_of_old`` (new arrays); the
        destinations (and negatives) through ``dst_new_of_old`` when given (another node
        type's map)."""
        dmap = new_of_old if dst_new_of_old is None else dst_new_of_old
        return EvalEdges(new_of_old[self.src], dmap[self.dst], dmap[self.neg_dst])

    def __repr__(self) -> str:
        return f"EvalEdges(num_edges={len(self)}, num_negatives={self.neg_dst.shape[1]})"


@dataclass(frozen=True)
class LinkEval:
    """Validation and test edges of a link-prediction run, of edge type ``etype`` (a
    canonical ``(src, relation, dst)``; None: the graph's only one)."""

    val: EvalEdges
    test: EvalEdges
    etype: tuple[str, str, str] | None = None

    def remap(self, new_of_old: IdArray, dst_new_of_old: IdArray | None = None) -> LinkEval:
        """Both splits with node IDs mapped through ``new_of_old`` (destinations through
        ``dst_new_of_old`` when given: see :meth:`EvalEdges.remap`)."""
        return LinkEval(self.val.remap(new_of_old, dst_new_of_old),
                        self.test.remap(new_of_old, dst_new_of_old), self.etype)


@dataclass(frozen=True)
class EdgeSplit:
    """What :func:`split_edges` returns (input graph's node IDs).

    Attributes:
        train_graph: The graph minus every held-out edge, with all node features and the
            kept edges' features.
        train_eids: Input edge ID of each training-graph edge (int64, increasing).
        held_out: Validation and test positives with their negatives.
        undirected: Whether pairs were held out in both directions.
        etype: The edge type whose pairs were held out (None: the graph's only one).
    """

    train_graph: Graph
    train_eids: IdArray
    held_out: LinkEval
    undirected: bool
    etype: Any = None

    def __repr__(self) -> str:
        return (f"EdgeSplit(train_edges={len(self.train_eids)}, val={len(self.held_out.val)}, "
                f"test={len(self.held_out.test)}, undirected={self.undirected})")


def pair_keys(src: IdArray, dst: IdArray, num_nodes: int, *, undirected: bool) -> IdArray:
    """One int64 key per edge, equal for the edges of one pair: ``src * n + dst``, or with
    ``undirected`` ``min * n + max`` (both directions share it)."""
    if undirected:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    return src.astype(np.int64) * np.int64(num_nodes) + dst


def is_symmetric(src: IdArray, dst: IdArray, num_nodes: int) -> bool:
    """Whether every edge ``u -> v`` has a reverse ``v -> u`` (multiplicity ignored).

    Example:
        >>> is_symmetric(np.array([0, 1]), np.array([1, 0]), 2), is_symmetric(
        ...     np.array([0]), np.array([1]), 2)
        (True, False)
    """
    fwd = np.unique(pair_keys(src, dst, num_nodes, undirected=False))
    rev = np.unique(pair_keys(dst, src, num_nodes, undirected=False))
    return len(fwd) == len(rev) and bool(np.array_equal(fwd, rev))


def _check(g: Graph, etype: EdgeTypeLike | None, reverse_etype: EdgeTypeLike | None,
           val_fraction: float, test_fraction: float, num_negatives: int
           ) -> tuple[EdgeType, EdgeType | None]:
    if etype is None and len(g.canonical_etypes) != 1:
        raise ValidationError(f"split_edges: the graph has edge types {g.canonical_etypes}: "
                              "name the one to predict with etype=", field="etype")
    et = g.to_canonical_etype(etype)
    rev = None if reverse_etype is None else g.to_canonical_etype(reverse_etype)
    if rev is not None and (rev[0], rev[2]) != (et[2], et[0]):
        raise ValidationError(f"split_edges: reverse_etype {rev} does not join {et[2]!r} back "
                              f"to {et[0]!r}", field="reverse_etype", value=reverse_etype)
    if rev == et:
        raise ValidationError("split_edges: reverse_etype is etype itself; an undirected "
                              "graph stored both ways is found without it (undirected=None)",
                              field="reverse_etype", value=reverse_etype)
    for name, f in (("val_fraction", val_fraction), ("test_fraction", test_fraction)):
        if not 0 <= f < 1:
            raise ValidationError(f"split_edges: {name} must be in [0, 1), got {f!r}",
                                  field=name, value=f)
    if val_fraction + test_fraction >= 1:
        raise ValidationError(f"split_edges: val_fraction + test_fraction must be below 1, got "
                              f"{val_fraction + test_fraction}", field="test_fraction",
                              value=test_fraction)
    if isinstance(num_negatives, bool) or int(num_negatives) != num_negatives \
            or num_negatives < 1:
        raise ValidationError(f"split_edges: num_negatives must be an int >= 1, got "
                              f"{num_negatives!r}", field="num_negatives", value=num_negatives)
    return et, rev


def split_edges(g: Graph, *, val_fraction: float = 0.05, test_fraction: float = 0.1,
                num_negatives: int = 100, undirected: bool | None = None, seed: int = 0,
                etype: EdgeTypeLike | None = None, reverse_etype: EdgeTypeLike | None = None
                ) -> EdgeSplit:
    """Hold out validation and test pairs of ``g`` and draw fixed negatives for them.

    Args:
        g: A graph (with several edge types: ``etype`` names the one to predict).
        val_fraction: Share of the pairs (undirected: node pairs; directed: distinct
            ``(src, dst)``) held out for validation; self loops are never held out.
        test_fraction: Share held out for testing.
        num_negatives: Negative destinations per held-out positive.
        undirected: Hold out both directions of a pair (None: when ``etype`` joins a node
            type to itself and is symmetric; never between two node types).
        seed: Seed of the pair choice and of the negatives.
        etype: The edge type whose links are predicted (None: the only one).  Negatives are
            nodes of its destination type.
        reverse_etype: The edge type holding each ``etype`` edge's reverse: the reverses
            of the held-out pairs leave the training graph too.

    Returns:
        EdgeSplit: the training graph and the held-out edges, in ``g``'s node IDs.

    Raises:
        ValidationError: several edge types without ``etype``, a ``reverse_etype`` that
            does not join the types back, fractions outside ``[0, 1)`` or summing to 1 or
            more, ``num_negatives < 1``.

    Example:
        >>> import graphshard as gs
        >>> g = gs.graph(([0, 1, 2, 0], [1, 2, 0, 0]))
        >>> s = split_edges(g, val_fraction=0.0, test_fraction=0.5, num_negatives=2)
        >>> s.undirected, s.train_eids.tolist()[-1], s.held_out.test.neg_dst.shape
        (False, 3, (2, 2))
    """
    et, rev = _check(g, etype, reverse_etype, val_fraction, test_fraction, num_negatives)
    one_type = et[0] == et[2]
    if undirected and not one_type:
        raise ValidationError(f"split_edges: undirected=True needs an edge type from a node "
                              f"type to itself; {et} joins two", field="undirected")
    n_dst = g.num_nodes(et[2])
    n = max(g.num_nodes(et[0]), n_dst)
    src, dst = (np.asarray(a, dtype=np.int64) for a in g.edges(etype=et))
    und = (is_symmetric(src, dst, n) if undirected is None else bool(undirected)) \
        if one_type else False
    keys = pair_keys(src, dst, n, undirected=und)
    loop = (src == dst) if one_type else np.zeros(len(src), dtype=bool)
    uniq, first, inverse = np.unique(keys[~loop], return_index=True, return_inverse=True)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 26]))
    order = rng.permutation(len(uniq))
    n_val = round(float(val_fraction) * len(uniq))
    n_test = round(float(test_fraction) * len(uniq))
    role = np.zeros(len(uniq), dtype=np.int8)
    role[order[:n_val]] = 1
    role[order[n_val:n_val + n_test]] = 2
    edge_role = np.zeros(len(src), dtype=np.int8)
    edge_role[~loop] = role[inverse.reshape(-1)]
    train_eids = np.flatnonzero(edge_role == 0).astype(np.int64)
    nonloop = np.flatnonzero(~loop)
    all_keys = np.unique(keys)
    splits = []
    for pairs in (order[:n_val], order[n_val:n_val + n_test]):
        e = nonloop[first[pairs]]  # an edge of each pair, with its stored orientation
        neg = _negatives(src[e], n_dst, n, all_keys, und, one_type, num_negatives, rng)
        splits.append(EvalEdges(src[e].copy(), dst[e].copy(), neg))
    held = LinkEval(splits[0], splits[1], None if len(g.canonical_etypes) == 1 else et)
    if len(g.canonical_etypes) == 1:
        return EdgeSplit(_subgraph(g, src, dst, train_eids), train_eids, held, und)
    drop = {et: np.flatnonzero(edge_role != 0)}
    if rev is not None:  # the reverse edges of the held-out pairs
        rs, rd = (np.asarray(a, dtype=np.int64) for a in g.edges(etype=rev))
        gone = np.unique(keys[edge_role != 0])
        drop[rev] = np.flatnonzero(np.isin(pair_keys(rd, rs, n, undirected=False), gone))
    return EdgeSplit(_without_edges(g, drop), train_eids, held, und, et)


def _negatives(src: IdArray, n_dst: int, n: int, all_keys: IdArray, undirected: bool,
               one_type: bool, k: int, rng: np.random.Generator) -> IdArray:
    """``(len(src), k)`` uniform destinations among ``n_dst`` nodes, redrawn while one is
    ``src`` (of a type linked to itself) or linked to it (``all_keys``, pairs keyed with
    ``n``)."""
    neg = rng.integers(0, n_dst, (len(src), k), dtype=np.int64)
    for _ in range(_REDRAWS):
        s = np.broadcast_to(src[:, None], neg.shape)
        key = pair_keys(s, neg, n, undirected=undirected)
        pos = np.minimum(np.searchsorted(all_keys, key), max(len(all_keys) - 1, 0))
        bad = all_keys[pos] == key if len(all_keys) else np.zeros(neg.shape, dtype=bool)
        if one_type:
            bad |= neg == s
        if not bad.any():
            break
        neg[bad] = rng.integers(0, n_dst, int(bad.sum()), dtype=np.int64)
    return neg


def _without_edges(g: Graph, drop: dict[EdgeType, IdArray]) -> Graph:
    """``g`` (several types) without the edges ``drop[etype]``, with every node feature and
    the kept edges' features."""
    keep = {et: np.setdiff1d(np.arange(g.num_edges(et), dtype=np.int64), drop.get(et, []))
            for et in g.canonical_etypes}
    edges = {}
    for et in g.canonical_etypes:
        s, d = (np.asarray(a, dtype=np.int64) for a in g.edges(etype=et))
        edges[et] = (s[keep[et]], d[keep[et]])
    out = heterograph(edges, num_nodes_dict={nt: g.num_nodes(nt) for nt in g.ntypes})
    for nt in g.ntypes:
        for name, col in g.nodes[nt].data.items():
            out.nodes[nt].data[name] = col
    for et in g.canonical_etypes:
        for name, col in g.edges[et].data.items():
            out.edges[et].data[name] = col.take(keep[et]) if isinstance(col, Ragged) \
                else np.asarray(col)[keep[et]]
    return out


def _subgraph(g: Graph, src: IdArray, dst: IdArray, eids: IdArray) -> Graph:
    out = graph((src[eids], dst[eids]), num_nodes=g.num_nodes())
    for name in g.ndata:
        out.ndata[name] = g.ndata[name]
    for name in g.edata:
        col = g.edata[name]
        out.edata[name] = col.take(eids) if isinstance(col, Ragged) else np.asarray(col)[eids]
    return out
