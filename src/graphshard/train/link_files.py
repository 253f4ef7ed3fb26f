"""Held-out link-prediction edges kept beside a partitioned graph, and the one call that
splits and partitions.

:func:`partition_for_link` splits a graph (:func:`~graphshard.train.link_split.split_edges`),
partitions the training graph only (so no partition's local graph holds a validation or test
edge) and stores the held-out edges with :func:`save_link_split`: they are mapped from the
original node IDs to the partitioned graph's reshuffled IDs through ``partition_graph``'s
``orig_nids`` and written into the partition folder as ``<graph_name>-link.safetensors``
(tensors ``val/src``, ``val/dst``, ``val/neg_dst``, ``test/...``; no pickle) and, last,
``<graph_name>-link.json`` with the SHA-256 of that file and of the partition config it
belongs to.  :func:`load_link_split` verifies both, so a folder partitioned again after the
split was written is refused instead of giving edges in stale IDs.  On a heterogeneous graph
the split's edge type is stored with it, and sources and destinations are mapped to the
type-wise IDs of their own node types (``orig_nids`` per type).

Unstable API (issue 26).

Example:
    >>> import tempfile, graphshard as gs
    >>> g = gs.datasets.sbm(60, 300, num_blocks=2, num_features=2, seed=0)
    >>> out = tempfile.mkdtemp()
    >>> res = partition_for_link(g, "sbm", 2, out, test_fraction=0.2, num_negatives=5)
    >>> held = load_link_split(res.config_path)
    >>> held.test.neg_dst.shape == (len(res.split.held_out.test), 5)
    True
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from ..errors import FormatError, PartitionNotFoundError, ValidationError
from ..graph import Graph
from ..storage.files import (
    check_path_name,
    check_regular_file,
    file_sha256,
    path_inside,
    regular_file_stat,
    write_json_atomic,
)
from ..storage.tensorfile import load_tensors, save_tensors
from ..typing import IdArray
from .link_split import EdgeSplit, EvalEdges, LinkEval, split_edges

__all__ = ["LinkPartitions", "link_split_path", "load_link_split", "partition_for_link",
           "save_link_split"]

_FORMAT = 1
_SPLITS = ("val", "test")
_FIELDS = ("src", "dst", "neg_dst")


@dataclass(frozen=True)
class LinkPartitions:
    """What :func:`partition_for_link` wrote.

    Attributes:
        config_path: The partition config of the training graph.
        split: The split in the input graph's node IDs.
        orig_nids: New (reshuffled) -> original node ID (int64; a dict of them per node
            type on a heterogeneous graph).
    """

    config_path: Path
    split: EdgeSplit
    orig_nids: IdArray | dict[str, IdArray]

    def __repr__(self) -> str:
        return f"LinkPartitions(config_path={str(self.config_path)!r}, split={self.split!r})"


def link_split_path(config: str | os.PathLike[str]) -> Path:
    """``<graph_name>-link.json`` beside the partition config ``<graph_name>.json``."""
    path = Path(config)
    return path.with_name(f"{path.stem}-link.json")


def save_link_split(held_out: LinkEval, config: str | os.PathLike[str], *,
                    orig_nids: Any) -> Path:
    """Write ``held_out`` (original node IDs) beside a partition config, in its IDs.

    Args:
        held_out: Validation and test edges in the original node IDs (of the node types of
            ``held_out.etype`` on a heterogeneous graph).
        config: The partition config JSON of the training graph.
        orig_nids: ``partition_graph(..., return_mapping=True)[0]``: the original ID of each
            new node ID (a permutation of the config's nodes; per node type, a dict, when
            ``held_out.etype`` is set).

    Returns:
        The path of the JSON written last (:func:`link_split_path`).

    Raises:
        ValidationError: ``orig_nids`` is not a permutation of the config's nodes (of a
            node type), or ``held_out.etype`` is not an edge type of the config.
    """
    from ..partition.config import read_config

    config = Path(config)
    meta = json.loads(config.read_text())
    num_nodes = int(meta["num_nodes"])
    et = held_out.etype
    if et is None:
        maps = [_new_of_orig(orig_nids, num_nodes, config, "orig_nids")]
        sizes: dict[str, int] = {}
    else:
        cfg = read_config(config)
        if list(et) not in [list(e) for e in cfg.canonical_etypes()]:
            raise ValidationError(f"{config}: the split's edge type {et} is not one of the "
                                  f"config's {cfg.canonical_etypes()}", field="etype")
        sizes = {t: cfg.type_sizes("node")[t] for t in (et[0], et[2])}
        if not isinstance(orig_nids, dict):
            raise ValidationError(f"{config}: orig_nids must be a dict per node type for the "
                                  f"edge type {et}", field="orig_nids")
        maps = [_new_of_orig(orig_nids.get(t), sizes[t], config, f"orig_nids[{t!r}]")
                for t in (et[0], et[2])]
    mapped = held_out.remap(maps[0], maps[-1])
    tensors = {f"{s}/{f}": np.ascontiguousarray(getattr(getattr(mapped, s), f))
               for s in _SPLITS for f in _FIELDS}
    out = link_split_path(config)
    name = out.with_suffix(".safetensors").name
    digest = save_tensors(out.parent / name, tensors)
    write_json_atomic(out, {"format_version": _FORMAT, "graph_name": meta.get("graph_name"),
                            "tensors": name, "sha256": digest,
                            "config": config.name, "config_sha256": file_sha256(config),
                            "num_nodes": num_nodes,
                            **({} if et is None else {"etype": list(et), "type_nodes": sizes}),
                            "counts": {s: len(getattr(mapped, s)) for s in _SPLITS},
                            "num_negatives": int(mapped.val.neg_dst.shape[1])})
    return out


def _new_of_orig(orig_nids: Any, n: int, config: Path, field: str) -> np.ndarray:
    """The inverse of ``orig_nids`` after checking it is a permutation of ``range(n)``."""
    orig = np.asarray([] if orig_nids is None else orig_nids, dtype=np.int64)
    if orig.shape != (n,) or not np.array_equal(np.sort(orig), np.arange(n)):
        raise ValidationError(f"{config}: {field} must be a permutation of the config's "
                              f"{n} nodes, got shape {orig.shape}", field="orig_nids")
    new_of_orig = np.empty(n, dtype=np.int64)
    new_of_orig[orig] = np.arange(n, dtype=np.int64)
    return new_of_orig


def load_link_split(config: str | os.PathLike[str]) -> LinkEval:
    """The held-out edges stored beside ``config``, in its (reshuffled) node IDs (type-wise
    IDs of the stored ``etype``'s node types on a heterogeneous graph).

    Raises:
        PartitionNotFoundError: no link split beside the config.
        FormatError: a damaged file, a checksum that differs, or a split written for another
            version of the partition config.
    """
    config = Path(config)
    path = link_split_path(config)
    if not path.exists():
        raise PartitionNotFoundError(f"{path}: no link split beside {config.name}; write one "
                                     "with graphshard.train.partition_for_link",
                                     path=str(path))
    meta = _read_meta(path)
    num_nodes = meta["num_nodes"]
    if meta.get("format_version") != _FORMAT or isinstance(meta.get("format_version"), bool):
        raise FormatError(f"{path}: format_version {meta.get('format_version')!r}, expected "
                          f"{_FORMAT}", path=str(path), field="format_version")
    if file_sha256(config) != meta.get("config_sha256"):
        raise FormatError(f"{path}: written for another {config.name} (its SHA-256 differs): "
                          "the graph was partitioned again; split it again", path=str(path),
                          field="config_sha256")
    graph_nodes = _config_num_nodes(config)
    if num_nodes != graph_nodes:
        raise FormatError(f"{path}: num_nodes is {num_nodes}, but {config.name} has "
                          f"{graph_nodes} nodes: held-out IDs must be IDs of that graph",
                          path=str(path), field="num_nodes", value=num_nodes)
    et, bounds = _split_types(meta, path, config, num_nodes)
    tensor_path = meta["tensors"]
    st, problem = regular_file_stat(tensor_path)
    if st is None or file_sha256(tensor_path) != meta.get("sha256"):
        why = problem or f"its SHA-256 differs from {path.name}"
        raise FormatError(f"{tensor_path}: {why} (tensors of {path})",
                          path=str(tensor_path), field="sha256")
    tensors, _ = load_tensors(tensor_path, mmap=False)
    splits = []
    for s in _SPLITS:
        try:
            raw = [tensors[f"{s}/{f}"] for f in _FIELDS]
        except KeyError as exc:
            raise FormatError(f"{tensor_path}: tensor {exc} is missing", path=str(tensor_path),
                              field=str(exc)) from exc
        for f, a in zip(_FIELDS, raw, strict=True):
            if a.dtype.kind not in "iu":  # float IDs would be truncated silently
                raise FormatError(f"{tensor_path}: tensor '{s}/{f}' holds {a.dtype}, expected "
                                  "integer node IDs", path=str(tensor_path), field=f"{s}/{f}")
        arrs = [np.asarray(a, dtype=np.int64) for a in raw]
        src, dst, neg = arrs
        if src.ndim != 1 or dst.shape != src.shape or neg.ndim != 2 or len(neg) != len(src):
            raise FormatError(f"{tensor_path}: {s} tensors have shapes {src.shape}, "
                              f"{dst.shape}, {neg.shape}; expected (n,), (n,), (n, k)",
                              path=str(tensor_path), field=s)
        for f, a, n in zip(_FIELDS, arrs, bounds, strict=True):
            if a.size and (a.min() < 0 or a.max() >= n):
                raise FormatError(f"{tensor_path}: {s}/{f} has node IDs outside [0, {n})",
                                  path=str(tensor_path), field=f"{s}/{f}")
        splits.append(EvalEdges(src, dst, neg))
    return LinkEval(splits[0], splits[1], et)


def _split_types(meta: dict[str, Any], path: Path, config: Path, num_nodes: int
                 ) -> tuple[tuple[str, str, str] | None, tuple[int, int, int]]:
    """The stored edge type (None: homogeneous) and the ID bound of ``src``, ``dst`` and
    ``neg_dst``: the config's node counts of the edge type's two node types."""
    raw = meta.get("etype")
    if raw is None:
        return None, (num_nodes,) * 3
    if not (isinstance(raw, list) and len(raw) == 3 and all(isinstance(t, str) for t in raw)):
        raise FormatError(f"{path}: etype must be [src, relation, dst], got {raw!r}",
                          path=str(path), field="etype")
    from ..partition.config import read_config

    cfg = read_config(config)
    if raw not in [list(e) for e in cfg.canonical_etypes()]:
        raise FormatError(f"{path}: etype {raw} is not an edge type of {config.name} "
                          f"{cfg.canonical_etypes()}", path=str(path), field="etype")
    sizes = cfg.type_sizes("node")
    return (raw[0], raw[1], raw[2]), (sizes[raw[0]], sizes[raw[2]], sizes[raw[2]])


def _read_meta(path: Path) -> dict[str, Any]:
    """The link-split JSON at ``path``, its ``tensors`` resolved to a path inside its folder
    and its ``num_nodes`` an int >= 0; FormatError naming the file and field otherwise."""
    try:
        check_regular_file(path)
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise FormatError(f"{path}: damaged link split ({exc})", path=str(path)) from exc
    if not isinstance(meta, dict):
        raise FormatError(f"{path}: expected a JSON object, got {type(meta).__name__}",
                          path=str(path))
    for key in ("tensors", "num_nodes"):
        if key not in meta:
            raise FormatError(f"{path}: no {key!r} entry", path=str(path), field=key)
    name = meta["tensors"]
    try:
        check_path_name(name, field="tensors", path=path)
    except ValidationError as exc:
        raise FormatError(str(exc), path=str(path), field="tensors", value=name) from exc
    meta["tensors"] = path_inside(path.parent, name, field="tensors", path=path)
    n = meta["num_nodes"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise FormatError(f"{path}: num_nodes must be an integer >= 0, got {n!r}",
                          path=str(path), field="num_nodes", value=n)
    return meta


def _config_num_nodes(config: Path) -> int:
    """``num_nodes`` of the partition config the split is used with."""
    try:
        n = json.loads(config.read_text())["num_nodes"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise FormatError(f"{config}: no readable num_nodes ({exc})", path=str(config),
                          field="num_nodes") from exc
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise FormatError(f"{config}: num_nodes must be an integer >= 0, got {n!r}",
                          path=str(config), field="num_nodes", value=n)
    return n


def partition_for_link(g: Graph, graph_name: str, num_parts: int,
                       out_path: str | os.PathLike[str], *, val_fraction: float = 0.05,
                       test_fraction: float = 0.1, num_negatives: int = 100,
                       undirected: bool | None = None, seed: int = 0,
                       etype: Any = None, reverse_etype: Any = None,
                       **partition_kw: Any) -> LinkPartitions:
    """Split ``g`` for link prediction, partition its training graph, store the rest.

    Args:
        g: A graph (with several edge types, ``etype`` names the one to predict).
        graph_name: Name of the partitioned graph (``out_path/<graph_name>.json``).
        num_parts: Number of parts.
        out_path: Output folder of :func:`~graphshard.partition_graph`.
        val_fraction: See :func:`~graphshard.train.link_split.split_edges`.
        test_fraction: As ``val_fraction``.
        num_negatives: As ``val_fraction``.
        undirected: As ``val_fraction``.
        seed: Seed of the split (the partition method's ``seed`` goes in ``partition_kw``).
        etype: As ``val_fraction`` (stored with the split).
        reverse_etype: As ``val_fraction``.
        **partition_kw: Keyword arguments of :func:`~graphshard.partition_graph`
            (``part_method``, ``num_hops``, ``balance_edges``, ...).

    Returns:
        LinkPartitions with the config path, the split and the node mapping.
    """
    from ..partition import partition_graph

    if "return_mapping" in partition_kw:
        raise ValidationError("partition_for_link sets return_mapping itself",
                              field="return_mapping")
    split = split_edges(g, val_fraction=val_fraction, test_fraction=test_fraction,
                        num_negatives=num_negatives, undirected=undirected, seed=seed,
                        etype=etype, reverse_etype=reverse_etype)
    mapping = partition_graph(split.train_graph, graph_name, num_parts, out_path,
                              return_mapping=True, **partition_kw)
    orig_nids = cast(tuple, mapping)[0]  # return_mapping=True: an array, or a dict per type
    if not isinstance(orig_nids, dict):
        orig_nids = np.asarray(orig_nids, dtype=np.int64)
    config = Path(out_path) / f"{graph_name}.json"
    save_link_split(split.held_out, config, orig_nids=orig_nids)
    return LinkPartitions(config, split, orig_nids)
