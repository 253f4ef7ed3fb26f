"""ID conversion: per-type <-> homogeneous IDs, and owner lookups over reshuffled ranges.

Two ID spaces matter:

* an unpartitioned graph numbers its homogeneous IDs type by type
  (:class:`IDConverter`: homogeneous ID = offset of the type + per-type ID);
* a partitioned graph numbers them part by part and, inside a part, type by type
  (:class:`RangePartitionBook`, built from the ``node_map``/``edge_map`` of the partition
  config).  The per-type ID of a node is then its rank among the nodes of its type.
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

__all__ = ["IDConverter", "RangePartitionBook"]


class IDConverter:
    """Per-type <-> homogeneous IDs of an unpartitioned graph (types in declared order).

    Homogeneous ID = offset of the type + per-type ID, the numbering that DGL's chunked
    format pipeline uses before partitioning (seed 001's ``IDConverter``).  Every method
    takes a scalar (and answers with a scalar, as the seed's) or an ID array (int64 arrays
    back); an ID out of range is a :class:`~graphshard.errors.ValidationError` (a
    ``ValueError``, as the seed raises) naming the type, the first bad ID and the range.

    Args:
        counts: The loaded ``metadata.json`` of a chunked graph (a dict with
            ``node_type``, ``edge_type`` and ``num_nodes_per_chunk``/``num_edges_per_chunk``
            or the ``num_*_per_type`` totals), or items per type as ``{type: count}`` (order
            kept) or a list.
        edge_counts: With ``counts`` given as node counts: edges per edge type, for the
            ``etype``/``eid`` methods (edge types as ``"src:rel:dst"`` or tuples).

    Raises:
        FormatError: a metadata dict with a missing or malformed key (named).

    Example:
        >>> conv = IDConverter({"user": 3, "item": 2})
        >>> conv.to_homo("item", [0, 1]).tolist()
        [3, 4]
        >>> types, ids = conv.to_per_type([4, 0])
        >>> types.tolist(), ids.tolist()
        ([1, 0], [1, 0])
        >>> meta = {"node_type": ["u", "i"], "num_nodes_per_chunk": [[2, 1], [2]],
        ...         "edge_type": ["u:buys:i", "i:rev:u"], "num_edges_per_chunk": [[4], [4]]}
        >>> conv = IDConverter(meta)
        >>> conv.ntype2id("i"), conv.id2etype(1), conv.nid_het2hom("i", 1)
        (1, 'i:rev:u', 4)
        >>> conv.nid_hom2het(3), conv.eid_hom2het(4)
        (('i', 0), ('i:rev:u', 0))
        >>> conv.nid_het2hom("u", [0, 2]).tolist()
        [0, 2]
        >>> names, ids = conv.nid_hom2het([4, 0])
        >>> names.tolist(), ids.tolist()
        (['i', 'u'], [1, 0])
        >>> conv.nid_het2hom("i", 2)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: IDs of node type 'i': ID 2 ... range [0, 2)
    """

    def __init__(self, counts: Mapping[Any, Any] | Sequence[int],
                 edge_counts: Mapping[Any, int] | None = None) -> None:
        self._types: GraphTypes | None = None
        if isinstance(counts, Mapping) and "node_type" in counts and not _all_ints(counts):
            if edge_counts is not None:
                raise ValidationError("edge_counts goes with node counts, not with a "
                                      "metadata.json dict (it has the edge counts)",
                                      field="edge_counts")
            ntypes, node_sizes = _meta_counts(counts, "node")
            etypes, edge_sizes = _meta_counts(counts, "edge")
            try:
                self._types = GraphTypes(ntypes, etypes)
            except ValidationError as exc:
                raise FormatError(f"metadata.json: {exc}", field=exc.field) from exc
            self.types: list[Any] = list(ntypes)
            self._edge_types: list[Any] | None = list(etypes)
        else:
            if isinstance(counts, Mapping):
                self.types = list(counts)
                node_sizes = [int(c) for c in counts.values()]
            else:
                node_sizes = [int(c) for c in counts]
                self.types = list(range(len(node_sizes)))
            self._edge_types = None if edge_counts is None else list(edge_counts)
            edge_sizes = [] if edge_counts is None else [int(c) for c in edge_counts.values()]
            if edge_counts is not None and all(isinstance(t, str) for t in self.types):
                self._types = GraphTypes(self.types, list(edge_counts))
        self.offsets = _offsets(node_sizes)
        self._eoffsets = _offsets(edge_sizes)
        self._node_names = _object_array(self.types)
        self._edge_names = _object_array(self._edge_types or [])

    @property
    def total(self) -> int:
        """Number of IDs over all types."""
        return int(self.offsets[-1])

    @property
    def node_type(self) -> list[Any]:
        """Node types in ID order (the metadata's ``node_type``)."""
        return list(self.types)

    @property
    def edge_type(self) -> list[Any]:
        """Edge types in ID order, as given (the metadata's ``"src:rel:dst"`` strings)."""
        return list(self._edge_types or [])

    @property
    def nid_offset(self) -> IdArray:
        """Start of each node type in homogeneous IDs, then the total (a view)."""
        return self.offsets

    @property
    def eid_offset(self) -> IdArray:
        """Start of each edge type in homogeneous edge IDs, then the total (a view)."""
        return self._eoffsets

    def type_index(self, type_: Any) -> int:
        """Position of ``type_`` (a name or an int index)."""
        if type_ in self.types:
            return self.types.index(type_)
        if isinstance(type_, (int, np.integer)) and 0 <= type_ < len(self.types):
            return int(type_)
        raise ValidationError(f"unknown type {type_!r}; types are {self.types}",
                              field="type", value=type_)

    def to_homo(self, type_: Any, ids: npt.ArrayLike) -> IdArray:
        """Homogeneous IDs of per-type ``ids`` of ``type_``."""
        t = self.type_index(type_)
        return _shift(self.offsets, t, as_ids(ids, f"IDs of type {self.types[t]!r}"),
                      f"IDs of type {self.types[t]!r}")

    def to_per_type(self, homo_ids: npt.ArrayLike) -> tuple[npt.NDArray[np.int32], IdArray]:
        """``(type index, per-type ID)`` of each homogeneous ID."""
        t, ids = _split(self.offsets, as_ids(homo_ids, "homogeneous IDs"), "homogeneous IDs")
        return t.astype(np.int32), ids

    # ----- seed 001's API ------------------------------------------------------------------
    def ntype2id(self, ntype: str) -> int:
        """Node type name -> node type ID."""
        if self._types is not None:
            return self._types.ntype_id(ntype)
        if ntype not in self.types:
            raise ValidationError(f"unknown node type {ntype!r}; node types are {self.types}",
                                  field="ntype", value=ntype)
        return self.types.index(ntype)

    def etype2id(self, etype: Any) -> int:
        """Edge type (``"src:rel:dst"``, a canonical tuple or an unambiguous relation name)
        -> edge type ID."""
        names = self._check_edges()
        if self._types is not None:
            return self._types.etype_id(etype)
        if etype not in names:
            raise ValidationError(f"unknown edge type {etype!r}; edge types are {names}",
                                  field="etype", value=etype)
        return names.index(etype)

    def id2ntype(self, id: Any) -> Any:
        """Node type ID(s) -> name (an object array of names for an array)."""
        return _names(self._node_names, id, "node type IDs")

    def id2etype(self, id: Any) -> Any:
        """Edge type ID(s) -> name as given (an object array of names for an array)."""
        self._check_edges()
        return _names(self._edge_names, id, "edge type IDs")

    def nid_het2hom(self, ntype: str, id: Any) -> Any:
        """Per-type node ID(s) of ``ntype`` -> homogeneous node ID(s)."""
        t = self.ntype2id(ntype)
        what = f"IDs of node type {self.types[t]!r}"
        return _scalar_like(id, _shift(self.offsets, t, as_ids(id, what), what))

    def nid_hom2het(self, id: Any) -> tuple[Any, Any]:
        """Homogeneous node ID(s) -> ``(node type name(s), per-type ID(s))``."""
        t, ids = _split(self.offsets, as_ids(id, "homogeneous node IDs"),
                        "homogeneous node IDs")
        return _scalar_like(id, self._node_names[t]), _scalar_like(id, ids)

    def eid_het2hom(self, etype: Any, id: Any) -> Any:
        """Per-type edge ID(s) of ``etype`` -> homogeneous edge ID(s)."""
        t = self.etype2id(etype)
        what = f"IDs of edge type {self._edge_names[t]!r}"
        return _scalar_like(id, _shift(self._eoffsets, t, as_ids(id, what), what))

    def eid_hom2het(self, id: Any) -> tuple[Any, Any]:
        """Homogeneous edge ID(s) -> ``(edge type name(s), per-type ID(s))``."""
        self._check_edges()
        t, ids = _split(self._eoffsets, as_ids(id, "homogeneous edge IDs"),
                        "homogeneous edge IDs")
        return _scalar_like(id, self._edge_names[t]), _scalar_like(id, ids)

    def _check_edges(self) -> list[Any]:
        if self._edge_types is None:
            raise ValidationError("this IDConverter has no edge types: build it from a "
                                  "metadata.json dict or pass edge_counts", field="etype")
        return self._edge_types

    def __repr__(self) -> str:
        return (f"IDConverter(node_types={self.types}, num_nodes={self.total}, "
                f"edge_types={self.edge_type}, num_edges={int(self._eoffsets[-1])})")


def _offsets(sizes: Sequence[int]) -> IdArray:
    out = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=out[1:])
    return out


def _shift(offsets: IdArray, t: int, ids: IdArray, what: str) -> IdArray:
    """``ids`` (of type ``t``) checked against the type's size, plus its offset."""
    check_id_range(ids, int(offsets[t + 1] - offsets[t]), what)
    return ids + offsets[t]


def _split(offsets: IdArray, homo: IdArray, what: str) -> tuple[IdArray, IdArray]:
    """``(type index, per-type ID)`` of homogeneous IDs (a boundary ID starts its type)."""
    check_id_range(homo, int(offsets[-1]), what)
    t = np.searchsorted(offsets, homo, side="right") - 1
    return t, homo - offsets[t]


def _scalar_like(x: Any, out: np.ndarray) -> Any:
    """``out[0]`` as a Python object (an int, a type name) when the input ``x`` was a
    scalar, else ``out`` itself."""
    if np.ndim(x) != 0:
        return out
    value = out[0]
    return value.item() if isinstance(value, np.generic) else value


def _names(names: np.ndarray, ids: Any, what: str) -> Any:
    arr = as_ids(ids, what)
    check_id_range(arr, len(names), what)
    return _scalar_like(ids, names[arr])


def _object_array(items: Sequence[Any]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):  # one by one: tuples must not become a 2-D array
        out[i] = item
    return out


def _all_ints(counts: Mapping[Any, Any]) -> bool:
    return all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
               for v in counts.values())


