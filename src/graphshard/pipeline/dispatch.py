"""Step 2 of the pipeline: chunked graph + assignment -> the partition format, out of core.

The result is exactly what :func:`graphshard.partition_graph` writes for the same graph
and assignment (same arrays in every file), built by tasks that each hold one chunk or one
part: no worker ever holds the whole graph.

Steps (every task reads its input from files and writes its output to files; steps 1-4
are :mod:`.route`, the plan every task receives :mod:`.plan`, the memory checks
:mod:`.budget`):

1. count the parts of each block of node IDs (in the driver: a bincount per block);
2. write the node ID maps: original per-type ID -> new ID, new ID -> original homogeneous ID;
3. split every edge chunk by the part of its destination, in new IDs (resumable pieces;
   a counting-sort kernel of :mod:`.kernels`);
4. split every feature chunk by owning part (resumable pieces);
5. build and write each part: inner edges, halo, node/edge data, features (resumable);
6. write the config JSON last, with checksums and the report.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from ..errors import FormatError, ValidationError
from ..io.chunked import ChunkedMeta, load_chunked_meta, read_data_chunk, read_edge_chunk
from ..partition.assignment import assignment_num_parts, read_assignment
from ..partition.build import check_out_dir, mark_complete, remove_previous_configs
from ..partition.config import make_config, write_config
from ..partition.report import PartitionReport
from ..runtime.executor import make_executor
from ..storage import fsys
from ..storage.files import (
    INCOMPLETE_MARKER,
    atomic_path,
    check_path_name,
    file_sha256,
    warn_if_short_of_space,
)
from ..storage.scratch import ScratchPool, scratch_folder
from ..storage.workstore import WorkStore, new_run_id
from .budget import check_budget, check_memory_budget, check_part_budget
from .parts import build_part
from .plan import Plan
from .route import run_feature_steps, run_id_steps

__all__ = ["DispatchResult", "Plan", "check_memory_budget", "checked_graph_name", "dispatch"]

log = logging.getLogger(__name__)

#: bytes the output folder holds per edge at its peak (parts beside the work files), with
#: no features and no original IDs (measured: benchmarks/TUNING.md)
OUTPUT_BYTES_PER_EDGE = 58


@dataclass(frozen=True)
class DispatchResult:
    """What :func:`dispatch` produced: the config path (its URI when
    :func:`~graphshard.pipeline.run_pipeline` uploaded it) and the report."""

    config_path: Path | str
    report: PartitionReport


# ----- the driver -----------------------------------------------------------------------------
def _count_rows(metadata: str, kind: str, type_name: str, name: str, c: int) -> int:
    meta = load_chunked_meta(metadata)
    if kind == "edges":
        return len(read_edge_chunk(meta, type_name, c, 0).src)
    return len(read_data_chunk(meta, kind, type_name, name, c, 0).data)


def _offsets(counts: list[int]) -> list[tuple[int, int]]:
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(int)
    return [(int(starts[i]), int(counts[i])) for i in range(len(counts))]


def _prepare_assignment(assign_dir: Path, meta: ChunkedMeta, store: WorkStore,
                        num_parts: int | None, trainers: int = 1) -> int:
    """Copy the assignment as .npy into the work folder (checked); return num_parts.

    With ``trainers > 1`` the assignment holds trainer parts ``0 .. num_parts * trainers -
    1``: trainer parts ``m*T .. m*T+T-1`` form machine part ``m`` (as in
    :func:`~graphshard.partition.partition_graph`); the machine parts are copied, and the
    trainer parts beside them for the ``trainer_id`` node feature.
    """
    parts = read_assignment(assign_dir, list(meta.num_nodes))
    total = num_parts * trainers if num_parts else assignment_num_parts(assign_dir) or \
        1 + max((int(a.max(initial=-1)) for a in parts.values()), default=0)
    if total % trainers:
        raise ValidationError(f"{assign_dir}: the assignment has {total} parts, which "
                              f"num_trainers_per_machine={trainers} does not divide (assign "
                              "num_parts * num_trainers_per_machine parts)",
                              field="num_trainers_per_machine", value=trainers)
    for ntype, arr in parts.items():
        if len(arr) != meta.num_nodes[ntype]:
            raise FormatError(f"{assign_dir}: {ntype}.txt has {len(arr)} lines but the graph "
                              f"has {meta.num_nodes[ntype]} {ntype!r} nodes",
                              path=str(assign_dir), field=ntype)
        if trainers > 1:
            bad = np.flatnonzero((arr < 0) | (arr >= total))
            if bad.size:
                raise ValidationError(f"{assign_dir}: node {bad[0]} of type {ntype!r} is in "
                                      f"trainer part {arr[bad[0]]}, outside [0, {total})",
                                      field=ntype)
            rel = f"assign/{ntype}.trainer.npy"
            with atomic_path(store.path(rel)) as tmp, open(tmp, "wb") as handle:
                np.save(handle, arr.astype(np.int64), allow_pickle=False)
            if store.remote:
                store.finish([rel], "assignment", None, keep_local=True)
            arr = arr // trainers
        rel = f"assign/{ntype}.npy"
        with atomic_path(store.path(rel)) as tmp, open(tmp, "wb") as handle:
            np.save(handle, arr, allow_pickle=False)
        if store.remote:  # this process (the driver) reads it again: kept
            store.finish([rel], "assignment", None, keep_local=True)
    return int(total // trainers)


def checked_graph_name(meta: ChunkedMeta, chunked_dir: str | os.PathLike[str],
                       graph_name: str | None) -> str:
    """The name of the config a dispatch writes, once it and every node type name are
    known to be safe as file names (they become ``<graph_name>.json`` and
    ``<ntype>.npy``/``.txt``): checked before any work, so that a name from the chunked
    ``metadata.json`` can never lead a write outside the output folder.

    The name is ``graph_name`` if given, else the metadata's ``graph_name``, else the
    name of the chunked folder.

    Raises:
        ValidationError: naming the field, the file it came from and the value.

    Example:
        >>> import tempfile, graphshard as gs
        >>> from graphshard.io.chunked import load_chunked_meta
        >>> d = tempfile.mkdtemp()
        >>> gs.io.write_chunked(gs.graph(([0, 1], [1, 2])), f"{d}/g", 1)
        >>> checked_graph_name(load_chunked_meta(f"{d}/g"), f"{d}/g", None)
        'graph'
        >>> checked_graph_name(load_chunked_meta(f"{d}/g"), f"{d}/g", "../x")
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: graph_name must be a plain file name (no '/', \
'\\', control characters, leading '.'), got '../x'
    """
    for ntype in meta.num_nodes:
        check_path_name(ntype, field="node_type", path=meta.path)
    if graph_name:
        return check_path_name(graph_name, field="graph_name")
    if meta.graph_name:
        return check_path_name(meta.graph_name, field="graph_name", path=meta.path)
    folder = (Path(fsys.shown(chunked_dir).split("://", 1)[1]) if fsys.is_remote(chunked_dir)
              else Path(chunked_dir).resolve())
    return check_path_name(folder.name,
                           field="graph_name (the chunked folder's name)")


def dispatch(chunked_dir: str | os.PathLike[str], assign_dir: str | os.PathLike[str],
             out_dir: str | os.PathLike[str], *, graph_name: str | None = None,
             num_parts: int | None = None, num_hops: int = 1, save_orig_ids: bool = False,
             use_ray: bool = False, address: str | None = None,
             memory_budget: int | None = None, node_block: int = 1 << 20,
             keep_work: bool = False,
             scratch_pool: str | os.PathLike[str] | None = None,
             num_trainers_per_machine: int = 1) -> DispatchResult:
    """Build the partition format from a chunked graph and a partition assignment.

    Args:
        chunked_dir: Folder with DGL's chunked ``metadata.json``: a path or a URI
            (``s3://`` ...), whose chunks each task copies to node-local scratch as it
            reads them.
        assign_dir: Folder with ``<ntype>.txt`` (or ``.npy``) part IDs (a URI is copied
            to this process first).
        out_dir: Output folder (new, empty, or a previous graphshard output); a URI puts
            the work folder there too (``<out_dir>/.graphshard-work``): every task copies
            the pieces it reads to node-local scratch and uploads what it writes, each
            part task uploads its part, and the config comes last (see
            :mod:`graphshard.storage.workstore`), so no two workers share a disk.
        graph_name: Name in the config (default: the chunked metadata's).
        num_parts: Number of parts (default: from ``assignment.json`` or the largest ID).
        num_hops: HALO hops (>= 1).
        save_orig_ids: Also write the original per-type IDs of each part.
        use_ray: Run the tasks on Ray (a local Ray unless ``address`` names a cluster).
        memory_budget: Bytes one task may use; the run stops before starting work when
            the largest chunk or part does not fit, saying which.
        node_block: Nodes per node-ID task.
        keep_work: Keep the work folder (``out_dir/.graphshard-work``) after success.
        scratch_pool: A :class:`~graphshard.storage.scratch.ScratchPool` folder of freed files
            (an earlier step's scratch) for the routed pieces to be written over in
            place: fewer fresh pages (see :mod:`graphshard.storage.scratch`).  Used only on the
            file system of ``out_dir``; the caller removes it.
        num_trainers_per_machine: Trainers per machine (DGL's key): the assignment holds
            ``num_parts * num_trainers_per_machine`` trainer parts, trainer parts
            ``m*T .. m*T+T-1`` form part ``m``, and each node's trainer part is written as
            node feature ``"<ntype>/trainer_id"``, as :func:`~graphshard.partition_graph`
            does (``num_parts`` is then the number of machines).

    Running the same command again after a crash reuses every finished, checksum-verified
    piece and produces identical output (remote pieces: their done-markers and sizes are
    checked, and each SHA-256 when a task copies the piece).

    Raises:
        ValidationError: the graph name or a node type name (from the arguments or the
            chunked metadata) is not a plain file name; nothing is written.

    Example:
        >>> import tempfile, numpy as np, graphshard as gs
        >>> from graphshard.partition.assignment import write_assignment
        >>> d = tempfile.mkdtemp()
        >>> g = gs.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
        >>> gs.io.write_chunked(g, f"{d}/chunked", 2)
        >>> write_assignment(f"{d}/assign", {"_N": np.array([0, 0, 1, 1])}, 2)
        >>> dispatch(f"{d}/chunked", f"{d}/assign", f"{d}/parts").report.edge_cut
        2
    """
    clock = time.perf_counter()
    chunked_dir, assign_dir, out_dir = (p if fsys.is_remote(p) else fsys.local_path(p)
                                        for p in (chunked_dir, assign_dir, out_dir))
    meta = load_chunked_meta(chunked_dir)
    name = checked_graph_name(meta, chunked_dir, graph_name)
    dest = fsys.open_location(out_dir) if fsys.is_remote(out_dir) else None
    if dest is not None:
        fsys.check_remote_out_dir(dest)
        out = scratch_folder(os.environ.get("GRAPHSHARD_SCRATCH"), "config")  # the config
        store = WorkStore(dest.child(".graphshard-work").uri, new_run_id(dest.uri))
    else:
        out = check_out_dir(Path(out_dir))
        store = WorkStore(str(out / ".graphshard-work"))
    try:
        return _dispatch(meta, name, assign_dir, out, dest, store, num_parts=num_parts,
                         num_hops=num_hops, save_orig_ids=save_orig_ids, use_ray=use_ray,
                         address=address, memory_budget=memory_budget, node_block=node_block,
                         keep_work=keep_work, scratch_pool=scratch_pool,
                         trainers=num_trainers_per_machine, clock=clock)
    finally:
        if dest is not None:
            shutil.rmtree(out, ignore_errors=True)


def _dispatch(meta: ChunkedMeta, name: str, assign_dir: str | os.PathLike[str], out: Path,
              dest: fsys.Location | None, store: WorkStore, *, num_parts: int | None,
              num_hops: int, save_orig_ids: bool, use_ray: bool, address: str | None,
              memory_budget: int | None, node_block: int, keep_work: bool,
              scratch_pool: str | os.PathLike[str] | None, trainers: Any, clock: float
              ) -> DispatchResult:
    """:func:`dispatch` once its output is known: a local folder ``out`` (``dest`` None),
    or the remote folder ``dest`` with ``out`` a local folder for its config."""
    if num_hops < 1:
        raise ValidationError(f"num_hops must be >= 1, got {num_hops}", field="num_hops")
    if not isinstance(trainers, (int, np.integer)) or isinstance(trainers, bool) \
            or trainers < 1:
        raise ValidationError(f"num_trainers_per_machine must be an integer >= 1, got "
                              f"{trainers!r}", field="num_trainers_per_machine", value=trainers)
    if memory_budget is not None and memory_budget <= 0:
        raise ValidationError(f"memory_budget must be a positive number of bytes, got "
                              f"{memory_budget!r}", field="memory_budget", value=memory_budget)
    # the chunks the metadata sizes, before the assignment is copied into the work folder
    # (the parts are checked once the part count is known)
    check_budget([n for et in meta.num_edges for n in (meta.edge_chunks[et] or [])], 0, 1,
                  memory_budget)
    if dest is None:
        warn_if_short_of_space(out, _space_needed(meta, save_orig_ids), "dispatch's output",
                               "a rerun reuses the pieces already written")
    else:  # the remote folder never looks complete from now until its config is back
        dest.child(INCOMPLETE_MARKER).write_bytes(b"")
        for rel in fsys.remote_configs(dest):
            dest.child(rel).delete()
    local_assign = Path(assign_dir) if not fsys.is_remote(assign_dir) else \
        _local_assignment(str(assign_dir), out / ".assignment")
    k = _prepare_assignment(local_assign, meta, store, num_parts, int(trainers))
    ntypes = list(meta.num_nodes)
    etypes = [":".join(et) for et in meta.num_edges]
    # in-process, one task at a time: each may use up to memory_budget
    executor = make_executor(num_workers=None if use_ray or address else 1, use_ray=use_ray,
                             address=address)
    cleanup = None
    try:
        plan = _make_plan(meta, executor, store, out if dest is None else dest.uri, ntypes,
                          etypes, k, node_block, num_hops,
                          None if dest else _same_file_system(scratch_pool, out),
                          int(trainers))
        if plan.scratch is not None:  # one freed file for each routed piece
            ScratchPool(plan.scratch).keep_largest(_num_pieces(plan))
        sizes = [rows for chunks in plan.edge_chunks for _, rows in chunks]
        check_budget(sizes, sum(sizes), plan.num_parts, memory_budget)
        node_ranges, edge_ranges, prefix = run_id_steps(plan, executor, meta, memory_budget)
        check_part_budget(edge_ranges, memory_budget)
        run_feature_steps(plan, executor, memory_budget)
        if dest is None:
            remove_previous_configs(out, name)
        results = _build_parts(plan, executor, node_ranges, edge_ranges, prefix,
                               save_orig_ids, memory_budget)
        written, report = _write_config(
            out, meta, assign_dir, local_assign, name, ntypes, etypes, k,
            node_ranges, edge_ranges, num_hops, results, clock, int(trainers))
        config_path: Path | str = written
        if dest is not None:  # the config last, then the marker goes
            dest.child(written.name).write_bytes(written.read_bytes())
            dest.child(INCOMPLETE_MARKER).delete()
            config_path = dest.child(written.name).uri
        else:
            mark_complete(out)
        if not keep_work:  # while Ray shuts down
            pool = ThreadPoolExecutor(1)
            cleanup = pool.submit(store.remove)
            pool.shutdown(wait=False)
    finally:
        executor.close()
    if cleanup is not None:
        cleanup.result()  # a failed removal raises here
    return DispatchResult(config_path, report)


def _num_pieces(plan: Plan) -> int:
    """Routed pieces (edges and features) that dispatch writes: the files it may write
    over freed scratch files (parts are output, written around the page cache)."""
    feats = [*plan.node_feats.values(), *plan.edge_feats.values()]
    return sum(map(len, plan.edge_chunks)) + sum(len(chunks) for columns in feats
                                                 for _, chunks in columns)


def _space_needed(meta: ChunkedMeta, save_orig_ids: bool) -> int:
    """Bytes of output and work files at their peak, estimated: per edge as measured, and
    every feature file twice (its routed pieces, then the parts)."""
    edges, nodes = sum(meta.num_edges.values()), sum(meta.num_nodes.values())
    need = OUTPUT_BYTES_PER_EDGE * edges + (8 * (edges + nodes) if save_orig_ids else 0)
    for features in (*meta.node_data.values(), *meta.edge_data.values()):
        for spec in features.values():
            need += 2 * sum(f.stat().st_size for f in spec.files if f.exists())
    return need


def _write_config(out: Path, meta: ChunkedMeta, assign_dir: str | os.PathLike[str],
                  local_assign: Path, name: str, ntypes: list[str], etypes: list[str], k: int,
                  node_ranges: np.ndarray, edge_ranges: np.ndarray, num_hops: int,
                  results: list[dict[str, Any]], clock: float, trainers: int = 1
                  ) -> tuple[Path, PartitionReport]:
    """Write the partition config (with the run's report) from the parts' summaries."""
    files: dict[str, Any] = {}
    for res in results:
        files.update(res["files"])
    method = _method_name(local_assign)
    sizes = node_ranges[:, :, 1] - node_ranges[:, :, 0]
    report = PartitionReport(
        method=method, num_parts=k, num_nodes=int(sizes.sum()),
        num_edges=int((edge_ranges[:, :, 1] - edge_ranges[:, :, 0]).sum()),
        edge_cut=sum(r["cut"] for r in results), comm_volume=sum(r["halo1"] for r in results),
        part_nodes=sizes.sum(axis=0).tolist(),
        part_edges=(edge_ranges[:, :, 1] - edge_ranges[:, :, 0]).sum(axis=0).tolist(),
        part_nodes_per_type={t: sizes[i].tolist() for i, t in enumerate(ntypes)},
        halo_nodes=[r["halo"] for r in results],
        seconds={"dispatch": round(time.perf_counter() - clock, 4)})
    config = write_config(out, make_config(
        name, ntypes, etypes, node_ranges, edge_ranges, num_hops=num_hops,
        parts=[res["rel"] for res in results], files=files, part_method=method, report=report,
        params={"num_hops": num_hops, "num_trainers_per_machine": trainers,
                "source": fsys.shown(meta.source) if meta.source else str(meta.path),
                "assignment": fsys.shown(assign_dir)},
        trainers=trainers))
    return cast(Path, config.path), report  # set by write_config


def _local_assignment(uri: str, target: Path) -> Path:
    """A remote assignment folder as a local one.  One that :func:`run_pipeline` wrote
    (its done-marker records every file's size and SHA-256) is taken from this process's
    copy when that still matches the marker (the driver that just uploaded it), else
    downloaded and checked; any other (DGL's layout, uploaded) is copied whole."""
    store = WorkStore(uri)
    info = store.read_marker("assignment.json")
    if info is None or not isinstance(info.get("files"), dict):
        return fsys.download_folder(fsys.open_location(uri), target)
    for rel, rec in info["files"].items():
        copy = store.path(rel)
        if not (copy.is_file() and copy.stat().st_size == rec.get("bytes")
                and file_sha256(copy) == rec.get("sha256")):
            store.release(rel)
            store.fetch(rel, marker="assignment.json")
    return store.path("assignment.json").parent


def _method_name(assign_dir: Path) -> str:
    info = assign_dir / "assignment.json"
    if info.exists():
        return str(json.loads(info.read_text(encoding="utf-8")).get("method", "assignment"))
    return "assignment"


def _same_file_system(pool: str | os.PathLike[str] | None, out: Path) -> str | None:
    """``pool`` as a string when it is a folder on ``out``'s file system, else None."""
    try:
        return str(pool) if pool is not None and \
            os.stat(pool).st_dev == os.stat(out).st_dev else None
    except OSError:
        return None


def _make_plan(meta: ChunkedMeta, executor, store: WorkStore, out: Path | str,
               ntypes: list[str], etypes: list[str], k: int, node_block: int, num_hops: int,
               scratch: str | None = None, trainers: int = 1) -> Plan:
    md = meta.source or str(meta.path)  # a remote input: each task reads its metadata.json
    edge_chunks = []
    for et in meta.num_edges:
        counts = meta.edge_chunks[et]
        if counts is None:
            counts = executor.map(_count_rows, [(md, "edges", ":".join(et), "", c)
                                                for c in range(len(meta.edges[et].files))],
                                  desc="counting edges")
        edge_chunks.append(_offsets(list(counts)))
    node_feats = {t: [(name, _offsets(executor.map(
        _count_rows, [(md, "node", t, name, c) for c in range(len(spec.files))],
        desc="counting rows"))) for name, spec in meta.node_data.get(t, {}).items()]
        for t in ntypes}
    edge_feats = {":".join(et): [(name, _offsets(executor.map(
        _count_rows, [(md, "edge", ":".join(et), name, c) for c in range(len(spec.files))],
        desc="counting rows"))) for name, spec in meta.edge_data.get(et, {}).items()]
        for et in meta.num_edges}
    return Plan(md, store.root, str(out), ntypes, etypes, list(meta.num_nodes.values()), k,
                node_block, num_hops, edge_chunks, node_feats, edge_feats, scratch, trainers,
                store.run)


def _build_parts(plan: Plan, executor, node_ranges: np.ndarray, edge_ranges: np.ndarray,
                 prefix: np.ndarray, save_orig_ids: bool, budget: int | None) -> list[Any]:
    """Build every part, the parts with the most edges first (so that no worker is left
    with a big part at the end while the others idle); results in part order."""
    sizes = (edge_ranges[:, :, 1] - edge_ranges[:, :, 0]).sum(axis=0)
    order = np.argsort(-sizes, kind="stable").tolist()
    results = executor.map(build_part, [(plan, p, node_ranges, edge_ranges, prefix,
                                         save_orig_ids) for p in order],
                           desc="building parts", memory=budget)
    by_part: list[Any] = [None] * plan.num_parts
    for p, res in zip(order, results, strict=True):
        by_part[p] = res
    return by_part


