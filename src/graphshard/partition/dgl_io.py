"""Export our partitions as DGL's own partition folder, import DGL's into ours.

:func:`export_dgl` writes what DGL 2.1's ``dgl.distributed.load_partition`` and
``DistGraph`` load: ``<graph_name>.json`` and per part ``graph.dgl``, ``node_feat.dgl``,
``edge_feat.dgl``; ``orig_nids.dgl`` / ``orig_eids.dgl`` as DGL's pipeline writes them when
the partition kept its original IDs; with ``graphbolt=True``, DGL's GraphBolt
``fused_csc_sampling_graph.pt`` via ``dgl.distributed.dgl_partition_to_graphbolt``.
:func:`import_dgl` reads such a folder (made by DGL's ``partition_graph`` or by
:func:`export_dgl`) into our format.  Both need ``dgl`` (and ``torch``), imported only
when called; the layouts' differences are in :mod:`graphshard.partition.dgl_layout`.

DGL's files are its own binary formats (``.dgl`` through DGL's serializer; GraphBolt's
``.pt`` is ``torch.save``, i.e. pickle): they are written through temp files and renamed,
and the JSON goes last, but they carry no checksums; the folder we import into has ours.
DGL's ``partition_graph`` does not keep the original node and edge IDs, so an imported
partition's ``orig_id`` is the shuffled ID (``_ID``); DGL's pipeline's ``orig_nids.dgl`` /
``orig_eids.dgl`` (beside ``graph.dgl``), when every part has them, give ``orig_id`` and our
``orig_ids`` file, and :func:`export_dgl` writes them from our ``orig_ids``.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from .._util.optional import import_optional
from ..errors import FormatError, PartitionNotFoundError, ValidationError
from ..storage import files as _files
from ..storage.tensorfile import load_tensors
from .build import claim_out_dir, mark_complete, remove_previous_configs
from .config import ConfigLike, PartitionConfig, as_config, make_config, write_config
from .dense import check_dense
from .dgl_layout import (
    DGL_FILES,
    DGLPart,
    config_from_dgl,
    dgl_config,
    from_dgl_part,
    new_to_orig,
    to_dgl_part,
)
from .dgl_out_edges import concat_cross_edges, cross_edges, with_out_edges
from .files import load_partition_data, load_partition_feats, write_part

__all__ = ["export_dgl", "import_dgl"]

log = logging.getLogger(__name__)


def _is_export(folder: Path) -> bool:
    """A folder :func:`export_dgl` wrote (a JSON with our ``graphshard_export`` mark)."""
    for path in folder.glob("*.json"):
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(obj, dict) and isinstance(obj.get("graphshard_export"), dict) \
                and obj["graphshard_export"].get("format") == "dgl":
            return True
    return False


def _replace(tmp: Path, path: Path) -> None:
    """Flush ``tmp`` (written by DGL) to disk and rename it onto ``path``."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _orig_tensors(cfg: PartitionConfig, p: int, verify: bool) -> dict[str, dict[str, Any]]:
    """Our ``orig_ids`` file of part ``p`` (when written) as DGL's pipeline files:
    ``{"orig_nids.dgl": {ntype: ids}, "orig_eids.dgl": {"src:rel:dst": ids}}``."""
    if "orig_ids" not in cfg.parts[p]:
        return {}
    tensors, _ = load_tensors(cfg.part_file(p, "orig_ids", verify=verify))
    out: dict[str, dict[str, Any]] = {"orig_nids.dgl": {}, "orig_eids.dgl": {}}
    for key, ids in tensors.items():
        kind, _, name = key.partition("/")
        out["orig_nids.dgl" if kind == "node" else "orig_eids.dgl"][name] = \
            np.array(ids, np.int64)
    return out


def _save_part(dgl: Any, torch: Any, out: Path, part_id: int, part: DGLPart,
               orig: dict[str, dict[str, Any]]) -> None:
    folder = out / f"part{part_id}"
    folder.mkdir(parents=True, exist_ok=True)
    g = dgl.graph((torch.from_numpy(part.src), torch.from_numpy(part.dst)),
                  num_nodes=len(part.ndata["_ID"]))
    for key, value in part.ndata.items():
        g.ndata[key] = torch.from_numpy(value)
    for key, value in part.edata.items():
        g.edata[key] = torch.from_numpy(value)
    rel = {k: Path(v.format(p=part_id)) for k, v in DGL_FILES.items()}
    rel.update({name: Path(f"part{part_id}") / name for name in orig})
    tmp = {k: out / v.with_name(f".{v.name}.tmp-{os.getpid()}") for k, v in rel.items()}
    try:
        dgl.save_graphs(str(tmp["part_graph"]), [g])
        for key, feats in (("node_feats", part.node_feats), ("edge_feats", part.edge_feats),
                           *orig.items()):
            dgl.data.utils.save_tensors(str(tmp[key]),
                                        {k: torch.from_numpy(v) for k, v in feats.items()})
        for key, path in rel.items():
            _replace(tmp[key], out / path)
    finally:
        for path in tmp.values():
            path.unlink(missing_ok=True)


