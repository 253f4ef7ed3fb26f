"""Build each part's local graph: inner nodes and edges plus HALO nodes for k hops."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._util.arrays import sorted_unique
from ..typing import IdArray
from .build_kernels import halo_of_part
from .reshuffle import Reshuffle

__all__ = ["LocalGraph", "assemble_local_graph", "build_local_graph", "gather_ranges",
           "in_edge_index", "one_hop_local_graph"]


@dataclass(frozen=True)
class LocalGraph:
    """One part's structure in local IDs (inner nodes first in global order, then halo).

    Attributes:
        part_id: The part.
        nodes: Global (shuffled) ID of each local node.
        num_inner_nodes: Inner nodes are local IDs ``0 .. num_inner_nodes - 1``.
        edges: Global (shuffled) ID of each local edge; inner edges first.
        num_inner_edges: Inner edges are local edges ``0 .. num_inner_edges - 1``.
        src: Local source of each local edge.
        dst: Local destination of each local edge.
        halo_per_hop: Number of halo nodes added at hop 1, 2, ...
    """

    part_id: int
    nodes: IdArray
    num_inner_nodes: int
    edges: IdArray
    num_inner_edges: int
    src: IdArray
    dst: IdArray
    halo_per_hop: tuple[int, ...]

    @property
    def num_halo_nodes(self) -> int:
        """Halo nodes over all hops."""
        return len(self.nodes) - self.num_inner_nodes


@dataclass(frozen=True)
class InEdgeIndex:
    """In-edges of every node (new IDs): ``edges[indptr[v]:indptr[v+1]]`` end at ``v``."""

    indptr: IdArray
    edges: IdArray


def in_edge_index(shuffle: Reshuffle) -> InEdgeIndex:
    """Group all edges by destination (needed for halo hops beyond the first)."""
    num_nodes = len(shuffle.node_new2orig)
    order = np.argsort(shuffle.dst, kind="stable").astype(np.int64, copy=False)
    indptr = np.zeros(num_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(shuffle.dst, minlength=num_nodes), out=indptr[1:])
    return InEdgeIndex(indptr, order)


def gather_ranges(indptr: IdArray, rows: IdArray) -> IdArray:
    """Concatenate ``arange(indptr[r], indptr[r+1])`` over ``rows`` without a Python loop."""
    starts, ends = indptr[rows], indptr[rows + 1]
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total, dtype=np.int64)


#: ``fetch(nodes) -> (edge IDs, src, dst)``: all in-edges of ``nodes`` (global new IDs).
InEdgeFetcher = Callable[[IdArray], tuple[IdArray, IdArray, IdArray]]


def assemble_local_graph(part_id: int, node_range: tuple[int, int], first_edge: int,
                         inner_src: IdArray, inner_dst: IdArray, num_hops: int,
                         fetch_in_edges: InEdgeFetcher | None = None) -> LocalGraph:
    """Local graph of one part from its inner edges (global new IDs, in edge-ID order).

    Hop 1 adds the sources of inner edges owned elsewhere as halo nodes.  Each further hop
    adds the in-edges of the previous hop's halo nodes (``inner_edge = False``), obtained
    from ``fetch_in_edges``, and their new sources as halo nodes.  Inner edges are local
    edges ``0 .. len(inner_src) - 1`` with global IDs ``first_edge ...``; halo edges follow
    sorted by global ID; halo nodes are sorted by global ID.
    """
    n_lo, n_hi = node_range
    is_outside = (inner_src < n_lo) | (inner_src >= n_hi)
    frontier, hop1_index = np.unique(inner_src[is_outside], return_inverse=True)
    halo_parts = [frontier]
    frontier_hop1 = frontier
    edge_ids: list[IdArray] = []
    edge_src: list[IdArray] = []
    edge_dst: list[IdArray] = []
    known = frontier
    for _ in range(1, num_hops):
        if frontier.size == 0 or fetch_in_edges is None:
            break
        eids, src, dst = fetch_in_edges(frontier)
        edge_ids.append(eids)
        edge_src.append(src)
        edge_dst.append(dst)
        cand = sorted_unique(src)
        cand = cand[(cand < n_lo) | (cand >= n_hi)]
        frontier = np.setdiff1d(cand, known, assume_unique=True)
        known = np.union1d(known, frontier)
        halo_parts.append(frontier)
    halo = np.sort(np.concatenate(halo_parts)) if len(halo_parts) > 1 else frontier
    num_inner_edges = len(inner_src)
    edges = np.arange(first_edge, first_edge + num_inner_edges, dtype=np.int64)
    src_all, dst_all = inner_src, inner_dst
    if edge_ids:
        hop_ids = np.concatenate(edge_ids)
        order = np.argsort(hop_ids, kind="stable")
        edges = np.concatenate([edges, hop_ids[order]])
        src_all = np.concatenate([inner_src, np.concatenate(edge_src)[order]])
        dst_all = np.concatenate([inner_dst, np.concatenate(edge_dst)[order]])
    nodes = np.concatenate([np.arange(n_lo, n_hi, dtype=np.int64), halo])
    num_inner = n_hi - n_lo

    def to_local(global_ids: IdArray) -> IdArray:
        inside = (global_ids >= n_lo) & (global_ids < n_hi)
        return np.where(inside, global_ids - n_lo,
                        num_inner + np.searchsorted(halo, global_ids))

    # inner edges: destinations are inner; sources outside map through the hop-1 index
    # (positions in the final halo when later hops inserted nodes among them)
    src_local = inner_src - n_lo
    halo_pos = hop1_index if len(halo_parts) == 1 else np.searchsorted(halo, frontier_hop1)[
        hop1_index]
    src_local[is_outside] = num_inner + halo_pos
    dst_local = inner_dst - n_lo
    if len(src_all) > num_inner_edges:
        src_local = np.concatenate([src_local, to_local(src_all[num_inner_edges:])])
        dst_local = np.concatenate([dst_local, to_local(dst_all[num_inner_edges:])])
    return LocalGraph(part_id, nodes, num_inner, edges, num_inner_edges, src_local, dst_local,
                      tuple(len(h) for h in halo_parts))


def build_local_graph(shuffle: Reshuffle, part_id: int, num_hops: int,
                      in_index: InEdgeIndex | None = None) -> LocalGraph:
    """Local graph of ``part_id`` from a whole-graph :class:`Reshuffle`.

    ``in_index`` (from :func:`in_edge_index`) is required when ``num_hops > 1``.
    """
    nb, eb = shuffle.node_bounds(), shuffle.edge_bounds()
    e_lo, e_hi = int(eb[part_id]), int(eb[part_id + 1])
    if num_hops == 1:  # the pipeline's one-hop build (the same graph, in linear time)
        fast = one_hop_local_graph(part_id, int(nb[part_id]), int(nb[part_id + 1]),
                                   len(shuffle.node_new2orig), e_lo,
                                   shuffle.src[e_lo:e_hi].copy(), shuffle.dst[e_lo:e_hi].copy())
        if fast is not None:
            return fast[0]

    fetch = None
    if in_index is not None:
        index = in_index

        def fetch(nodes: IdArray) -> tuple[IdArray, IdArray, IdArray]:
            eids = index.edges[gather_ranges(index.indptr, nodes)]
            return eids, shuffle.src[eids], shuffle.dst[eids]

    return assemble_local_graph(part_id, (int(nb[part_id]), int(nb[part_id + 1])), e_lo,
                                shuffle.src[e_lo:e_hi], shuffle.dst[e_lo:e_hi], num_hops, fetch)


def one_hop_local_graph(p: int, lo: int, hi: int, num_nodes: int, first_edge: int, src: IdArray,
                      dst: IdArray) -> tuple[LocalGraph, int] | None:
    """The one-hop local graph of part ``p`` (new node IDs ``[lo, hi)``, inner edges
    ``src -> dst`` with IDs from ``first_edge``): what :func:`assemble_local_graph` builds
    for one hop, with the halo numbered by
    :func:`~graphshard.partition.build_kernels.halo_of_part` (linear) instead of
    ``np.unique(return_inverse=True)``, and the number of cut edges.  ``src`` and ``dst``
    (int64, owned by the caller) become the local IDs in place.  None when the IDs are
    too large for it.

    Example:
        >>> local, cut = one_hop_local_graph(0, 0, 2, 4, 0, np.array([3, 0, 2]),
        ...                                  np.array([0, 1, 1]))
        >>> local.nodes.tolist(), local.src.tolist(), local.dst.tolist(), cut
        ([0, 1, 2, 3], [3, 0, 2], [0, 1, 1], 2)
    """
    found = halo_of_part(src, lo, hi, num_nodes)
    if found is None:
        return None
    halo, cut = found
    dst -= lo
    nodes = np.concatenate([np.arange(lo, hi, dtype=np.int64), halo])
    edges = np.arange(first_edge, first_edge + len(src), dtype=np.int64)
    return LocalGraph(p, nodes, hi - lo, edges, len(src), src, dst, (len(halo),)), cut
