"""PyG's partition folder, read into NumPy arrays in per-type IDs (no ``torch`` needed here).

torch_geometric 2.8's ``torch_geometric.distributed.Partitioner`` (``partition.py``) writes,
for ``num_parts`` parts of a ``Data`` or ``HeteroData``:

- ``META.json``: ``num_parts``, ``is_hetero``, ``is_sorted`` (edges sorted by destination)
  and, for a ``HeteroData``, ``node_types``, ``edge_types`` (``[src, rel, dst]`` lists) and
  ``node_offset`` (each node type's first homogeneous ID); null for a ``Data``.
- the part of every node and edge (int64): ``node_map.pt`` and ``edge_map.pt``, or per type
  ``node_map/<ntype>.pt`` and ``edge_map/<src>__<rel>__<dst>.pt`` indexed by per-type ID.
- ``part_<i>/graph.pt``: the in-edges of the part's nodes (ClusterData's CSC cut: an edge
  lives with its destination, as in ours): ``{"row", "col", "edge_id", "size"}``, for a
  ``HeteroData`` per edge type keyed by the ``(src, rel, dst)`` tuple, with per-type
  ``row``/``col`` and the *homogeneous* ``edge_id`` (type offset in ``edge_types`` order +
  per-type ID).
- ``part_<i>/node_feats.pt``: ``{"global_id", "feats": {"x": rows or None}, "time"?}``, for a
  ``HeteroData`` per node type with a homogeneous ``global_id`` and a per-type ``id``;
  ``time`` holds the time of *every* node (of the type) and is repeated in every part.
- ``part_<i>/edge_feats.pt``: ``{"global_id", "feats": {"edge_attr": rows},
  "edge_time"?}`` (per edge type, per-type ``global_id``), a ``defaultdict`` that is empty
  without edge features; ``edge_time`` has a row per edge of ``graph.pt``, in its order.

:mod:`graphshard.partition.pyg_io` loads and writes the files with ``torch``; this module
checks what they hold (every bad value a :class:`~graphshard.errors.FormatError` naming the
file and field); :mod:`graphshard.partition.pyg_assemble` assembles the graph they
describe and
:mod:`graphshard.partition.pyg_export` builds what an export writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FormatError, ValidationError
from ..graph import DEFAULT_ETYPE, DEFAULT_NTYPE
from ..storage.files import check_path_name
from ..typing import EdgeType, IdArray

__all__ = ["PyGMeta", "PyGPart", "Rows", "fail", "id_array", "meta_from_json", "read_edge_feats",
           "read_graph", "read_map", "read_node_feats", "tensor_array",
           "type_file_name"]


def fail(where: Path, field: str, message: str) -> FormatError:
    """A FormatError naming the file and field."""
    return FormatError(f"{where}: {field}: {message}", path=str(where), field=field)


def type_file_name(name: str | EdgeType) -> str:
    """PyG's file name of a type's map (``torch_geometric.distributed.utils.as_str``).

    Example:
        >>> type_file_name("paper"), type_file_name(("author", "writes", "paper"))
        ('paper', 'author__writes__paper')
    """
    return name if isinstance(name, str) else "__".join(name)


@dataclass(frozen=True)
class PyGMeta:
    """``META.json``, checked.

    Attributes:
        num_parts: Number of parts.
        is_hetero: Written from a ``HeteroData`` (types named in the files).
        ntypes: Node types in PyG's order (``["_N"]`` for a ``Data``).
        etypes: Canonical edge types in PyG's order (``[("_N", "_E", "_N")]``).
        is_sorted: ``graph.pt``'s edges are sorted by destination.
        node_offset: ``META.json``'s first homogeneous ID of each node type (None when
            absent), checked against the maps by :meth:`check_offsets`.
    """

    num_parts: int
    is_hetero: bool
    ntypes: list[str]
    etypes: list[EdgeType]
    is_sorted: bool = True
    node_offset: list[int] | None = None

    def check_offsets(self, num_nodes: dict[str, int], where: Path) -> None:
        """Refuse a ``node_offset`` that is not the running sum of the maps' sizes."""
        want = np.concatenate([[0], np.cumsum([num_nodes[t] for t in self.ntypes])[:-1]])
        if self.node_offset is not None and self.node_offset != want.tolist():
            raise fail(where, "node_offset", f"is {str(self.node_offset)[:200]}, but the "
                       f"node maps' sizes give {want.tolist()}")

    def map_file(self, kind: str, name: str | EdgeType) -> str:
        """The map file of a node (``kind="node"``) or edge type, relative to the root."""
        if not self.is_hetero:
            return f"{kind}_map.pt"
        return f"{kind}_map/{type_file_name(name)}.pt"

    def to_json(self, node_counts: list[int]) -> dict[str, Any]:
        """``META.json`` as PyG writes it (``node_counts``: nodes per type, for
        ``node_offset``)."""
        offsets = np.concatenate([[0], np.cumsum(node_counts)[:-1]]).tolist() \
            if self.is_hetero else None
        return {"num_parts": self.num_parts,
                "node_types": self.ntypes if self.is_hetero else None,
                "edge_types": [list(e) for e in self.etypes] if self.is_hetero else None,
                "node_offset": offsets, "is_hetero": self.is_hetero,
                "is_sorted": self.is_sorted}