def export_dgl(config: ConfigLike, out_dir: str | os.PathLike[str], *, graphbolt: bool = False,
               verify: bool = True) -> Path:
    """Write the partitions of ``config`` as DGL's partition folder; returns its JSON.

    Args:
        config: Our partition config (path of ``<graph_name>.json``, or a read config).
        out_dir: Output folder: new, empty, or an earlier export (replaced).
        graphbolt: Also write DGL's GraphBolt graphs (``part_graph_graphbolt``, needs a DGL
            with ``dgl.distributed.dgl_partition_to_graphbolt``, 2.1 or later).
        verify: Check our part files' SHA-256 while reading them.

    Returns:
        ``out_dir/<graph_name>.json``, for ``dgl.distributed.load_partition`` and
        ``DistGraph(graph_name, part_config=...)``.

    Raises:
        MissingDependencyError: ``dgl`` or ``torch`` is not installed.
        ValidationError: a feature DGL cannot hold (Ragged, sparse, non-numeric), or a DGL
            without GraphBolt conversion when ``graphbolt`` is set; nothing is written.
        ConfigError: ``out_dir`` holds something other than an earlier export.

    Example:
        >>> export_dgl("parts/shop.json", "dgl_parts/")  # doctest: +SKIP
        PosixPath('dgl_parts/shop.json')
    """
    dgl = import_optional("dgl", "export to DGL's partition format")
    torch = import_optional("torch", "export to DGL's partition format")
    cfg: PartitionConfig = as_config(config)
    if graphbolt and not hasattr(dgl.distributed, "dgl_partition_to_graphbolt"):
        raise ValidationError(f"DGL {dgl.__version__} cannot convert partitions to GraphBolt "
                              "(dgl.distributed.dgl_partition_to_graphbolt is new in 2.1)",
                              field="graphbolt", value=True)
    typed = len(cfg.ntypes) > 1 or len(cfg.etypes) > 1  # DGL writes _TYPE only then
    for p in range(cfg.num_parts):  # features DGL cannot hold: refused before writing
        for feats in load_partition_feats(cfg, p, verify=False):
            for key, col in feats.items():
                check_dense(key, col)
    out = _files.claim_out_dir(out_dir, _is_export, "DGL export of graphshard")
    for old in out.glob("*.json"):  # the earlier export's JSON first: never looks complete
        old.unlink()
    # DGL's parts also hold the out-edges of their inner nodes: first the edges that
    # cross parts, from every part, then each part with its own out-edges added (read
    # unverified here: every part is verified below, before the JSON makes it complete)
    cross = concat_cross_edges([
        cross_edges(to_dgl_part(load_partition_data(cfg, p, verify=False), typed=True,
                                features=False), p)
        for p in range(cfg.num_parts)])
    for p in range(cfg.num_parts):
        part = with_out_edges(to_dgl_part(load_partition_data(cfg, p, verify=verify),
                                          typed=typed), p, cross)
        _save_part(dgl, torch, out, p, part, _orig_tensors(cfg, p, verify))
    path = out / f"{cfg.graph_name}.json"
    source = cfg.path.name if cfg.path is not None else cfg.graph_name
    _files.write_json_atomic(path, dgl_config(cfg, source=source))
    if graphbolt:
        dgl.distributed.dgl_partition_to_graphbolt(str(path))
    _files.mark_complete(out)
    log.info("exported %d parts of %s to DGL's format in %s", cfg.num_parts, cfg.graph_name,
             out)
    return path


def _numpy(value: Any, file: Path, key: str) -> np.ndarray:
    try:
        return np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    except (TypeError, RuntimeError) as exc:  # e.g. bfloat16, which NumPy has no type for
        raise FormatError(f"{file}: tensor {key!r} cannot become a NumPy array ({exc})",
                          path=str(file), field=key) from exc


def _load_orig(dgl: Any, folder: Path) -> dict[str, dict[str, np.ndarray]]:
    """DGL's pipeline files ``orig_nids.dgl`` / ``orig_eids.dgl`` beside a part's graph
    (``--save-orig-nids`` / ``--save-orig-eids``), those present: ``{"node"|"edge": {type:
    per-type original IDs}}``."""
    out = {}
    for kind, name in (("node", "orig_nids.dgl"), ("edge", "orig_eids.dgl")):
        file = folder / name
        if file.is_file():
            try:
                tensors = dgl.data.utils.load_tensors(str(file))
            except Exception as exc:  # DGL's loader raises DGLError, RuntimeError, ...
                raise FormatError(f"{file}: DGL could not read it ({type(exc).__name__}: "
                                  f"{exc})"[:500], path=str(file), field=name) from exc
            out[kind] = {k: _numpy(v, file, k) for k, v in tensors.items()}
    return out


