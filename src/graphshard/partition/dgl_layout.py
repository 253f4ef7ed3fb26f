"""DGL's partition layout <-> ours, as NumPy arrays (no ``dgl`` needed here).

DGL 2.1's ``partition_graph`` writes ``<graph_name>.json`` (the keys of DESIGN §4 without
our ``"graphshard"`` key; ``ntypes``/``etypes`` map names to type IDs) and per part
``graph.dgl`` (a homogeneous ``DGLGraph``: node data ``_ID`` int64, ``inner_node`` uint8,
``part_id`` int64, and ``_TYPE`` int16 on graphs with several types; edge data ``_ID``,
``inner_edge`` uint8, ``_TYPE`` int32), ``node_feat.dgl`` and ``edge_feat.dgl`` (features
keyed ``"<ntype>/<name>"`` and ``"<src:rel:dst>/<name>"``, rows in global ID order, as ours).
DGL does not order a part's local nodes and edges; ours puts inner nodes (edges) first in
global ID order.  This module holds what the two layouts differ in:
:func:`dgl_config` (our config -> DGL's JSON), :func:`config_from_dgl` (DGL's JSON -> type
names and ranges, checked), :func:`to_dgl_part` and :func:`from_dgl_part` (one part's
arrays, reordered).  :mod:`graphshard.partition.dgl_io` reads and writes the files with
``dgl``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FormatError
from ..partition_book import RangePartitionBook
from ..typing import IdArray
from .config import PartitionConfig
from .dense import dense_copy
from .file_checks import check_features, check_part_arrays
from .files import Partition
from .local_graphs import LocalGraph

__all__ = ["DGLConfig", "DGLPart", "ImportedPart", "config_from_dgl",
           "dgl_config", "from_dgl_part", "new_to_orig", "to_dgl_part"]

#: The files of one part in DGL's layout, relative to the config's folder.
DGL_FILES = {"node_feats": "part{p}/node_feat.dgl", "edge_feats": "part{p}/edge_feat.dgl",
             "part_graph": "part{p}/graph.dgl"}


@dataclass(frozen=True)
class DGLPart:
    """One part as DGL's ``graph.dgl`` / ``node_feat.dgl`` / ``edge_feat.dgl`` hold it.

    Attributes:
        src: int64 local source of each local edge.
        dst: int64 local destination of each local edge.
        ndata: Node data by DGL's names (``_ID``, ``inner_node``, ``part_id``, ``_TYPE``).
        edata: Edge data (``_ID``, ``inner_edge``, ``_TYPE``).
        node_feats: Inner-node features ``"<ntype>/<name>"`` (dense arrays).
        edge_feats: Inner-edge features ``"<src:rel:dst>/<name>"``.
    """

    src: IdArray
    dst: IdArray
    ndata: dict[str, np.ndarray]
    edata: dict[str, np.ndarray]
    node_feats: dict[str, np.ndarray]
    edge_feats: dict[str, np.ndarray]

    def __repr__(self) -> str:
        return (f"DGLPart(num_nodes={len(self.ndata['_ID'])}, num_edges={len(self.src)}, "
                f"node_feats={sorted(self.node_feats)}, edge_feats={sorted(self.edge_feats)})")


@dataclass(frozen=True)
class DGLConfig:
    """What our config needs from DGL's JSON, checked.

    Attributes:
        graph_name: DGL's ``graph_name``.
        ntypes: Node types in type-ID order.
        etypes: Edge types ``"src:rel:dst"`` in type-ID order.
        node_ranges: int64 ``(ntypes, num_parts, 2)``.
        edge_ranges: int64 ``(etypes, num_parts, 2)``.
        halo_hops: DGL's ``halo_hops`` (1 when absent).
        part_method: DGL's ``part_method`` (``"dgl"`` when absent).
        parts: Per part, DGL's ``part-<i>`` entry (paths relative to the JSON).
    """

    graph_name: str
    ntypes: list[str]
    etypes: list[str]
    node_ranges: np.ndarray
    edge_ranges: np.ndarray
    halo_hops: int
    part_method: str
    parts: list[dict[str, str]]

    @property
    def num_parts(self) -> int:
        """Number of partitions."""
        return int(self.node_ranges.shape[1])

    def book(self, part_id: int = -1) -> RangePartitionBook:
        """The partition book of these ranges."""
        return RangePartitionBook(part_id, {t: self.node_ranges[i].tolist()
                                            for i, t in enumerate(self.ntypes)},
                                  {e: self.edge_ranges[i].tolist()
                                   for i, e in enumerate(self.etypes)})


def dgl_config(cfg: PartitionConfig, *, source: str) -> dict[str, Any]:
    """DGL's ``<graph_name>.json`` for the parts of ``cfg`` written in DGL's layout
    (:data:`DGL_FILES`); ``source`` names what it was exported from (kept under
    ``"graphshard_export"``, which DGL ignores and which marks the folder as an export of
    ours; not ``"graphshard"``, which marks our own configs).

    Example:
        >>> import tempfile, graphshard as gs
        >>> from graphshard.partition import read_config
        >>> out = tempfile.mkdtemp()
        >>> gs.partition_graph(gs.graph(([0, 1, 2], [1, 2, 0])), "tri", 2, out,
        ...                    part_method="hash")
        >>> d = dgl_config(read_config(f"{out}/tri.json"), source="tri.json")
        >>> d["node_map"], d["etypes"], d["part-1"]["part_graph"]
        ({'_N': [[0, 2], [2, 3]]}, {'_N:_E:_N': 0}, 'part1/graph.dgl')
    """
    out: dict[str, Any] = {
        "graph_name": cfg.graph_name,
        "part_method": cfg.part_method or "graphshard",
        "num_parts": cfg.num_parts,
        "halo_hops": cfg.halo_hops if cfg.halo_hops is not None else 1,
        "node_map": cfg.node_map,
        "edge_map": cfg.edge_map,
        "ntypes": {t: i for i, t in enumerate(cfg.ntypes)},
        "etypes": {e: i for i, e in enumerate(cfg.etypes)},
        "num_nodes": sum(cfg.type_sizes("node").values()),
        "num_edges": sum(cfg.type_sizes("edge").values()),
    }
    if cfg.num_trainers_per_machine is not None:
        out["num_trainers_per_machine"] = cfg.num_trainers_per_machine
    for p in range(cfg.num_parts):
        out[f"part-{p}"] = {k: v.format(p=p) for k, v in DGL_FILES.items()}
    out["graphshard_export"] = {"format": "dgl", "source": source}
    return out


def _fail(path: Path, field: str, message: str) -> FormatError:
    return FormatError(f"{path}: field {field!r}: {message}", path=str(path), field=field)


def _type_order(path: Path, meta: dict, key: str, names: list[str]) -> list[str]:
    """Type names by DGL's type IDs (``meta[key]``: name -> ID, 0..n-1)."""
    ids = meta.get(key)
    if ids is None:  # DGL's homogeneous default
        return names
    if not isinstance(ids, dict) or sorted(ids) != sorted(names) or sorted(
            v for v in ids.values() if isinstance(v, int)) != list(range(len(names))):
        raise _fail(path, key, f"must map the types {sorted(names)} to the IDs "
                    f"0..{len(names) - 1}, got {str(ids)[:200]}")
    return sorted(names, key=lambda t: ids[t])


