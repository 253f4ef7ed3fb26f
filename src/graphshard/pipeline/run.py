"""Both steps of the pipeline in one call: :func:`assign`, then :func:`dispatch`, on one
Ray session (one start and one stop instead of two of each)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..partition.build import claim_out_dir
from .assign import AssignResult, assign
from .dispatch import DispatchResult, dispatch
from .engine import ray_session

__all__ = ["PipelineResult", "run_pipeline"]


@dataclass(frozen=True)
class PipelineResult:
    """The results of both steps and the seconds of the whole run."""

    assignment: AssignResult
    partitions: DispatchResult
    seconds: float


def run_pipeline(chunked_dir: str | os.PathLike[str], num_parts: int,
                 out_dir: str | os.PathLike[str], *, method: str = "lp",
                 assign_dir: str | os.PathLike[str] | None = None, use_ray: bool = False,
                 address: str | None = None, assign_options: dict[str, Any] | None = None,
                 dispatch_options: dict[str, Any] | None = None) -> PipelineResult:
    """Assign every node of a chunked graph to a part, then write the partitions.

    The output folder is checked before the assignment starts (new, empty, or a previous
    graphshard output).  With Ray, a local Ray started for the assignment stays up for
    the dispatch and stops at the end.  Running the same call again after a crash gives
    identical output: the assignment is computed again (it is deterministic), and the
    dispatch reuses its finished pieces.

    Args:
        chunked_dir: The chunked graph (DGL's chunked format).
        num_parts: Number of parts.
        out_dir: Folder of the partitions.
        method: A name of :data:`~graphshard.pipeline.ASSIGN_METHODS`.
        assign_dir: Folder of the assignment (default: ``out_dir/assignment``).
        use_ray: Run both steps on Ray (a local Ray unless ``address`` names a cluster).
        address: Ray cluster to join (implies ``use_ray``).
        assign_options: More keyword arguments of :func:`assign` (``seed``,
            ``imbalance``, ``balance_edges``, ``workers``, ``work_dir``, ...).
        dispatch_options: More keyword arguments of :func:`dispatch` (``graph_name``,
            ``num_hops``, ``save_orig_ids``, ``memory_budget``, ...).

    Example:
        >>> import tempfile, graphshard as gs
        >>> d = tempfile.mkdtemp()
        >>> gs.io.write_chunked(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), f"{d}/g", 2)
        >>> r = run_pipeline(f"{d}/g", 2, f"{d}/parts", method="hash")
        >>> r.assignment.part_sizes, r.partitions.report.edge_cut
        ([2, 2], 4)
    """
    clock = time.perf_counter()
    out = claim_out_dir(Path(out_dir))
    where = out / "assignment" if assign_dir is None else Path(assign_dir)
    use_ray = use_ray or bool(address)
    with ray_session():
        assigned = assign(chunked_dir, num_parts, where, method=method, use_ray=use_ray,
                          address=address, **(assign_options or {}))
        parts = dispatch(chunked_dir, where, out, num_parts=num_parts, use_ray=use_ray,
                         address=address, **(dispatch_options or {}))
    return PipelineResult(assigned, parts, round(time.perf_counter() - clock, 3))