def _load_part(dgl: Any, base: Path, cfg_path: Path, entry: dict[str, str], part_id: int
               ) -> tuple[DGLPart, Path]:
    files: dict[str, Path] = {}
    for key in ("part_graph", "node_feats", "edge_feats"):
        if key not in entry:
            raise FormatError(f"{cfg_path}: part-{part_id} has no {key!r}", path=str(cfg_path),
                              field=f"part-{part_id}.{key}")
        file = _files.path_inside(base, entry[key], field=f"part-{part_id}.{key}",
                                  path=cfg_path)
        if not file.is_file():
            raise PartitionNotFoundError(f"{cfg_path}: part-{part_id} {key} file {file} is "
                                         "missing", path=str(file), field=key)
        files[key] = file
    try:
        graphs, _ = dgl.load_graphs(str(files["part_graph"]))
        g = graphs[0]
        src, dst = g.edges(order="eid")
        ndata = {k: _numpy(v, files["part_graph"], k) for k, v in g.ndata.items()}
        edata = {k: _numpy(v, files["part_graph"], k) for k, v in g.edata.items()}
        feats = [{k: _numpy(v, files[key], k)
                  for k, v in dgl.data.utils.load_tensors(str(files[key])).items()}
                 for key in ("node_feats", "edge_feats")]
    except FormatError:
        raise
    except Exception as exc:  # DGL's loaders raise DGLError, RuntimeError, ... on bad files
        raise FormatError(f"{files['part_graph'].parent}: DGL could not read part {part_id} "
                          f"({type(exc).__name__}: {exc})"[:500], path=str(files["part_graph"]),
                          field=f"part-{part_id}") from exc
    part = DGLPart(_numpy(src, files["part_graph"], "src").astype(np.int64),
                   _numpy(dst, files["part_graph"], "dst").astype(np.int64), ndata, edata,
                   feats[0], feats[1])
    return part, files["part_graph"]


def import_dgl(dgl_config_path: str | os.PathLike[str], out_dir: str | os.PathLike[str]
               ) -> PartitionConfig:
    """Read DGL's partition folder (its ``<graph_name>.json``) into our format in
    ``out_dir``; returns the written config.

    Local nodes and edges are reordered to ours (inner first, in global ID order); IDs,
    ranges, types, owners and features are DGL's.  The config has no report
    (``graphshard inspect`` needs one) and ``params`` names the source.

    Raises:
        MissingDependencyError: ``dgl`` is not installed.
        FormatError: DGL's JSON or a part file is malformed or disagrees with the book,
            naming the file.
        ConfigError: ``out_dir`` is not new, empty or an earlier output of ours.

    Example:
        >>> import_dgl("dgl_parts/shop.json", "parts/")  # doctest: +SKIP
        PartitionConfig(graph_name='shop', num_parts=2, ntypes=['item', 'user'], ...)
    """
    dgl = import_optional("dgl", "import of DGL's partition format")
    path = Path(dgl_config_path)
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FormatError(f"{path}: not a readable JSON file ({exc})", path=str(path)
                          ) from exc
    cfg = config_from_dgl(meta, path)
    out = claim_out_dir(Path(out_dir))
    loaded, origs = [], []
    for p in range(cfg.num_parts):  # everything checked before the first write
        part, where = _load_part(dgl, path.parent, path, cfg.parts[p], p)
        loaded.append(from_dgl_part(part, cfg, p, where=where))
        origs.append(_load_orig(dgl, where.parent))
    new2orig = {kind: new_to_orig(cfg, [o[kind] for o in origs], kind, where=path.parent)
                for kind in ("node", "edge") if all(kind in o for o in origs)}
    remove_previous_configs(out)
    parts_cfg, records = [], {}
    for p, imp in enumerate(loaded):
        orig_ids = {f"{kind}/{name}": ids for kind in new2orig
                    for name, ids in origs[p][kind].items()} or None
        rel, written = write_part(
            out, p, imp.local,
            node_part=imp.node_part, node_orig=new2orig["node"][imp.local.nodes]
            if "node" in new2orig else imp.local.nodes,
            node_type=imp.node_type, edge_orig=new2orig["edge"][imp.local.edges]
            if "edge" in new2orig else imp.local.edges, edge_type=imp.edge_type,
            node_feats=imp.node_feats, edge_feats=imp.edge_feats, orig_ids=orig_ids)
        parts_cfg.append(rel)
        records.update(written)
    trainers = meta.get("num_trainers_per_machine", 1)
    config = write_config(out, make_config(
        cfg.graph_name, cfg.ntypes, cfg.etypes, cfg.node_ranges, cfg.edge_ranges,
        num_hops=cfg.halo_hops, parts=parts_cfg, files=records, part_method=cfg.part_method,
        report=None, params={"imported_from": "dgl", "source": path.name},
        trainers=trainers if isinstance(trainers, int) and trainers >= 1 else 1))
    mark_complete(out)
    log.info("imported %d DGL parts of %s into %s", cfg.num_parts, cfg.graph_name, out)
    return config
