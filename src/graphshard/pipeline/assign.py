"""Step 1 of the pipeline: a part for every node of a chunked graph, in DGL's layout.

Methods: every partition method of the one registry (:data:`ASSIGN_METHODS` is
:data:`graphshard.partition.METHODS`): ``random`` and ``hash`` need only the node counts;
``lp``, the multilevel label-propagation partitioner, streams the edge chunks
(:mod:`graphshard.partition.lp`); the in-memory methods (METIS, ...) read the adjacency
from the edge chunks first.  :func:`import_assignment` turns an
assignment made elsewhere (ParMETIS, DGL's ``random_partition.py``) into the same layout.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import FormatError, ValidationError
from ..io.chunked import ChunkedMeta, load_chunked_meta
from ..partition.assignment import assignment_num_parts, read_assignment, write_assignment
from ..partition.methods import METHODS, MethodOptions
from ..partition.registry import Method, lookup
from ..partition.source import assign_chunked
from ..storage.files import check_out_dir, claim_out_dir, json_object_with, mark_complete
from ..typing import IdArray

__all__ = ["ASSIGN_METHODS", "AssignResult", "assign", "import_assignment"]

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class AssignResult:
    """Where the assignment went and what it looks like."""

    out_dir: Path
    method: str
    num_parts: int
    part_sizes: list[int]
    seconds: float


#: The methods ``assign`` takes: every partition method (the one registry,
#: :data:`graphshard.partition.METHODS`).  A streaming method (``lp``, ``random``,
#: ``hash``) reads the chunks in bounded memory; an in-memory one (``metis``, ``kaminpar``,
#: ...) reads the adjacency from the edge chunks into this process first
#: (:func:`~graphshard.partition.source.assign_chunked`).
ASSIGN_METHODS: dict[str, Method] = METHODS


def _is_ours(folder: Path) -> bool:
    """An assignment written by :func:`write_assignment` (its ``assignment.json``)."""
    return json_object_with(folder / "assignment.json", "method", "num_parts", "num_nodes")


def check_assign_out(out_dir: str | os.PathLike[str]) -> Path:
    """Refuse an assignment folder that is a file, or a folder holding anything but an
    earlier assignment of ours (the rule of every writer,
    :func:`graphshard.storage.files.check_out_dir`)."""
    if Path(out_dir).exists() and not Path(out_dir).is_dir():
        raise ValidationError(f"{out_dir}: exists and is not a folder; the assignment needs "
                              "a folder", field="out_dir", value=str(out_dir))
    return check_out_dir(out_dir, _is_ours, "assignment written by graphshard")


def _write(out_dir: str | os.PathLike[str], parts: dict[str, IdArray], num_parts: int,
           method: str) -> None:
    """Replace an earlier assignment (its ``assignment.json`` first, so a failure never
    leaves one that looks complete) and write this one, ``assignment.json`` last."""
    out = claim_out_dir(out_dir, _is_ours, "assignment written by graphshard")
    (out / "assignment.json").unlink(missing_ok=True)
    write_assignment(out, parts, num_parts, method=method)
    mark_complete(out)


def assign(chunked_dir: str | os.PathLike[str], num_parts: int,
           out_dir: str | os.PathLike[str], *, method: str = "lp", seed: int = 0,
           imbalance: float = 0.03, use_ray: bool = False, num_workers: int | None = None,
           max_task_entries: int | None = None, coarse_entries: int | None = None,
           work_dir: str | os.PathLike[str] | None = None,
           address: str | None = None, balance_edges: bool | None = None,
           scratch_pool: str | os.PathLike[str] | None = None) -> AssignResult:
    """Assign every node of a chunked graph to a part and write DGL's assignment layout.

    Args:
        chunked_dir: The chunked graph (DGL's chunked format).
        num_parts: Number of parts.
        out_dir: Folder of the assignment (``<ntype>.txt``, ``<ntype>.npy``, JSON).
        method: A name of :data:`ASSIGN_METHODS`, i.e. any partition method: ``lp``,
            ``random`` and ``hash`` stream the chunks; ``metis``, ``kaminpar``, ... need
            the adjacency in this process's memory (read from the edge chunks).
        seed: Seed of every random choice.
        imbalance: Allowed imbalance (``random`` is exact).
        use_ray: Run ``lp``'s shard tasks on Ray.
        num_workers: ``lp``: concurrent tasks (default: all cores / all Ray CPUs).
        max_task_entries: ``lp``: edge entries per shard task, the per-task memory knob
            (16 bytes an entry).
        coarse_entries: ``lp``: largest coarsest graph (entries) partitioned on one worker.
        work_dir: ``lp``: parent folder of its temporary shard files (a path, or a URI
            that every node reaches).
        address: ``lp``: Ray cluster to join (implies ``use_ray``).
        balance_edges: Balance the in-edges per part as well as the nodes (None: the
            method's default: on for ``lp``, off for in-memory methods, as in
            ``partition_graph``); False: the node counts only.
        scratch_pool: ``lp``: a scratch pool folder that keeps its scratch files for
            the next step (see :func:`~graphshard.partition.lp.lp_assign`).

    Returns:
        Where the assignment went, its part sizes and the seconds it took.

    Raises:
        ValidationError: an unknown ``method``, a ``num_parts`` out of range or an
            ``out_dir`` that is a file (:func:`check_assign_args`, before any work).

    Example:
        >>> import tempfile, graphshard as gs
        >>> d = tempfile.mkdtemp()
        >>> gs.io.write_chunked(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), f"{d}/g", 2)
        >>> assign(f"{d}/g", 2, f"{d}/a", method="hash").part_sizes
        [2, 2]
    """
    meta = check_assign_args(chunked_dir, num_parts, method, out_dir)
    total = sum(meta.num_nodes.values())
    clock = time.perf_counter()
    parts = assign_chunked(meta, num_parts, method, MethodOptions(imbalance=imbalance, seed=seed),
                           balance_edges=balance_edges, use_ray=use_ray, address=address,
                           num_workers=num_workers, max_task_entries=max_task_entries,
                           coarse_entries=coarse_entries, work_dir=work_dir,
                           scratch_pool=scratch_pool)
    _write(out_dir, parts, num_parts, method)
    sizes = np.zeros(num_parts, dtype=np.int64)
    for arr in parts.values():
        sizes += np.bincount(arr, minlength=num_parts)
    seconds = round(time.perf_counter() - clock, 3)
    log.info("assigned %d nodes to %d parts with %s in %.2fs", total, num_parts, method, seconds)
    return AssignResult(Path(out_dir), method, num_parts, sizes.tolist(), seconds)


def check_assign_args(chunked_dir: str | os.PathLike[str], num_parts: int, method: str,
                      out_dir: str | os.PathLike[str]) -> ChunkedMeta:
    """The chunked graph's metadata, once ``method``, ``num_parts`` and the assignment
    folder ``out_dir`` are known to suit it (checked before any work).

    Raises:
        ValidationError: an unknown ``method``, a ``num_parts`` out of range, or an
            ``out_dir`` that exists and is not a folder.
        ConfigError: an ``out_dir`` holding files that are not an assignment of ours.

    Example:
        >>> import tempfile, graphshard as gs
        >>> d = tempfile.mkdtemp()
        >>> gs.io.write_chunked(gs.graph(([0, 1], [1, 2])), f"{d}/g", 1)
        >>> check_assign_args(f"{d}/g", 2, "hash", f"{d}/a").num_nodes
        {'_N': 3}
    """
    lookup(ASSIGN_METHODS, method, what="assignment method", field="method")
    check_assign_out(out_dir)
    meta = load_chunked_meta(chunked_dir)
    total = sum(meta.num_nodes.values())
    if not 1 <= num_parts <= max(total, 1):
        raise ValidationError(f"num_parts must be in [1, {total}], got {num_parts}",
                              field="num_parts", value=num_parts)
    return meta


def import_assignment(file: str | os.PathLike[str], chunked_dir: str | os.PathLike[str],
                      out_dir: str | os.PathLike[str], *, num_parts: int | None = None
                      ) -> AssignResult:
    """Convert an assignment made elsewhere into the layout :func:`dispatch` reads.

    ``file`` is either a folder of ``<ntype>.txt`` files (DGL's ``random_partition.py``,
    ParMETIS after DGL's post-processing) or one text file with one part per line for every
    node in homogeneous order (ParMETIS's raw output), optionally ``node_id part`` pairs.
    ``out_dir`` follows the rule of :func:`assign`.

    Raises:
        ValidationError: ``file`` does not exist, or ``out_dir`` is a file.
        ConfigError: ``out_dir`` holds files that are not an assignment of ours.
        FormatError: ``file`` does not fit the chunked graph (naming the line or type).
    """
    path = Path(file)
    if not path.exists():
        raise ValidationError(f"{path}: the assignment to import does not exist",
                              path=str(path), field="file", value=str(path))
    check_assign_out(out_dir)
    meta = load_chunked_meta(chunked_dir)
    ntypes = list(meta.num_nodes)
    parts = read_assignment(path, ntypes) if path.is_dir() else _split_homogeneous(path, meta)
    declared = assignment_num_parts(path) if path.is_dir() else None
    k = num_parts or declared or 1 + max(int(a.max(initial=-1)) for a in parts.values())
    for ntype, arr in parts.items():
        if len(arr) != meta.num_nodes[ntype]:
            raise FormatError(f"{path}: {len(arr)} entries for node type {ntype!r}, which has "
                              f"{meta.num_nodes[ntype]} nodes", path=str(path), field=ntype)
        bad = np.flatnonzero((arr < 0) | (arr >= k))
        if bad.size:
            raise FormatError(f"{path}: node {bad[0]} of type {ntype!r} has part {arr[bad[0]]}, "
                              f"outside [0, {k})", path=str(path), field=ntype)
    _write(out_dir, parts, k, f"imported:{path.name}")
    sizes = sum(np.bincount(a, minlength=k) for a in parts.values())
    return AssignResult(Path(out_dir), "imported", k, np.asarray(sizes).tolist(), 0.0)


def _split_homogeneous(path: Path, meta: ChunkedMeta) -> dict[str, IdArray]:
    try:
        table = np.loadtxt(path, dtype=np.int64, ndmin=2)
    except ValueError as exc:
        raise FormatError(f"{path}: expected integers, one node per line ({exc})",
                          path=str(path)) from exc
    if table.shape[1] == 2:  # "node_id part" pairs, in any order
        order = np.argsort(table[:, 0], kind="stable")
        ids, parts = table[order, 0], table[order, 1]
        if not np.array_equal(ids, np.arange(len(ids))):
            raise FormatError(f"{path}: node IDs must be 0..{len(ids) - 1}, each once",
                              path=str(path))
    elif table.shape[1] == 1:
        parts = table[:, 0]
    else:
        raise FormatError(f"{path}: expected 1 or 2 columns, found {table.shape[1]}",
                          path=str(path))
    total = sum(meta.num_nodes.values())
    if len(parts) != total:
        raise FormatError(f"{path}: {len(parts)} lines but the graph has {total} nodes",
                          path=str(path))
    out, offset = {}, 0
    for ntype, n in meta.num_nodes.items():
        out[ntype] = parts[offset:offset + n]
        offset += n
    return out
