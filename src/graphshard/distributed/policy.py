"""Partition policies: how the rows of a DistTensor are split over the graph servers.

A :class:`PartitionPolicy` says "row ``i`` belongs to node ``i`` of this node type" (or edge
``i`` of this edge type), so the row lives on the server owning that node (edge).  The
policies of a graph exist once its servers are up: one per node type and one per edge type,
from :meth:`DistGraph.get_node_partition_policy` and
:meth:`DistGraph.get_edge_partition_policy` (DGL's names); a DistTensor or DistEmbedding
takes one as ``part_policy``.  Unstable API.

Example:
    >>> import graphshard as gs
    >>> dg = gs.distributed.DistGraph("parts/acm.json")  # doctest: +SKIP
    >>> pol = dg.get_node_partition_policy("paper")  # doctest: +SKIP
    >>> str(pol), pol.get_size()  # doctest: +SKIP
    ('node:paper', 3025)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..partition_book import RangePartitionBook
from ..typing import EdgeType, IdArray

if TYPE_CHECKING:
    from .graph import DistGraph

__all__ = ["PartitionPolicy"]


@dataclass(frozen=True)
class PartitionPolicy:
    """Rows split like the nodes of one node type or the edges of one edge type.

    Attributes:
        kind: ``"node"`` or ``"edge"``.
        type_name: The node type, or the canonical edge type.
        graph: The DistGraph whose servers hold the rows.
    """

    kind: str
    type_name: str | EdgeType
    graph: DistGraph = field(repr=False, compare=False)

    @property
    def policy_str(self) -> str:
        """``"node:<ntype>"`` or ``"edge:<src:rel:dst>"`` (what ``part_policy`` strings
        say)."""
        name = self.type_name if isinstance(self.type_name, str) else ":".join(self.type_name)
        return f"{self.kind}:{name}"

    @property
    def is_node(self) -> bool:
        """True for a node type's policy."""
        return self.kind == "node"

    @property
    def partition_book(self) -> RangePartitionBook:
        """The graph's partition book."""
        return self.graph.get_partition_book()

    def get_size(self) -> int:
        """Rows of a tensor of this policy (nodes of the type, or edges)."""
        return (self.graph.num_nodes(str(self.type_name)) if self.kind == "node"
                else self.graph.num_edges(self.type_name))

    def to_partid(self, ids: Any) -> IdArray:
        """Partition owning each row (per-type IDs of the node or edge type)."""
        book = self.partition_book
        if self.kind == "node":
            return book.nid2partid(ids, str(self.type_name))
        return np.asarray(book.eid2partid(ids, self.type_name), dtype=np.int64)

    def __str__(self) -> str:
        return self.policy_str
