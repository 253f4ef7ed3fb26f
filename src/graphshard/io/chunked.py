"""DGL's chunked graph format: ``metadata.json`` plus edge and feature chunk files.

The format (DGL user guide 7.1, "Chunked Graph Format") has top-level keys ``graph_name``,
``node_type``, ``num_nodes_per_chunk``, ``edge_type`` (``"src:rel:dst"``),
``num_edges_per_chunk``, ``edges``, ``node_data`` and ``edge_data``.  Each file spec is
``{"format": {"name": "csv"|"numpy"|"parquet", "delimiter": " "}, "data": [paths]}``; paths
are relative to the metadata file or absolute.  A folder given as a URI (``s3://``,
``gs://``, ``hdfs://``; :mod:`graphshard.storage.fsys`) is read in place: only
``metadata.json`` is copied when it is loaded, and each chunk file is copied to node-local
scratch when it is read and removed afterwards (its size checked; the format has no
checksums); its chunk paths must be relative and inside the folder.  Newer DGL revisions write
``num_nodes_per_type`` / ``num_edges_per_type`` (totals) instead; both are accepted.

The reader streams: :func:`iter_edge_chunks` and :func:`iter_node_data_chunks` load one chunk
file at a time and validate it against the metadata before yielding it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from ..graph import Graph
from ..ragged import Ragged
from ..storage.files import atomic_path
from ..typing import EdgeType, IdArray
from ._chunked_checks import (
    check_declared_sizes,
    count_field,
    data_specs,
    declared_counts,
    file_spec,
)
from ._chunked_read import (
    FileSpec,
    Views,
    _edge_views,
    _feature,
    _join,
)
from ._chunked_write import ChunkSource, Rows, write_chunked, write_chunked_stream
from ._common import PathLike, check_fits_memory, concat_ragged, fail

__all__ = ["ChunkSource", "ChunkedMeta", "DataChunk", "EdgeChunk", "FileSpec", "Rows",
           "iter_edge_chunks", "iter_edge_data_chunks", "iter_node_data_chunks",
           "load_chunked_meta", "read_chunked", "write_chunked", "write_chunked_stream"]

@dataclass(frozen=True)
class ChunkedMeta:
    """A validated ``metadata.json``.

    Attributes:
        path: The metadata file.
        graph_name: ``graph_name`` (``""`` when absent).
        num_nodes: Node type -> total count, in declared order.
        node_chunks: Node type -> count per chunk (``None`` with ``num_nodes_per_type``).
        num_edges: Canonical edge type -> total count, in declared order.
        edge_chunks: Edge type -> count per chunk (``None`` with ``num_edges_per_type``).
        edges: Edge type -> its edge index files.
        node_data: Node type -> feature name -> files.
        edge_data: Edge type -> feature name -> files.
    """

    path: Path
    graph_name: str
    num_nodes: dict[str, int]
    node_chunks: dict[str, list[int] | None]
    num_edges: dict[EdgeType, int]
    edge_chunks: dict[EdgeType, list[int] | None]
    edges: dict[EdgeType, FileSpec]
    node_data: dict[str, dict[str, FileSpec]]
    edge_data: dict[EdgeType, dict[str, FileSpec]]
    #: the URI of ``metadata.json`` when it was loaded from a remote folder (``path`` is
    #: then this process's copy, and the chunk files are read from the URI)
    source: str | None = None

    def __repr__(self) -> str:
        return (f"ChunkedMeta({self.graph_name!r}, num_nodes={self.num_nodes}, "
                f"num_edges={ {':'.join(k): v for k, v in self.num_edges.items()} })")


@dataclass(frozen=True)
class EdgeChunk:
    """Edges of one chunk file: per-type IDs; ``offset`` is the ID of its first edge."""

    index: int
    offset: int
    src: IdArray
    dst: IdArray


@dataclass(frozen=True)
class DataChunk:
    """Feature rows of one chunk file; ``offset`` is the node/edge ID of its first row."""

    index: int
    offset: int
    data: np.ndarray | Ragged


# ----- metadata ---------------------------------------------------------------------------
def load_chunked_meta(path: PathLike) -> ChunkedMeta:
    """Read and validate a chunked graph's ``metadata.json`` (a file or its directory).

    Checks the key structure, that counts are lists of non-negative integers with one entry
    per type, that every edge type names declared node types and has an ``edges`` entry,
    and that edge files match the chunk count.  File contents are checked when read.

    Raises:
        FormatError: naming the metadata file and the key at fault.

    Example:
        >>> import tempfile, graphshard as gs
        >>> d = tempfile.mkdtemp()
        >>> gs.io.write_chunked(gs.graph(([0, 1], [1, 2])), d, 2)
        >>> load_chunked_meta(d).num_edges
        {('_N', '_E', '_N'): 2}
    """
    from ..storage import fsys

    if fsys.is_remote(path):
        return _remote_meta(str(path))
    path = Path(path)
    if path.is_dir():
        path = path / "metadata.json"
    if not path.is_file():
        raise fail(path, "metadata file does not exist")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise fail(path, f"malformed JSON: {exc}", line=line) from exc
    if not isinstance(meta, dict):
        raise fail(path, "expected a JSON object at the top level")
    base = path.parent
    ntypes = meta.get("node_type")
    if not isinstance(ntypes, list) or not all(isinstance(t, str) and t for t in ntypes) \
            or len(set(ntypes)) != len(ntypes):
        raise fail(path, "expected a list of distinct node type names", field="node_type")
    etype_strs = meta.get("edge_type", [])
    if not isinstance(etype_strs, list):
        raise fail(path, "expected a list of 'src:rel:dst' strings", field="edge_type")
    etypes: list[EdgeType] = []
    for s in etype_strs:
        parts = s.split(":") if isinstance(s, str) else []
        if len(parts) != 3 or parts[0] not in ntypes or parts[2] not in ntypes:
            raise fail(path, f"{s!r} is not 'src:rel:dst' over node types {ntypes}",
                       field="edge_type", value=s)
        etypes.append((parts[0], parts[1], parts[2]))
    if len(set(etypes)) != len(etypes):
        raise fail(path, "an edge type is listed twice", field="edge_type")
    ncount, nchunks = declared_counts(meta, path, ntypes, "num_nodes_per_chunk",
                                      "num_nodes_per_type")
    ecount, echunks = declared_counts(meta, path, etype_strs, "num_edges_per_chunk",
                                      "num_edges_per_type")
    check_fits_memory(sum(ncount) * 8, path=path, field=count_field(meta, "nodes"),
                      what=f"{sum(ncount):,} nodes (8 bytes a node, the least any use holds)")
    edges: dict[EdgeType, FileSpec] = {}
    raw_edges = meta.get("edges", {})
    for et, s, chunks in zip(etypes, etype_strs, echunks, strict=False):
        if not isinstance(raw_edges, dict) or s not in raw_edges:
            raise fail(path, f"no entry for edge type {s!r}", field="edges")
        spec = file_spec(raw_edges[s], base, path, f"edges[{s!r}]")
        if chunks is not None and len(spec.files) != len(chunks):
            raise fail(path, f"{len(spec.files)} files but num_edges_per_chunk lists "
                       f"{len(chunks)} chunks", field=f"edges[{s!r}].data")
        edges[et] = spec
    node_data = data_specs(meta.get("node_data", {}), set(ntypes), base, path, "node_data")
    edge_data = data_specs(meta.get("edge_data", {}), set(etype_strs), base, path, "edge_data")
    name = meta.get("graph_name", "")
    return ChunkedMeta(path, name if isinstance(name, str) else str(name),
                       dict(zip(ntypes, ncount, strict=True)),
                       dict(zip(ntypes, nchunks, strict=True)),
                       dict(zip(etypes, ecount, strict=True)),
                       dict(zip(etypes, echunks, strict=True)), edges,
                       node_data, {_edge_key(k): v for k, v in edge_data.items()})


def _remote_meta(uri: str) -> ChunkedMeta:
    """:func:`load_chunked_meta` of a remote ``metadata.json`` (or its folder): the file is
    copied into this process's node-local cache and parsed there; every file spec keeps
    the folder's URI, from which :func:`~._chunked_read.local_chunk` fetches a chunk when
    it is read."""
    from dataclasses import replace

    from ..storage import fsys

    loc = fsys.open_location(uri)
    if not loc.path.endswith(".json"):
        loc = loc.child("metadata.json")
    folder = loc.parent
    copy = fsys.cache_folder(f"chunked:{folder.uri}") / loc.name
    data = loc.read_bytes()  # PartitionNotFoundError names the URI when it is missing
    with atomic_path(copy, durable=False) as tmp:
        tmp.write_bytes(data)
    meta = load_chunked_meta(copy)

    def remote(specs: Mapping[Any, FileSpec]) -> dict[Any, FileSpec]:
        return {k: replace(v, source=folder.uri) for k, v in specs.items()}

    return replace(meta, source=loc.uri, edges=remote(meta.edges),
                   node_data={t: remote(f) for t, f in meta.node_data.items()},
                   edge_data={t: remote(f) for t, f in meta.edge_data.items()})


def _checked_edge_views(meta: ChunkedMeta, et: EdgeType, i: int) -> tuple[int, Views, Views]:
    """Chunk ``i`` of ``et`` with its row count and IDs checked against the metadata."""
    spec, chunks = meta.edges[et], meta.edge_chunks[et]
    srcs, dsts, file = _edge_views(spec, i)
    field = f"{spec.field}.data[{i}]"
    rows = sum(len(v) for v in srcs)
    if chunks is not None and rows != chunks[i]:
        raise fail(file, f"chunk has {rows} edges but num_edges_per_chunk[{i}] says "
                   f"{chunks[i]}", field=f"num_edges_per_chunk[{':'.join(et)!r}]")
    for views, nt, what in ((srcs, et[0], "src"), (dsts, et[2], "dst")):
        n, base = meta.num_nodes[nt], 0
        for ids in views:
            if ids.size and (ids.min() < 0 or ids.max() >= n):
                row = int(np.flatnonzero((ids < 0) | (ids >= n))[0])
                raise fail(file, f"{what} ID {ids[row]} is not a {nt!r} node "
                           f"(0..{n - 1})", line=base + row + 1, field=field,
                           value=int(ids[row]))
            base += len(ids)
    return rows, srcs, dsts


def _iter_edge_views(meta: ChunkedMeta, et: EdgeType) -> Iterator[tuple[int, int, Views, Views]]:
    offset = 0
    for i in range(len(meta.edges[et].files)):
        rows, srcs, dsts = _checked_edge_views(meta, et, i)
        yield i, offset, srcs, dsts
        offset += rows
    if offset != meta.num_edges[et]:
        raise fail(meta.path, f"edge files of {':'.join(et)!r} hold {offset} edges but the "
                   f"metadata says {meta.num_edges[et]}", field="num_edges_per_type")


def iter_edge_chunks(meta: ChunkedMeta, etype: EdgeType | str) -> Iterator[EdgeChunk]:
    """Yield the edges of ``etype`` one chunk file at a time, each validated.

    Each chunk's row count must equal its ``num_edges_per_chunk`` entry and every ID must be
    below its node type's count.  Memory use is one chunk.

    Raises:
        FormatError: a missing or unreadable chunk file, a wrong count or an ID out of range,
            naming the chunk file, the row and the metadata field.

    Example:
        >>> import tempfile, graphshard as gs
        >>> d = tempfile.mkdtemp()
        >>> gs.io.write_chunked(gs.graph(([0, 1, 2], [1, 2, 0])), d, 2, fmt="csv")
        >>> m = load_chunked_meta(d)
        >>> [(c.offset, c.dst.tolist()) for c in iter_edge_chunks(m, "_N:_E:_N")]
        [(0, [1, 2]), (2, [0])]
    """
    et = _edge_key(etype)
    if et not in meta.edges:
        raise fail(meta.path, f"unknown edge type {etype!r}; edge types are "
                   f"{[':'.join(e) for e in meta.edges]}", field="edge_type", value=etype)
    for i, offset, srcs, dsts in _iter_edge_views(meta, et):
        yield EdgeChunk(i, offset, _join(srcs), _join(dsts))


def _iter_data(meta: ChunkedMeta, spec: FileSpec, total: int, what: str
               ) -> Iterator[DataChunk]:
    offset = 0
    first: tuple[str, Any] | None = None  # the row layout of chunk 0
    for i in range(len(spec.files)):
        data, file = _feature(spec, i)
        layout = _row_layout(data, file, f"{spec.field}.data[{i}]")
        if first is None:
            first = layout
        elif layout != first:
            raise fail(file, f"chunk {i} holds rows of {_describe(layout)}, but chunk 0 rows "
                       f"of {_describe(first)}: all chunks of a feature must agree",
                       field=f"{spec.field}.data[{i}]")
        if offset + len(data) > total:
            raise fail(file, f"chunk {i} ends at row {offset + len(data)} but {what} has only "
                       f"{total} rows", field=f"{spec.field}.data[{i}]")
        yield DataChunk(i, offset, data)
        offset += len(data)
    if offset != total:
        raise fail(meta.path, f"feature files hold {offset} rows, expected {total} ({what})",
                   field=spec.field)


def _row_layout(data: np.ndarray | Ragged, file: Path, field: str) -> tuple[str, Any]:
    """What one row of a feature chunk is: ``("ragged", dtype)``, or ``("numbers" |
    dtype, row shape)`` for an array (numbers: any boolean, integer or float dtype, which
    concatenate); a 0-d array has no rows."""
    if isinstance(data, Ragged):
        return "ragged", data.values.dtype
    if data.ndim == 0:
        raise fail(file, f"a 0-d array of {data.dtype}; a feature chunk holds one row per "
                   "node or edge", field=field)
    kind = "numbers" if data.dtype.kind in "biuf" else str(data.dtype)
    return kind, tuple(data.shape[1:])


def _describe(layout: tuple[str, Any]) -> str:
    kind, detail = layout
    if kind == "ragged":
        return f"variable length ({detail})"
    return f"shape {detail} ({kind})"


def iter_node_data_chunks(meta: ChunkedMeta, ntype: str, name: str) -> Iterator[DataChunk]:
    """Yield the rows of node feature ``name`` of ``ntype`` one chunk file at a time.

    Feature files may be chunked independently of the edges; their rows must add up to the
    node count.  2-D arrays come back 2-D; a single Parquet list column comes back Ragged.

    Raises:
        FormatError: a missing or unreadable file, or a row total that disagrees.
    """
    spec = _data_spec(meta, "node", ntype, name)
    yield from _iter_data(meta, spec, meta.num_nodes[ntype], f"node type {ntype!r}")


def iter_edge_data_chunks(meta: ChunkedMeta, etype: EdgeType | str, name: str
                          ) -> Iterator[DataChunk]:
    """Yield the rows of edge feature ``name`` of ``etype`` one chunk file at a time."""
    et = _edge_key(etype)
    spec = _data_spec(meta, "edge", et, name)
    yield from _iter_data(meta, spec, meta.num_edges[et], f"edge type {':'.join(et)!r}")


def _edge_key(etype: EdgeType | str) -> EdgeType:
    """``etype`` (``"src:rel:dst"`` or a tuple) as a key of the per-edge-type tables; a name
    without three parts finds no key there."""
    return cast(EdgeType, tuple(etype.split(":")) if isinstance(etype, str) else tuple(etype))


def _data_spec(meta: ChunkedMeta, kind: str, type_name: Any, name: str) -> FileSpec:
    """The files of node (``kind="node"``) or edge feature ``name``; names what is missing."""
    table: Mapping[Any, dict[str, FileSpec]]
    key: Any  # a node type or an edge type, as the table
    if kind == "node":
        table, key, field = meta.node_data, str(type_name), "node_data"
    else:
        table = meta.edge_data
        key = _edge_key(type_name)
        field = "edge_data"
    try:
        return table[key][name]
    except KeyError:
        raise fail(meta.path, f"no {kind} feature {name!r} for {kind} type {type_name!r}",
                   field=field) from None


def _concat(chunks: list[DataChunk]) -> np.ndarray | Ragged:
    parts = [c.data for c in chunks]
    ragged = [p for p in parts if isinstance(p, Ragged)]
    if ragged:
        if len(ragged) != len(parts):
            raise fail(None, "a feature mixes Ragged and dense chunks")
        return concat_ragged(ragged, ragged[0].values.dtype)
    dense = [p for p in parts if not isinstance(p, Ragged)]
    return np.concatenate(dense) if len(dense) != 1 else dense[0]


def read_chunked(path: PathLike) -> Graph:
    """Read a whole chunked graph (directory or ``metadata.json``) into a :class:`Graph`.

    Node types, edge types and their order come from the metadata; every count is checked
    against the files.

    Raises:
        FormatError: a malformed metadata file, a missing chunk file, a count that disagrees
            with the files or an ID out of range (naming file, row and field).

    Example:
        >>> import tempfile, numpy as np, graphshard as gs
        >>> g = gs.heterograph({("u", "r", "i"): ([0, 1], [1, 0])})
        >>> g.nodes["u"].data["x"] = np.ones((2, 3), dtype=np.float32)
        >>> d = tempfile.mkdtemp()
        >>> gs.io.write_chunked(g, d, 2, fmt="parquet")
        >>> h = read_chunked(d)
        >>> h.canonical_etypes, h.nodes["u"].data["x"].shape
        ([('u', 'r', 'i')], (2, 3))
    """
    meta = load_chunked_meta(path)
    check_declared_sizes(meta)
    data = {}
    for et, total in meta.num_edges.items():
        src, dst = np.empty(total, np.int64), np.empty(total, np.int64)
        for _, offset, srcs, dsts in _iter_edge_views(meta, et):  # validated per chunk
            for out, views in ((src, srcs), (dst, dsts)):
                pos = offset
                for v in views:  # one copy, straight from Arrow's buffers
                    if pos + len(v) > total:
                        raise fail(meta.path, f"edge files of {':'.join(et)!r} hold more than "
                                   f"the {total} edges the metadata gives",
                                   field="num_edges_per_type")
                    out[pos:pos + len(v)] = v
                    pos += len(v)
        data[et] = (src, dst)
    g = Graph(data, meta.num_nodes)
    for nt, feats in meta.node_data.items():
        for name in feats:
            g.nodes[nt].data[name] = _concat(list(iter_node_data_chunks(meta, nt, name)))
    for et, feats in meta.edge_data.items():
        for name in feats:
            g.edges[et].data[name] = _concat(list(iter_edge_data_chunks(meta, et, name)))
    return g


def read_edge_chunk(meta: ChunkedMeta, etype: EdgeType | str, index: int, offset: int
                    ) -> EdgeChunk:
    """Edges of chunk file ``index`` of ``etype`` alone (IDs and count checked).

    ``offset`` is the ID of its first edge (the sum of the earlier chunks' rows), which the
    caller knows from ``num_edges_per_chunk`` or an earlier count.  Lets parallel workers
    each read one chunk.

    Example:
        >>> import tempfile, graphshard as gs
        >>> d = tempfile.mkdtemp()
        >>> gs.io.write_chunked(gs.graph(([0, 1, 2], [1, 2, 0])), d, 2)
        >>> read_edge_chunk(load_chunked_meta(d), "_N:_E:_N", 1, 2).src.tolist()
        [2]
    """
    et = _edge_key(etype)
    _, srcs, dsts = _checked_edge_views(meta, et, index)
    return EdgeChunk(index, offset, _join(srcs), _join(dsts))


def read_data_chunk(meta: ChunkedMeta, kind: str, type_name: str | EdgeType, name: str,
                    index: int, offset: int) -> DataChunk:
    """Rows of chunk file ``index`` of a node (``kind="node"``) or edge feature alone."""
    data, _ = _feature(_data_spec(meta, kind, type_name, name), index)
    return DataChunk(index, offset, data)
