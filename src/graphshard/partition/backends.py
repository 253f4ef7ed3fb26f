"""Partition methods beyond METIS: KaMinPar and Mt-KaHyPar (``quality`` and ``auto``, built
on them, live in :mod:`~graphshard.partition.portfolio`).

Importing the two modules registers four methods in
:data:`~graphshard.partition.registry.METHODS`:

* ``kaminpar``: KaMinPar (``pip install 'graphshard[quality]'``), fast shared-memory
  multilevel partitioning with a small memory footprint.
* ``mtkahypar``: Mt-KaHyPar's graph partitioner (preset DEFAULT; objective ``vol`` uses
  the column-net hypergraph, whose connectivity-1 metric is METIS's communication volume).
* ``quality``: the lowest cut this library can buy when time matters less.
* ``auto``: picks a backend per graph from its size and degree skew (the default).

All of them enforce one balance rule, :func:`max_part_weight`: every part weighs at most
``floor((1 + imbalance) * total / num_parts)``, which also satisfies the Walshaw archive's
rule ``max <= (1 + eps) * ceil(n / k)``.  Neither KaMinPar nor Mt-KaHyPar balances several
vertex weights at once: with ``ncon > 1`` they hand the call to METIS and log it.

Reproducibility: KaMinPar and Mt-KaHyPar's DEFAULT preset give the same assignment for the
same seed only with ``threads=1`` (their parallel refinement is racy); METIS and
Mt-KaHyPar's DETERMINISTIC preset are reproducible on any thread count.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .._util.optional import import_optional
from ..errors import ValidationError
from ..typing import IdArray
from .adjacency import Adjacency
from .balance import max_part_weight
from .registry import METHODS, MethodOptions, register_method

__all__ = [
    "adjacency_cut",
    "kaminpar_partition",
    "max_part_weight",
    "mtkahypar_partition",
    "part_imbalance",
]

_log = logging.getLogger(__name__)

KAMINPAR_PRESETS = ("default", "fast", "eco", "strong", "largek")
#: KaMinPar contexts that end the process (a segmentation fault) instead of partitioning:
#: "terapart" on a 500-node R-MAT at k = 2 with kaminpar 3.7.3; refused before the call
KAMINPAR_CRASHING_PRESETS = ("terapart",)
MTKAHYPAR_PRESETS = ("deterministic", "deterministic_quality", "default", "quality",
                     "highest_quality", "large_k")


# --------------------------------------------------------------------------- metrics


def adjacency_cut(adj: Adjacency, parts: IdArray) -> int:
    """Weighted edge cut: the number of directed input edges between different parts.

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> adj = symmetric_adjacency(np.array([0, 1, 2]), np.array([1, 2, 3]), 4)
        >>> adjacency_cut(adj, np.array([0, 0, 1, 1]))
        1
    """
    rows = np.repeat(parts, np.diff(adj.indptr))
    return int(adj.edge_weights[rows != parts[adj.indices]].sum()) // 2


def part_imbalance(adj: Adjacency, parts: IdArray, num_parts: int) -> float:
    """``max part weight / (total / num_parts) - 1``, the largest over all constraints.

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> adj = symmetric_adjacency(np.array([0, 1, 2]), np.array([1, 2, 3]), 4)
        >>> part_imbalance(adj, np.array([0, 0, 0, 1]), 2)
        0.5
    """
    vw = _vertex_weights(adj)
    loads = np.zeros((num_parts, vw.shape[1]), dtype=np.float64)
    np.add.at(loads, parts, vw)
    total = np.maximum(loads.sum(axis=0), 1)
    return float((loads.max(axis=0) * num_parts / total).max() - 1.0)


def _vertex_weights(adj: Adjacency) -> np.ndarray:
    if adj.vertex_weights is None:
        return np.ones((adj.num_nodes, 1), dtype=np.int64)
    return np.asarray(adj.vertex_weights, dtype=np.int64).reshape(adj.num_nodes, -1)


# --------------------------------------------------------------------------- shared helpers


def _threads(options: MethodOptions) -> int:
    if options.threads is not None:
        return max(1, int(options.threads))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _single_weights(adj: Adjacency, backend: str) -> np.ndarray | None:
    """The one vertex-weight column a backend can take, or None for unit weights."""
    if adj.vertex_weights is None:
        return None
    vw = np.asarray(adj.vertex_weights, dtype=np.int64).reshape(adj.num_nodes, -1)
    if vw.shape[1] != 1:
        raise ValidationError(f"{backend} balances one vertex weight per node; the "
                              f"adjacency has {vw.shape[1]} per node (use part_method='metis' "
                              "for several)", field="vertex_weights", value=vw.shape[1])
    return np.ascontiguousarray(vw[:, 0])


def _metis_fallback(adj: Adjacency, num_parts: int, options: MethodOptions,
                    backend: str) -> IdArray | None:
    """METIS's answer if ``adj`` has several balance constraints (and a log line), else None."""
    if adj.vertex_weights is None or np.ndim(adj.vertex_weights) < 2 \
            or np.shape(adj.vertex_weights)[1] <= 1:
        return None
    _log.warning("%s cannot balance %d vertex weights at once; using METIS for this call",
                 backend, np.shape(adj.vertex_weights)[1])
    return METHODS["metis"].partition(adj, num_parts, options)


