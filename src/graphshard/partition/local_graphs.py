"""Build each part's local graph: inner nodes and edges plus HALO nodes for k hops."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..typing import IdArray
from .reshuffle import Reshuffle

__all__ = ["LocalGraph", "build_local_graph", "in_edge_index"]


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


def _gather_ranges(indptr: IdArray, rows: IdArray) -> IdArray:
    """Concatenate ``arange(indptr[r], indptr[r+1])`` over ``rows`` without a Python loop."""
    starts, ends = indptr[rows], indptr[rows + 1]
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total, dtype=np.int64)


def build_local_graph(shuffle: Reshuffle, part_id: int, num_hops: int,
                      in_index: InEdgeIndex | None = None) -> LocalGraph:
    """Local graph of ``part_id``: inner edges, then the in-edges of halo nodes hop by hop.

    Hop 1 adds the sources of inner edges owned elsewhere as halo nodes.  Each further hop
    adds the in-edges of the previous hop's halo nodes (``inner_edge = False``) and their
    new sources as halo nodes.  ``in_index`` is required when ``num_hops > 1``.
    """
    nb, eb = shuffle.node_bounds(), shuffle.edge_bounds()
    n_lo, n_hi = int(nb[part_id]), int(nb[part_id + 1])
    e_lo, e_hi = int(eb[part_id]), int(eb[part_id + 1])
    src = shuffle.src[e_lo:e_hi]
    outside = src[(src < n_lo) | (src >= n_hi)]
    frontier = np.unique(outside)
    halo_parts = [frontier]
    halo_edge_parts: list[IdArray] = []
    known = frontier
    for _ in range(1, num_hops):
        if frontier.size == 0 or in_index is None:
            break
        new_edges = in_index.edges[_gather_ranges(in_index.indptr, frontier)]
        halo_edge_parts.append(new_edges)
        cand = np.unique(shuffle.src[new_edges])
        cand = cand[(cand < n_lo) | (cand >= n_hi)]
        frontier = np.setdiff1d(cand, known, assume_unique=True)
        known = np.union1d(known, frontier)
        halo_parts.append(frontier)
    halo = np.sort(np.concatenate(halo_parts)) if len(halo_parts) > 1 else frontier
    halo_edges = (np.sort(np.concatenate(halo_edge_parts)) if halo_edge_parts
                  else np.zeros(0, dtype=np.int64))
    nodes = np.concatenate([np.arange(n_lo, n_hi, dtype=np.int64), halo])
    edges = np.concatenate([np.arange(e_lo, e_hi, dtype=np.int64), halo_edges])
    num_inner = n_hi - n_lo

    def to_local(global_ids: IdArray) -> IdArray:
        inside = (global_ids >= n_lo) & (global_ids < n_hi)
        return np.where(inside, global_ids - n_lo,
                        num_inner + np.searchsorted(halo, global_ids))

    return LocalGraph(part_id, nodes, num_inner, edges, e_hi - e_lo,
                      to_local(shuffle.src[edges]), to_local(shuffle.dst[edges]),
                      tuple(len(h) for h in halo_parts))
