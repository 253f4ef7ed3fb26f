"""ID conversion: per-type <-> homogeneous IDs, and owner lookups over reshuffled ranges.

Two ID spaces matter:

* an unpartitioned graph numbers its homogeneous IDs type by type
  (:class:`IDConverter`: homogeneous ID = offset of the type + per-type ID);
* a partitioned graph numbers them part by part and, inside a part, type by type
  (:class:`~graphshard.partition_book.RangePartitionBook`, built from the
  ``node_map``/``edge_map`` of the partition config; also importable from here).  The
  per-type ID of a node is then its rank among the nodes of its type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ._util.arrays import as_ids, check_id_range
from ._util.lazy import lazy_exports
from .errors import FormatError, ValidationError
from .types import GraphTypes
from .typing import IdArray

__all__ = ["IDConverter"]


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
        >>> conv.ntype2id_map, conv.etype2id_map["i:rev:u"], conv.num_nodes, conv.num_edges
        ({'u': 0, 'i': 1}, 1, [3, 2], [4, 4])
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
    def ntype2id_map(self) -> dict[Any, int]:
        """``{node type: index}`` (the seed's attribute; a new dict on each access)."""
        return {t: i for i, t in enumerate(self.types)}

    @property
    def etype2id_map(self) -> dict[Any, int]:
        """``{edge type: index}``, edge types as given (the seed's attribute)."""
        return {t: i for i, t in enumerate(self._edge_types or [])}

    @property
    def num_nodes(self) -> list[int]:
        """Nodes of each node type, in ID order (the seed's attribute)."""
        return np.diff(self.offsets).tolist()

    @property
    def num_edges(self) -> list[int]:
        """Edges of each edge type, in ID order (the seed's attribute; empty without edge
        counts)."""
        return np.diff(self._eoffsets).tolist()

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


# ``graphshard.ids.RangePartitionBook`` stays where users import it from, loaded on use
# (its module is graphshard.partition_book, which imports nothing from here)
__getattr__, __dir__ = lazy_exports(__name__, {"RangePartitionBook": "graphshard.partition_book"})