def _bound(adj: Adjacency, num_parts: int, options: MethodOptions,
           vw: np.ndarray | None) -> tuple[int, int]:
    """(total vertex weight, max part weight) under :func:`max_part_weight`."""
    total = adj.num_nodes if vw is None else int(vw.sum())
    return total, max_part_weight(total, num_parts, options.imbalance)


def _upper_edges(adj: Adjacency) -> tuple[np.ndarray, np.ndarray]:
    """Each undirected edge once: ``(m, 2)`` int64 endpoints (u < v) and its weight."""
    rows = np.repeat(np.arange(adj.num_nodes, dtype=np.int64), np.diff(adj.indptr))
    keep = rows < adj.indices
    edges = np.empty((int(keep.sum()), 2), dtype=np.int64)
    edges[:, 0] = rows[keep]
    edges[:, 1] = adj.indices[keep]
    return edges, adj.edge_weights[keep]


def _core(adj: Adjacency, vw: np.ndarray | None
          ) -> tuple[np.ndarray, Adjacency, np.ndarray | None]:
    """Non-isolated nodes (bool mask), their induced adjacency and vertex weights."""
    keep = np.diff(adj.indptr) > 0
    new_id = np.cumsum(keep) - 1
    indptr = np.concatenate([[0], np.cumsum(np.diff(adj.indptr)[keep])]).astype(np.int64)
    core = Adjacency(indptr, new_id[adj.indices], adj.edge_weights)
    return keep, core, None if vw is None else np.ascontiguousarray(vw[keep])


def _pack_isolated(core_parts: IdArray, keep: np.ndarray, vw: np.ndarray | None,
                   num_parts: int, bound: int) -> IdArray:
    """Fill the parts with the isolated nodes, up to ``bound`` each, in part order.

    Isolated nodes never add to the cut, so they are free ballast: the core may be
    partitioned as unevenly as ``bound`` allows and the isolated nodes level it out.
    Exact for unit weights; with weights a part may exceed ``bound`` by less than one
    isolated node's weight.
    """
    weights = np.ones(keep.size, dtype=np.int64) if vw is None else vw
    loads = np.bincount(core_parts, weights=weights[keep], minlength=num_parts)
    room = np.maximum(bound - loads, 0).astype(np.int64)
    loose = weights[~keep]
    before = np.cumsum(loose) - loose  # weight of isolated nodes placed before each one
    target = np.searchsorted(np.cumsum(room), before, side="right")
    parts = np.empty(keep.size, dtype=np.int64)
    parts[keep] = core_parts
    # past the total room (a bound too tight for the weights): least loaded parts, in turn
    over = target >= num_parts
    target[over] = np.argsort(loads + room, kind="stable")[np.arange(over.sum()) % num_parts]
    parts[~keep] = target
    return parts


# --------------------------------------------------------------------------- KaMinPar


def _write_parhip(path: Path, adj: Adjacency, vw: np.ndarray | None) -> None:
    """KaMinPar's binary ParHIP file: 64-bit IDs and weights, weights only where needed.

    Header (u64): version bits (1 = no edge weights, 2 = no vertex weights), n, 2m; then
    byte offsets of each adjacency list, the neighbours, vertex weights, edge weights.
    """
    ew = adj.edge_weights
    unit_edges = ew.size == 0 or bool((ew == ew[0]).all())
    version = (1 if unit_edges else 0) | (2 if vw is None else 0)
    n, m = adj.num_nodes, adj.num_entries
    first = 8 * (3 + n + 1)
    with open(path, "wb") as handle:
        np.array([version, n, m], dtype=np.uint64).tofile(handle)
        (first + 8 * adj.indptr).astype(np.uint64).tofile(handle)
        np.ascontiguousarray(adj.indices, dtype=np.uint64).tofile(handle)
        if vw is not None:
            vw.astype(np.int64, copy=False).tofile(handle)
        if not unit_edges:
            np.ascontiguousarray(ew, dtype=np.int64).tofile(handle)


