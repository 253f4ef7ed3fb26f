"""Every partition method on either source: a chunked graph's files or an in-memory Graph.

A method of :data:`~graphshard.partition.registry.METHODS` works natively on one source or
both: ``fn`` on an adjacency in memory, ``stream`` on a chunked graph's files.  Here each
runs on the other too, so that ``partition_graph`` and the out-of-core ``assign`` take the
same names and give the same parts for the same method and seed:

- :func:`assign_chunked` (the pipeline's step 1): a streaming method reads the chunks in
  bounded memory; an in-memory one (METIS, KaMinPar, ...) gets the adjacency read from the
  edge chunks, which must then fit in this process's memory.
- :func:`stream_in_memory` (``partition_graph`` with ``lp``): the graph's structure is
  written as a chunked folder in node-local scratch, then streamed.

Example:
    >>> import tempfile, graphshard as gs
    >>> from graphshard.io.chunked import load_chunked_meta
    >>> g = gs.graph(([0, 1, 2, 3, 4, 5], [1, 2, 0, 4, 5, 3]))
    >>> d = tempfile.mkdtemp()
    >>> gs.io.write_chunked(g, d, 2)
    >>> assign_chunked(load_chunked_meta(d), 2, "metis", MethodOptions())["_N"].tolist()
    [1, 1, 1, 0, 0, 0]
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import ValidationError
from ..graph import Graph, heterograph
from ..io.chunked import ChunkedMeta, iter_edge_chunks, load_chunked_meta
from ..storage.scratch import scratch_folder
from ..typing import IdArray
from .adjacency import symmetric_adjacency
from .constraints import balance_weights
from .methods import METHODS, MethodOptions, run_method, split_by_type
from .registry import lookup

__all__ = ["assign_chunked", "chunked_edges", "stream_in_memory"]

log = logging.getLogger(__name__)


def chunked_edges(meta: ChunkedMeta) -> tuple[IdArray, IdArray]:
    """Every edge of a chunked graph as homogeneous ``(src, dst)`` int64 arrays, edge types
    in declared order (node type offsets in declared order, as ``Graph`` numbers them)."""
    offsets = dict(zip(meta.num_nodes, np.cumsum([0, *meta.num_nodes.values()])[:-1].tolist(),
                       strict=True))
    total = sum(meta.num_edges.values())
    src, dst = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    at = 0
    for etype in meta.num_edges:
        st, _, dt = etype
        for chunk in iter_edge_chunks(meta, etype):
            n = len(chunk.src)
            src[at:at + n] = np.asarray(chunk.src, dtype=np.int64) + offsets[st]
            dst[at:at + n] = np.asarray(chunk.dst, dtype=np.int64) + offsets[dt]
            at += n
    return src, dst


def assign_chunked(meta: ChunkedMeta, num_parts: int, method: str, options: MethodOptions,
                   *, balance_edges: bool | None = None, **run: Any) -> dict[str, IdArray]:
    """The part of every node of a chunked graph, ``{ntype: int64 parts}``, by any method.

    Args:
        meta: The chunked graph.
        num_parts: Number of parts.
        method: A name of :data:`~graphshard.partition.registry.METHODS`.
        options: Seed, imbalance and the rest (``type_counts`` is filled in here).
        balance_edges: Balance in-edges per part too (None: the method's default; for an
            in-memory method, off, as in ``partition_graph``).
        **run: Where and how a streaming method runs (``use_ray``, ``num_workers``,
            ``work_dir``, ...; see :func:`~graphshard.partition.lp.lp_assign`).
    """
    entry = lookup(METHODS, method, what="partition method", field="method")
    options = replace(options, type_counts=tuple(meta.num_nodes.values()))
    entry.check_objective(options.objtype)
    if entry.stream is not None:
        return entry.stream(meta, num_parts, options, balance_edges=balance_edges, **run)
    src, dst = chunked_edges(meta)
    n = sum(meta.num_nodes.values())
    log.info("%s: the adjacency of %d nodes and %d edges, read into memory", method, n,
             len(src))
    weights = balance_weights(n, np.bincount(dst, minlength=n),
                              balance_edges=bool(balance_edges))
    adj = symmetric_adjacency(src, dst, n).with_vertex_weights(weights)
    del src, dst
    return split_by_type(meta, run_method(adj, num_parts, method, options))


def stream_in_memory(g: Graph, num_parts: int, method: str, options: MethodOptions, *,
                     balance_edges: bool | None = None, threads: int | None = None
                     ) -> IdArray:
    """A streaming method's parts for an in-memory graph (homogeneous order): the graph's
    structure (and ``node_id``, which ``hash`` reads) written as a chunked folder in
    node-local scratch, streamed in this process, the folder removed after."""
    entry = lookup(METHODS, method, what="partition method", field="part_method")
    if entry.stream is None:
        raise ValidationError(f"partition method {method!r} does not stream",
                              field="part_method", value=method)
    from ..io import write_chunked

    structure = heterograph({et: g.edges(etype=et) for et in g.canonical_etypes},
                            {t: g.num_nodes(t) for t in g.ntypes})
    for t in g.ntypes:
        if "node_id" in g.nodes[t].data:
            structure.nodes[t].data["node_id"] = g.nodes[t].data["node_id"]
    folder = scratch_folder(None, "stream")  # also removes those of killed runs
    try:
        write_chunked(structure, folder, 1)
        parts = assign_chunked(load_chunked_meta(folder), num_parts, method, options,
                               balance_edges=balance_edges, num_workers=threads)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return np.concatenate([np.asarray(parts[t], dtype=np.int64) for t in g.ntypes])
