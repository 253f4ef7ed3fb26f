"""The quality report of a partitioning: cut, volume, balance, halo sizes, timings."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import ValidationError
from ..typing import IdArray

__all__ = ["PartitionReport", "edge_cut", "undirected_edge_cut"]


def edge_cut(parts: IdArray, src: IdArray, dst: IdArray) -> int:
    """Directed edges whose endpoints lie in different parts.

    An undirected graph stored both ways (u -> v and v -> u, as METIS files and
    :func:`~graphshard.io.from_networkx` give it) counts each cut edge twice here; see
    :func:`undirected_edge_cut` for the figure METIS and the Walshaw archive report.

    Example:
        >>> edge_cut(np.array([0, 0, 1]), np.array([0, 1, 2]), np.array([1, 2, 0]))
        2
    """
    return int(np.count_nonzero(parts[src] != parts[dst]))


def undirected_edge_cut(parts: IdArray, src: IdArray, dst: IdArray) -> int | None:
    """The cut counted as METIS and the Walshaw archive count it (each undirected edge
    once), or None when the cut edges are not symmetric.

    When every cut edge u -> v is matched by a cut edge v -> u (as often as it occurs), the
    cut edges pair up into undirected edges and the result is half :func:`edge_cut`; a cut
    edge without its reverse means the graph is directed, and only the directed cut has a
    meaning.  Sorts the cut edges of a graph that passes a degree check: O(C log C) for C
    cut edges.

    Example:
        >>> both_ways = np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1])
        >>> undirected_edge_cut(np.array([0, 1, 1]), *both_ways)
        1
        >>> undirected_edge_cut(np.array([0, 1, 1]), np.array([0]), np.array([1])) is None
        True
    """
    cut = np.flatnonzero(parts[src] != parts[dst])
    if len(cut) % 2:
        return None
    s = np.asarray(src)[cut].astype(np.int64, copy=False)
    d = np.asarray(dst)[cut].astype(np.int64, copy=False)
    if not len(cut):
        return 0
    n = int(max(s.max(), d.max())) + 1
    if n <= 3_037_000_499:  # n * n fits in int64 (and parts has n entries)
        if not np.array_equal(np.bincount(s, minlength=n), np.bincount(d, minlength=n)):
            return None  # a node with more cut out-edges than cut in-edges: no pairing
        same = np.array_equal(np.sort(s * n + d), np.sort(d * n + s))
    else:
        fwd, rev = np.lexsort((d, s)), np.lexsort((s, d))
        same = np.array_equal(s[fwd], d[rev]) and np.array_equal(d[fwd], s[rev])
    return len(cut) // 2 if same else None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _need(values: dict[str, Any], name: str, ok: Any, what: str, *,
          none_ok: bool = False) -> None:
    if name not in values:
        raise ValidationError(f"report field {name!r} is missing", field=name)
    value = values[name]
    if not (none_ok and value is None) and not ok(value):
        raise ValidationError(f"report field {name!r} must be {what}, got {value!r:.60}",
                              field=name, value=value)


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
        num_edges: Directed edges of the whole graph (an undirected edge stored both ways
            counts twice).
        edge_cut: Directed edges whose endpoints are in different parts: an undirected
            graph stored both ways counts each cut edge twice (METIS and the Walshaw
            archive count it once: see ``undirected_edge_cut``).
        comm_volume: Pairs (node, other part) where the node is a 1-hop halo node of that
            part: node rows a full-neighbour layer must fetch from other parts.
        part_nodes: Inner nodes per part.
        part_edges: Inner edges per part (edges belong to the part of their destination).
        part_nodes_per_type: Inner nodes per part for each node type.
        halo_nodes: Halo nodes per part, all hops.
        seconds: Wall time per phase.
        undirected_edge_cut: The cut with each undirected edge counted once (half of
            ``edge_cut``), set when the cut edges are symmetric (every cut edge's reverse is
            cut too); None for a directed graph, and from the out-of-core pipeline
            (``dispatch``), which does not compute it.
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
    undirected_edge_cut: int | None = None

    @property
    def cut_ratio(self) -> float:
        """Edge cut / number of edges (both counted in directed edges)."""
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
        """Inverse of :meth:`to_dict` (derived figures are recomputed).

        Raises:
            ValidationError: ``data`` (a config's ``graphshard.report``, say) lacks a field
                or holds one of the wrong JSON type, naming the field.

        Example:
            >>> r = PartitionReport("hash", 2, 4, 4, 2, 2, [2, 2], [2, 2], {"_N": [2, 2]},
            ...                     [1, 1])
            >>> PartitionReport.from_dict(r.to_dict()) == r
            True
            >>> PartitionReport.from_dict({**r.to_dict(), "edge_cut": "2"})
            Traceback (most recent call last):
            ...
            graphshard.errors.ValidationError: report field 'edge_cut' must be an integer, got '2'
        """
        if not isinstance(data, dict):
            raise ValidationError(f"a report must be a JSON object, got {type(data).__name__}",
                                  field="report")
        names = cls.__dataclass_fields__
        values = {k: v for k, v in data.items() if k in names}
        for name in ("num_parts", "num_nodes", "num_edges", "edge_cut", "comm_volume",
                     "undirected_edge_cut"):
            if name in values or name != "undirected_edge_cut":
                _need(values, name, _is_int, "an integer",
                      none_ok=name == "undirected_edge_cut")
        _need(values, "method", lambda v: isinstance(v, str), "a string")
        for name in ("part_nodes", "part_edges", "halo_nodes"):
            _need(values, name, lambda v: isinstance(v, list) and all(map(_is_int, v)),
                  "a list of integers")
        _need(values, "part_nodes_per_type", lambda v: isinstance(v, dict) and all(
            isinstance(c, list) and all(map(_is_int, c)) for c in v.values()),
            "an object of integer lists")
        if "seconds" in values:
            _need(values, "seconds", lambda v: isinstance(v, dict) and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in v.values()),
                "an object of numbers")
        return cls(**values)

    def __repr__(self) -> str:
        return (f"PartitionReport(method={self.method!r}, num_parts={self.num_parts}, "
                f"edge_cut={self.edge_cut} ({self.cut_ratio:.2%}), "
                f"node_balance={self.node_balance:.3f}, edge_balance={self.edge_balance:.3f}, "
                f"halo={sum(self.halo_nodes)})")
