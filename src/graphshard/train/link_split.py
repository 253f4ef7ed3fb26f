"""Edge splits for link prediction: held-out validation and test edges with fixed negatives.

:func:`split_edges` holds out a share of the *pairs* of a homogeneous graph: an undirected
graph stored both ways (every ``u -> v`` has its ``v -> u``, as Coauthor CS) loses both
directions of a held-out pair, a directed one the held-out edge (and its parallel copies).
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

import numpy as np

from ..errors import ValidationError
from ..graph import Graph, graph
from ..ragged import Ragged
from ..typing import IdArray

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

    def remap(self, new_of_old: IdArray) -> EvalEdges:
        """The same edges with node IDs mapped through ``new_of_old`` (new arrays)."""
        return EvalEdges(new_of_old[self.src], new_of_old[self.dst], new_of_old[self.neg_dst])

    def __repr__(self) -> str:
        return f"EvalEdges(num_edges={len(self)}, num_negatives={self.neg_dst.shape[1]})"


@dataclass(frozen=True)
class LinkEval:
    """Validation and test edges of a link-prediction run."""

    val: EvalEdges
    test: EvalEdges

    def remap(self, new_of_old: IdArray) -> LinkEval:
        """Both splits with node IDs mapped through ``new_of_old``."""
        return LinkEval(self.val.remap(new_of_old), self.test.remap(new_of_old))


@dataclass(frozen=True)
class EdgeSplit:
    """What :func:`split_edges` returns (input graph's node IDs).

    Attributes:
        train_graph: The graph minus every held-out edge, with all node features and the
            kept edges' features.
        train_eids: Input edge ID of each training-graph edge (int64, increasing).
        held_out: Validation and test positives with their negatives.
        undirected: Whether pairs were held out in both directions.
    """

    train_graph: Graph
    train_eids: IdArray
    held_out: LinkEval
    undirected: bool

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


def _check(g: Graph, val_fraction: float, test_fraction: float, num_negatives: int) -> None:
    if len(g.ntypes) != 1 or len(g.canonical_etypes) != 1:
        raise ValidationError(f"split_edges needs a graph with one node and one edge type, got "
                              f"{g.ntypes} and {g.canonical_etypes}", field="g")
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


def split_edges(g: Graph, *, val_fraction: float = 0.05, test_fraction: float = 0.1,
                num_negatives: int = 100, undirected: bool | None = None, seed: int = 0
                ) -> EdgeSplit:
    """Hold out validation and test pairs of ``g`` and draw fixed negatives for them.

    Args:
        g: A graph with one node type and one edge type.
        val_fraction: Share of the pairs (undirected: node pairs; directed: distinct
            ``(src, dst)``) held out for validation; self loops are never held out.
        test_fraction: Share held out for testing.
        num_negatives: Negative destinations per held-out positive.
        undirected: Hold out both directions of a pair (None: when ``g`` is symmetric).
        seed: Seed of the pair choice and of the negatives.

    Returns:
        EdgeSplit: the training graph and the held-out edges, in ``g``'s node IDs.

    Raises:
        ValidationError: several types, fractions outside ``[0, 1)`` or summing to 1 or
            more, ``num_negatives < 1``.

    Example:
        >>> import graphshard as gs
        >>> g = gs.graph(([0, 1, 2, 0], [1, 2, 0, 0]))
        >>> s = split_edges(g, val_fraction=0.0, test_fraction=0.5, num_negatives=2)
        >>> s.undirected, s.train_eids.tolist()[-1], s.held_out.test.neg_dst.shape
        (False, 3, (2, 2))
    """
    _check(g, val_fraction, test_fraction, num_negatives)
    n = g.num_nodes()
    src, dst = (np.asarray(a, dtype=np.int64) for a in g.edges())
    und = is_symmetric(src, dst, n) if undirected is None else bool(undirected)
    keys = pair_keys(src, dst, n, undirected=und)
    loop = src == dst
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
        neg = _negatives(src[e], n, all_keys, und, num_negatives, rng)
        splits.append(EvalEdges(src[e].copy(), dst[e].copy(), neg))
    return EdgeSplit(_subgraph(g, src, dst, train_eids), train_eids,
                     LinkEval(splits[0], splits[1]), und)


def _negatives(src: IdArray, n: int, all_keys: IdArray, undirected: bool, k: int,
               rng: np.random.Generator) -> IdArray:
    """``(len(src), k)`` uniform destinations, redrawn while one is ``src`` or linked to it."""
    neg = rng.integers(0, n, (len(src), k), dtype=np.int64)
    for _ in range(_REDRAWS):
        s = np.broadcast_to(src[:, None], neg.shape)
        key = pair_keys(s, neg, n, undirected=undirected)
        pos = np.minimum(np.searchsorted(all_keys, key), max(len(all_keys) - 1, 0))
        bad = (neg == s) | (all_keys[pos] == key) if len(all_keys) else neg == s
        if not bad.any():
            break
        neg[bad] = rng.integers(0, n, int(bad.sum()), dtype=np.int64)
    return neg


def _subgraph(g: Graph, src: IdArray, dst: IdArray, eids: IdArray) -> Graph:
    out = graph((src[eids], dst[eids]), num_nodes=g.num_nodes())
    for name in g.ndata:
        out.ndata[name] = g.ndata[name]
    for name in g.edata:
        col = g.edata[name]
        out.edata[name] = col.take(eids) if isinstance(col, Ragged) else np.asarray(col)[eids]
    return out
