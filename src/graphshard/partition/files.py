"""The on-disk partition format: writing part files and the config, loading them back.

Layout (DESIGN §4)::

    out/<graph_name>.json          DGL's keys + our own under "graphshard"
    out/part<i>/graph.safetensors  local structure and node/edge data
    out/part<i>/node_feats.safetensors   inner-node features "<ntype>/<name>"
    out/part<i>/edge_feats.safetensors   inner-edge features "<src:rel:dst>/<name>"

Part files are written first and the JSON last, with the size and SHA-256 of every file:
a directory holding the JSON is complete, and loaders check the files against it.
Ragged features are stored as two tensors ``<key>/values`` and ``<key>/offsets`` and listed
in the file's safetensors metadata under ``"ragged"``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._util.files import file_sha256, path_inside, write_json_atomic
from .._util.tensorfile import load_tensors, save_tensors
from ..errors import FormatError, GraphshardError, PartitionNotFoundError, ValidationError
from ..graph import Graph, graph
from ..ids import RangePartitionBook
from ..ragged import Ragged
from ..typing import EdgeType
from .file_checks import (
    bad_value,
    check_features,
    check_part_arrays,
    check_ranges,
    check_type_ids,
    is_int,
)
from .local_graphs import LocalGraph

__all__ = [
    "FORMAT_VERSION",
    "Partition",
    "config_types",
    "load_partition",
    "load_partition_book",
    "load_partition_feats",
    "make_config",
    "read_config",
    "write_features",
    "write_local_graph",
    "write_part",
]

FORMAT_VERSION = 1
NODE_KEYS = ("_ID", "inner_node", "part_id", "orig_id", "_TYPE")
EDGE_KEYS = ("_ID", "inner_edge", "orig_id", "_TYPE")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def write_part(out_dir: Path, part_id: int, local: LocalGraph, *, node_part: np.ndarray,
               node_orig: np.ndarray, node_type: np.ndarray, edge_orig: np.ndarray,
               edge_type: np.ndarray, node_feats: dict[str, Any], edge_feats: dict[str, Any],
               orig_ids: dict[str, np.ndarray] | None = None
               ) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """Write one part's files; returns its config entry and the files' size and SHA-256.

    The per-local-node arrays (``node_part``, ``node_orig``, ``node_type``) and per-local-
    edge arrays (``edge_orig``, ``edge_type``) follow ``local``'s order.  Big files go
    around the page cache (:mod:`graphshard._util.direct`).
    """
    node_data = {
        "_ID": local.nodes,
        "inner_node": np.arange(len(local.nodes)) < local.num_inner_nodes,
        "part_id": node_part,
        "orig_id": node_orig,
        "_TYPE": node_type,
    }
    edge_data = {
        "_ID": local.edges,
        "inner_edge": np.arange(len(local.edges)) < local.num_inner_edges,
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


def make_config(graph_name: str, ntypes: list[str], etype_names: list[str],
                node_ranges: np.ndarray, edge_ranges: np.ndarray, num_hops: int,
                parts_cfg: dict[str, Any], files: dict[str, Any], trainers: int
                ) -> dict[str, Any]:
    """The partition config (DGL's keys first, ours under ``"graphshard"``)."""
    cfg: dict[str, Any] = {
        "graph_name": graph_name,
        "part_method": None,
        "num_parts": int(node_ranges.shape[1]),
        "halo_hops": num_hops,
        "node_map": {t: node_ranges[i].tolist() for i, t in enumerate(ntypes)},
        "edge_map": {e: edge_ranges[i].tolist() for i, e in enumerate(etype_names)},
        "ntypes": {t: i for i, t in enumerate(ntypes)},
        "etypes": {e: i for i, e in enumerate(etype_names)},
        "num_nodes": int(node_ranges[:, :, 1].max(initial=0)),
        "num_edges": int(edge_ranges[:, :, 1].max(initial=0)),
        "num_trainers_per_machine": trainers,
    }
    cfg.update(parts_cfg)
    cfg["graphshard"] = {"format_version": FORMAT_VERSION, "files": files}
    return cfg


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
    """Write feature columns (arrays or :class:`Ragged`) to one file; returns the
    SHA-256."""
    tensors: dict[str, np.ndarray] = {}
    ragged: list[str] = []
    for key, col in columns.items():
        if isinstance(col, Ragged):
            ragged.append(key)
            tensors[f"{key}/values"] = col.values
            tensors[f"{key}/offsets"] = col.offsets
        else:
            tensors[key] = col
    return save_tensors(path, tensors, {"ragged": json.dumps(ragged)})


def _read_features(path: Path) -> dict[str, Any]:
    tensors, meta = load_tensors(path)
    try:
        ragged = json.loads(meta.get("ragged", "[]"))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise FormatError(f"{path}: metadata 'ragged' is not JSON", path=str(path),
                          field="ragged") from exc
    if not isinstance(ragged, list) or not all(isinstance(k, str) for k in ragged):
        raise FormatError(f"{path}: metadata 'ragged' must be a list of feature names, got "
                          f"{ragged!r}"[:200], path=str(path), field="ragged")
    out: dict[str, Any] = {}
    for key in ragged:
        try:
            out[key] = Ragged(tensors.pop(f"{key}/values"), tensors.pop(f"{key}/offsets"))
        except (KeyError, ValueError) as exc:
            raise FormatError(f"{path}: ragged feature {key!r} is incomplete or inconsistent "
                              f"({exc})", path=str(path), field=key) from exc
    out.update(tensors)
    return out


def read_config(config: str | os.PathLike[str]) -> tuple[Path, dict[str, Any]]:
    """Parse and check a partition config; returns ``(path, config dict)``.

    Every key a loader uses is checked for its JSON type and consistency: ``num_parts``
    a positive integer; ``node_map``/``edge_map`` one ``[start, end]`` pair of integers
    per part for each type, contiguous part by part; ``ntypes``/``etypes`` the same types
    numbered ``0, 1, ...`` in the same order; one ``part-<i>`` object per part whose file
    paths are strings, each file named once; ``graphshard`` (ours) an object.  The files
    themselves are checked when a partition is loaded (:func:`load_partition_data`).

    Raises:
        PartitionNotFoundError: the file does not exist.
        FormatError: naming the config and the field, for malformed JSON, a missing key,
            a value of the wrong type, or maps that disagree with ``num_parts``.

    Example:
        >>> import tempfile, graphshard as gs
        >>> out = tempfile.mkdtemp()
        >>> gs.partition_graph(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), "ring", 2, out,
        ...                    part_method="hash")
        >>> path, cfg = read_config(f"{out}/ring.json")
        >>> cfg["num_parts"], cfg["part-1"]["part_graph"]
        (2, 'part1/graph.safetensors')
    """
    path = Path(config)
    if not path.is_file():
        raise PartitionNotFoundError(f"{path}: partition config not found", path=str(path))
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise FormatError(f"{path}: not valid JSON ({exc})", path=str(path)) from exc
    if not isinstance(cfg, dict):
        raise FormatError(f"{path}: expected a JSON object", path=str(path))
    for key in ("graph_name", "num_parts", "node_map", "edge_map", "ntypes", "etypes"):
        if key not in cfg:
            raise FormatError(f"{path}: missing key {key!r}", path=str(path), field=key)
    if not isinstance(cfg["graph_name"], str) or not cfg["graph_name"]:
        raise bad_value(path, "graph_name", "must be a non-empty string", cfg["graph_name"])
    num_parts = cfg["num_parts"]
    if not is_int(num_parts) or num_parts < 1:
        raise FormatError(f"{path}: num_parts must be a positive integer, got {num_parts!r}",
                          path=str(path), field="num_parts")
    for key, types in (("node_map", "ntypes"), ("edge_map", "etypes")):
        check_ranges(path, cfg[key], key, num_parts)
        check_type_ids(path, cfg[types], types, list(cfg[key]), key)
    used: dict[str, str] = {}
    for p in range(num_parts):
        entry = cfg.get(f"part-{p}")
        if entry is None:
            raise FormatError(f"{path}: missing key 'part-{p}'", path=str(path),
                              field=f"part-{p}")
        if not isinstance(entry, dict):
            raise bad_value(path, f"part-{p}", "must be an object of file paths", entry)
        for key, rel in entry.items():
            field = f"part-{p}.{key}"
            if not isinstance(rel, str) or not rel:
                raise bad_value(path, field, "must be a relative path string", rel)
            if rel in used:
                raise bad_value(path, field, f"names the same file as {used[rel]}", rel)
            used[rel] = field
    ours = cfg.get("graphshard", {})
    if not isinstance(ours, dict) or not isinstance(ours.get("files", {}), dict):
        raise bad_value(path, "graphshard", "must be an object with a 'files' object",
                   ours if not isinstance(ours, dict) else ours.get("files"))
    try:
        RangePartitionBook.from_config(cfg)  # ranges contiguous, part by part
    except GraphshardError as exc:
        raise FormatError(f"{path}: {exc}", path=str(path), field=exc.field) from exc
    return path, cfg


def _part_file(path: Path, cfg: dict[str, Any], part_id: int, key: str, verify: bool) -> Path:
    """The file ``key`` of ``part-<part_id>``: inside the config's folder and listed under
    ``graphshard.files`` with its size (checked) and SHA-256 (checked when ``verify``)."""
    if not is_int(part_id) and not isinstance(part_id, np.integer):
        raise ValidationError(f"part_id must be an integer, got {part_id!r}",
                              field="part_id", value=part_id)
    if not 0 <= part_id < cfg["num_parts"]:
        raise PartitionNotFoundError(f"{path}: no partition {part_id}; num_parts is "
                                     f"{cfg['num_parts']}", path=str(path), field="part_id")
    field = f"part-{part_id}.{key}"
    rel = cfg[f"part-{part_id}"].get(key)
    if rel is None:
        raise FormatError(f"{path}: part-{part_id} has no {key!r}", path=str(path), field=key)
    file = path_inside(path.parent, rel, field=field, path=path)
    record = cfg.get("graphshard", {}).get("files", {}).get(rel)
    if not (isinstance(record, dict) and is_int(record.get("bytes"))
            and record["bytes"] >= 0 and isinstance(record.get("sha256"), str)
            and _SHA256.fullmatch(record["sha256"])):
        raise FormatError(f"{path}: {field} is {rel!r}, which graphshard.files does not "
                          "list with its size ('bytes') and SHA-256 ('sha256'); a config "
                          "opens only the files it lists", path=str(path), field=field)
    if not file.is_file():
        raise PartitionNotFoundError(f"{path}: part-{part_id} {key} file {file} is missing",
                                     path=str(file), field=key)
    size = file.stat().st_size
    if size != record["bytes"]:
        raise FormatError(f"{file}: {size} bytes, but the config records "
                          f"{record['bytes']}", path=str(file), field="bytes")
    if verify and file_sha256(file) != record["sha256"]:
        raise FormatError(f"{file}: SHA-256 differs from the one in {path.name}",
                          path=str(file), field="sha256")
    return file


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


def config_types(path: Path, cfg: dict[str, Any]) -> tuple[list[str], list[EdgeType]]:
    """Node types and canonical edge types of a config read by :func:`read_config`, in ID
    order.

    Raises:
        FormatError: an edge type is not ``"src:rel:dst"`` over the config's node types
            (DGL's older configs name relations only: their book loads, their parts not).
    """
    ntypes = list(cfg["ntypes"])
    etypes = []
    for key in cfg["etypes"]:
        parts = key.split(":")
        if len(parts) != 3 or parts[0] not in ntypes or parts[2] not in ntypes:
            raise bad_value(path, "etypes", f"must be 'src:rel:dst' over the node types "
                            f"{ntypes}", key)
        etypes.append((parts[0], parts[1], parts[2]))
    return ntypes, etypes


def load_partition_book(config: str | os.PathLike[str], part_id: int = -1
                        ) -> RangePartitionBook:
    """The partition book of a partitioned graph.

    Example:
        >>> import tempfile, graphshard as gs
        >>> out = tempfile.mkdtemp()
        >>> g = gs.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
        >>> gs.partition_graph(g, "ring", 2, out, part_method="hash")
        >>> gs.load_partition_book(f"{out}/ring.json").num_partitions()
        2
    """
    _path, cfg = read_config(config)
    return RangePartitionBook.from_config(cfg, part_id)


def load_partition_feats(config: str | os.PathLike[str], part_id: int, *, verify: bool = True
                         ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(node_feats, edge_feats)`` of one partition (memory-mapped, read-only)."""
    path, cfg = read_config(config)
    return _load_feats(path, cfg, part_id, RangePartitionBook.from_config(cfg, part_id), verify)


def _load_feats(path: Path, cfg: dict[str, Any], part_id: int, book: RangePartitionBook,
                verify: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    out = []
    for kind in ("node", "edge"):
        file = _part_file(path, cfg, part_id, f"{kind}_feats", verify)
        feats = _read_features(file)
        check_features(file, feats, cfg[f"{kind}_map"], part_id, kind)
        out.append(feats)
    return out[0], out[1]


def load_partition_data(config: str | os.PathLike[str], part_id: int, *, verify: bool = True
                        ) -> Partition:
    """Load one partition as a :class:`Partition` (arrays are read-only memory maps).

    Args:
        config: Path of ``<graph_name>.json``.
        part_id: Which partition.
        verify: Check every file's SHA-256 against the config (sizes are always checked).
    """
    path, cfg = read_config(config)
    ntypes, etypes = config_types(path, cfg)
    graph_file = _part_file(path, cfg, part_id, "part_graph", verify)
    tensors, _ = load_tensors(graph_file)
    missing = [k for k in ("src", "dst", *(f"node/{k}" for k in NODE_KEYS),
                           *(f"edge/{k}" for k in EDGE_KEYS)) if k not in tensors]
    if missing:
        raise FormatError(f"{graph_file}: missing tensors {missing}", path=str(graph_file),
                          field=missing[0])
    book = RangePartitionBook.from_config(cfg, part_id)
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
    node_feats, edge_feats = _load_feats(path, cfg, part_id, book, verify)
    return Partition(local, node_feats, edge_feats, book, cfg["graph_name"], ntypes, etypes,
                     part_id)


def load_partition(config: str | os.PathLike[str], part_id: int, *, verify: bool = True
                   ) -> tuple:
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


def write_config(path: Path, cfg: dict[str, Any]) -> None:
    """Write the config JSON last, atomically."""
    write_json_atomic(path, cfg)
