"""Import PyG's partition folders into our format, export ours as PyG's.

:func:`import_pyg` reads a folder written by ``torch_geometric.distributed.Partitioner``
(PyG 2.8's layout: :mod:`graphshard.partition.pyg_layout`), checks it, and partitions the
graph it describes with PyG's node assignment through our own steps (reshuffle, local
graphs, features, files: :func:`~graphshard.partition.build_partitions` with
``assignment=``), so the result is an ordinary graphshard partition: ranges, halo, report
and checksums as ours, ``orig_id`` and the ``orig_ids`` files holding PyG's IDs.
:func:`export_pyg` writes our partitions as such a folder, which PyG's
``LocalGraphStore.from_partition(root, pid)`` and ``LocalFeatureStore.from_partition(root,
pid)`` load (:mod:`graphshard.partition.pyg_export`).  Both need ``torch``, imported only
when called.

PyG's ``.pt`` files are pickles.  Every one is read with ``torch.load(..., weights_only=True)``
only: torch's restricted unpickler, which builds tensors and plain containers and refuses any
other object without running it.  PyG's ``edge_feats.pt`` is a ``collections.defaultdict``,
which that unpickler cannot fill (torch 2.13: "Can only SETITEMS for dict ..."; so PyG 2.8's
own ``LocalFeatureStore.from_partition`` fails on it): while a file loads, the only extra
names torch may resolve are ``collections.defaultdict``, read as an empty plain ``dict``,
and ``builtins.dict`` (its factory); the names other code registered (PyG registers its
``EdgeIndex``, ``Index``, ...) are set aside and restored after.  The export writes plain
dicts.  Files are written through temp files and renamed, ``META.json`` last.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import numpy as np

from .._util.optional import import_optional
from ..errors import FormatError, MissingDependencyError, PartitionNotFoundError
from ..storage import files as _files
from ..typing import EdgeType, IdArray
from .build import build_partitions
from .config import ConfigLike, PartitionConfig, as_config, read_config
from .files import load_partition_data
from .pyg_assemble import assemble_graph
from .pyg_export import check_orig_cover, export_part, node_times, part_files, pyg_meta
from .pyg_layout import (
    PyGMeta,
    PyGPart,
    meta_from_json,
    read_edge_feats,
    read_graph,
    read_map,
    read_node_feats,
)

__all__ = ["export_pyg", "import_pyg", "load_pt"]

log = logging.getLogger(__name__)

_LOAD_LOCK = threading.Lock()


def _plain_dict(default_factory: Any = None) -> dict:
    """A pickled ``collections.defaultdict`` read as an empty plain dict (its items are
    set after; the factory is dropped)."""
    return {}


def _why(exc: Exception) -> str:
    """The useful line of torch's message (its weights-only refusal is a page long)."""
    text = str(exc)
    marker = "WeightsUnpickler error:"
    if marker in text:
        text = text.split(marker, 1)[1].strip().split("\n\n")[0]
    text = text.split(" Please ", 1)[0]  # torch's advice to allowlist: not for this reader
    return f"{type(exc).__name__}: {' '.join(text.split())}"[:400]


def load_pt(torch: Any, path: Path) -> Any:
    """``torch.load(path, weights_only=True)`` (on the CPU), with PyG's
    ``defaultdict`` read as a plain dict and no other name beyond torch's own.

    Raises:
        FormatError: torch refused the file (an object that is not a tensor or plain
            container: nothing of it was run) or could not read it, naming the file.
        MissingDependencyError: a torch without ``torch.serialization.get_safe_globals``.

    Example:
        >>> import collections, tempfile, torch
        >>> path = Path(tempfile.mkdtemp()) / "edge_feats.pt"
        >>> torch.save(collections.defaultdict(dict, {("a", "r", "b"): {}}), path)
        >>> load_pt(torch, path)
        {('a', 'r', 'b'): {}}
    """
    ser = torch.serialization
    if not all(hasattr(ser, name) for name in ("get_safe_globals", "clear_safe_globals",
                                                "add_safe_globals")):
        raise MissingDependencyError(f"{path}: reading PyG's .pt files safely needs a torch "
                                     "with torch.serialization.get_safe_globals (2.5 or later)",
                                     field="torch")
    _files.check_regular_file(path, field=path.name)
    with _LOAD_LOCK:
        saved = ser.get_safe_globals()
        ser.clear_safe_globals()
        try:
            ser.add_safe_globals([(_plain_dict, "collections.defaultdict"), dict])
            return torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # UnpicklingError, RuntimeError (zip), EOFError, ...
            raise FormatError(f"{path}: not a tensor file that torch.load(weights_only=True) "
                              f"reads ({_why(exc)})", path=str(path), field=path.name
                              ) from None
        finally:
            ser.clear_safe_globals()
            ser.add_safe_globals(saved)


