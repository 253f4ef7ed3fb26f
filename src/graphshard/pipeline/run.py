"""Both steps of the pipeline in one call: :func:`assign`, then :func:`dispatch`, on one
Ray session (one start and one stop instead of two of each).  A finished assignment is
recorded like a dispatch piece (:mod:`graphshard.storage.pieces`), so a rerun after a
crash, or with other dispatch options, reuses it instead of computing it again.  The
assignment's scratch files are handed to the dispatch, which writes its big files over
them (:mod:`graphshard.storage.scratch`).

The chunked input and the output may be URIs (``s3://``, ``gs://``, ``hdfs://``): tasks
read the chunks from the input URI, the assignment is written in this process's
node-local cache and uploaded to ``OUT/assignment`` (with its done-marker, for a rerun),
and :func:`dispatch` keeps its work folder and writes its parts in the output URI, config
last; ``lp``'s shard tasks exchange their files through ``OUT/.graphshard-work/lp-<run>``
(unless ``work_dir`` names another folder): no folder is shared between the nodes of the
run."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..partition.build import claim_out_dir
from ..runtime.executor import ray_session
from ..storage import fsys
from ..storage.files import INCOMPLETE_MARKER, file_sha256
from ..storage.scratch import make_work_dir, scratch_folder
from ..storage.workstore import WorkStore
from .assign import AssignResult, assign, check_assign_args
from .disk import check_disk
from .dispatch import DispatchResult, check_memory_budget, checked_graph_name, dispatch
from .options import AssignOptions, DispatchOptions

__all__ = ["PipelineResult", "run_pipeline"]

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class PipelineResult:
    """The results of both steps and the seconds of the whole run."""

    assignment: AssignResult
    partitions: DispatchResult
    seconds: float


def run_pipeline(chunked_dir: str | os.PathLike[str], num_parts: int,
                 out_dir: str | os.PathLike[str], *, method: str = "lp",
                 assign_dir: str | os.PathLike[str] | None = None, use_ray: bool = False,
                 address: str | None = None,
                 assign_options: AssignOptions | Mapping[str, Any] | None = None,
                 dispatch_options: DispatchOptions | Mapping[str, Any] | None = None,
                 num_trainers_per_machine: int = 1) -> PipelineResult:
    """Assign every node of a chunked graph to a part, then write the partitions.

    The arguments, the memory budget against the declared chunk sizes and the output
    folder (new, empty, or a previous graphshard output) are checked before the
    assignment starts.  With Ray, a local Ray started for the assignment stays up for
    the dispatch and stops at the end.  Running the same call again after a crash gives
    identical output: a finished assignment whose files still match their recorded
    checksums, made from the same ``metadata.json`` with the same method, parts and
    options, is reused (``seconds`` 0 in its result), and so are the dispatch's finished
    pieces.

    Args:
        chunked_dir: The chunked graph (DGL's chunked format): a path or a URI.
        num_parts: Number of parts.
        out_dir: Folder of the partitions: a path or a URI (then no node-shared folder
            is used; see the module's text).
        method: A name of :data:`~graphshard.pipeline.ASSIGN_METHODS`.
        assign_dir: Folder of the assignment (default: ``out_dir/assignment``); a local
            folder (a URI output's default assignment is uploaded there).
        use_ray: Run both steps on Ray (a local Ray unless ``address`` names a cluster).
        address: Ray cluster to join (implies ``use_ray``).
        assign_options: Options of :func:`assign`: an
            :class:`~graphshard.pipeline.options.AssignOptions` or a dict of its fields
            (``seed``, ``imbalance``, ``balance_edges``, ``num_workers``, ``work_dir``,
            ...), checked before any work.
        dispatch_options: Options of :func:`dispatch`: a
            :class:`~graphshard.pipeline.options.DispatchOptions` or a dict of its fields
            (``graph_name``, ``num_hops``, ``save_orig_ids``, ``memory_budget``, ...).
        num_trainers_per_machine: As in :func:`~graphshard.partition_graph`: the method
            assigns ``num_parts * num_trainers_per_machine`` trainer parts, consecutive
            trainer parts form one of the ``num_parts`` parts, and each node's trainer part
            is the node feature ``"<ntype>/trainer_id"`` (also taken from
            ``dispatch_options``, where the CLI's dispatch options put it).

    Example:
        >>> import tempfile, graphshard as gs
        >>> d = tempfile.mkdtemp()
        >>> gs.io.write_chunked(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), f"{d}/g", 2)
        >>> r = run_pipeline(f"{d}/g", 2, f"{d}/parts", method="hash")
        >>> r.assignment.part_sizes, r.partitions.report.edge_cut
        ([2, 2], 4)
    """
    clock = time.perf_counter()
    chunked_dir, out_dir = (p if fsys.is_remote(p) else fsys.local_path(p)
                            for p in (chunked_dir, out_dir))  # file:// URIs are local
    step1, step2 = AssignOptions.of(assign_options), DispatchOptions.of(dispatch_options)
    if "num_trainers_per_machine" not in step2.changed():
        step2 = replace(step2, num_trainers_per_machine=num_trainers_per_machine)
    trainers = step2.num_trainers_per_machine
    if assign_dir is not None and fsys.is_remote(assign_dir):
        raise ValidationError(f"{fsys.shown(assign_dir)}: an assignment folder must be "
                              "local (with a URI output the default, OUT/assignment, is "
                              "uploaded there)", field="assign_dir", value=fsys.shown(assign_dir))
    dest = fsys.open_location(out_dir) if fsys.is_remote(out_dir) else None
    if dest is not None:
        fsys.check_remote_out_dir(dest)  # before anything is read or written
    # the assignment's record: beside it, or in OUT/assignment of a remote output (then
    # written in this process's node-local copy of that folder and uploaded)
    store = WorkStore(dest.child("assignment").uri if dest is not None and assign_dir is None
                      else str(Path(out_dir) / "assignment" if assign_dir is None
                               else assign_dir))
    where = store.path("assignment.json").parent if store.remote else Path(store.root)
    # the method cuts trainer parts: num_parts * trainers of them
    meta = check_assign_args(chunked_dir, num_parts * trainers, method, where)
    checked_graph_name(meta, chunked_dir, step2.graph_name)
    check_memory_budget(meta, num_parts, step2.memory_budget)
    check_disk(meta, method, out_dir, step1.work_dir if step1.work_dir is not None
               and not fsys.is_remote(step1.work_dir) else None)
    if dest is not None and method == "lp" and step1.work_dir is None:
        step1 = replace(step1, work_dir=dest.child(".graphshard-work").uri)  # no shared folder
    work_dir = step1.work_dir
    if work_dir is not None and fsys.is_remote(work_dir):
        work_dir = None  # lp's shard files go there; the local scratch: the system's
    if work_dir is not None:
        make_work_dir(work_dir)
    if dest is None:
        claim_out_dir(Path(out_dir))
    else:  # never complete-looking until dispatch puts the config back
        dest.child(INCOMPLETE_MARKER).write_bytes(b"")
    use_ray = use_ray or bool(address)
    names = ["assignment.json", *(f"{t}.{ext}" for t in meta.num_nodes
                                  for ext in ("npy", "txt"))]  # marker: the first
    key = _assignment_key(meta.path, num_parts * trainers, method, step1)
    scratch = scratch_folder(work_dir)
    removal = threading.Thread(target=shutil.rmtree, args=(scratch,),
                               kwargs={"ignore_errors": True})
    try:
        with ray_session():
            assigned = _finished_assignment(store, names, key, where, method,
                                            num_parts * trainers)
            if assigned is None:
                assigned = assign(chunked_dir, num_parts * trainers, where, method=method,
                                  use_ray=use_ray, address=address, scratch_pool=scratch,
                                  **step1.kwargs())
                store.finish(names, key, assigned.part_sizes, keep_local=True)
            source = where if not store.remote else store.root
            parts = dispatch(chunked_dir, source, out_dir, num_parts=num_parts,
                             use_ray=use_ray, address=address, scratch_pool=scratch,
                             **step2.kwargs())
            removal.start()  # while Ray stops
    finally:
        if removal.ident is not None:
            removal.join()
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return PipelineResult(assigned, parts, round(time.perf_counter() - clock, 3))


def _assignment_key(metadata: Path, num_parts: int, method: str,
                    options: AssignOptions) -> str:
    """What an assignment depends on: the chunked ``metadata`` file, the method, the
    parts and every option that differs from its default but the run-only ones
    (:meth:`AssignOptions.result_key`)."""
    return json.dumps(["assignment", file_sha256(metadata), method, num_parts,
                       options.result_key()], default=str)


def _finished_assignment(store: WorkStore, names: list[str], key: str, where: Path,
                         method: str, num_parts: int) -> AssignResult | None:
    """The assignment of an earlier run with ``key`` whose files match their record (a
    remote one is copied to ``where``, each file checked against its SHA-256); else
    None."""
    sizes = store.finished(names, key)
    if sizes is None:
        return None
    for rel in names if store.remote else []:  # fresh copies, checked on the way
        store.release(rel)
        store.fetch(rel, marker=names[0])
    log.info("reusing the assignment in %s (its files match the checksums recorded when "
             "it finished)", fsys.shown(store.root))
    return AssignResult(where, method, num_parts, sizes, 0.0)