def kaminpar_partition(adj: Adjacency, num_parts: int, options: MethodOptions, *,
                       preset: str = "default") -> IdArray:
    """Partition with KaMinPar (``kaminpar`` package, context ``preset``).

    The bindings build graphs only from files, so the adjacency goes through a temporary
    binary ParHIP file (its cost: benchmarks/TUNING.md).  ``objtype="vol"``
    is not supported by KaMinPar: it minimises the cut and logs that.

    Args:
        adj: The graph; one vertex-weight column at most (more go to METIS, logged).
        num_parts: Number of parts.
        options: Imbalance, seed and threads (``objtype`` see above).
        preset: A KaMinPar context name, e.g. ``"default"``, ``"fast"``, ``"strong"``.

    Returns:
        int64 ``(num_nodes,)`` part of each node (a new array).

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> adj = symmetric_adjacency(np.arange(7), np.arange(1, 8), 8)  # a path
        >>> kaminpar_partition(adj, 2, MethodOptions(seed=1, threads=1)).tolist()  # doctest: +SKIP
        [0, 0, 0, 0, 1, 1, 1, 1]
    """
    fallback = _metis_fallback(adj, num_parts, options, "kaminpar")
    if fallback is not None:
        return fallback
    kaminpar = import_optional("kaminpar", "part_method='kaminpar'")
    if preset in KAMINPAR_CRASHING_PRESETS:
        raise ValidationError(f"KaMinPar preset {preset!r} crashes the process in the "
                              f"kaminpar package this was tested with; choose one of "
                              f"{list(KAMINPAR_PRESETS)}", field="preset", value=preset)
    if preset not in kaminpar.context_names():
        raise ValidationError(f"unknown KaMinPar preset {preset!r}; choose one of "
                              f"{sorted(kaminpar.context_names())}", field="preset", value=preset)
    if options.objtype == "vol":
        _log.info("kaminpar minimises the edge cut; objtype='vol' is not supported by it")
    vw = _single_weights(adj, "kaminpar")
    _, bound = _bound(adj, num_parts, options, vw)
    start = time.perf_counter()
    keep, core, core_vw = _core(adj, vw)
    if core.num_nodes == 0:
        return _pack_isolated(np.zeros(0, dtype=np.int64), keep, vw, num_parts, bound)
    with tempfile.TemporaryDirectory(prefix="graphshard-kaminpar-") as tmp:
        path = Path(tmp) / "graph.parhip"
        _write_parhip(path, core, core_vw)
        graph = kaminpar.load_graph(str(path), kaminpar.GraphFileFormat.PARHIP)
    del core
    loaded = time.perf_counter()
    kaminpar.reseed(int(options.seed) % (2**31))
    solver = kaminpar.KaMinPar(_threads(options), kaminpar.context_by_name(preset))
    core_parts = np.asarray(solver.compute_partition(graph, [bound] * num_parts), dtype=np.int64)
    parts = _pack_isolated(core_parts, keep, vw, num_parts, bound)
    _log.info("kaminpar(%s): n=%d k=%d, graph file %.3f s, partition %.3f s", preset,
              adj.num_nodes, num_parts, loaded - start, time.perf_counter() - loaded)
    return parts


@register_method("kaminpar", "KaMinPar (fast, lean multilevel); one balance weight, cut",
                 requires="kaminpar")