def _member(root: Path, rel: str, meta_path: Path) -> Path:
    """A file of the folder, which must stay inside it (links resolved)."""
    return _files.path_inside(root, rel, field=rel, path=meta_path)


def _required(root: Path, rel: str, meta_path: Path) -> Path:
    path = _member(root, rel, meta_path)
    if not path.exists():
        raise PartitionNotFoundError(f"{root}: {rel} is missing ({meta_path.name} names "
                                     f"{'the part' if 'part_' in rel else 'the type'})",
                                     path=str(path), field=rel)
    return path


def _read_part(torch: Any, root: Path, p: int, meta: PyGMeta, meta_path: Path,
               num_nodes: dict[str, int], num_edges: dict[EdgeType, int]) -> PyGPart:
    graph_file = _required(root, f"part_{p}/graph.pt", meta_path)
    edges = read_graph(load_pt(torch, graph_file), meta, graph_file, num_nodes, num_edges)
    node_rows: dict[str, Any] = {}
    node_time: dict[str, np.ndarray] = {}
    edge_rows: dict[EdgeType, Any] = {}
    # the feature files are optional, as in PyG's LocalFeatureStore.from_partition
    nf = _member(root, f"part_{p}/node_feats.pt", meta_path)
    if nf.exists():
        node_rows, node_time = read_node_feats(load_pt(torch, nf), meta, nf, num_nodes)
    ef = _member(root, f"part_{p}/edge_feats.pt", meta_path)
    if ef.exists():
        edge_rows = read_edge_feats(load_pt(torch, ef), meta, ef, edges, num_edges)
    return PyGPart(edges, node_rows, edge_rows, node_time)


