"""Reshuffle IDs so that each part owns one contiguous range, types contiguous inside it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..typing import IdArray
from .build_kernels import new_ids_of_block

__all__ = ["Reshuffle", "reshuffle"]


@dataclass(frozen=True)
class Reshuffle:
    """New (shuffled) IDs of nodes and edges.

    New node IDs run part by part and, inside a part, node type by node type, keeping the
    original order within each (part, type); edges likewise by (part of the destination,
    edge type).  All arrays are int64.

    Attributes:
        node_new2orig: Original homogeneous node ID of each new ID.
        node_orig2new: New ID of each original homogeneous node ID.
        node_ranges: ``(num_ntypes, num_parts, 2)`` ``[start, end)`` of each type in each part.
        edge_new2orig: Original homogeneous edge ID of each new edge ID.
        edge_ranges: ``(num_etypes, num_parts, 2)``.
        src: Source of each edge in new node IDs, in new edge order.
        dst: Destination of each edge in new node IDs, in new edge order.
    """

    node_new2orig: IdArray
    node_orig2new: IdArray
    node_ranges: IdArray
    edge_new2orig: IdArray
    edge_ranges: IdArray
    src: IdArray
    dst: IdArray

    @property
    def num_parts(self) -> int:
        """Number of parts."""
        return self.node_ranges.shape[1]

    def node_bounds(self) -> IdArray:
        """``num_parts + 1`` boundaries of the parts' node ranges."""
        return np.concatenate([[0], self.node_ranges[-1, :, 1]])

    def edge_bounds(self) -> IdArray:
        """``num_parts + 1`` boundaries of the parts' edge ranges."""
        if self.edge_ranges.shape[0] == 0:
            return np.zeros(self.num_parts + 1, dtype=np.int64)
        return np.concatenate([[0], self.edge_ranges[-1, :, 1]])

    def node_part(self, new_ids: IdArray) -> IdArray:
        """Owning part of new node IDs."""
        return np.searchsorted(self.node_bounds()[1:], new_ids, side="right")


def _grouped_order(part: IdArray, types: npt.NDArray[np.integer], num_parts: int,
                   num_types: int) -> tuple[IdArray, IdArray, IdArray]:
    """Stable order by (part, type), each item's new position (the inverse of the order)
    and the ``(types, parts, 2)`` ranges of the groups.  Positions are numbered by
    :func:`~graphshard.partition.build_kernels.new_ids_of_block`, the pipeline's node
    numbering, over the whole array as one block (a counting sort: linear)."""
    if num_types == 0:
        return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                np.zeros((0, num_parts, 2), dtype=np.int64))
    groups = num_parts * max(num_types, 1)
    key_dtype = np.int16 if groups < 2**15 else np.int32 if groups < 2**31 else np.int64
    key = part.astype(key_dtype) * key_dtype(num_types) + types.astype(key_dtype)
    counts = np.bincount(key, minlength=groups)
    ends = np.cumsum(counts)
    position = new_ids_of_block(key, ends - counts)
    order = np.empty_like(position)
    order[position] = np.arange(len(position), dtype=np.int64)
    ends = ends.reshape(num_parts, num_types)
    counts = counts.reshape(num_parts, num_types)
    ranges = np.stack([ends - counts, ends], axis=-1).transpose(1, 0, 2)
    return order, position, np.ascontiguousarray(ranges, dtype=np.int64)


def reshuffle(parts: IdArray, node_types: npt.NDArray[np.integer], num_ntypes: int,
              src: IdArray, dst: IdArray, edge_types: npt.NDArray[np.integer],
              num_etypes: int, num_parts: int) -> Reshuffle:
    """Compute new IDs from each node's part.  Edges go to the part of their destination.

    Args:
        parts: Part of each node (original homogeneous order).
        node_types: Type index of each node.
        src, dst: Endpoints of each edge in original homogeneous IDs.
        edge_types: Type index of each edge.

    Example:
        >>> r = reshuffle(np.array([1, 0, 1]), np.array([0, 0, 0]), 1,
        ...               np.array([0, 1]), np.array([1, 2]), np.array([0, 0]), 1, 2)
        >>> r.node_new2orig.tolist(), r.node_ranges[0].tolist(), r.src.tolist(), r.dst.tolist()
        ([1, 0, 2], [[0, 1], [1, 3]], [1, 0], [0, 2])
    """
    node_order, orig2new, node_ranges = _grouped_order(parts, node_types, num_parts,
                                                       num_ntypes)
    edge_order, _, edge_ranges = _grouped_order(parts[dst], edge_types, num_parts, num_etypes)
    new_src = orig2new[src[edge_order]]
    new_dst = orig2new[dst[edge_order]]
    return Reshuffle(node_order, orig2new, node_ranges, edge_order, edge_ranges,
                     new_src, new_dst)