def _type_name(where: Path, field: str, name: Any) -> str:
    """A type name usable as a file name and in ``"src:rel:dst"``."""
    try:
        check_path_name(name, field=field, path=where)
    except ValidationError as exc:
        raise FormatError(str(exc), path=str(where), field=field, value=name) from None
    if ":" in name:
        raise fail(where, field, f"{name!r} holds ':', which graphshard's edge type names "
                    "('src:rel:dst') reserve")
    return str(name)


def meta_from_json(obj: Any, where: Path) -> PyGMeta:
    """Check PyG's ``META.json`` (parsed) and return its types.

    Raises:
        FormatError: a key missing or of the wrong kind, a type name that is no plain file
            name (``/``, ``..``), a repeated type, or an edge type over unknown node types.

    Example:
        >>> meta = meta_from_json({"num_parts": 2, "is_hetero": True, "is_sorted": True,
        ...                        "node_types": ["a", "b"], "edge_types": [["a", "r", "b"]],
        ...                        "node_offset": [0, 4]}, Path("META.json"))
        >>> meta.etypes, meta.map_file("edge", meta.etypes[0])
        ([('a', 'r', 'b')], 'edge_map/a__r__b.pt')
        >>> meta_from_json({"num_parts": 2, "is_hetero": True, "node_types": ["../x"],
        ...                 "edge_types": []}, Path("META.json"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        graphshard.errors.FormatError: META.json: node_types[0] must be a plain file name ...
    """
    if not isinstance(obj, dict):
        raise fail(where, "META.json", "must hold a JSON object")
    parts = obj.get("num_parts")
    if not isinstance(parts, int) or isinstance(parts, bool) or parts < 1:
        raise fail(where, "num_parts", f"must be an integer >= 1, got {parts!r}")
    hetero, is_sorted = obj.get("is_hetero"), obj.get("is_sorted", True)
    if not isinstance(hetero, bool) or not isinstance(is_sorted, bool):
        raise fail(where, "is_hetero", "is_hetero (and is_sorted) must be true or false, got "
                    f"{hetero!r} / {is_sorted!r}")
    if not hetero:
        return PyGMeta(parts, False, [DEFAULT_NTYPE], [DEFAULT_ETYPE], is_sorted)
    ntypes, etypes = obj.get("node_types"), obj.get("edge_types")
    if not isinstance(ntypes, list) or not isinstance(etypes, list):
        raise fail(where, "node_types", "node_types and edge_types must be lists")
    names = [_type_name(where, f"node_types[{i}]", t) for i, t in enumerate(ntypes)]
    if len(set(names)) != len(names):
        raise fail(where, "node_types", f"a type is named twice: {names}")
    ets: list[EdgeType] = []
    for i, et in enumerate(etypes):
        if not isinstance(et, list) or len(et) != 3 or et[0] not in names \
                or et[2] not in names:
            raise fail(where, f"edge_types[{i}]", f"must be [src, rel, dst] over the node "
                        f"types {names}, got {str(et)[:200]}")
        rel = _type_name(where, f"edge_types[{i}]", et[1])
        _type_name(where, f"edge_types[{i}]", type_file_name((et[0], rel, et[2])))
        ets.append((et[0], rel, et[2]))
    if len(set(ets)) != len(ets):
        raise fail(where, "edge_types", "an edge type is named twice")
    offsets = obj.get("node_offset")
    if offsets is not None and (not isinstance(offsets, list) or len(offsets) != len(names)
                                or not all(type(o) is int for o in offsets)):
        raise fail(where, "node_offset", f"must list an integer per node type, got "
                   f"{str(offsets)[:200]}")
    return PyGMeta(parts, True, names, ets, is_sorted, offsets)