def import_pyg(root: str | os.PathLike[str], out_dir: str | os.PathLike[str], *,
               graph_name: str | None = None) -> PartitionConfig:
    """Read PyG's partition folder (``torch_geometric.distributed.Partitioner``'s output)
    into our format in ``out_dir``; returns the written config.

    PyG's parts become ours node for node (its ``node_map`` is the assignment) and edge for
    edge; IDs are reshuffled into our ranges, and ``orig_id`` (with the ``orig_ids`` files)
    keeps PyG's IDs.  Features: ``x``, ``edge_attr`` and any other ``feats`` entry under
    their names, PyG's node time as node feature ``time``, its edge time as ``edge_time``.

    Args:
        root: The folder holding ``META.json`` (or that file).
        out_dir: Folder of our partitions: new, empty, or an earlier output of ours.
        graph_name: Name of our config (default: the folder's name).

    Raises:
        MissingDependencyError: ``torch`` is not installed.
        PartitionNotFoundError: ``META.json``, a map or a part's ``graph.pt`` is missing.
        FormatError: a file torch will not load with ``weights_only=True`` (an object other
            than tensors and plain containers), a path leading outside ``root``, or contents
            that disagree (IDs out of range, an edge in two parts or away from its
            destination's part, a feature row given twice), naming the file and field.
        ConfigError: ``out_dir`` is not new, empty or an earlier output of ours.

    Example:
        >>> import tempfile, graphshard as gs
        >>> out = tempfile.mkdtemp()
        >>> gs.partition_graph(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), "ring", 2,
        ...                    f"{out}/parts", part_method="hash")
        >>> root = export_pyg(f"{out}/parts/ring.json", f"{out}/pyg")  # a PyG folder
        >>> cfg = import_pyg(root, f"{out}/back", graph_name="ring")
        >>> cfg.node_map, cfg.params["imported_from"]
        ({'_N': [[0, 2], [2, 4]]}, 'pyg')
    """
    torch = import_optional("torch", "import of PyG's partition folder")
    root = Path(root)
    if root.name == "META.json" and root.is_file():
        root = root.parent
    meta_path = root / "META.json"
    if not meta_path.is_file():
        raise PartitionNotFoundError(f"{meta_path}: missing (not a PyG partition folder?)",
                                     path=str(meta_path), field="META.json")
    try:
        obj = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise FormatError(f"{meta_path}: not a readable JSON file ({exc})"[:400],
                          path=str(meta_path), field="META.json") from exc
    meta = meta_from_json(obj, meta_path)
    name = graph_name if graph_name is not None else root.resolve().name
    _files.check_path_name(name, field="graph_name")
    maps: dict[str, dict[Any, IdArray]] = {"node": {}, "edge": {}}
    for kind, types in (("node", meta.ntypes), ("edge", meta.etypes)):
        for t in types:
            file = _required(root, meta.map_file(kind, t), meta_path)
            maps[kind][t] = read_map(load_pt(torch, file), file, meta.num_parts)
    num_nodes = {t: len(a) for t, a in maps["node"].items()}
    meta.check_offsets(num_nodes, meta_path)
    num_edges = {t: len(a) for t, a in maps["edge"].items()}
    parts = [(_read_part(torch, root, p, meta, meta_path, num_nodes, num_edges),
              root / f"part_{p}") for p in range(meta.num_parts)]
    g = assemble_graph(meta, maps["node"], maps["edge"], parts)
    log.info("read PyG's %d parts of %d nodes and %d edges from %s", meta.num_parts,
             g.num_nodes(), g.num_edges(), root)
    result = build_partitions(g, name, meta.num_parts, out_dir, assignment=maps["node"],
                              save_orig_ids=True,
                              extra_params={"imported_from": "pyg", "source": root.name})
    return read_config(result.config_path)


