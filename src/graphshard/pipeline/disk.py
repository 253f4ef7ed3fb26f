"""The disk a pipeline run needs, estimated before any work and checked against free space.

A run writes its partitions (the output) and, on the way, work files: the routed pieces of
edges and features that the parts are built from (in the output's work folder), and, for
``lp``, its shard files (in the work or temporary folder).  The bytes per edge and per node
were measured on R-MAT graphs (``benchmarks/bench_billion.py`` prints the estimate beside
the measured peak); the estimate keeps to the larger side of what was measured: an estimate
that errs refuses a run that would have fitted, never the other way round.

Example:
    >>> import tempfile, graphshard as gs
    >>> from graphshard.io.chunked import load_chunked_meta
    >>> d = tempfile.mkdtemp()
    >>> gs.io.write_chunked(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), d, 2)
    >>> need = estimate_disk(load_chunked_meta(d), "lp")
    >>> need.output, need.work, need.scratch
    (336, 64, 64)
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..errors import ValidationError
from ..io.chunked import ChunkedMeta
from ..storage import fsys
from ..storage.scratch import remove_dead_scratch

__all__ = [
    "OUTPUT_EDGE_BYTES",
    "OUTPUT_NODE_BYTES",
    "SCRATCH_EDGE_BYTES",
    "WORK_EDGE_BYTES",
    "DiskNeed",
    "check_disk",
    "estimate_disk",
]

#: Bytes per edge of the part files: local src, dst, edge ID and original ID (int64), type
#: (int32) and inner flag (bool), 37 bytes, and a margin for the nodes of edges that cross.
OUTPUT_EDGE_BYTES = 44
#: Bytes per node of the part files: global ID, original ID, part (int64), type (int32),
#: inner flag, 29 bytes, and a margin for HALO copies.
OUTPUT_NODE_BYTES = 40
#: Bytes per edge of the routed pieces not yet built into parts, at the dispatch's peak.
WORK_EDGE_BYTES = 16
#: Bytes per edge of lp's shard files (its symmetric adjacency's entries); the dispatch
#: writes its routed pieces over them once freed, so they add to the peak only alone.
SCRATCH_EDGE_BYTES = 16


@dataclass(frozen=True)
class DiskNeed:
    """Bytes a run writes: ``output`` (the partitions), ``work`` (routed pieces and node
    and edge data, in the output's folder until the parts are built) and ``scratch`` (lp's
    shard files, in the work or temporary folder)."""

    output: int
    work: int
    scratch: int

    @property
    def total(self) -> int:
        """The peak on one file system: the dispatch's output and work, or lp's shards."""
        return max(self.output + self.work, self.scratch)


def _data_bytes(meta: ChunkedMeta) -> int:
    """Bytes of the node and edge data files (they are written once routed, once built)."""
    total = 0
    for table in (meta.node_data, meta.edge_data):
        for feats in table.values():
            for spec in feats.values():
                for file in spec.files:
                    if isinstance(file, Path) and file.exists():
                        total += file.stat().st_size
    return total


def estimate_disk(meta: ChunkedMeta, method: str) -> DiskNeed:
    """The disk a pipeline run over ``meta`` needs at its peak (see the module's text)."""
    edges, nodes = sum(meta.num_edges.values()), sum(meta.num_nodes.values())
    data = _data_bytes(meta)
    return DiskNeed(output=edges * OUTPUT_EDGE_BYTES + nodes * OUTPUT_NODE_BYTES + data,
                    work=edges * WORK_EDGE_BYTES + data,
                    scratch=edges * SCRATCH_EDGE_BYTES if method == "lp" else 0)


def _existing(path: Path) -> Path:
    """``path`` or its nearest existing parent (whose file system it will be on)."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _free(path: Path) -> tuple[int, int]:
    """Free bytes and device of the file system that holds ``path``."""
    where = _existing(path)
    return shutil.disk_usage(where).free, os.stat(where).st_dev


def _bytes_under(folder: Path) -> int:
    """Bytes of the files under ``folder`` (0 when it does not exist)."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # removed meanwhile
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def check_disk(meta: ChunkedMeta, method: str, out_dir: str | os.PathLike[str],
               scratch_dir: str | os.PathLike[str] | None = None) -> DiskNeed:
    """Refuse a run whose output, work and scratch files cannot fit in the free space of
    the file systems they go to (``out_dir``; ``scratch_dir``, default the temporary
    folder), before any work.  A URI output is not checked (its work is local scratch).
    An earlier run's files in ``out_dir`` count as free (they are reused or replaced), and
    the scratch folders that killed runs left in ``scratch_dir`` are removed first.

    Raises:
        ValidationError: naming the estimate, each part of it and the free space.
    """
    need = estimate_disk(meta, method)
    if fsys.is_remote(out_dir):
        return need
    import tempfile

    # a killed run's scratch (lp's shards among it) is removed by the rerun in any case:
    # remove it first, so that its space counts as free
    remove_dead_scratch(scratch_dir)
    out_free, out_dev = _free(Path(out_dir))
    out_free += _bytes_under(Path(out_dir))  # an earlier run's files: replaced or reused
    scratch_free, scratch_dev = _free(Path(scratch_dir or tempfile.gettempdir()))
    on_out = need.total if scratch_dev == out_dev else need.output + need.work
    checks = [(Path(out_dir), on_out, out_free)]
    if scratch_dev != out_dev and need.scratch:
        checks.append((Path(scratch_dir or tempfile.gettempdir()), need.scratch, scratch_free))
    for where, wanted, free in checks:
        if wanted > free:
            edges = sum(meta.num_edges.values())
            raise ValidationError(
                f"{where}: the run needs about {_gib(wanted)} of disk there (partitions "
                f"{_gib(need.output)}, work files {_gib(need.work)}"
                + (f", lp's shards {_gib(need.scratch)}" if need.scratch else "")
                + f"; about {need.total / max(edges, 1):.0f} bytes per edge) but its file "
                f"system has {_gib(free)} free: free space, or write the output elsewhere "
                "(--out, --work-dir)", field="out_dir", value=str(where))
    return need