def tensor_array(value: Any, where: Path, field: str) -> np.ndarray:
    """A tensor's values as a NumPy array (a view); anything else is refused, naming
    ``where`` and ``field`` (a 0-d, sparse or non-numeric tensor too)."""
    if not (hasattr(value, "detach") and hasattr(value, "numpy")):
        raise fail(where, field, f"must be a tensor, got {type(value).__name__}")
    try:
        arr = value.detach().numpy()
    except (TypeError, RuntimeError, ValueError) as exc:  # sparse, bfloat16, ...
        raise fail(where, field, f"has no NumPy form ({exc})"[:300]) from None
    if not isinstance(arr, np.ndarray) or arr.ndim == 0 or arr.dtype.kind not in "biuf":
        raise fail(where, field, "must hold one row of numbers per item, got shape "
                    f"{getattr(arr, 'shape', None)} dtype {getattr(arr, 'dtype', None)}")
    return arr


def id_array(value: Any, where: Path, field: str, bound: int) -> IdArray:
    """A 1-D integer tensor (or NumPy array) of IDs in ``[0, bound)`` as int64, naming the
    first bad one.

    Example:
        >>> import numpy as np
        >>> class T:  # a stand-in tensor
        ...     def __init__(self, a): self.a = a
        ...     def detach(self): return self
        ...     def numpy(self): return self.a
        >>> id_array(T(np.array([3, 1])), Path("graph.pt"), "row", 3)
        Traceback (most recent call last):
        ...
        graphshard.errors.FormatError: graph.pt: row: [0] = 3 is not in [0, 3)
    """
    arr = value if isinstance(value, np.ndarray) else tensor_array(value, where, field)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise fail(where, field, f"must be a 1-D integer tensor, got dtype {arr.dtype} "
                    f"shape {arr.shape}")
    bad = np.flatnonzero((arr < 0) | (arr >= bound))
    if bad.size:
        raise fail(where, field, f"[{bad[0]}] = {arr[bad[0]]} is not in [0, {bound})")
    return arr.astype(np.int64)


def read_map(obj: Any, where: Path, num_parts: int) -> IdArray:
    """A ``node_map``/``edge_map`` file: the part of every node or edge of a type."""
    return id_array(obj, where, "map", num_parts)


def _dict(obj: Any, where: Path, field: str) -> dict:
    if not isinstance(obj, dict):
        raise fail(where, field, f"must be a dict, got {type(obj).__name__}")
    return obj


def _by_type(obj: dict, where: Path, types: list[Any]) -> dict[Any, Any]:
    """A heterogeneous file's entries by our types (tuple keys for edge types)."""
    out = {}
    for key, value in obj.items():
        k = tuple(key) if isinstance(key, list) else key
        if k not in types:
            raise fail(where, str(key)[:100], f"is not a type of META.json ({types})")
        out[k] = value
    return out


@dataclass(frozen=True)
class Rows:
    """Feature rows of one node or edge type in one part.

    Attributes:
        ids: int64 per-type IDs of the rows.
        columns: Feature name -> array with a row per ID.
    """

    ids: IdArray
    columns: dict[str, np.ndarray]


@dataclass(frozen=True)
class PyGPart:
    """One ``part_<i>/`` folder, checked, in per-type IDs.

    Attributes:
        edges: Per edge type, ``(src, dst, edge ID)`` int64 arrays.
        node_rows: Node features per node type.
        edge_rows: Edge features per edge type.
        node_time: PyG's node ``time`` per node type (a value for every node of the type).
    """

    edges: dict[EdgeType, tuple[IdArray, IdArray, IdArray]]
    node_rows: dict[str, Rows]
    edge_rows: dict[EdgeType, Rows]
    node_time: dict[str, np.ndarray]


def read_graph(obj: Any, meta: PyGMeta, where: Path, num_nodes: dict[str, int],
               num_edges: dict[EdgeType, int]) -> dict[EdgeType, tuple[IdArray, IdArray,
                                                                       IdArray]]:
    """``graph.pt``: per edge type ``(src, dst, per-type edge ID)``."""
    obj = _dict(obj, where, "graph.pt")
    entries = _by_type(obj, where, meta.etypes) if meta.is_hetero \
        else {meta.etypes[0]: obj}
    offset, offsets = 0, {}
    for et in meta.etypes:
        offsets[et], offset = offset, offset + num_edges[et]
    out = {}
    for et in meta.etypes:
        entry = _dict(entries.get(et, {}), where, type_file_name(et))
        if not entry:  # an edge type without edges here
            out[et] = (np.zeros(0, np.int64),) * 3
            continue
        pre = f"{type_file_name(et)}." if meta.is_hetero else ""
        for key in ("row", "col", "edge_id"):
            if key not in entry:
                raise fail(where, pre + key, "is missing")
        src = id_array(entry["row"], where, pre + "row", num_nodes[et[0]])
        dst = id_array(entry["col"], where, pre + "col", num_nodes[et[2]])
        eid = id_array(entry["edge_id"], where, pre + "edge_id", offset) - offsets[et]
        if not len(src) == len(dst) == len(eid):
            raise fail(where, pre + "row", f"row, col and edge_id have {len(src)}, "
                        f"{len(dst)} and {len(eid)} entries")
        bad = np.flatnonzero((eid < 0) | (eid >= num_edges[et]))
        if bad.size:
            raise fail(where, pre + "edge_id", f"[{bad[0]}] = {eid[bad[0]] + offsets[et]} "
                        f"is not an edge of type {et}")
        out[et] = (src, dst, eid)
    return out