def _is_export(folder: Path) -> bool:
    """A folder :func:`export_pyg` wrote (its ``META.json`` has our mark)."""
    try:
        obj = json.loads((folder / "META.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and isinstance(obj.get("graphshard_export"), dict) \
        and obj["graphshard_export"].get("format") == "pyg"


def _remove_earlier(out: Path) -> None:
    """Remove an earlier export's files (``META.json`` first: the folder never looks
    complete); nothing else is touched."""
    (out / "META.json").unlink(missing_ok=True)
    for path in [*out.glob("part_*"), *(out / n for n in ("node_map", "edge_map"))]:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
    for name in ("node_map.pt", "edge_map.pt"):
        (out / name).unlink(missing_ok=True)


def _to_torch(torch: Any, obj: Any) -> Any:
    """NumPy arrays to tensors, through dicts, tuples and lists (keys kept)."""
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(obj if obj.flags.writeable else obj.copy())
    if isinstance(obj, dict):
        return {k: _to_torch(torch, v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to_torch(torch, v) for v in obj)
    return obj


def _save_pt(torch: Any, obj: Any, path: Path) -> None:
    with _files.atomic_path(path) as tmp:
        torch.save(_to_torch(torch, obj), tmp)


def export_pyg(config: ConfigLike, out_dir: str | os.PathLike[str], *, verify: bool = True
               ) -> Path:
    """Write the partitions of ``config`` as PyG's partition folder; returns the folder.

    ``torch_geometric.distributed.LocalGraphStore.from_partition(out_dir, pid)`` and
    ``LocalFeatureStore.from_partition(out_dir, pid)`` load part ``pid``: its inner edges
    and inner nodes' and edges' features, by original IDs (our ``orig_id``, per type), with
    the maps of every node's and edge's part.  See :mod:`graphshard.partition.pyg_export`.

    Args:
        config: Our partition config (path of ``<graph_name>.json``, or a read config).
        out_dir: Output folder: new, empty, or an earlier export (replaced).
        verify: Check our part files' SHA-256 while reading them.

    Raises:
        MissingDependencyError: ``torch`` is not installed.
        ValidationError: a feature PyG's files cannot hold (Ragged, sparse, non-numeric),
            a type name that cannot be a file name, or original IDs that are not one per
            node and edge; nothing is written.
        ConfigError: ``out_dir`` holds something other than an earlier export.

    Example:
        >>> import tempfile, torch, graphshard as gs
        >>> out = tempfile.mkdtemp()
        >>> gs.partition_graph(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), "ring", 2,
        ...                    f"{out}/parts", part_method="hash")
        >>> root = export_pyg(f"{out}/parts/ring.json", f"{out}/pyg")
        >>> sorted(p.name for p in root.iterdir())
        ['META.json', 'edge_map.pt', 'node_map.pt', 'part_0', 'part_1']
        >>> graph = load_pt(torch, root / "part_1" / "graph.pt")  # nodes 1 and 3 (hash)
        >>> graph["row"], graph["col"], graph["size"]
        (tensor([0, 2]), tensor([1, 3]), (4, 4))
    """
    torch = import_optional("torch", "export to PyG's partition format")
    cfg = as_config(config)
    meta: PyGMeta = pyg_meta(cfg)
    num_nodes = [cfg.type_sizes("node")[t] for t in cfg.ntypes]
    num_edges = [cfg.type_sizes("edge").get(":".join(e), 0) for e in meta.etypes]
    # first pass (unverified; every part is verified below before META.json completes the
    # folder): features checked, every original ID owned once, PyG's whole-type node time
    nseen = [np.zeros(n, np.int64) for n in num_nodes]
    eseen = [np.zeros(m, np.int64) for m in num_edges]
    node_map = [np.zeros(n, np.int64) for n in num_nodes]
    edge_map = [np.zeros(m, np.int64) for m in num_edges]
    node_time: dict[str, np.ndarray] = {}
    for p in range(cfg.num_parts):
        part = load_partition_data(cfg, p, verify=False)
        ids = export_part(part, meta, num_nodes, num_edges, features=False)
        for i, t in enumerate(meta.ntypes):
            node_map[i][ids.node_rows[t].ids] = p
            nseen[i] += np.bincount(ids.node_rows[t].ids, minlength=num_nodes[i])
        for i, et in enumerate(meta.etypes):
            edge_map[i][ids.edges[et][2]] = p
            eseen[i] += np.bincount(ids.edges[et][2], minlength=num_edges[i])
        if any(key.rpartition("/")[2] == "time" for key in part.node_feats):
            node_times(export_part(part, meta, num_nodes, num_edges), meta, num_nodes,
                       node_time)
    check_orig_cover(num_nodes, nseen, meta.ntypes, "node")
    check_orig_cover(num_edges, eseen, [":".join(e) for e in meta.etypes], "edge")
    out = _files.claim_out_dir(out_dir, _is_export, "PyG export of graphshard")
    _remove_earlier(out)
    for p in range(cfg.num_parts):
        rows = export_part(load_partition_data(cfg, p, verify=verify), meta, num_nodes,
                           num_edges)
        for name, obj in part_files(rows, meta, num_nodes, num_edges, node_time).items():
            _save_pt(torch, obj, out / f"part_{p}" / name)
    for t, arr in zip(meta.ntypes, node_map, strict=True):
        _save_pt(torch, arr, out / meta.map_file("node", t))
    for et, arr in zip(meta.etypes, edge_map, strict=True):
        _save_pt(torch, arr, out / meta.map_file("edge", et))
    doc = meta.to_json(num_nodes)
    doc["graphshard_export"] = {"format": "pyg", "graph_name": cfg.graph_name,
                                "source": cfg.path.name if cfg.path is not None
                                else cfg.graph_name}
    _files.write_json_atomic(out / "META.json", doc)
    _files.mark_complete(out)
    log.info("exported %d parts of %s to PyG's format in %s", cfg.num_parts, cfg.graph_name,
             out)
    return out
