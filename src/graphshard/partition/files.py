"""The on-disk partition format: writing part files, loading a partition back.

Layout (DESIGN §4)::

    out/<graph_name>.json          DGL's keys + our own under "graphshard"
    out/part<i>/graph.safetensors  local structure and node/edge data
    out/part<i>/node_feats.safetensors   inner-node features "<ntype>/<name>"
    out/part<i>/edge_feats.safetensors   inner-edge features "<src:rel:dst>/<name>"

Part files are written first and the JSON last (:mod:`graphshard.partition.config`), with
the size and SHA-256 of every file: a directory holding the JSON is complete, and loaders
check the files against it.
Ragged features are stored as two tensors ``<key>/values`` and ``<key>/offsets`` and listed
in the file's safetensors metadata under ``"ragged"``; sparse features
(:class:`~graphshard.sparse.SparseRows`) as three tensors ``<key>/indptr``,
``<key>/indices`` and ``<key>/values``, listed with their column count under ``"sparse"``
(``{"<key>": num_cols}``).  Feature names hold no ``/``, so these tensor names are never
the key of another feature.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FormatError
from ..graph import Graph, graph
from ..partition_book import RangePartitionBook
from ..ragged import Ragged
from ..sparse import SparseRows
from ..storage.tensorfile import load_tensors, save_tensors
from ..typing import EdgeType
from .config import FORMAT_VERSION, ConfigLike, PartitionConfig, as_config
from .file_checks import check_features, check_part_arrays
from .local_graphs import LocalGraph

__all__ = [
    "Partition",
    "load_partition",
    "load_partition_book",
    "load_partition_data",
    "load_partition_feats",
    "write_features",
    "write_local_graph",
    "write_part",
]

NODE_KEYS = ("_ID", "inner_node", "part_id", "orig_id", "_TYPE")
EDGE_KEYS = ("_ID", "inner_edge", "orig_id", "_TYPE")


def write_part(out_dir: Path, part_id: int, local: LocalGraph, *, node_part: np.ndarray,
               node_orig: np.ndarray, node_type: np.ndarray, edge_orig: np.ndarray,
               edge_type: np.ndarray, node_feats: dict[str, Any], edge_feats: dict[str, Any],
               orig_ids: dict[str, np.ndarray] | None = None
               ) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """Write one part's files; returns its config entry and the files' size and SHA-256.

    The per-local-node arrays (``node_part``, ``node_orig``, ``node_type``) and per-local-
    edge arrays (``edge_orig``, ``edge_type``) follow ``local``'s order.  Big files go
    around the page cache (:mod:`graphshard.storage.direct`).
    """
    node_data = {
        "_ID": local.nodes,
        "inner_node": _prefix_mask(len(local.nodes), local.num_inner_nodes),
        "part_id": node_part,
        "orig_id": node_orig,
        "_TYPE": node_type,
    }
    edge_data = {
        "_ID": local.edges,
        "inner_edge": _prefix_mask(len(local.edges), local.num_inner_edges),
        "orig_id": edge_orig,
        "_TYPE": edge_type,
    }
    p = part_id
    rel = {"part_graph": f"part{p}/graph.safetensors",
           "node_feats": f"part{p}/node_feats.safetensors",
           "edge_feats": f"part{p}/edge_feats.safetensors"}
    digests = {
        rel["part_graph"]: write_local_graph(out_dir / rel["part_graph"], local.src, local.dst,
                                             node_data, edge_data),
        rel["node_feats"]: write_features(out_dir / rel["node_feats"], node_feats),
        rel["edge_feats"]: write_features(out_dir / rel["edge_feats"], edge_feats),
    }
    if orig_ids is not None:
        rel["orig_ids"] = f"part{p}/orig_ids.safetensors"
        digests[rel["orig_ids"]] = write_features(out_dir / rel["orig_ids"], orig_ids)
    records = {path: {"bytes": (out_dir / path).stat().st_size, "sha256": digest}
               for path, digest in digests.items()}
    return rel, records


def _prefix_mask(n: int, k: int) -> np.ndarray:
    """A bool array of ``n`` whose first ``k`` entries are true (no int64 scratch)."""
    mask = np.zeros(n, dtype=bool)
    mask[:k] = True
    return mask


def write_local_graph(path: Path, src: np.ndarray, dst: np.ndarray,
                      node_data: dict[str, np.ndarray], edge_data: dict[str, np.ndarray]) -> str:
    """Write one part's structure (local ``src``/``dst``) and its data; returns the
    SHA-256."""
    tensors = {"src": src, "dst": dst}
    tensors.update({f"node/{k}": v for k, v in node_data.items()})
    tensors.update({f"edge/{k}": v for k, v in edge_data.items()})
    return save_tensors(path, tensors, {"format": "graphshard-part",
                                        "version": str(FORMAT_VERSION)})


def write_features(path: Path, columns: dict[str, Any]) -> str:
    """Write feature columns (arrays, :class:`Ragged` or :class:`SparseRows`) to one file;
    returns the SHA-256."""
    tensors: dict[str, np.ndarray] = {}
    ragged: list[str] = []
    sparse: dict[str, int] = {}
    for key, col in columns.items():
        if isinstance(col, Ragged):
            ragged.append(key)
            tensors[f"{key}/values"] = col.values
            tensors[f"{key}/offsets"] = col.offsets
        elif isinstance(col, SparseRows):
            sparse[key] = col.num_cols
            tensors[f"{key}/indptr"] = col.indptr
            tensors[f"{key}/indices"] = col.indices
            tensors[f"{key}/values"] = col.values
        else:
            tensors[key] = col
    meta = {"ragged": json.dumps(ragged)}
    if sparse:  # files without sparse features stay as they were
        meta["sparse"] = json.dumps(sparse)
    return save_tensors(path, tensors, meta)


def _read_features(path: Path) -> dict[str, Any]:
    tensors, meta = load_tensors(path)
    ragged = _meta_json(path, meta, "ragged", "[]")
    if not isinstance(ragged, list) or not all(isinstance(k, str) for k in ragged):
        raise FormatError(f"{path}: metadata 'ragged' must be a list of feature names, got "
                          f"{ragged!r}"[:200], path=str(path), field="ragged")
    sparse = _meta_json(path, meta, "sparse", "{}")
    if not isinstance(sparse, dict) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in sparse.values()):
        raise FormatError(f"{path}: metadata 'sparse' must map feature names to column counts "
                          f">= 0, got {sparse!r}"[:200], path=str(path), field="sparse")
    out: dict[str, Any] = {}
    for key in ragged:
        try:
            out[key] = Ragged(tensors.pop(f"{key}/values"), tensors.pop(f"{key}/offsets"))
        except (KeyError, ValueError) as exc:
            raise FormatError(f"{path}: ragged feature {key!r} is incomplete or inconsistent "
                              f"({exc})", path=str(path), field=key) from exc
    for key, num_cols in sparse.items():
        try:
            out[key] = SparseRows(tensors.pop(f"{key}/indptr"), tensors.pop(f"{key}/indices"),
                                  tensors.pop(f"{key}/values"), num_cols)
        except (KeyError, ValueError) as exc:
            raise FormatError(f"{path}: sparse feature {key!r} is incomplete or inconsistent "
                              f"({exc})", path=str(path), field=key) from exc
    out.update(tensors)
    return out


def _meta_json(path: Path, meta: dict[str, str], key: str, default: str) -> Any:
    try:
        return json.loads(meta.get(key, default))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise FormatError(f"{path}: metadata {key!r} is not JSON", path=str(path),
                          field=key) from exc


@dataclass(frozen=True)
class Partition:
    """One loaded partition (see :func:`load_partition` for the DGL-style tuple).

    Attributes:
        graph: Local homogeneous graph; node data ``_ID, inner_node, part_id, orig_id,
            _TYPE``, edge data ``_ID, inner_edge, orig_id, _TYPE`` (read-only memory maps).
        node_feats: Inner-node features ``"<ntype>/<name>"``, rows in global ID order.
        edge_feats: Inner-edge features ``"<src:rel:dst>/<name>"``.
        book: The partition book of the whole graph.
        graph_name: Name given at partitioning.
        ntypes: Node types in ID order.
        canonical_etypes: Canonical edge types in ID order.
        part_id: This partition.
    """

    graph: Graph
    node_feats: dict[str, Any]
    edge_feats: dict[str, Any]
    book: RangePartitionBook
    graph_name: str
    ntypes: list[str]
    canonical_etypes: list[EdgeType]
    part_id: int

    def as_tuple(self) -> tuple:
        """DGL's order: ``(g, node_feats, edge_feats, book, graph_name, ntypes, etypes)``."""
        return (self.graph, self.node_feats, self.edge_feats, self.book, self.graph_name,
                self.ntypes, self.canonical_etypes)