def _kaminpar(adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
    return kaminpar_partition(adj, num_parts, options)


# --------------------------------------------------------------------------- Mt-KaHyPar


def _int_lines(tokens: np.ndarray, line_end: np.ndarray) -> np.ndarray:
    """ASCII text of non-negative int64 ``tokens``, a newline after those marked, else a space.

    Vectorised: one pass per decimal digit position, no Python loop over tokens.
    """
    digits = np.ones(tokens.size, dtype=np.int64)
    power = 10
    while tokens.size and power <= tokens.max():
        digits += tokens >= power
        power *= 10
    ends = np.cumsum(digits + 1)
    out = np.empty(int(ends[-1]) if ends.size else 0, dtype=np.uint8)
    out[ends - 1] = np.where(line_end, ord("\n"), ord(" "))
    rest = tokens.copy()
    for place in range(int(digits.max()) if digits.size else 0):
        live = digits > place
        out[(ends - 2 - place)[live]] = (rest[live] % 10 + ord("0")).astype(np.uint8)
        rest //= 10
    return out


def _write_column_net(path: Path, adj: Adjacency, vw: np.ndarray | None) -> None:
    """hMETIS file of the column-net hypergraph: net ``v`` = ``{v} + neighbours(v)``."""
    n = adj.num_nodes
    sizes = np.diff(adj.indptr) + 1
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pins = np.empty(adj.num_entries + n, dtype=np.int64)
    in_row = np.ones(pins.size, dtype=bool)
    in_row[starts] = False
    pins[starts] = np.arange(1, n + 1)
    pins[in_row] = adj.indices + 1
    line_end = np.zeros(pins.size, dtype=bool)
    line_end[starts + sizes - 1] = True
    with open(path, "wb") as handle:
        handle.write(f"{n} {n}{' 10' if vw is not None else ''}\n".encode())
        _int_lines(pins, line_end).tofile(handle)
        if vw is not None:
            _int_lines(vw, np.ones(n, dtype=bool)).tofile(handle)


_MTK_INITIALIZERS: dict[int, Any] = {}


def _mtk_initializer(mtk: Any, threads: int) -> Any:
    if threads not in _MTK_INITIALIZERS:
        _MTK_INITIALIZERS[threads] = mtk.initialize(threads, False)
    return _MTK_INITIALIZERS[threads]


def mtkahypar_partition(adj: Adjacency, num_parts: int, options: MethodOptions, *,
                        preset: str = "default", vcycles: int = 0) -> IdArray:
    """Partition with Mt-KaHyPar (``mtkahypar`` package, preset ``preset``).

    ``objtype="cut"`` partitions the graph; ``"vol"`` partitions the column-net hypergraph
    (one net per node: the node and its neighbours) under the connectivity-1 objective, which
    equals METIS's total communication volume.  Mt-KaHyPar has only a global seed; it is set
    just before the call from ``options.seed``.

    Args:
        adj: The graph; one vertex-weight column at most (more go to METIS, logged).
        num_parts: Number of parts.
        options: Imbalance, objective, seed and threads.
        preset: ``"deterministic"``, ``"default"``, ``"quality"``, ``"highest_quality"``
            or ``"large_k"``.
        vcycles: Extra V-cycles run on the result (``improve_partition``).

    Returns:
        int64 ``(num_nodes,)`` part of each node (a new array).

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> adj = symmetric_adjacency(np.arange(7), np.arange(1, 8), 8)  # a path
        >>> opts = MethodOptions(seed=1, threads=1)
        >>> mtkahypar_partition(adj, 2, opts, preset="deterministic").tolist()  # doctest: +SKIP
        [0, 0, 0, 0, 1, 1, 1, 1]
    """
    fallback = _metis_fallback(adj, num_parts, options, "mtkahypar")
    if fallback is not None:
        return fallback
    mtk = import_optional("mtkahypar", "part_method='mtkahypar'")
    if preset not in MTKAHYPAR_PRESETS:
        raise ValidationError(f"unknown Mt-KaHyPar preset {preset!r}; choose one of "
                              f"{list(MTKAHYPAR_PRESETS)}", field="preset", value=preset)
    vw = _single_weights(adj, "mtkahypar")
    total, bound = _bound(adj, num_parts, options, vw)
    # Mt-KaHyPar allows floor((1 + eps) * ceil(total / k)); pick eps so that this is `bound`
    eps = (bound + 0.5) / -(-total // num_parts) - 1.0
    start = time.perf_counter()
    init = _mtk_initializer(mtk, _threads(options))
    ctx = init.context_from_preset(getattr(mtk.PresetType, preset.upper()))
    vol = options.objtype == "vol"
    ctx.set_partitioning_parameters(num_parts, eps, mtk.Objective.KM1 if vol else mtk.Objective.CUT)
    ctx.logging = False
    if vol:
        with tempfile.TemporaryDirectory(prefix="graphshard-mtkahypar-") as tmp:
            path = Path(tmp) / "graph.hgr"
            _write_column_net(path, adj, vw)
            graph = init.hypergraph_from_file(str(path), ctx, mtk.FileFormat.HMETIS)
    else:
        edges, weights = _upper_edges(adj)
        if vw is None and (weights.size == 0 or bool((weights == weights[0]).all())):
            del weights  # uniform weights: the unweighted graph has the same optimum
            graph = init.create_graph(ctx, adj.num_nodes, len(edges), edges)
        else:
            node_w = np.ones(adj.num_nodes, dtype=np.int64) if vw is None else vw
            graph = init.create_graph(ctx, adj.num_nodes, len(edges), edges, node_w, weights)
            del weights, node_w
        del edges
    built = time.perf_counter()
    mtk.set_seed(int(options.seed) % (2**31))
    result = graph.partition(ctx)
    if vcycles:
        result.improve_partition(ctx, vcycles)
    parts = np.asarray(result.get_partition(), dtype=np.int64)
    _log.info("mtkahypar(%s): n=%d k=%d, build %.3f s, partition %.3f s", preset,
              adj.num_nodes, num_parts, built - start, time.perf_counter() - built)
    return parts


@register_method("mtkahypar", "Mt-KaHyPar (high quality); one balance weight, cut or volume",
                 requires="mtkahypar", objectives=("cut", "vol"))
def _mtkahypar(adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
    return mtkahypar_partition(adj, num_parts, options)
