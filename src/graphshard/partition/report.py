"""The quality report of a partitioning: cut, volume, balance, halo sizes, timings."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..typing import IdArray

__all__ = ["PartitionReport", "edge_cut"]


def edge_cut(parts: IdArray, src: IdArray, dst: IdArray) -> int:
    """Directed edges whose endpoints lie in different parts.

    Example:
        >>> edge_cut(np.array([0, 0, 1]), np.array([0, 1, 2]), np.array([1, 2, 0]))
        2
    """
    return int(np.count_nonzero(parts[src] != parts[dst]))


def _balance(counts: list[int]) -> float:
    total = sum(counts)
    return float(max(counts) * len(counts) / total) if total else 1.0


@dataclass(frozen=True)
class PartitionReport:
    """What a partitioning achieved, as stored under ``"graphshard"/"report"`` in the config.

    Attributes:
        method: Partition method (or ``"assignment"`` for a given one).
        num_parts: Number of parts.
        num_nodes: Nodes of the whole graph.
        num_edges: Directed edges of the whole graph.
        edge_cut: Directed edges whose endpoints are in different parts.
        comm_volume: Pairs (node, other part) where the node is a 1-hop halo node of that
            part: node rows a full-neighbour layer must fetch from other parts.
        part_nodes: Inner nodes per part.
        part_edges: Inner edges per part (edges belong to the part of their destination).
        part_nodes_per_type: Inner nodes per part for each node type.
        halo_nodes: Halo nodes per part, all hops.
        seconds: Wall time per phase.
    """

    method: str
    num_parts: int
    num_nodes: int
    num_edges: int
    edge_cut: int
    comm_volume: int
    part_nodes: list[int]
    part_edges: list[int]
    part_nodes_per_type: dict[str, list[int]]
    halo_nodes: list[int]
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def cut_ratio(self) -> float:
        """Edge cut / number of edges."""
        return self.edge_cut / self.num_edges if self.num_edges else 0.0

    @property
    def node_balance(self) -> float:
        """Largest part's inner nodes / average (1.0 is perfect)."""
        return _balance(self.part_nodes)

    @property
    def edge_balance(self) -> float:
        """Largest part's inner edges / average."""
        return _balance(self.part_edges)

    @property
    def type_balance(self) -> dict[str, float]:
        """Per node type: largest part's count / average."""
        return {t: _balance(c) for t, c in self.part_nodes_per_type.items()}

    @property
    def replication(self) -> float:
        """(inner + halo nodes over all parts) / nodes: 1.0 means no halo at all."""
        return (self.num_nodes + sum(self.halo_nodes)) / self.num_nodes if self.num_nodes else 1.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the derived figures included."""
        out = asdict(self)
        out.update(cut_ratio=self.cut_ratio, node_balance=self.node_balance,
                   edge_balance=self.edge_balance, type_balance=self.type_balance,
                   replication=self.replication)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PartitionReport:
        """Inverse of :meth:`to_dict` (derived figures are recomputed)."""
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})

    def __repr__(self) -> str:
        return (f"PartitionReport(method={self.method!r}, num_parts={self.num_parts}, "
                f"edge_cut={self.edge_cut} ({self.cut_ratio:.2%}), "
                f"node_balance={self.node_balance:.3f}, edge_balance={self.edge_balance:.3f}, "
                f"halo={sum(self.halo_nodes)})")