def _columns(feats: Any, where: Path, field: str, count: int) -> dict[str, np.ndarray]:
    out = {}
    for name, value in _dict(feats, where, field).items():
        if value is None:  # PyG writes x=None for a graph without x
            continue
        key = f"{field}.{name}"
        try:
            check_path_name(name, field=key, path=where)
        except ValidationError as exc:
            raise FormatError(str(exc), path=str(where), field=key) from None
        arr = tensor_array(value, where, key)
        if len(arr) != count:
            raise fail(where, key, f"has {len(arr)} rows but global_id names {count}")
        out[name] = arr
    return out


def read_node_feats(obj: Any, meta: PyGMeta, where: Path, num_nodes: dict[str, int]
                    ) -> tuple[dict[str, Rows], dict[str, np.ndarray]]:
    """``node_feats.pt``: feature rows and PyG's whole-type ``time`` per node type."""
    obj = _dict(obj, where, "node_feats.pt")
    entries = _by_type(obj, where, meta.ntypes) if meta.is_hetero \
        else {meta.ntypes[0]: obj}
    offset, rows, times = 0, {}, {}
    for t in meta.ntypes:
        entry = _dict(entries.get(t, {}), where, t)
        pre = f"{t}." if meta.is_hetero else ""
        if "global_id" in entry:
            ids = id_array(entry["global_id"], where, pre + "global_id",
                           offset + num_nodes[t]) - offset
            if (ids < 0).any() or ("id" in entry and not np.array_equal(
                    id_array(entry["id"], where, pre + "id", num_nodes[t]), ids)):
                raise fail(where, pre + "global_id", f"is not node_offset + id of type {t!r}")
            rows[t] = Rows(ids, _columns(entry.get("feats", {}), where, pre + "feats",
                                         len(ids)))
        if entry.get("time") is not None:
            time = tensor_array(entry["time"], where, pre + "time")
            if len(time) != num_nodes[t]:
                raise fail(where, pre + "time", f"has {len(time)} rows; PyG writes one per "
                            f"node of the type ({num_nodes[t]})")
            times[t] = time
        offset += num_nodes[t]
    return rows, times


def read_edge_feats(obj: Any, meta: PyGMeta, where: Path,
                    edges: dict[EdgeType, tuple[IdArray, IdArray, IdArray]],
                    num_edges: dict[EdgeType, int]) -> dict[EdgeType, Rows]:
    """``edge_feats.pt``: feature rows per edge type (``edge_time`` as a column); rows
    without ``global_id`` are ``graph.pt``'s edges, in its order."""
    obj = _dict(obj, where, "edge_feats.pt")
    entries = _by_type(obj, where, meta.etypes) if meta.is_hetero \
        else ({meta.etypes[0]: obj} if obj else {})
    out = {}
    for et, entry in entries.items():
        entry = _dict(entry, where, type_file_name(et))
        pre = f"{type_file_name(et)}." if meta.is_hetero else ""
        ids = id_array(entry["global_id"], where, pre + "global_id", num_edges[et]) \
            if "global_id" in entry else edges[et][2]
        cols = _columns(entry.get("feats", {}), where, pre + "feats", len(ids))
        if entry.get("edge_time") is not None:
            if "edge_time" in cols:
                raise fail(where, pre + "edge_time", "is given twice (in feats and as PyG's "
                            "edge time)")
            cols["edge_time"] = tensor_array(entry["edge_time"], where, pre + "edge_time")
            if len(cols["edge_time"]) != len(ids):
                raise fail(where, pre + "edge_time", f"has {len(cols['edge_time'])} rows "
                            f"for {len(ids)} edges")
        if cols:
            out[et] = Rows(ids, cols)
    return out
