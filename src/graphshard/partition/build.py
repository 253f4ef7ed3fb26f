"""partition_graph: assign, reshuffle, build local graphs, split features, write.

Each step is a module-level function in its own module; this one validates the arguments
(before anything is written) and runs the steps in order.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import numpy as np

from .._util.arrays import as_ids
from .._util.progress import progress
from ..errors import ConfigError, ValidationError
from ..graph import Graph
from ..storage import files as _files
from ..storage import fsys
from ..storage.files import INCOMPLETE_MARKER, check_path_name
from ..storage.scratch import scratch_folder
from ..typing import IdArray
from .adjacency import symmetric_adjacency
from .assignment import assignment_from_folder
from .config import make_config, write_config
from .constraints import balance_weights, machines_of_trainers
from .features import part_edge_features, part_node_features, per_type_orig_ids
from .files import write_part
from .local_graphs import build_local_graph, in_edge_index
from .methods import METHODS, MethodOptions, original_node_ids, run_method
from .report import PartitionReport, edge_cut, undirected_edge_cut
from .reshuffle import Reshuffle, reshuffle
from .source import stream_in_memory

__all__ = ["DEFAULT_METHOD", "PartitionResult", "build_partitions", "partition_graph"]

log = logging.getLogger(__name__)

#: Method used when none is named (see graphshard.partition.methods for the choice).
DEFAULT_METHOD = "auto"


@dataclass(frozen=True)
class PartitionResult:
    """What :func:`build_partitions` produced.

    Attributes:
        config_path: The written ``<graph_name>.json`` (its URI when ``out_path`` was an
            ``s3://``, ``gs://`` or ``hdfs://`` URI).
        report: Cut, balance, halo sizes and timings.
        orig_nids: New -> original node IDs (array, or per-type dict for several types).
        orig_eids: New -> original edge IDs (array, or per-type dict).
        parts: Part of every node, original homogeneous order (int64).
    """

    config_path: Path | str
    report: PartitionReport
    orig_nids: Any
    orig_eids: Any
    parts: IdArray

    def __repr__(self) -> str:
        return f"PartitionResult(config_path={str(self.config_path)!r}, report={self.report!r})"


def partition_graph(g: Graph, graph_name: str, num_parts: int, out_path: str | os.PathLike,
                    num_hops: int = 1, part_method: str | None = None,
                    balance_ntypes: Any = None, balance_edges: bool = False,
                    return_mapping: bool = False, num_trainers_per_machine: int = 1,
                    objtype: str = "cut", imbalance: float = 0.03, assignment: Any = None,
                    *, reshuffle: bool = True, seed: int = 0, save_orig_ids: bool = False,
                    time_budget: float | None = None) -> tuple[Any, Any] | None:
    """Partition ``g`` into ``num_parts`` parts and write them to ``out_path`` (DGL's API).

    Args:
        g: The graph (homogeneous or heterogeneous).
        graph_name: Name of the graph; the config is ``out_path/<graph_name>.json``.
        num_parts: Number of parts, ``1 <= num_parts <= number of nodes``.
        out_path: Output directory: new, empty, or a previous graphshard output (replaced);
            or an ``s3://``, ``gs://``, ``hdfs://`` or ``file://`` URI of one (the parts are
            built in node-local scratch and uploaded, the config last).
        num_hops: Hops of HALO nodes (>= 1).  Hop 1 adds the sources of a part's in-edges
            owned elsewhere; hop k also copies the in-edges of hop k-1's halo nodes.
        part_method: A name from :data:`~graphshard.partition.methods.METHODS`
            (default :data:`DEFAULT_METHOD`).
        balance_ntypes: One label per node (homogeneous order, e.g. a train mask); each
            part gets about the same number of nodes of each label.
        balance_edges: Also balance the number of edges per part.
        return_mapping: Return ``(orig_nids, orig_eids)``: new -> original IDs, per type
            (dicts) for heterogeneous graphs.
        num_trainers_per_machine: Cut ``num_parts * T`` trainer parts, store each node's
            trainer in node feature ``trainer_id``, and merge each machine's ``T`` parts.
        objtype: ``"cut"`` or ``"vol"`` (METIS's objective).
        imbalance: Allowed imbalance (0.03: parts up to 3% above the average).
        assignment: A precomputed part per node: an array in homogeneous order,
            ``{ntype: array}``, or a folder in DGL's partition-assignment layout
            (``<ntype>.txt``); the partition method is skipped.
        reshuffle: Must be True: non-reshuffled output is deprecated in DGL and refused.
        seed: Random seed of the partition method.
        save_orig_ids: Also write ``part<i>/orig_ids.safetensors`` (original per-type IDs).
        time_budget: For ``part_method="auto"``: the CPU time the backend may take on a
            skewed graph, as a multiple of METIS k-way's (None: 1.0; see
            :func:`~graphshard.partition.portfolio.auto_choice`).

    Returns:
        ``(orig_nids, orig_eids)`` when ``return_mapping`` is set, else None.

    Raises:
        ValidationError: a bad argument, named in the message; nothing is written.
        ConfigError: ``reshuffle=False`` or an output path that is not ours to replace.

    Example:
        >>> import tempfile, numpy as np, graphshard as gs
        >>> g = gs.graph(([0, 1, 2, 3, 4, 5], [1, 2, 0, 4, 5, 3]))
        >>> nids, eids = gs.partition_graph(g, "two", 2, tempfile.mkdtemp(),
        ...                                 part_method="metis", return_mapping=True)
        >>> sorted(nids.tolist())
        [0, 1, 2, 3, 4, 5]
    """
    result = build_partitions(
        g, graph_name, num_parts, out_path, num_hops=num_hops, part_method=part_method,
        balance_ntypes=balance_ntypes, balance_edges=balance_edges,
        num_trainers_per_machine=num_trainers_per_machine, objtype=objtype,
        imbalance=imbalance, assignment=assignment, reshuffle=reshuffle, seed=seed,
        save_orig_ids=save_orig_ids, time_budget=time_budget)
    return (result.orig_nids, result.orig_eids) if return_mapping else None


def build_partitions(g: Graph, graph_name: str, num_parts: int, out_path: str | os.PathLike,
                     *, num_hops: int = 1, part_method: str | None = None,
                     balance_ntypes: Any = None, balance_edges: bool = False,
                     num_trainers_per_machine: int = 1, objtype: str = "cut",
                     imbalance: float = 0.03, assignment: Any = None, reshuffle: bool = True,
                     seed: int = 0, threads: int | None = None, save_orig_ids: bool = False,
                     time_budget: float | None = None,
                     extra_params: Mapping[str, Any] | None = None) -> PartitionResult:
    """:func:`partition_graph` returning a :class:`PartitionResult` (report and ID maps).

    ``extra_params`` (JSON values) are recorded beside the run's arguments under the
    config's ``graphshard.params``, e.g. where an imported partition came from.

    Example:
        >>> import tempfile, graphshard as gs
        >>> g = gs.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
        >>> res = gs.partition.build_partitions(g, "ring", 2, tempfile.mkdtemp(),
        ...                                     part_method="hash")
        >>> res.report.edge_cut, res.report.part_nodes
        (4, [2, 2])
    """
    if fsys.is_remote(out_path):  # built in node-local staging, then uploaded, config last
        dest = fsys.open_location(out_path)
        fsys.check_remote_out_dir(dest)
        staging = scratch_folder(os.environ.get("GRAPHSHARD_SCRATCH"), "stage")
        try:
            res = build_partitions(
                g, graph_name, num_parts, staging, num_hops=num_hops, part_method=part_method,
                balance_ntypes=balance_ntypes, balance_edges=balance_edges,
                num_trainers_per_machine=num_trainers_per_machine, objtype=objtype,
                imbalance=imbalance, assignment=assignment, reshuffle=reshuffle, seed=seed,
                threads=threads, save_orig_ids=save_orig_ids, time_budget=time_budget,
                extra_params=extra_params)
            name = Path(res.config_path).name
            fsys.publish_folder(staging, dest, [name])
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        log.info("uploaded the parts to %s", dest)
        return replace(res, config_path=dest.child(name).uri)
    method = part_method or DEFAULT_METHOD
    out_dir = _check_arguments(g, graph_name, num_parts, out_path, num_hops, method,
                               num_trainers_per_machine, objtype, imbalance, reshuffle)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    src, dst, etype_ids = g.homogeneous_edges()
    n = g.num_nodes()
    ntype_ids = np.repeat(np.arange(len(g.ntypes), dtype=np.int32),
                          [g.num_nodes(t) for t in g.ntypes])
    given = None if assignment is None else _assignment_array(g, assignment, num_parts)
    seconds["prepare"] = _lap(clock)

    clock = time.perf_counter()
    trainer_parts = None
    if given is not None:
        parts, method = given, "assignment"
    else:
        options = MethodOptions(imbalance=imbalance, objtype=objtype, seed=seed,
                                threads=threads, node_ids=original_node_ids(g),
                                time_budget=time_budget,
                                type_counts=tuple(g.num_nodes(t) for t in g.ntypes))
        parts, method = _assign(g, src, dst, min(num_parts * num_trainers_per_machine,
                                                 max(n, 1)), method, options,
                                balance_ntypes, balance_edges)
        if num_trainers_per_machine > 1:
            trainer_parts = parts
            parts = machines_of_trainers(parts, num_trainers_per_machine)
    seconds["assign"] = _lap(clock)
    log.info("assigned %d nodes to %d parts with %s in %.2fs", n, num_parts, method,
             seconds["assign"])

    clock = time.perf_counter()
    shuffle = reshuffle_graph(g, parts, ntype_ids, src, dst, etype_ids, num_parts)
    seconds["reshuffle"] = _lap(clock)

    clock = time.perf_counter()
    written = _write_parts(g, out_dir, shuffle, etype_ids, num_hops, trainer_parts,
                           save_orig_ids, graph_name)
    seconds["write"] = _lap(clock)
    report = _report(g, method, num_parts, parts, src, dst, shuffle, written.halo,
                     written.halo1, seconds)
    params = {
        "part_method": method, "num_hops": num_hops, "balance_ntypes": balance_ntypes is not None,
        "balance_edges": balance_edges, "num_trainers_per_machine": num_trainers_per_machine,
        "objtype": objtype, "imbalance": imbalance, "seed": seed, **(extra_params or {})}
    config = write_config(out_dir, make_config(
        graph_name, g.ntypes, [":".join(et) for et in g.canonical_etypes], shuffle.node_ranges,
        shuffle.edge_ranges, num_hops=num_hops, parts=written.parts, files=written.files,
        part_method=method, report=report, params=params, trainers=num_trainers_per_machine))
    config_path: Path | str = cast(Path, config.path)  # set by write_config
    mark_complete(out_dir)
    log.info("wrote %d parts to %s: cut %d (%.2f%%), %.2fs", num_parts, out_dir,
             report.edge_cut, 100 * report.cut_ratio, sum(seconds.values()))
    orig_nids, orig_eids = _mappings(g, shuffle)
    return PartitionResult(config_path, report, orig_nids, orig_eids, parts)


def reshuffle_graph(g: Graph, parts: IdArray, ntype_ids: np.ndarray, src: IdArray,
                    dst: IdArray, etype_ids: np.ndarray, num_parts: int) -> Reshuffle:
    """:func:`~graphshard.partition.reshuffle.reshuffle` with the graph's type counts."""
    return reshuffle(parts, ntype_ids, len(g.ntypes), src, dst, etype_ids,
                     len(g.canonical_etypes), num_parts)


def _lap(start: float) -> float:
    return round(time.perf_counter() - start, 4)


def _assign(g: Graph, src: IdArray, dst: IdArray, num_parts: int, method: str,
            options: MethodOptions, balance_ntypes: Any, balance_edges: bool
            ) -> tuple[IdArray, str]:
    """The part of every node by ``method`` and the name it ran under (``auto:<backend>``):
    a streaming method over a chunked copy, else on the symmetric adjacency with the
    balance weights."""
    if METHODS[method].fn is None:
        return _streamed(g, num_parts, method, options, balance_ntypes, balance_edges), method
    n = g.num_nodes()
    adj = symmetric_adjacency(src, dst, n).with_vertex_weights(
        balance_weights(n, np.bincount(dst, minlength=n), balance_ntypes=balance_ntypes,
                        balance_edges=balance_edges))
    parts = run_method(adj, num_parts, method, options)
    if method == "auto":  # record what ran
        from .portfolio import auto_choice

        method = "auto:" + ":".join(auto_choice(adj, num_parts, options))
    return parts, method


def _streamed(g: Graph, num_parts: int, method: str, options: MethodOptions,
              balance_ntypes: Any, balance_edges: bool) -> IdArray:
    """The parts by a method that only streams (``lp``), run over a chunked copy of the
    graph's structure: the same parts as the pipeline gives for the same seed."""
    if balance_ntypes is not None:
        raise ValidationError(f"part_method {method!r} balances nodes and in-edges only; "
                              "balance_ntypes needs an in-memory method (metis, kaminpar, "
                              "...)", field="balance_ntypes")
    if num_parts == 1:
        return np.zeros(g.num_nodes(), dtype=np.int64)
    return stream_in_memory(g, num_parts, method, options, balance_edges=balance_edges,
                            threads=options.threads)


def _check_arguments(g: Graph, graph_name: str, num_parts: int, out_path: Any, num_hops: int,
                     method: str, trainers: int, objtype: str, imbalance: float,
                     reshuffle_ids: bool) -> Path:
    if reshuffle_ids is not True:
        raise ConfigError("reshuffle=False is not supported: DGL deprecated non-reshuffled "
                          "partitions; IDs are always reshuffled into contiguous ranges",
                          field="reshuffle", value=reshuffle_ids)
    if not isinstance(g, Graph):
        raise ValidationError(f"g must be a graphshard Graph, got {type(g).__name__} "
                              "(convert with graphshard.io.from_dgl / from_pyg)", field="g")
    check_path_name(graph_name, field="graph_name")
    n = g.num_nodes()
    if not isinstance(num_parts, (int, np.integer)) or num_parts < 1 or (n and num_parts > n):
        raise ValidationError(f"num_parts must be an integer in [1, {max(n, 1)}] (the number "
                              f"of nodes), got {num_parts!r}", field="num_parts",
                              value=num_parts)
    if not isinstance(num_hops, (int, np.integer)) or num_hops < 1:
        raise ValidationError(f"num_hops must be an integer >= 1, got {num_hops!r} (a part "
                              "always needs the sources of its in-edges)", field="num_hops",
                              value=num_hops)
    if method not in METHODS:
        raise ValidationError(f"unknown part_method {method!r}; choose one of {sorted(METHODS)}",
                              field="part_method", value=method)
    if not isinstance(trainers, (int, np.integer)) or trainers < 1:
        raise ValidationError(f"num_trainers_per_machine must be >= 1, got {trainers!r}",
                              field="num_trainers_per_machine", value=trainers)
    if objtype not in ("cut", "vol"):
        raise ValidationError(f"objtype must be 'cut' or 'vol', got {objtype!r}",
                              field="objtype", value=objtype)
    if not 0 <= imbalance < 1:
        raise ValidationError(f"imbalance must be in [0, 1), got {imbalance}",
                              field="imbalance", value=imbalance)
    return check_out_dir(fsys.local_path(out_path))


def check_out_dir(out_dir: Path) -> Path:
    """An output directory is new, empty or a previous graphshard output; never anything else
    (the rule of every writer: :func:`graphshard.storage.files.check_out_dir`)."""
    return _files.check_out_dir(out_dir, lambda d: bool(_previous_configs(d)),
                                "graphshard partition config")


def claim_out_dir(out_dir: Path) -> Path:
    """:func:`check_out_dir`, then create the folder and, unless it holds a previous
    output, mark it as being written: files put there before the config (a pipeline's
    assignment) do not make a rerun refuse it.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp()) / "parts"
        >>> [p.name for p in claim_out_dir(d).iterdir()]
        ['.graphshard-incomplete']
    """
    check_out_dir(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if not _previous_configs(out_dir):
        (out_dir / INCOMPLETE_MARKER).touch()
    return out_dir


def remove_previous_configs(out_dir: Path, graph_name: str | None = None) -> None:
    """Mark the folder as being written and delete old configs, so it never looks complete.

    The marker ``.graphshard-incomplete`` lets a rerun after a crash write into the folder
    again; :func:`write_config` callers remove it once the new config is in place.  Each
    config removed is logged: a warning when it held another graph than ``graph_name``
    (or ``graph_name`` is not given), INFO for an earlier run of the same graph.  Temp
    files a killed run left (outside the work folder ``.graphshard-work``) go too.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    _files.remove_stale_temps(out_dir, skip=(".graphshard-work",))
    (out_dir / INCOMPLETE_MARKER).touch()
    for old in _previous_configs(out_dir):
        name, parts = _config_summary(old)
        same = graph_name is not None and name == graph_name and old.stem == graph_name
        (log.info if same else log.warning)(
            "%s: replacing the earlier output %s (graph %r, %s parts)%s", out_dir, old.name,
            name, parts, "" if same or graph_name is None else f" with graph {graph_name!r}")
        old.unlink()


def _config_summary(path: Path) -> tuple[Any, Any]:
    """``(graph_name, num_parts)`` of a config, for the log line (None where unreadable)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return doc.get("graph_name"), doc.get("num_parts")
    except (OSError, ValueError, AttributeError):
        return None, None


def mark_complete(out_dir: Path) -> None:
    """Remove the marker of :func:`remove_previous_configs` (after the config is written)."""
    _files.mark_complete(out_dir)


def _previous_configs(out_dir: Path) -> list[Path]:
    found = []
    for path in out_dir.glob("*.json"):  # node_map: not a chunked or Euler meta of ours
        if _files.json_object_with(path, "graphshard", "node_map"):
            found.append(path)
    return found


def _assignment_array(g: Graph, assignment: Any, num_parts: int) -> IdArray:
    if isinstance(assignment, (str, os.PathLike)):
        parts = assignment_from_folder(assignment, g.ntypes)
    elif isinstance(assignment, Mapping):
        missing = [t for t in g.ntypes if t not in assignment]
        if missing:
            raise ValidationError(f"assignment has no entry for node types {missing}",
                                  field="assignment")
        parts = np.concatenate([as_ids(assignment[t], f"assignment[{t!r}]") for t in g.ntypes])
    else:
        parts = as_ids(assignment, "assignment")
    if len(parts) != g.num_nodes():
        raise ValidationError(f"assignment has {len(parts)} entries but the graph has "
                              f"{g.num_nodes()} nodes", field="assignment")
    bad = np.flatnonzero((parts < 0) | (parts >= num_parts))
    if bad.size:
        raise ValidationError(f"assignment[{bad[0]}] = {parts[bad[0]]} is not a part in "
                              f"[0, {num_parts})", field="assignment", value=int(parts[bad[0]]))
    return parts


@dataclass(frozen=True)
class _Written:
    """What :func:`_write_parts` wrote: each part's files, their size and SHA-256, and the
    halo sizes (all hops, and hop 1) of each part."""

    parts: list[dict[str, str]]
    files: dict[str, dict[str, Any]]
    halo: list[int]
    halo1: list[int]


def _write_parts(g: Graph, out_dir: Path, shuffle: Reshuffle, etype_ids: np.ndarray,
                 num_hops: int, trainer_parts: IdArray | None, save_orig_ids: bool,
                 graph_name: str) -> _Written:
    """Write every part's files (the old config goes first)."""
    remove_previous_configs(out_dir, graph_name)
    in_index = in_edge_index(shuffle) if num_hops > 1 else None
    ntype_of_new = np.repeat(np.tile(np.arange(len(g.ntypes), dtype=np.int32), shuffle.num_parts),
                             (shuffle.node_ranges[:, :, 1] - shuffle.node_ranges[:, :, 0]).T
                             .reshape(-1))
    extra = None
    if trainer_parts is not None:
        offsets = g.node_type_offsets()
        extra = {t: {"trainer_id": trainer_parts[offsets[i]:offsets[i + 1]]}
                 for i, t in enumerate(g.ntypes)}
    files: dict[str, dict[str, Any]] = {}
    parts_cfg: list[dict[str, str]] = []
    halo, halo1 = [], []
    for p in progress(range(shuffle.num_parts), desc="writing parts", unit="part"):
        local = build_local_graph(shuffle, p, num_hops, in_index)
        halo.append(local.num_halo_nodes)
        halo1.append(local.halo_per_hop[0] if local.halo_per_hop else 0)
        edge_orig = shuffle.edge_new2orig[local.edges]
        rel, records = write_part(
            out_dir, p, local, node_part=shuffle.node_part(local.nodes),
            node_orig=shuffle.node_new2orig[local.nodes], node_type=ntype_of_new[local.nodes],
            edge_orig=edge_orig, edge_type=etype_ids[edge_orig],
            node_feats=part_node_features(g, shuffle, p, extra),
            edge_feats=part_edge_features(g, shuffle, p),
            orig_ids=_orig_ids_of_part(g, shuffle, p) if save_orig_ids else None)
        files.update(records)
        parts_cfg.append(rel)
    return _Written(parts_cfg, files, halo, halo1)


def _orig_ids_of_part(g: Graph, shuffle: Reshuffle, p: int) -> dict[str, IdArray]:
    out = {}
    noff, eoff = g.node_type_offsets(), g.edge_type_offsets()
    for t, ntype in enumerate(g.ntypes):
        out[f"node/{ntype}"] = per_type_orig_ids(shuffle.node_new2orig, shuffle.node_ranges,
                                                 noff, t, p)
    for t, etype in enumerate(g.canonical_etypes):
        out[f"edge/{':'.join(etype)}"] = per_type_orig_ids(
            shuffle.edge_new2orig, shuffle.edge_ranges, eoff, t, p)
    return out


def _report(g: Graph, method: str, num_parts: int, parts: IdArray, src: IdArray, dst: IdArray,
            shuffle: Reshuffle, halo: list[int], halo1: list[int], seconds: dict[str, float]
            ) -> PartitionReport:
    sizes = shuffle.node_ranges[:, :, 1] - shuffle.node_ranges[:, :, 0]
    eb = shuffle.edge_bounds()
    return PartitionReport(
        method=method, num_parts=num_parts, num_nodes=g.num_nodes(), num_edges=g.num_edges(),
        edge_cut=edge_cut(parts, src, dst), comm_volume=int(sum(halo1)),
        part_nodes=sizes.sum(axis=0).tolist(), part_edges=np.diff(eb).tolist(),
        part_nodes_per_type={t: sizes[i].tolist() for i, t in enumerate(g.ntypes)},
        halo_nodes=list(halo), seconds=seconds,
        undirected_edge_cut=undirected_edge_cut(parts, src, dst))


def _mappings(g: Graph, shuffle: Reshuffle) -> tuple[Any, Any]:
    if len(g.ntypes) == 1 and len(g.canonical_etypes) <= 1:
        return shuffle.node_new2orig, shuffle.edge_new2orig
    noff, eoff = g.node_type_offsets(), g.edge_type_offsets()
    nids = {t: np.concatenate([per_type_orig_ids(shuffle.node_new2orig, shuffle.node_ranges,
                                                 noff, i, p) for p in range(shuffle.num_parts)])
            for i, t in enumerate(g.ntypes)}
    eids = {et: np.concatenate([per_type_orig_ids(shuffle.edge_new2orig, shuffle.edge_ranges,
                                                  eoff, i, p) for p in range(shuffle.num_parts)])
            for i, et in enumerate(g.canonical_etypes)}
    return nids, eids

