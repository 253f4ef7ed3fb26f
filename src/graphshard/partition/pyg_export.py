"""Our partitions in PyG's partition layout, as NumPy arrays (no ``torch`` needed here).

PyG's folder (:mod:`graphshard.partition.pyg_layout` describes it) names nodes and edges by
their *original* IDs: a part's ``graph.pt`` holds its inner edges (the in-edges of its
inner nodes, as ours) by original per-type source, destination and edge ID, sorted by
destination; ``node_feats.pt`` / ``edge_feats.pt`` its inner nodes' and edges' features with
their original IDs.  So the export maps our ``orig_id`` (type offset + per-type original
ID) to per-type IDs.  A 1-D node feature ``time`` becomes PyG's node time (every node's,
repeated in every part, as PyG writes it) and a 1-D edge feature ``edge_time`` PyG's edge
time; all other features go under ``feats`` with their names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import FormatError, ValidationError
from ..graph import DEFAULT_ETYPE, DEFAULT_NTYPE
from ..storage.files import check_path_name
from ..typing import EdgeType, IdArray
from .config import PartitionConfig
from .dense import check_dense, dense_copy
from .files import Partition
from .pyg_layout import PyGMeta, Rows, type_file_name

__all__ = ["ExportPart", "check_orig_cover", "export_part", "node_times", "part_files",
           "pyg_meta"]


def pyg_meta(cfg: PartitionConfig) -> PyGMeta:
    """PyG's ``META.json`` contents for our partitions: homogeneous (a ``Data``) when the
    graph has graphshard's default types only, else heterogeneous with our type order.

    Raises:
        ValidationError: a type name that cannot be a PyG map file name.

    Example:
        >>> cfg = PartitionConfig("g", 2, {"_N": [[0, 2], [2, 3]]},
        ...                       {"_N:_E:_N": [[0, 1], [1, 2]]}, ({}, {}))
        >>> meta = pyg_meta(cfg)
        >>> meta.is_hetero, meta.map_file("node", "_N"), meta.to_json([3])["node_types"]
        (False, 'node_map.pt', None)
    """
    etypes = cfg.canonical_etypes()
    hetero = cfg.ntypes != [DEFAULT_NTYPE] or etypes not in ([], [DEFAULT_ETYPE])
    if hetero:
        for i, t in enumerate(cfg.ntypes):
            check_path_name(t, field=f"ntypes[{i}]", path=cfg.path)
        for i, et in enumerate(etypes):
            check_path_name(type_file_name(et), field=f"etypes[{i}]", path=cfg.path)
    return PyGMeta(cfg.num_parts, hetero, cfg.ntypes, etypes if hetero else [DEFAULT_ETYPE])


@dataclass(frozen=True)
class ExportPart:
    """One of our parts in PyG's IDs.

    Attributes:
        edges: Per edge type, the inner edges' original per-type ``(row, col, edge ID)``,
            sorted by ``col`` (PyG's ``is_sorted``).
        node_rows: Inner nodes (original per-type IDs) and their features, per node type.
        edge_rows: Inner edges' features per edge type, rows in ``edges``' order.
    """

    edges: dict[EdgeType, tuple[IdArray, IdArray, IdArray]]
    node_rows: dict[str, Rows]
    edge_rows: dict[EdgeType, Rows]


def _offsets(counts: list[int]) -> IdArray:
    return np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)


def _per_type(part: Partition, kind: str, counts: list[int], names: list[str]) -> IdArray:
    """Original per-type ID of every local node or edge (``orig_id`` - type offset)."""
    data = part.graph.ndata if kind == "node" else part.graph.edata
    types = np.asarray(data["_TYPE"], np.int64)
    ids = np.asarray(data["orig_id"], np.int64) - _offsets(counts)[types]
    bad = np.flatnonzero((ids < 0) | (ids >= np.asarray(counts, np.int64)[types]))
    if bad.size:
        raise FormatError(f"part {part.part_id}: {kind} orig_id "
                          f"{int(np.asarray(data['orig_id'])[bad[0]])} is not an original "
                          f"ID of type {names[types[bad[0]]]!r}; PyG's folder needs "
                          "orig_id = type offset + per-type ID, as partition_graph writes it",
                          field=f"{kind}/orig_id")
    return ids


def _inner(data: Any, flag: str) -> IdArray:
    """Local indices of the inner nodes or edges, in global (shuffled) ID order: the order
    of their feature rows."""
    idx = np.flatnonzero(np.asarray(data[flag]).astype(bool))
    return idx[np.argsort(np.asarray(data["_ID"])[idx], kind="stable")]


def _columns(part_id: int, feats: dict[str, Any], prefix: str, rows: int,
             order: IdArray | None, features: bool) -> dict[str, np.ndarray]:
    out = {}
    for key, col in feats.items():
        owner, _, name = key.rpartition("/")
        if owner != prefix:
            continue
        if len(col) != rows:
            raise FormatError(f"part {part_id}: feature {key!r} has {len(col)} rows for "
                              f"{rows} inner items", field=key)
        if features:
            arr = dense_copy(key, col, target="PyG")
            out[name] = arr if order is None else arr[order]
        else:
            check_dense(key, col, target="PyG")
    return out


def export_part(part: Partition, meta: PyGMeta, num_nodes: list[int], num_edges: list[int],
                *, features: bool = True) -> ExportPart:
    """Part ``part`` in PyG's IDs (``num_nodes``/``num_edges``: per type, in our type
    order; ``features=False``: the IDs only, features checked but not copied).

    Raises:
        FormatError: an ``orig_id`` that is no original ID of its type, or a feature with
            another row count than the part's inner items.
        ValidationError: a feature PyG's files cannot hold (Ragged, sparse, non-numeric).
    """
    nd, ed = part.graph.ndata, part.graph.edata
    local = _per_type(part, "node", num_nodes, meta.ntypes)
    inner, ntype = _inner(nd, "inner_node"), np.asarray(nd["_TYPE"], np.int64)
    node_rows = {}
    for i, t in enumerate(meta.ntypes):
        sel = inner[ntype[inner] == i]
        node_rows[t] = Rows(local[sel], _columns(part.part_id, part.node_feats, t, len(sel), None,
                                                 features))
    src, dst = part.graph.edges()
    eids = _per_type(part, "edge", num_edges, [":".join(e) for e in meta.etypes])
    einner, etype = _inner(ed, "inner_edge"), np.asarray(ed["_TYPE"], np.int64)
    edges, edge_rows = {}, {}
    for i, et in enumerate(meta.etypes):
        sel = einner[etype[einner] == i]
        row, col = local[src[sel]], local[dst[sel]]
        perm = np.argsort(col, kind="stable")
        edges[et] = (row[perm], col[perm], eids[sel][perm])
        cols = _columns(part.part_id, part.edge_feats, ":".join(et), len(sel), perm, features)
        if cols:
            edge_rows[et] = Rows(eids[sel][perm], cols)
    return ExportPart(edges, node_rows, edge_rows)


def _is_time(name: str, col: np.ndarray, time_name: str) -> bool:
    return name == time_name and col.ndim == 1


def node_times(part: ExportPart, meta: PyGMeta, num_nodes: list[int],
               into: dict[str, np.ndarray]) -> None:
    """Add the part's rows of 1-D node feature ``time`` to ``into`` (per node type, a value
    for every node: PyG's node time)."""
    for i, t in enumerate(meta.ntypes):
        rows = part.node_rows[t]
        col = rows.columns.get("time")
        if col is not None and _is_time("time", col, "time"):
            if t not in into:
                into[t] = np.zeros(num_nodes[i], dtype=col.dtype)
            into[t][rows.ids] = col