def load_partition_book(config: ConfigLike, part_id: int = -1) -> RangePartitionBook:
    """The partition book of a partitioned graph.

    Args:
        config: Path of ``<graph_name>.json``, or a config :func:`.read_config` returned.
        part_id: The partition this process serves (``-1`` when none).

    Example:
        >>> import tempfile, graphshard as gs
        >>> out = tempfile.mkdtemp()
        >>> g = gs.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
        >>> gs.partition_graph(g, "ring", 2, out, part_method="hash")
        >>> gs.load_partition_book(f"{out}/ring.json").num_partitions()
        2
    """
    return as_config(config).book(part_id)


def load_partition_feats(config: ConfigLike, part_id: int, *, verify: bool = True
                         ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(node_feats, edge_feats)`` of one partition (memory-mapped, read-only)."""
    cfg = as_config(config)
    return _load_feats(cfg, part_id, verify)


def _load_feats(cfg: PartitionConfig, part_id: int, verify: bool
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    out = []
    for kind in ("node", "edge"):
        file = cfg.part_file(part_id, f"{kind}_feats", verify=verify)
        feats = _read_features(file)
        check_features(file, feats, cfg.node_map if kind == "node" else cfg.edge_map,
                       part_id, kind)
        out.append(feats)
    return out[0], out[1]


def load_partition_data(config: ConfigLike, part_id: int, *, verify: bool = True
                        ) -> Partition:
    """Load one partition as a :class:`Partition` (arrays are read-only memory maps).

    Args:
        config: Path of ``<graph_name>.json``, or a config :func:`.read_config` returned
            (not parsed again).
        part_id: Which partition.
        verify: Check every file's SHA-256 against the config (sizes are always checked).
    """
    cfg = as_config(config)
    etypes = cfg.canonical_etypes()
    graph_file = cfg.part_file(part_id, "part_graph", verify=verify)
    tensors, _ = load_tensors(graph_file)
    missing = [k for k in ("src", "dst", *(f"node/{k}" for k in NODE_KEYS),
                           *(f"edge/{k}" for k in EDGE_KEYS)) if k not in tensors]
    if missing:
        raise FormatError(f"{graph_file}: missing tensors {missing}", path=str(graph_file),
                          field=missing[0])
    book = cfg.book(part_id)
    check_part_arrays(graph_file, tensors, book, part_id)
    num_local = len(tensors["node/_ID"])
    try:
        local = graph((tensors["src"], tensors["dst"]), num_nodes=num_local)
        for key, value in tensors.items():
            kind, _, name = key.partition("/")
            if kind == "node":
                local.ndata[name] = value
            elif kind == "edge":
                local.edata[name] = value
    except ValueError as exc:
        raise FormatError(f"{graph_file}: inconsistent partition structure: {exc}",
                          path=str(graph_file)) from exc
    node_feats, edge_feats = _load_feats(cfg, part_id, verify)
    return Partition(local, node_feats, edge_feats, book, cfg.graph_name, cfg.ntypes, etypes,
                     part_id)


def load_partition(config: ConfigLike, part_id: int, *, verify: bool = True) -> tuple:
    """DGL's ``load_partition``: ``(g, node_feats, edge_feats, book, graph_name, ntypes,
    etypes)`` with ``etypes`` canonical.  See :func:`load_partition_data`.

    Example:
        >>> import tempfile, graphshard as gs
        >>> out = tempfile.mkdtemp()
        >>> g = gs.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
        >>> g.ndata["x"] = np.arange(4.0)
        >>> gs.partition_graph(g, "ring", 2, out, part_method="hash")
        >>> local, nfeat, efeat, book, name, ntypes, etypes = gs.load_partition(
        ...     f"{out}/ring.json", 0)
        >>> local.ndata["inner_node"].tolist(), sorted(nfeat["_N/x"].tolist())
        ([True, True, False, False], [0.0, 2.0])
    """
    return load_partition_data(config, part_id, verify=verify).as_tuple()