def _meta_counts(meta: Mapping[str, Any], kind: str) -> tuple[list[Any], list[int]]:
    """``(type names, total per type)`` of ``kind`` ("node"/"edge") from a chunked
    ``metadata.json`` dict: ``num_<kind>s_per_chunk`` (summed) or ``num_<kind>s_per_type``."""
    names = meta.get(f"{kind}_type")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise FormatError(f"metadata.json: {kind}_type must be a list of names, found "
                          f"{names!r}", field=f"{kind}_type")
    per_chunk, per_type = f"num_{kind}s_per_chunk", f"num_{kind}s_per_type"
    if per_chunk in meta:
        rows = meta[per_chunk]
        ok = isinstance(rows, list) and len(rows) == len(names) and all(
            isinstance(r, list) and all(_is_count(c) for c in r) for r in rows)
        totals = [sum(r) for r in rows] if ok else []
    elif per_type in meta:
        rows = meta[per_type]
        ok = isinstance(rows, list) and len(rows) == len(names) and all(
            _is_count(c) for c in rows)
        totals, per_chunk = (list(rows) if ok else []), per_type
    else:
        raise FormatError(f"metadata.json: missing key {per_chunk!r} (or {per_type!r})",
                          field=per_chunk)
    if not ok:
        raise FormatError(f"metadata.json: {per_chunk} must hold one entry per {kind} type "
                          f"({len(names)}) of counts >= 0, found {rows!r:.200}",
                          field=per_chunk)
    return names, totals


def _is_count(c: Any) -> bool:
    return isinstance(c, (int, np.integer)) and not isinstance(c, bool) and bool(c >= 0)


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