def _ranges(path: Path, meta: dict, key: str, order: list[str], num_parts: int) -> np.ndarray:
    mapping = meta[key]
    try:
        arr = np.array([mapping[t] for t in order], dtype=np.int64).reshape(
            len(order), num_parts, 2)
    except (ValueError, TypeError, OverflowError) as exc:
        raise _fail(path, key, f"each type needs {num_parts} [start, end] ranges ({exc})"
                    ) from None
    flat = arr.transpose(1, 0, 2).reshape(-1)  # part-major: DGL's global ID order
    if flat.size and (flat[0] != 0 or (flat[2::2] != flat[1:-1:2]).any() or
                      (arr[..., 1] < arr[..., 0]).any()):
        raise _fail(path, key, "ranges must start at 0 and be contiguous and ascending, "
                    "part by part and type by type within a part")
    return arr


def config_from_dgl(meta: Any, path: Path) -> DGLConfig:
    """Check DGL's partition JSON (parsed) and return what an import needs.

    Raises:
        FormatError: a missing or malformed key, named with the file; a node_map given as
            a file name (DGL's old non-range books) is refused.

    Example:
        >>> from pathlib import Path
        >>> meta = {"graph_name": "g", "num_parts": 2, "node_map": {"_N": [[0, 2], [2, 3]]},
        ...         "edge_map": {"_N:_E:_N": [[0, 1], [1, 3]]},
        ...         "part-0": {}, "part-1": {}}
        >>> c = config_from_dgl(meta, Path("g.json"))
        >>> c.ntypes, c.etypes, c.node_ranges[:, :, 1].tolist()
        (['_N'], ['_N:_E:_N'], [[2, 3]])
    """
    if not isinstance(meta, dict):
        raise _fail(path, "graph_name", "the file must hold a JSON object")
    for key in ("graph_name", "num_parts", "node_map", "edge_map"):
        if key not in meta:
            raise _fail(path, key, "missing (not a DGL partition config?)")
    num_parts = meta["num_parts"]
    if not isinstance(num_parts, int) or isinstance(num_parts, bool) or num_parts < 1:
        raise _fail(path, "num_parts", f"must be an integer >= 1, got {num_parts!r}")
    for key in ("node_map", "edge_map"):
        if not isinstance(meta[key], dict):
            raise _fail(path, key, "must map each type to its [start, end] range per part "
                        "(DGL's range partition book); other books are not supported")
    ntypes = _type_order(path, meta, "ntypes", list(meta["node_map"]))
    etypes = _type_order(path, meta, "etypes", list(meta["edge_map"]))
    for e in etypes:
        s, _, d = [*e.split(":"), "", ""][:3]
        if e.count(":") != 2 or s not in ntypes or d not in ntypes:
            raise _fail(path, "etypes", f"{e!r} is not 'src:rel:dst' over the node types "
                        f"{ntypes} (DGL before 1.0 named relations only: re-save with DGL's "
                        "tools/change_etype_to_canonical_etype.py)")
    parts = []
    for p in range(num_parts):
        entry = meta.get(f"part-{p}")
        if not isinstance(entry, dict):
            raise _fail(path, f"part-{p}", "missing; each part needs its file entry")
        parts.append({k: v for k, v in entry.items() if isinstance(v, str)})
    hops = meta.get("halo_hops", 1)
    return DGLConfig(str(meta["graph_name"]), ntypes, etypes,
                     _ranges(path, meta, "node_map", ntypes, num_parts),
                     _ranges(path, meta, "edge_map", etypes, num_parts),
                     hops if isinstance(hops, int) and hops >= 1 else 1,
                     str(meta.get("part_method") or "dgl"), parts)


