"""The undirected, weighted view of a graph that partitioners work on."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._util.arrays import as_ids
from .._util.jit import kernel
from ..typing import IdArray

__all__ = ["Adjacency", "symmetric_adjacency"]


@dataclass(frozen=True)
class Adjacency:
    """Symmetric CSR without self loops or duplicate entries.

    ``edge_weights[j]`` counts the directed input edges between the two endpoints of
    entry ``j`` (both directions together), so the weighted cut of a partition equals the
    number of directed input edges whose endpoints lie in different parts.

    Attributes:
        indptr: int64, ``num_nodes + 1``.
        indices: int64 neighbours, sorted within each row.
        edge_weights: int64, one per entry of ``indices``, all >= 1.
        vertex_weights: int64 ``(num_nodes, ncon)`` balance weights, or None for unit weights.
    """

    indptr: IdArray
    indices: IdArray
    edge_weights: IdArray
    vertex_weights: npt.NDArray[np.int64] | None = None

    @property
    def num_nodes(self) -> int:
        """Number of vertices."""
        return len(self.indptr) - 1

    @property
    def num_entries(self) -> int:
        """Stored entries: twice the number of undirected edges."""
        return len(self.indices)

    def with_vertex_weights(self, weights: npt.NDArray[np.int64] | None) -> Adjacency:
        """The same structure with other balance weights."""
        return Adjacency(self.indptr, self.indices, self.edge_weights, weights)


@kernel
def _scatter_both_directions(src, dst, num_nodes):  # pragma: no cover - compiled
    indptr = np.zeros(num_nodes + 1, dtype=np.int64)
    for i in range(src.shape[0]):
        if src[i] != dst[i]:
            indptr[src[i] + 1] += 1
            indptr[dst[i] + 1] += 1
    for v in range(num_nodes):
        indptr[v + 1] += indptr[v]
    fill = indptr[:-1].copy()
    indices = np.empty(indptr[num_nodes], dtype=np.int64)
    for i in range(src.shape[0]):
        s, d = src[i], dst[i]
        if s != d:
            indices[fill[s]] = d
            fill[s] += 1
            indices[fill[d]] = s
            fill[d] += 1
    return indptr, indices


@kernel
def _sort_and_merge_rows(indptr, indices):  # pragma: no cover - compiled
    """Sort each row, merge repeated neighbours into weights, compact in place."""
    num_nodes = indptr.shape[0] - 1
    weights = np.empty(indices.shape[0], dtype=np.int64)
    out = 0
    start = indptr[0]
    for v in range(num_nodes):
        end = indptr[v + 1]
        indptr[v] = out
        if end > start:
            indices[start:end] = np.sort(indices[start:end])
            last = indices[start]
            count = 1
            for j in range(start + 1, end):
                if indices[j] == last:
                    count += 1
                else:
                    indices[out] = last
                    weights[out] = count
                    out += 1
                    last = indices[j]
                    count = 1
            indices[out] = last
            weights[out] = count
            out += 1
        start = end
    indptr[num_nodes] = out
    return out, weights


def symmetric_adjacency(src: IdArray, dst: IdArray, num_nodes: int) -> Adjacency:
    """Undirected weighted CSR of directed edges ``src -> dst`` (self loops dropped).

    Two linear passes (count, scatter) and a sort inside each row; memory is the output
    plus the input.

    Example:
        >>> a = symmetric_adjacency(np.array([0, 1, 1, 2]), np.array([1, 0, 2, 2]), 3)
        >>> a.indptr.tolist(), a.indices.tolist(), a.edge_weights.tolist()
        ([0, 1, 3, 4], [1, 0, 2, 1], [2, 2, 1, 1])
    """
    src, dst = as_ids(src, "src"), as_ids(dst, "dst")
    indptr, indices = _scatter_both_directions(src, dst, num_nodes)
    total, weights = _sort_and_merge_rows(indptr, indices)
    if total < len(indices):  # copies release the unused tail of the scatter buffers
        indices, weights = indices[:total].copy(), weights[:total].copy()
    return Adjacency(indptr, indices, weights)
