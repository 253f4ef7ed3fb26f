"""Writer half of :mod:`graphshard.io.chunked` (kept apart to keep each module short)."""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from .._util.progress import progress_bar
from ..errors import ValidationError
from ..graph import Graph
from ..ragged import Ragged
from ..sparse import SparseRows
from ..storage.files import (
    atomic_write,
    check_out_dir,
    check_path_name,
    claim_out_dir,
    json_object_with,
    mark_complete,
    path_inside,
    write_json_atomic,
)
from ..typing import EdgeType
from ._common import PathLike, ragged_to_arrow

FMT_EXT = {"csv": "csv", "numpy": "npy", "parquet": "parquet"}

log = logging.getLogger(__name__)


def chunk_sizes(n: int, num_chunks: int) -> list[int]:
    """Split ``n`` rows into ``num_chunks`` sizes, the first ones one larger (as DGL does)."""
    return [n // num_chunks + (1 if i < n % num_chunks else 0) for i in range(num_chunks)]


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def _check_feature(owner: str, name: str, col: Any, fmt: str) -> str:
    """Validate a column before anything is written; return the format it is written in."""
    if isinstance(col, SparseRows):
        raise ValidationError(f"{owner}: feature {name!r} is sparse; the chunked format has no "
                              "sparse column: partition the graph in memory "
                              "(graphshard.partition_graph) or store the feature dense",
                              field=name)
    if isinstance(col, Ragged):
        if col.values.ndim != 1 or col.values.dtype.kind not in "biuf":
            raise ValidationError(f"{owner}: Ragged feature {name!r} has values of dtype "
                                  f"{col.values.dtype}; only numbers can be chunked", field=name)
        return "parquet"
    if col.dtype.kind not in "biuf":
        raise ValidationError(f"{owner}: feature {name!r} has dtype {col.dtype}; only numeric "
                              "and bool arrays can be chunked", field=name)
    if fmt == "parquet" and col.ndim <= 2 and (col.ndim == 1 or col.shape[1] > 0):
        return "parquet"
    return "numpy"


def _write_feature(path: Path, part: Any, fmt: str, name: str) -> None:
    with atomic_write(path) as handle:
        if fmt == "numpy":
            np.save(handle, np.ascontiguousarray(part), allow_pickle=False)
        elif isinstance(part, Ragged):
            pq.write_table(pa.table({name: ragged_to_arrow(part)}), handle)
        elif part.ndim == 1:
            pq.write_table(pa.table({name: part}), handle)
        else:
            pq.write_table(pa.table({str(k): part[:, k] for k in range(part.shape[1])}), handle)


def _write_edges(path: Path, src: np.ndarray, dst: np.ndarray, fmt: str,
                 delimiter: str) -> None:
    with atomic_write(path) as handle:
        if fmt == "numpy":
            np.save(handle, np.stack([src, dst], axis=1), allow_pickle=False)
        elif fmt == "parquet":
            pq.write_table(pa.table({"src": src, "dst": dst}), handle)
        elif len(src):
            pacsv.write_csv(pa.table({"src": src, "dst": dst}), handle,
                            write_options=pacsv.WriteOptions(include_header=False,
                                                             delimiter=delimiter))


def _is_ours(folder: Path) -> bool:
    """A chunked graph written by :func:`write_chunked` (DGL's keys and ours)."""
    return json_object_with(folder / "metadata.json", "graphshard", "edge_type", "edges")


def check_chunked_out(out_dir: PathLike) -> Path:
    """Refuse an ``out_dir`` that :func:`write_chunked` must not write into (before any work)."""
    return check_out_dir(out_dir, _is_ours, "chunked graph written by graphshard")


def _listed_files(folder: Path) -> set[Path]:
    """The chunk files a previous ``metadata.json`` of ours lists (inside ``folder`` only)."""
    try:
        meta = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
        specs = [*meta["edges"].values(), *(spec for kind in ("node_data", "edge_data")
                                             for feats in meta[kind].values()
                                             for spec in feats.values())]
        return {path_inside(folder, rel, field="data") for spec in specs
                for rel in spec["data"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()  # not readable: its files stay (replaced where the names match)


def _capped_chunks(g: Graph, num_chunks: int) -> int:
    """``num_chunks``, but no more than the largest type has rows: more chunks would only
    add empty files (1,000 of them for ``--chunks 1000`` on 156 edges)."""
    largest = max([1, *(g.num_nodes(nt) for nt in g.ntypes),
                   *(g.num_edges(et) for et in g.canonical_etypes)])
    if num_chunks > largest:
        log.warning("num_chunks %d is more than the largest node or edge type has rows "
                    "(%d): writing %d chunks per type instead", num_chunks, largest, largest)
        return largest
    return num_chunks


#: ``rows(start, stop)``: rows ``start..stop-1`` of one feature (an array or Ragged).
Rows = Callable[[int, int], Any]


@dataclass(frozen=True)
class ChunkSource:
    """What :func:`write_chunked_stream` writes, produced a chunk at a time.

    Attributes:
        graph_name: Value of ``graph_name`` (it becomes a file name downstream).
        num_nodes: Nodes per node type, in order.
        num_edges: Edges per edge type ``(src, rel, dst)``, in order.
        edges: ``edges(etype, start, stop)``: source and destination IDs of edges
            ``start..stop-1`` of that type, as int64 arrays.
        node_data: ``{ntype: {name: rows}}``.
        edge_data: ``{etype: {name: rows}}``.
    """

    graph_name: str
    num_nodes: dict[str, int]
    num_edges: dict[EdgeType, int]
    edges: Callable[[EdgeType, int, int], tuple[np.ndarray, np.ndarray]]
    node_data: dict[str, dict[str, Rows]] = field(default_factory=dict)
    edge_data: dict[EdgeType, dict[str, Rows]] = field(default_factory=dict)

    def check_names(self) -> None:
        """Names that become file names (or, for ``graph_name``, a partition config's)."""
        check_path_name(self.graph_name, field="graph_name")
        for i, nt in enumerate(self.num_nodes):
            check_path_name(nt, field=f"node_type[{i}]")
            for name in self.node_data.get(nt, {}):
                check_path_name(name, field=f"node_data[{nt!r}]")
        for i, et in enumerate(self.num_edges):
            check_path_name(et[1], field=f"edge_type[{i}]")
            for name in self.edge_data.get(et, {}):
                check_path_name(name, field=f"edge_data[{':'.join(et)!r}]")


def write_chunked(g: Graph, out_dir: PathLike, num_chunks: int, *, fmt: str = "numpy",
                  graph_name: str = "graph", delimiter: str = " ") -> None:
    """Write ``g`` in DGL's chunked graph format: chunk files first, ``metadata.json`` last.

    Edges of each type are split into ``num_chunks`` files (``src dst`` rows for csv,
    an ``(n, 2)`` int64 array for numpy, columns ``src``/``dst`` for parquet); every node and
    edge feature is split the same way.  Features are ``.npy`` files for ``fmt="numpy"`` and
    ``"csv"`` (CSV would lose float bits), Parquet for ``"parquet"`` (columns ``"0".."d-1"``
    for a 2-D feature, as DGL writes them; arrays with more dimensions stay ``.npy``).
    Ragged features are always one Parquet list column, a graphshard extension.  Paths in
    the metadata are relative, so the folder can be moved.  :func:`write_chunked_stream`
    writes the same from chunks made one at a time (a graph that does not fit in memory).

    Args:
        g: The graph.
        out_dir: Output folder: new, empty, or a chunked graph written here before, which
            is replaced (its ``metadata.json`` is removed first, so a failed write never
            leaves an output that looks complete).  Anything else is refused.
        num_chunks: Chunks per type, ``>= 1``; more than the largest node or edge type
            has rows is lowered to that count (with a warning): no empty chunk files.
        fmt: ``"numpy"``, ``"csv"`` or ``"parquet"``.
        graph_name: Value of ``graph_name``.
        delimiter: CSV delimiter (DGL's examples use a space).

    Raises:
        ValidationError: a bad ``fmt``/``num_chunks``, a feature of unsupported dtype, or
            a graph, type or feature name that cannot be a file name.
        ConfigError: ``out_dir`` is a file, or a folder holding something else.

    Example:
        >>> import tempfile, graphshard as gs
        >>> d = tempfile.mkdtemp()
        >>> write_chunked(gs.graph(([0, 1, 2], [1, 2, 0])), d, 2, fmt="csv")
        >>> sorted(p.name for p in (Path(d) / "edges").iterdir())
        ['0-_N__E__N-0.csv', '0-_N__E__N-1.csv']
    """
    _check_args(fmt, num_chunks, delimiter)
    feat_fmt = "parquet" if fmt == "parquet" else "numpy"
    for nt in g.ntypes:  # every column checked before anything is written
        for name, col in g.nodes[nt].data.items():
            _check_feature(f"node type {nt!r}", name, col, feat_fmt)
    for et in g.canonical_etypes:
        for name, col in g.edges[et].data.items():
            _check_feature(f"edge type {et}", name, col, feat_fmt)
    ends = {et: g.edges(etype=et) for et in g.canonical_etypes}

    def rows(col: Any) -> Rows:
        return (lambda a, b: col.slice(a, b)) if isinstance(col, Ragged) \
            else (lambda a, b: col[a:b])

    source = ChunkSource(
        graph_name, {nt: int(g.num_nodes(nt)) for nt in g.ntypes},
        {et: int(g.num_edges(et)) for et in g.canonical_etypes},
        lambda et, a, b: (ends[et][0][a:b], ends[et][1][a:b]),
        {nt: {name: rows(col) for name, col in g.nodes[nt].data.items()}
         for nt in g.ntypes if g.nodes[nt].data},
        {et: {name: rows(col) for name, col in g.edges[et].data.items()}
         for et in g.canonical_etypes if g.edges[et].data})
    write_chunked_stream(source, out_dir, _capped_chunks(g, num_chunks), fmt=fmt,
                         delimiter=delimiter)


def _check_args(fmt: str, num_chunks: int, delimiter: str) -> None:
    if fmt not in FMT_EXT:
        raise ValidationError(f"fmt {fmt!r} is not one of {list(FMT_EXT)}", field="fmt",
                              value=fmt)
    if not isinstance(num_chunks, int) or num_chunks < 1:
        raise ValidationError(f"num_chunks must be an integer >= 1, got {num_chunks!r}",
                              field="num_chunks", value=num_chunks)
    if len(delimiter) != 1:
        raise ValidationError(f"delimiter must be one character, got {delimiter!r}",
                              field="delimiter")


def write_chunked_stream(source: ChunkSource, out_dir: PathLike, num_chunks: int, *,
                         fmt: str = "numpy", delimiter: str = " ") -> None:
    """Write a chunked graph whose chunks ``source`` makes one at a time: what
    :func:`write_chunked` writes, never holding more than one chunk of one type.

    Each type's rows are split into ``num_chunks`` chunks of sizes as DGL's
    (:func:`chunk_sizes`); the format of a feature is chosen from its first chunk, and every
    chunk is checked as it is made.  Files are written atomically, ``metadata.json`` last,
    with a progress bar over the chunks.

    Example:
        >>> import tempfile, numpy as np
        >>> from graphshard.io.chunked import read_chunked
        >>> ids = np.arange(10)
        >>> ring = ChunkSource("ring", {"_N": 10}, {("_N", "_E", "_N"): 10},
        ...                    lambda et, a, b: (ids[a:b], (ids[a:b] + 1) % 10),
        ...                    {"_N": {"x": lambda a, b: np.arange(a, b) * 0.5}})
        >>> d = tempfile.mkdtemp()
        >>> write_chunked_stream(ring, d, 3)
        >>> g = read_chunked(d); g.num_edges(), g.ndata["x"][-1].item()
        (10, 4.5)
    """
    _check_args(fmt, num_chunks, delimiter)
    source.check_names()
    feat_fmt = "parquet" if fmt == "parquet" else "numpy"
    ntypes, etypes = list(source.num_nodes), list(source.num_edges)
    node_chunks = [chunk_sizes(source.num_nodes[nt], num_chunks) for nt in ntypes]
    edge_chunks = [chunk_sizes(source.num_edges[et], num_chunks) for et in etypes]
    meta: dict[str, Any] = {
        "graph_name": source.graph_name,
        "node_type": ntypes,
        "num_nodes_per_chunk": node_chunks,
        "edge_type": [":".join(et) for et in etypes],
        "num_edges_per_chunk": edge_chunks,
        # totals too: DGL's random_partition.py and dispatch read these keys
        "num_nodes_per_type": [int(source.num_nodes[nt]) for nt in ntypes],
        "num_edges_per_type": [int(source.num_edges[et]) for et in etypes],
        "edges": {}, "node_data": {}, "edge_data": {},
    }
    plan: list[tuple[str, str, int, str, Rows, list[int]]] = [
        *(("node_data", nt, ti, name, rows, node_chunks[ti]) for ti, nt in enumerate(ntypes)
          for name, rows in source.node_data.get(nt, {}).items()),
        *(("edge_data", ":".join(et), ei, name, rows, edge_chunks[ei])
          for ei, et in enumerate(etypes) for name, rows in source.edge_data.get(et, {}).items())]
    ext = FMT_EXT[fmt]
    check_chunked_out(out_dir)
    out = claim_out_dir(out_dir, _is_ours, "chunked graph written by graphshard")
    old = _listed_files(out)
    (out / "metadata.json").unlink(missing_ok=True)  # the old output is gone from here on
    with progress_bar(total=(len(etypes) + len(plan)) * num_chunks, desc="write chunks",
                      unit="chunk") as bar:
        for ei, et in enumerate(etypes):
            files = []
            for i, (a, b) in enumerate(_bounds(edge_chunks[ei])):
                rel = f"edges/{ei}-{_safe(':'.join(et))}-{i}.{ext}"
                src, dst = source.edges(et, a, b)
                _write_edges(out / rel, src, dst, fmt, delimiter)
                files.append(rel)
                bar.update(1)
            spec: dict[str, Any] = {"name": fmt}
            if fmt == "csv":
                spec["delimiter"] = delimiter
            meta["edges"][":".join(et)] = {"format": spec, "data": files}
        for kind, tname, ti, name, rows, sizes in plan:
            files, f = [], ""
            for i, (a, b) in enumerate(_bounds(sizes)):
                part = rows(a, b)
                f = _check_feature(f"{kind[:4]} type {tname!r}", name, part, feat_fmt) \
                    if i == 0 else f
                rel = f"{kind}/{ti}-{_safe(tname)}-{_safe(name)}-{i}.{FMT_EXT[f]}"
                _write_feature(out / rel, part, f, name)
                files.append(rel)
                bar.update(1)
            meta[kind].setdefault(tname, {})[name] = {"format": {"name": f}, "data": files}
    meta["graphshard"] = {"format_version": 1}
    write_json_atomic(out / "metadata.json", meta)
    for stale in old - _listed_files(out):
        with contextlib.suppress(OSError):
            stale.unlink()
    mark_complete(out)


def _bounds(sizes: list[int]) -> list[tuple[int, int]]:
    """``(start, stop)`` of each chunk of the given sizes."""
    ends = np.cumsum([0, *sizes]).tolist()
    return list(itertools.pairwise(ends))