def to_dgl_part(part: Partition, *, typed: bool, features: bool = True) -> DGLPart:
    """One of our partitions in DGL's layout (same local order; ``typed``: write ``_TYPE``,
    as DGL does for graphs with several node or edge types; ``features=False``: the
    structure alone, no feature copied).

    Raises:
        ValidationError: a Ragged or sparse feature, or one of another dtype.
    """
    nd, ed = part.graph.ndata, part.graph.edata
    src, dst = part.graph.edges()
    # copies: the loaded arrays are read-only memory maps, torch wants writable memory
    ndata: dict[str, np.ndarray] = {
        "_ID": np.array(nd["_ID"], np.int64),
        "inner_node": np.array(nd["inner_node"], np.uint8),
        "part_id": np.array(nd["part_id"], np.int64)}
    edata: dict[str, np.ndarray] = {
        "_ID": np.array(ed["_ID"], np.int64),
        "inner_edge": np.array(ed["inner_edge"], np.uint8)}
    if typed:
        ndata["_TYPE"] = np.array(nd["_TYPE"], np.int16)
        edata["_TYPE"] = np.array(ed["_TYPE"], np.int32)
    return DGLPart(np.array(src, np.int64), np.array(dst, np.int64), ndata, edata,
                   {k: dense_copy(k, v) for k, v in part.node_feats.items()} if features else {},
                   {k: dense_copy(k, v) for k, v in part.edge_feats.items()} if features else {})


@dataclass(frozen=True)
class ImportedPart:
    """One DGL part reordered into our layout (the arguments of ``files.write_part``)."""

    local: LocalGraph
    node_part: IdArray
    node_type: np.ndarray
    edge_type: np.ndarray
    node_feats: dict[str, np.ndarray]
    edge_feats: dict[str, np.ndarray]