def part_files(part: ExportPart, meta: PyGMeta, num_nodes: list[int], num_edges: list[int],
               node_time: dict[str, np.ndarray]) -> dict[str, Any]:
    """What ``part_<i>/`` holds, as PyG's Partitioner writes it, with NumPy arrays for
    tensors: ``{"graph.pt": ..., "node_feats.pt": ..., "edge_feats.pt": ...}``.

    Example:
        >>> meta = PyGMeta(2, False, ["_N"], [("_N", "_E", "_N")])
        >>> ids = np.array([1, 0])
        >>> part = ExportPart({("_N", "_E", "_N"): (ids, ids, ids)},
        ...                   {"_N": Rows(ids, {"x": np.ones((2, 1))})}, {})
        >>> files = part_files(part, meta, [3], [2], {})
        >>> files["graph.pt"]["size"], sorted(files["node_feats.pt"]), files["edge_feats.pt"]
        ((3, 3), ['feats', 'global_id'], {})
    """
    noff, eoff = _offsets(num_nodes), _offsets(num_edges)
    graph: dict[Any, Any] = {}
    for i, et in enumerate(meta.etypes):
        row, col, eid = part.edges[et]
        size = (int(num_nodes[meta.ntypes.index(et[0])]),
                int(num_nodes[meta.ntypes.index(et[2])]))
        graph[et] = {"edge_id": eid + eoff[i], "row": row, "col": col, "size": size}
    nfeat: dict[Any, Any] = {}
    for i, t in enumerate(meta.ntypes):
        rows = part.node_rows[t]
        entry: dict[str, Any] = {"global_id": rows.ids + noff[i]}
        if meta.is_hetero:
            entry["id"] = rows.ids
        entry["feats"] = {k: v for k, v in rows.columns.items()
                          if not (t in node_time and _is_time(k, v, "time"))}
        if t in node_time:
            entry["time"] = node_time[t]
        nfeat[t] = entry
    efeat: dict[Any, Any] = {}
    for et, rows in part.edge_rows.items():
        feats = {k: v for k, v in rows.columns.items() if not _is_time(k, v, "edge_time")}
        entry = {"global_id": rows.ids, "feats": feats}
        if "edge_time" in rows.columns and "edge_time" not in feats:
            entry["edge_time"] = rows.columns["edge_time"]
        efeat[et] = entry
    if meta.is_hetero:
        return {"graph.pt": graph, "node_feats.pt": nfeat, "edge_feats.pt": efeat}
    only = meta.etypes[0]
    return {"graph.pt": graph[only], "node_feats.pt": nfeat[meta.ntypes[0]],
            "edge_feats.pt": efeat.get(only, {})}


def check_orig_cover(counts: list[int], seen: list[IdArray], names: list[str], kind: str
                     ) -> None:
    """Every original ID of every type is some part's inner node (edge) exactly once.

    Raises:
        ValidationError: naming the type and the first ID given another number of times.
    """
    for name, n, hits in zip(names, counts, seen, strict=True):
        bad = np.flatnonzero(hits != 1)
        if bad.size or len(hits) != n:
            raise ValidationError(f"{kind} {bad[0] if bad.size else n} of type {name!r} is an "
                                  f"inner {kind} of {hits[bad[0]] if bad.size else 0} parts; "
                                  "PyG's maps need exactly one (orig_id must be a bijection)",
                                  field=f"{kind}/orig_id")
