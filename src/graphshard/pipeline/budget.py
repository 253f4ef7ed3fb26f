"""Memory budgets of the dispatch tasks: fail before any work (or before the parts are
built) when ``memory_budget`` cannot hold the largest chunk or part.  The bytes per edge
are measured (benchmarks/TUNING.md)."""

from __future__ import annotations

import os

import numpy as np

from ..errors import ValidationError
from ..io.chunked import ChunkedMeta

__all__ = ["EDGE_TASK_BYTES", "PART_TASK_BYTES", "auto_memory_budget", "check_budget",
           "check_memory_budget", "check_part_budget", "machine_memory"]

#: Bytes per edge a chunk task holds at its peak (IDs read, looked up, split, written).
EDGE_TASK_BYTES = 96
#: Bytes per edge a part task holds at its peak (local structure and data arrays).
PART_TASK_BYTES = 160


def check_memory_budget(meta: ChunkedMeta, num_parts: int, budget: int | None) -> None:
    """Fail before any work when ``budget`` cannot hold the largest edge chunk that the
    metadata declares, or a part of average size (:func:`dispatch` checks again once the
    chunks without declared sizes are counted, and once the real parts are known).

    Raises:
        ValidationError: naming the chunk or part size and the memory it needs.

    Example:
        >>> import tempfile, graphshard as gs
        >>> from graphshard.io.chunked import load_chunked_meta
        >>> d = tempfile.mkdtemp()
        >>> gs.io.write_chunked(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), d, 2)
        >>> check_memory_budget(load_chunked_meta(d), 2, 1 << 30)
    """
    sizes = [n for et in meta.num_edges for n in (meta.edge_chunks[et] or [])]
    check_budget(sizes, sum(meta.num_edges.values()), num_parts, budget)


def check_budget(chunk_sizes: list[int], total_edges: int, num_parts: int,
                  budget: int | None) -> None:
    if not budget:
        return
    biggest = max(chunk_sizes, default=0)
    if biggest * EDGE_TASK_BYTES > budget:
        raise ValidationError(
            f"--memory-budget {budget / 2**20:.0f} MiB is too small: the largest edge chunk has "
            f"{biggest:,} edges and needs about {biggest * EDGE_TASK_BYTES / 2**20:.0f} MiB; "
            "re-chunk the input into smaller chunks or raise the budget", field="memory_budget")
    per_part = total_edges / num_parts
    if per_part * PART_TASK_BYTES > budget:
        raise ValidationError(
            f"--memory-budget {budget / 2**20:.0f} MiB is too small for parts of about "
            f"{per_part:,.0f} edges (about {per_part * PART_TASK_BYTES / 2**20:.0f} MiB each); "
            "use more parts or raise the budget", field="memory_budget")


def check_part_budget(edge_ranges: np.ndarray, budget: int | None) -> None:
    """Once edges are routed, the real size of each part is known: an assignment that is
    balanced in nodes but not in edges (R-MAT hubs) can make one part far bigger than the
    average that :func:`check_budget` assumed.  Stop before building any part."""
    if not budget or edge_ranges.size == 0:
        return
    per_part = (edge_ranges[:, :, 1] - edge_ranges[:, :, 0]).sum(axis=0)
    worst = int(np.argmax(per_part))
    if per_part[worst] * PART_TASK_BYTES > budget:
        raise ValidationError(
            f"--memory-budget {budget / 2**20:.0f} MiB is too small: part {worst} received "
            f"{int(per_part[worst]):,} edges (about "
            f"{per_part[worst] * PART_TASK_BYTES / 2**20:.0f} MiB to build; the average part "
            f"has {per_part.mean():,.0f}); the assignment is unbalanced in edges: assign with "
            "--balance-edges (lp) or more parts, or raise the budget (the routed edges are "
            "kept, so the same command with a larger budget resumes)", field="memory_budget")


#: The least budget ``auto`` gives (a task also holds Python, NumPy and Ray's own memory).
MIN_AUTO_BUDGET = 1 << 30


def machine_memory() -> int:
    """Bytes of physical memory of this machine (0 where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return 0


def auto_memory_budget(meta: ChunkedMeta, num_parts: int, *, tasks: int | None = None
                       ) -> int:
    """``--memory-budget auto``: what the run's largest edge chunk and average part need
    (:data:`EDGE_TASK_BYTES`, :data:`PART_TASK_BYTES` per edge) with a quarter more for
    skew, at least :data:`MIN_AUTO_BUDGET`; refused when ``tasks`` of it at once (default:
    one per core) would not fit in the machine's memory.

    Raises:
        ValidationError: naming the budget needed and the machine's memory share.

    Example:
        >>> import tempfile, graphshard as gs
        >>> from graphshard.io.chunked import load_chunked_meta
        >>> d = tempfile.mkdtemp()
        >>> gs.io.write_chunked(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), d, 2)
        >>> auto_memory_budget(load_chunked_meta(d), 2) == MIN_AUTO_BUDGET
        True
    """
    sizes = [n for et in meta.num_edges for n in (meta.edge_chunks[et] or [])]
    total = sum(meta.num_edges.values())
    need = max(max(sizes, default=0) * EDGE_TASK_BYTES, total / num_parts * PART_TASK_BYTES)
    budget = max(MIN_AUTO_BUDGET, int(need * 1.25))
    machine = machine_memory()
    share = machine // max(1, tasks or os.cpu_count() or 1)
    if machine and budget > share:
        raise ValidationError(
            f"--memory-budget auto: parts of about {total / num_parts:,.0f} edges need "
            f"about {budget / 2**30:.1f} GiB a task, more than this machine's "
            f"{share / 2**30:.1f} GiB per core ({machine / 2**30:.0f} GiB / "
            f"{max(1, tasks or os.cpu_count() or 1)}): use more parts, or give a budget "
            "explicitly (fewer tasks then run at once)", field="memory_budget")
    return budget