def _inner_first(ids: IdArray, inner: np.ndarray) -> IdArray:
    """Permutation putting the inner entries first in ID order, the others after in their
    order."""
    return np.lexsort((np.where(inner, ids, 0), np.arange(len(ids)) * ~inner, ~inner))


def from_dgl_part(part: DGLPart, cfg: DGLConfig, part_id: int, *, where: Path) -> ImportedPart:
    """A DGL part in our layout: inner nodes first in global ID order, then the halo nodes
    in DGL's order; inner edges first in global ID order, then the others; ``_TYPE`` from
    the partition book when DGL left it out (one node and edge type).

    Raises:
        FormatError: the part disagrees with the book (inner IDs not the part's range,
            wrong types or owners, local IDs out of range) or its features with the
            config, naming ``where`` and the array.

    Example:
        >>> from pathlib import Path
        >>> meta = {"graph_name": "g", "num_parts": 2, "node_map": {"_N": [[0, 2], [2, 3]]},
        ...         "edge_map": {"_N:_E:_N": [[0, 1], [1, 3]]}, "part-0": {}, "part-1": {}}
        >>> cfg = config_from_dgl(meta, Path("g.json"))
        >>> dgl = DGLPart(np.array([0, 2, 1]), np.array([1, 1, 0]),
        ...               {"_ID": np.array([1, 2, 0]), "inner_node": np.array([0, 1, 0]),
        ...                "part_id": np.array([0, 1, 0])},
        ...               {"_ID": np.array([2, 1, 0]), "inner_edge": np.array([1, 1, 0])},
        ...               {"_N/x": np.array([5.0])}, {})
        >>> ours = from_dgl_part(dgl, cfg, 1, where=Path("part1/graph.dgl"))
        >>> ours.local.nodes.tolist(), ours.local.edges.tolist(), ours.local.src.tolist()
        ([2, 1, 0], [1, 2, 0], [2, 1, 0])
    """
    nd, ed = part.ndata, part.edata
    for key, data in (("_ID", nd), ("inner_node", nd), ("part_id", nd), ("_ID", ed),
                      ("inner_edge", ed)):
        if key not in data:
            kind = "node" if data is nd else "edge"
            raise FormatError(f"{where}: {kind} data {key!r} is missing (not a DGL "
                              "partition?)", path=str(where), field=key)
    for data, count, kind in ((nd, len(nd["_ID"]), "node"), (ed, len(part.src), "edge")):
        for key, col in data.items():
            if np.ndim(col) != 1 or len(col) != count:
                raise FormatError(f"{where}: {kind} data {key!r} has shape {np.shape(col)}; "
                                  f"expected ({count},), one per local {kind}", path=str(where),
                                  field=key)
    if len(part.dst) != len(part.src):
        raise FormatError(f"{where}: {len(part.src)} edge sources but {len(part.dst)} "
                          "destinations", path=str(where), field="dst")
    ids = np.asarray(nd["_ID"], np.int64)
    inner = np.asarray(nd["inner_node"]).astype(bool)
    eids = np.asarray(ed["_ID"], np.int64)
    einner = np.asarray(ed["inner_edge"]).astype(bool)
    book = cfg.book(part_id)
    num_nodes, num_edges = len(ids), len(eids)
    for kind, arr, ranges in (("node", ids, cfg.node_ranges), ("edge", eids, cfg.edge_ranges)):
        total = int(ranges[:, :, 1].max(initial=0))
        bad = np.flatnonzero((arr < 0) | (arr >= total))
        if bad.size:  # before the book maps them to types
            raise FormatError(f"{where}: {kind}/_ID [{bad[0]}] = {arr[bad[0]]} is not an ID in "
                              f"[0, {total})", path=str(where), field=f"{kind}/_ID")
    node_type = np.asarray(nd["_TYPE"], np.int64) if "_TYPE" in nd else \
        (book.map_to_per_ntype(ids)[0] if num_nodes else np.zeros(0, np.int64))
    edge_type = np.asarray(ed["_TYPE"], np.int64) if "_TYPE" in ed else \
        (book.map_to_per_etype(eids)[0] if num_edges else np.zeros(0, np.int64))
    src, dst = np.asarray(part.src, np.int64), np.asarray(part.dst, np.int64)
    nperm, eperm = _inner_first(ids, inner), _inner_first(eids, einner)
    new_of_old = np.empty(num_nodes, np.int64)
    new_of_old[nperm] = np.arange(num_nodes)
    tensors = {"src": src, "dst": dst, "node/_ID": ids, "node/inner_node": inner,
               "node/part_id": np.asarray(nd["part_id"], np.int64), "node/orig_id": ids,
               "node/_TYPE": node_type, "edge/_ID": eids, "edge/inner_edge": einner,
               "edge/orig_id": eids, "edge/_TYPE": edge_type}
    # checked before reordering: the lengths, local IDs and types DGL wrote
    check_part_arrays(where, {k: v[nperm] if k.startswith("node/") else
                              v[eperm] if k.startswith("edge/") else v
                              for k, v in tensors.items()}, book, part_id)
    local = LocalGraph(part_id, ids[nperm], int(inner.sum()), eids[eperm], int(einner.sum()),
                       new_of_old[src[eperm]], new_of_old[dst[eperm]],
                       (int(num_nodes - inner.sum()),))
    node_map = {t: cfg.node_ranges[i].tolist() for i, t in enumerate(cfg.ntypes)}
    edge_map = {e: cfg.edge_ranges[i].tolist() for i, e in enumerate(cfg.etypes)}
    check_features(where.parent / "node_feat.dgl", part.node_feats, node_map, part_id, "node")
    check_features(where.parent / "edge_feat.dgl", part.edge_feats, edge_map, part_id, "edge")
    return ImportedPart(local, tensors["node/part_id"][nperm], node_type[nperm],
                        edge_type[eperm], part.node_feats, part.edge_feats)


