"""The undirected, weighted view of a graph that partitioners work on."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

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


def symmetric_adjacency(src: IdArray, dst: IdArray, num_nodes: int) -> Adjacency:
    """Undirected weighted CSR of directed edges ``src -> dst`` (self loops dropped).

    Array passes only: one sort of the ``2E`` packed keys, then run-length counting.

    Example:
        >>> a = symmetric_adjacency(np.array([0, 1, 1, 2]), np.array([1, 0, 2, 2]), 3)
        >>> a.indptr.tolist(), a.indices.tolist(), a.edge_weights.tolist()
        ([0, 1, 3, 4], [1, 0, 2, 1], [2, 2, 1, 1])
    """
    keep = src != dst
    s, d = src[keep], dst[keep]
    n = np.int64(max(num_nodes, 1))
    keys = np.concatenate([s * n + d, d * n + s])
    keys.sort(kind="stable")
    if keys.size:
        starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
        weights = np.diff(np.append(starts, keys.size)).astype(np.int64)
        uniq = keys[starts]
    else:
        uniq = keys
        weights = np.zeros(0, dtype=np.int64)
    rows, cols = np.divmod(uniq, n)
    indptr = np.zeros(num_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=num_nodes), out=indptr[1:])
    return Adjacency(indptr, cols.astype(np.int64, copy=False), weights)
