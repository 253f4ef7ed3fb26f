"""Owner lookups over reshuffled ranges: :class:`RangePartitionBook`.

A partitioned graph numbers its homogeneous IDs part by part and, inside a part, type by
type; the ``node_map``/``edge_map`` of the partition config give each (type, part) its
range.  The per-type ID of a node is its rank among the nodes of its type.  (The numbering
of an unpartitioned graph, type by type, is :class:`~graphshard.ids.IDConverter`'s.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ._util.arrays import as_ids, check_id_range
from .errors import FormatError, ValidationError
from .types import GraphTypes, TypedGraph
from .typing import EdgeType, IdArray

if TYPE_CHECKING:
    from .partition.config import PartitionConfig

__all__ = ["RangePartitionBook"]


class _RangeMap:
    """Contiguous ranges ``[start, end)`` per (part, type) in part-major, type-minor order."""

    def __init__(self, ranges: np.ndarray, types: list, what: str) -> None:
        # ranges: (num_types, num_parts, 2)
        self.types = types
        self.what = what
        self.ranges = ranges
        num_types, num_parts, _ = ranges.shape
        order = ranges[:, :, 0].T.reshape(-1)            # part-major
        ends = ranges[:, :, 1].T.reshape(-1)
        if num_types and num_parts:
            expect_start = np.concatenate([[0], ends[:-1]])
            bad = np.flatnonzero((order != expect_start) | (ends < order))
            if bad.size:
                p, t = divmod(int(bad[0]), num_types)
                raise FormatError(f"{what}[{types[t]!r}] range of part {p} is "
                                  f"{ranges[t, p].tolist()}: ranges must be contiguous, part by "
                                  "part and type by type", field=what)
        self.flat_ends = ends
        self.flat_starts = order
        sizes = ranges[:, :, 1] - ranges[:, :, 0]        # (types, parts)
        self.type_cum = np.zeros((num_types, num_parts + 1), dtype=np.int64)
        np.cumsum(sizes, axis=1, out=self.type_cum[:, 1:])
        # per-type rank of the first ID of each flat range
        self.flat_type_base = self.type_cum[:, :-1].T.reshape(-1)
        self.total = int(ends[-1]) if ends.size else 0
        self.part_bounds = np.concatenate([[0], ranges[-1, :, 1]]) if num_types else np.zeros(
            num_parts + 1, dtype=np.int64)

    def locate(self, homo: IdArray) -> np.ndarray:
        check_id_range(homo, self.total, f"homogeneous {self.what} IDs")
        return np.searchsorted(self.flat_ends, homo, side="right")

    def to_homo(self, per_type: IdArray, t: int) -> IdArray:
        check_id_range(per_type, int(self.type_cum[t, -1]),
                       f"{self.what} IDs of type {self.types[t]!r}")
        p = np.searchsorted(self.type_cum[t, 1:], per_type, side="right")
        return self.ranges[t, p, 0] + per_type - self.type_cum[t, p]


class RangePartitionBook(TypedGraph):
    """Which partition owns each node/edge, for IDs reshuffled into contiguous ranges.

    Args:
        part_id: The partition this process serves (``-1`` when none).
        node_map: ``{ntype: [[start, end] per part]}`` in homogeneous (shuffled) IDs.
        edge_map: ``{etype: [[start, end] per part]}``; keys are ``"src:rel:dst"`` strings
            or canonical tuples.

    Example:
        >>> book = RangePartitionBook(0, {"u": [[0, 2], [3, 4]], "i": [[2, 3], [4, 6]]},
        ...                           {"u:r:i": [[0, 5], [5, 7]]})
        >>> book.nid2partid([0, 2, 3, 5]).tolist()
        [0, 0, 1, 1]
        >>> t, ids = book.map_to_per_ntype([3, 5])
        >>> t.tolist(), ids.tolist()
        ([0, 1], [2, 2])
        >>> book.map_to_homo_nid([2], "i").tolist()
        [5]
    """

    def __init__(self, part_id: int, node_map: Mapping[str, Sequence[Sequence[int]]],
                 edge_map: Mapping[Any, Sequence[Sequence[int]]]) -> None:
        self.part_id = int(part_id)
        self._types = GraphTypes([str(t) for t in node_map], [_canonical(k) for k in edge_map])
        self._nodes = _RangeMap(_ranges(node_map, "node_map"), self._types.ntypes, "node_map")
        self._edges = _RangeMap(_ranges(edge_map, "edge_map"), self._types.canonical_etypes,
                                "edge_map")
        self._num_parts = self._nodes.ranges.shape[1]
        if self._edges.ranges.shape[0] and self._edges.ranges.shape[1] != self._num_parts:
            raise FormatError(f"edge_map has {self._edges.ranges.shape[1]} parts but node_map "
                              f"has {self._num_parts}", field="edge_map")

    @classmethod
    def from_config(cls, config: PartitionConfig, part_id: int = -1) -> RangePartitionBook:
        """Build from a partition config (its ``node_map`` and ``edge_map``), as returned by
        :func:`graphshard.partition.read_config`.

        Raises:
            ValidationError: ``config`` is not a :class:`~graphshard.partition.PartitionConfig`.
        """
        node_map, edge_map = getattr(config, "node_map", None), getattr(config, "edge_map", None)
        if not isinstance(node_map, Mapping) or not isinstance(edge_map, Mapping):
            raise ValidationError("config must be a PartitionConfig (from graphshard.partition."
                                  f"read_config), got {type(config).__name__}", field="config")
        return cls(part_id, node_map, edge_map)

    # ----- sizes ---------------------------------------------------------------------------
    def num_partitions(self) -> int:
        """Number of partitions."""
        return self._num_parts

    def metadata(self) -> list[dict[str, int]]:
        """Per partition: ``machine_id``, ``num_nodes`` (inner), ``num_edges`` (inner)."""
        nb, eb = self._nodes.part_bounds, self._edges.part_bounds
        return [{"machine_id": p, "num_nodes": int(nb[p + 1] - nb[p]),
                 "num_edges": int(eb[p + 1] - eb[p]) if len(eb) > p + 1 else 0}
                for p in range(self._num_parts)]

    # ----- owner lookups ----------------------------------------------------------------------
    def nid2partid(self, nids: npt.ArrayLike, ntype: str | None = None) -> IdArray:
        """Owning partition of homogeneous node IDs (or of per-type IDs of ``ntype``)."""
        homo = self._node_homo(nids, ntype)
        check_id_range(homo, self._nodes.total, "homogeneous node IDs")
        return np.searchsorted(self._nodes.part_bounds[1:], homo, side="right").astype(np.int64)

    def eid2partid(self, eids: npt.ArrayLike, etype: Any = None) -> IdArray:
        """Owning partition of homogeneous edge IDs (or per-type IDs of ``etype``)."""
        homo = self._edge_homo(eids, etype)
        check_id_range(homo, self._edges.total, "homogeneous edge IDs")
        return np.searchsorted(self._edges.part_bounds[1:], homo, side="right").astype(np.int64)

    def partid2nids(self, partid: int, ntype: str | None = None) -> IdArray:
        """Homogeneous IDs owned by ``partid``, or per-type IDs of ``ntype`` there."""
        p = self._check_part(partid)
        if ntype is None:
            return np.arange(self._nodes.part_bounds[p], self._nodes.part_bounds[p + 1])
        t = self._types.ntype_id(ntype)
        return np.arange(self._nodes.type_cum[t, p], self._nodes.type_cum[t, p + 1])

    def partid2eids(self, partid: int, etype: Any = None) -> IdArray:
        """Homogeneous edge IDs owned by ``partid``, or per-type IDs of ``etype`` there."""
        p = self._check_part(partid)
        if etype is None:
            return np.arange(self._edges.part_bounds[p], self._edges.part_bounds[p + 1])
        t = self._types.etype_id(etype)
        return np.arange(self._edges.type_cum[t, p], self._edges.type_cum[t, p + 1])

    def nid2localnid(self, nids: npt.ArrayLike, partid: int, ntype: str | None = None
                     ) -> IdArray:
        """Local IDs in ``partid`` of nodes it owns (inner nodes come first, in ID order).

        With ``ntype`` the input and output are per-type IDs (rank of the node among the
        inner nodes of that type in the partition).
        """
        p = self._check_part(partid)
        if ntype is None:
            homo = as_ids(nids, "nids")
            lo, hi = self._nodes.part_bounds[p], self._nodes.part_bounds[p + 1]
            base = lo
        else:
            t = self._types.ntype_id(ntype)
            homo = as_ids(nids, f"IDs of node type {ntype!r}")
            lo, hi = self._nodes.type_cum[t, p], self._nodes.type_cum[t, p + 1]
            base = lo
        outside = np.flatnonzero((homo < lo) | (homo >= hi))
        if outside.size:
            raise ValidationError(f"node {homo[outside[0]]} at position {outside[0]} is not "
                                  f"owned by partition {p}", field="nids")
        return homo - base

    # ----- type conversion ---------------------------------------------------------------------
    def map_to_per_ntype(self, nids: npt.ArrayLike) -> tuple[IdArray, IdArray]:
        """``(ntype index, per-type ID)`` of homogeneous node IDs."""
        return self._per_type(self._nodes, as_ids(nids, "nids"))

    def map_to_per_etype(self, eids: npt.ArrayLike) -> tuple[IdArray, IdArray]:
        """``(etype index, per-type ID)`` of homogeneous edge IDs."""
        return self._per_type(self._edges, as_ids(eids, "eids"))

    def map_to_homo_nid(self, ids: npt.ArrayLike, ntype: str) -> IdArray:
        """Homogeneous IDs of per-type node IDs of ``ntype``."""
        t = self._types.ntype_id(ntype)
        return self._nodes.to_homo(as_ids(ids, f"IDs of node type {ntype!r}"), t)

    def map_to_homo_eid(self, ids: npt.ArrayLike, etype: Any) -> IdArray:
        """Homogeneous IDs of per-type edge IDs of ``etype``."""
        et = self._types.to_canonical_etype(etype)
        t = self._types.etype_id(et)
        return self._edges.to_homo(as_ids(ids, f"IDs of edge type {et}"), t)

    # ----- helpers --------------------------------------------------------------------------
    def _per_type(self, rm: _RangeMap, homo: IdArray) -> tuple[IdArray, IdArray]:
        flat = rm.locate(homo)
        num_types = rm.ranges.shape[0]
        types = (flat % num_types).astype(np.int64)
        return types, homo - rm.flat_starts[flat] + rm.flat_type_base[flat]

    def _node_homo(self, nids: npt.ArrayLike, ntype: str | None) -> IdArray:
        if ntype is None:
            return as_ids(nids, "nids")
        return self.map_to_homo_nid(nids, ntype)

    def _edge_homo(self, eids: npt.ArrayLike, etype: Any) -> IdArray:
        if etype is None:
            return as_ids(eids, "eids")
        return self.map_to_homo_eid(eids, etype)

    def _check_part(self, partid: int) -> int:
        if not 0 <= int(partid) < self._num_parts:
            raise ValidationError(f"partition {partid} is out of range [0, {self._num_parts})",
                                  field="partid", value=partid)
        return int(partid)

    def __repr__(self) -> str:
        return (f"RangePartitionBook(num_parts={self._num_parts}, ntypes={self.ntypes}, "
                f"etypes={[':'.join(e) for e in self.canonical_etypes]})")


def _canonical(key: Any) -> EdgeType:
    if isinstance(key, str):
        parts = key.split(":")
        return (parts[0], parts[1], parts[2]) if len(parts) == 3 else ("_N", key, "_N")
    return tuple(key)


def _ranges(mapping: Mapping[Any, Sequence[Sequence[int]]], what: str) -> np.ndarray:
    if not mapping:
        return np.zeros((0, 0, 2), dtype=np.int64)
    try:
        arr = np.array([np.asarray(v, dtype=np.int64).reshape(-1, 2) for v in mapping.values()],
                       dtype=np.int64)
    except ValueError as exc:
        raise FormatError(f"{what}: every type needs one [start, end] pair per part ({exc})",
                          field=what) from exc
    return arr