def new_to_orig(cfg: DGLConfig, per_part: list[dict[str, np.ndarray]], kind: str, *,
                where: Path) -> IdArray:
    """Original homogeneous ID of every new (shuffled) ID, from DGL's ``orig_nids.dgl`` /
    ``orig_eids.dgl`` of each part (``{type: original per-type IDs of the part's inner
    nodes/edges, in new-ID order}``, as DGL's pipeline writes them with
    ``--save-orig-nids`` / ``--save-orig-eids``): type offset (types in ID order) + per-type
    ID.

    Raises:
        FormatError: a type missing, a length other than the part's range, an ID outside
            its type, or an ID given twice, naming ``where`` (the part folder) and the type.

    Example:
        >>> meta = {"graph_name": "g", "num_parts": 2, "node_map": {"a": [[0, 1], [2, 3]],
        ...         "b": [[1, 2], [3, 4]]}, "edge_map": {}, "part-0": {}, "part-1": {}}
        >>> cfg = config_from_dgl(meta, Path("g.json"))
        >>> parts = [{"a": np.array([1]), "b": np.array([0])},
        ...          {"a": np.array([0]), "b": np.array([1])}]
        >>> new_to_orig(cfg, parts, "node", where=Path(".")).tolist()
        [1, 2, 0, 3]
    """
    types = cfg.ntypes if kind == "node" else cfg.etypes
    ranges = cfg.node_ranges if kind == "node" else cfg.edge_ranges
    sizes = (ranges[:, :, 1] - ranges[:, :, 0]).sum(axis=1)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    out = np.empty(int(offsets[-1]), dtype=np.int64)
    file = "orig_nids.dgl" if kind == "node" else "orig_eids.dgl"
    for p, ids_of in enumerate(per_part):
        for t, name in enumerate(types):
            lo, hi = (int(x) for x in ranges[t, p])
            ids = np.asarray(ids_of.get(name, np.zeros(0)))
            problem = None
            if name not in ids_of or ids.shape != (hi - lo,) or ids.dtype.kind not in "iu":
                problem = f"needs {hi - lo} integer IDs, got {ids.dtype} of shape {ids.shape}"
            elif ids.size and (ids.min() < 0 or ids.max() >= sizes[t]):
                problem = f"has an ID outside [0, {sizes[t]})"
            if problem:
                path = where / f"part{p}" / file
                raise FormatError(f"{path}: {kind} type {name!r} {problem}", path=str(path),
                                  field=name)
            out[lo:hi] = offsets[t] + ids
    if len(np.unique(out)) != len(out):
        raise FormatError(f"{where}: the parts' {file} files give one original {kind} ID to "
                          f"several {kind}s", path=str(where), field=file)
    return out
