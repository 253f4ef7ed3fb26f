"""``lp``: multilevel label-propagation partitioning of a chunked graph, out of core.

The scalable, high-quality assignment method of the pipeline, in the spirit of ParHIP and
dKaMinPar.  No worker ever holds the whole edge list:

1. **Shard** the input (:func:`~graphshard.partition.lp.levels.level0_from_chunks`): stream
   the edge chunks twice (degrees, then bucketed pieces) into CSR shards of about
   ``max_task_entries`` entries each, stored as ``.npy`` files in a work directory.
2. **Coarsen**: size-constrained label-propagation clustering (each cluster weighs at most
   ``imbalance * n / num_parts``), one task per shard per sub-round (rows with more than
   ``LpParams.cluster_max_row`` entries, a power-law graph's hubs, stay put: their leaves join
   them, and the sweeps skip half of R-MAT's entries; levels that cost about a sweep of
   the whole graph get at most ``cluster_costly_rounds`` rounds); contract the clusters
   into a coarse weighted graph by streaming shards into pieces again.  Nodes left alone
   because their favourite cluster was full are first grouped by that favourite (two-hop
   clustering: a hub's leaves merge, and so do their parallel edges to it).  Repeat until
   the coarse graph fits one worker (``coarse_entries``, and ``coarse_nodes`` if given).
   Each level aims at the node count where the entries would fit, extrapolated from how
   the last contraction shrank them
   (:func:`~graphshard.partition.lp.clustering.entry_elasticity`): a power-law graph keeps most
   of its entries when its nodes merge, so it coarsens in fewer, harder steps
   (``hard_shrink``), since each of its levels costs about as much as the finest.
   A coarse level with more than ``thin_degree`` entries a node on average is
   thinned to about that many, keeping its expected weights
   (:func:`~graphshard.partition.lp.thin.thin_level`): clustering, contraction and
   refinement on it then cost in proportion to its nodes.
3. **Partition** the coarsest graph in memory with ``run_method``, node weights = cluster
   weights (one column per balance constraint): by default METIS and KaMinPar, keeping
   the lower cut (``LpParams.method``).  When
   coarsening stalls above ``coarse_entries`` (a power-law graph's core), the shard
   tasks thin it to its heaviest edges first
   (:func:`~graphshard.partition.lp.shards.gather`), so the driver never holds more.
4. **Uncoarsen**: project the parts to each finer level, rebalance if a part is over
   ``(1 + imbalance) * n / num_parts`` and refine by size-constrained label propagation
   (moves that strictly reduce the cut and keep every part within the limit), then by
   relaxed rounds in the spirit of Jet: positive-gain moves may overload a part's node
   count by ``RELAX`` of the average, a balancer moves the cheapest nodes back out, and
   the best balanced state is kept (plain constrained LP stalls once METIS has filled
   the parts); see :mod:`~graphshard.partition.lp.refinement`.  Every loop stops early:
   label propagation once a round commits moves of fewer than ``REFINE_MIN_MOVED``
   (``cluster_min_moved``) of the nodes or, in refinement, gains less than
   ``REFINE_MIN_GAIN`` of the cut (times the level's share of the finest level's
   entries: rounds on small levels are cheap); relaxed rounds once one gains less than
   ``RELAX_MIN_GAIN`` of the cut.  On the costly levels (``RELAX_COSTLY_SHARE`` of the
   finest level's entries) relaxed rounds run only if those one level coarser gained
   ``RELAX_PREDICT_GAIN`` of the cut, and their strict rounds stop once the next is
   predicted to gain too little (the last round's gain times the coarser level's ratio
   of its second round's gain to its first).

Cost: about (sweeps per level) x (entries per level) summed over the levels, plus a
bucket pass and a counting sort per level build; the round limits above trade quality for
speed.  Sweeps visit rows in a random order of blocks of consecutive IDs (cache
locality).

Memory: a task holds one edge chunk or one shard (``max_task_entries`` entries plus one
row) and a few per-node arrays (4 bytes a node each: labels and weights are int32 while
they fit); the driver holds per-node arrays, the moves of one round (sweep and rebalancing
tasks return moves, not a value per row), and, at step 3, the coarsest graph.  On Ray the
per-node arrays reach the actors as ``.npy`` files in the work directory, which they
memory-map (:func:`~graphshard.runtime.executor.sharing_files`), so the driver's memory
holds no object-store copies of them; with a URI ``work_dir`` they go through the object
store instead, and the shard files through the URI (no folder shared between nodes).
Merged pieces are not deleted but kept in a scratch pool (local work directories), and
the next level's files are written over them in place
(:mod:`graphshard.storage.scratch`): fresh page-cache pages are what writing costs most on a
VM.  The result depends on ``seed`` and on the shard
layout (``max_task_entries``), never on how the input is chunked, on ``num_workers``, or on
``use_ray``: every random choice is a keyed hash of (seed, node, step).
"""

from __future__ import annotations

import contextlib
import logging
import math
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..._util.optional import is_installed
from ...errors import ValidationError
from ...io.chunked import ChunkedMeta
from ...runtime.alone import start_alone_process
from ...runtime.executor import Executor, make_executor, sharing_files
from ...storage import fsys
from ...storage.files import warn_if_short_of_space
from ...storage.scratch import ScratchPool, make_work_dir, scratch_folder
from ...storage.workstore import WorkStore, new_run_id
from ...typing import IdArray
from ..adjacency import Adjacency
from ..backends import adjacency_cut, max_part_weight
from ..balance import unmet_balance, weight_sums
from ..registry import METHODS, MethodOptions
from ..runner import run_method
from .clustering import cluster_cap, coarsen, entry_elasticity, label_dtype, node_target
from .levels import contract_level, level0_degrees, level0_from_chunks, type_offsets
from .params import LpParams
from .refinement import RELAX_COSTLY_SHARE
from .refinement import refine as _refine
from .shards import ShardedGraph, gather, release_scratch
from .thin import thin_level

__all__ = ["LpParams", "initial_partition", "lp_assign", "part_limit", "warm_up"]

logger = logging.getLogger(__name__)

#: The most nodes lp takes: its shard entries are int64 keys ``row * num_nodes + column``.
MAX_LP_NODES = math.isqrt(2**63 - 1)


def _check(meta: ChunkedMeta, num_parts: int, num_workers: int | None) -> None:
    """The arguments of :func:`lp_assign` that :class:`LpParams` does not check."""
    if not isinstance(meta, ChunkedMeta):
        raise ValidationError(f"lp_assign needs a ChunkedMeta (load_chunked_meta(dir)), got "
                              f"{type(meta).__name__}", field="meta")
    if not isinstance(num_parts, (int, np.integer)) or num_parts < 1:
        raise ValidationError(f"num_parts must be a positive integer, got {num_parts!r}",
                              field="num_parts", value=num_parts)
    if num_workers is not None and (not isinstance(num_workers, (int, np.integer))
                                    or num_workers < 1):
        raise ValidationError(f"num_workers must be a positive integer or None, got "
                              f"{num_workers!r}", field="num_workers", value=num_workers)
    nodes = sum(meta.num_nodes.values())
    if nodes > MAX_LP_NODES:
        raise ValidationError(f"lp packs an entry as row * num_nodes + column in int64, "
                              f"which holds up to {MAX_LP_NODES:,} nodes; the graph has "
                              f"{nodes:,}: use another method or split the graph",
                              field="num_nodes", value=nodes)


def lp_assign(meta: ChunkedMeta, num_parts: int, params: LpParams | None = None, *,
              num_workers: int | None = None, use_ray: bool = False,
              address: str | None = None, work_dir: str | Path | None = None,
              scratch_pool: str | Path | None = None,
              **options: Any) -> dict[str, np.ndarray]:
    """Assign every node of a chunked graph to one of ``num_parts`` parts, out of core.

    The graph is treated as undirected (both directions of every edge, all edge types
    together); parts are balanced by node count: each holds at most
    ``max(floor((1 + imbalance) * n / num_parts), ceil(n / num_parts))`` nodes.  With
    ``balance_edges`` (the default) the in-edges per part (the edges ``dispatch`` stores
    with the owner of their destination) are a second constraint, as ``balance_edges``
    is in memory: on skewed graphs a node-balanced cut can leave most edges in one part,
    and this is what bounds the memory of the parts.  Both limits hold during every
    label-propagation move, clustering and refinement alike (a move that would put a
    label over either is not made, or reverted), not only after it.  The edge limit is
    ``(1 + imbalance)`` times the average, raised to the largest in-degree when one hub
    alone outweighs it.  A limit still unmet at the end is logged as a warning naming
    the column and its excess.

    Args:
        meta: The chunked graph (:func:`graphshard.io.chunked.load_chunked_meta`).
        num_parts: Number of parts.
        params: What decides the result: balance, seed, rounds, the shard layout, the
            initial methods and the tuned constants (:class:`LpParams`; default: its
            defaults).
        num_workers: Concurrent tasks (threads in-process, default all cores; Ray actors,
            default all CPUs of the cluster).  The result does not depend on it.
        use_ray: Run shard tasks on Ray actors (``ray.init()`` unless Ray is running);
            a local work directory must then be visible to every Ray worker.
        address: Ray cluster to join (implies ``use_ray``), e.g. ``"auto"``.
        work_dir: Parent folder of the temporary shard files (default: the system's;
            created when missing), or a URI (``s3://``, ``gs://``, ``hdfs://``): then
            the shard files go through ``<work_dir>/lp-<run>`` (removed at the end) and
            the per-node arrays through Ray's object store, so that no folder is shared
            between nodes (:mod:`~graphshard.partition.lp.shards`).
        scratch_pool: A :class:`~graphshard.storage.scratch.ScratchPool` folder on the file
            system of ``work_dir``: freed scratch files are kept there for later ones to
            be written over, and at the end every scratch file is left there for the
            next step (``graphshard pipeline`` hands them to dispatch); the caller
            removes it.  None: a pool of this run's own, removed with its scratch.
        **options: Fields of :class:`LpParams` replacing those of ``params``, e.g.
            ``seed=7, coarse_nodes=300``.

    Returns:
        Node type -> int64 part of every node of that type, in per-type ID order.

    Raises:
        ValidationError: a bad ``num_parts``, ``num_workers`` or option (an
            :class:`LpParams` field out of range, an unknown ``method`` or option name).
        FormatError: a malformed chunk file (from the reader).

    Example:
        >>> import tempfile, graphshard as gs
        >>> from graphshard.io.chunked import load_chunked_meta
        >>> d = tempfile.mkdtemp()
        >>> src = np.arange(40); dst = (src + 1) % 40   # a 40-node ring
        >>> gs.io.write_chunked(gs.graph((src, dst)), d, 3)
        >>> parts = lp_assign(load_chunked_meta(d), 2, coarse_nodes=10)["_N"]
        >>> np.bincount(parts).tolist(), int((parts[src] != parts[dst]).sum())
        ([20, 20], 2)
    """
    _check(meta, num_parts, num_workers)
    params = LpParams.with_options(params, options)
    remote = work_dir is not None and fsys.is_remote(work_dir)
    if work_dir is not None and not remote:
        make_work_dir(work_dir)
    local_dir = None if remote else work_dir
    warn_if_short_of_space(local_dir or tempfile.gettempdir(),
                           params.scratch_bytes_per_edge * sum(meta.num_edges.values()),
                           "lp's scratch", "choose another disk with work_dir / --work-dir")
    t0 = time.perf_counter()
    with ThreadPoolExecutor(1) as first_pass:  # the degrees are counted while Ray starts
        degrees = first_pass.submit(level0_degrees, meta)
        ex = make_executor(num_workers=num_workers, use_ray=use_ray, address=address,
                           actors=True, warm=warm_up)
        if use_ray or address:  # METIS of the coarsest graph runs alone (runtime.alone)
            start_alone_process(preload=("graphshard.partition.metis_lib",))
    tmp = scratch_folder(local_dir, "lp")  # also removes those of killed runs
    # a remote work folder: shard files go through it (this run's own subfolder, removed
    # at the end), shared arrays through Ray's object store; no folder is shared
    store = WorkStore(fsys.open_location(str(work_dir)).child(
        f"lp-{new_run_id(meta.path)}").uri) if remote else None
    try:
        pool = None if store is not None else \
            ScratchPool(tmp / "free" if scratch_pool is None else scratch_pool)
        # level folders: <tmp>/levelN, or <work URI>#levelN (the URI may end in a query)
        base = f"{tmp}/" if store is None else f"{store.root}#"
        with sharing_files(ex, tmp / "shared") if store is None \
                else contextlib.nullcontext(ex):
            levels = [level0_from_chunks(meta, f"{base}level0", params.max_task_entries,
                                         ex, edge_weighted=params.balance_edges, pool=pool,
                                         degrees=degrees.result())]
            del degrees
            n = levels[0].num_nodes
            logger.info("lp: level 0 %r in %.1fs", levels[0], time.perf_counter() - t0)
            if num_parts == 1 or n == 0:
                parts = np.zeros(n, dtype=np.int64)
            else:
                threads = params.initial_threads or num_workers
                parts = _multilevel(levels, ex, num_parts, params, base, pool, threads)
    finally:  # the work directory goes while Ray shuts down
        if scratch_pool is not None:  # its files, but the small ones, go to the next step
            ex.close()
            with contextlib.suppress(OSError):
                ScratchPool(scratch_pool).release_tree(tmp)
        cleanup = threading.Thread(target=shutil.rmtree, args=(tmp,),
                                   kwargs={"ignore_errors": True})
        cleanup.start()
        ex.close()
        release_scratch()  # tasks that ran on this thread (one worker) kept their scratch
        if store is not None:
            store.remove()
        cleanup.join()
    logger.info("lp: %d nodes into %d parts in %.1fs", n, num_parts, time.perf_counter() - t0)
    off = type_offsets(meta)
    return {nt: parts[off[nt]:off[nt] + c].astype(np.int64) for nt, c in meta.num_nodes.items()}


def part_limit(node_weights: IdArray, num_parts: int, imbalance: float) -> IdArray:
    """Heaviest part allowed in every column of ``node_weights`` (``(n, C)``):
    ``max_part_weight`` of the column's total, and at least the column's heaviest node
    (a hub's in-degree can exceed the average part on its own; its part then holds it
    alone).  The limit is not raised by the hub on top of the average: that let a
    part store 1.12x the average in-edges on BlogCatalog where METIS keeps 1.03x
    (benchmarks/TUNING.md).

    Example:
        >>> part_limit(np.array([[1, 0], [1, 1], [1, 8]]), 2, 0.1).tolist()
        [2, 8]
    """
    out = np.zeros(node_weights.shape[1], dtype=np.int64)
    for c in range(node_weights.shape[1]):
        total = int(node_weights[:, c].sum())
        limit = max_part_weight(total, num_parts, imbalance)
        heaviest = int(node_weights[:, c].max()) if len(node_weights) else 0
        out[c] = max(limit, heaviest)
    return out


def initial_partition(adj: Adjacency, k: int, methods: Sequence[str], options: MethodOptions,
                      max_part: IdArray) -> tuple[IdArray, str]:
    """The lowest-cut partition of ``adj`` among ``methods`` (ties: the first), preferring
    those whose parts all weigh at most ``max_part``; each method runs on one thread.
    Methods not installed, or without multi-constraint balance when ``adj`` has several
    weight columns, are skipped (the first method always runs).  Returns the parts and
    the method's name.

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> ring = symmetric_adjacency(np.arange(8), (np.arange(8) + 1) % 8, 8)
        >>> parts, name = initial_partition(ring, 2, ["random", "metis"], MethodOptions(),
        ...                                 np.array([4]))
        >>> name, np.bincount(parts).tolist()
        ('metis', [4, 4])
    """
    weights = np.ones(adj.num_nodes, dtype=np.int64) if adj.vertex_weights is None \
        else np.asarray(adj.vertex_weights)
    columns = 1 if weights.ndim == 1 else weights.shape[1]
    runnable = [name for i, name in enumerate(methods) if i == 0 or (
        (columns == 1 or METHODS[name].multi_constraint)
        and all(is_installed(p.strip()) for p in (METHODS[name].requires or "").split(",")
                if p.strip()))]
    one_thread = replace(options, threads=1)
    if len(runnable) == 1:
        return run_method(adj, k, runnable[0], one_thread), runnable[0]
    best: tuple[tuple[bool, int], IdArray, str] | None = None
    for name in runnable:
        parts = run_method(adj, k, name, one_thread)
        loads = weight_sums(parts, weights, k).reshape(k, columns)
        key = (bool((loads > np.reshape(max_part, (1, -1))).any()), adjacency_cut(adj, parts))
        logger.debug("lp: initial partition by %s: over the limit %s, cut %d", name, *key)
        if best is None or key < best[0]:
            best = (key, parts, name)
    assert best is not None
    return best[1], best[2]


def _multilevel(levels: list[ShardedGraph], ex: Executor, k: int, params: LpParams,
                base: str, pool: ScratchPool | None, threads: int | None) -> IdArray:
    """Coarsen ``levels[0]``, partition the coarsest level (``threads``: of a single
    initial method), then project and refine back up; the parts of level 0."""
    imbalance, seed, coarse_nodes = params.imbalance, params.seed, params.coarse_nodes
    coarse_entries = params.coarse_entries
    totals = levels[0].node_weights.sum(axis=0)
    total_w = int(totals[0])
    max_part = part_limit(levels[0].node_weights, k, imbalance)
    max_cluster = max(2, int(imbalance * total_w / k))
    other_caps = [max(1, int(imbalance * t / k)) for t in totals[1:]]
    maps: list[IdArray] = []
    contracted = None  # the last level's entries before thinning
    while len(levels) <= params.max_levels:
        g = levels[-1]
        if g.num_entries <= coarse_entries and (coarse_nodes is None
                                                or g.num_nodes <= coarse_nodes):
            break
        t = time.perf_counter()
        elasticity = entry_elasticity(levels, contracted, params.min_elasticity)
        target = coarse_nodes if coarse_nodes is not None else \
            node_target(g, coarse_entries, elasticity)
        shrink = params.shrink if elasticity >= params.hard_elasticity \
            else params.hard_shrink
        cap = np.array([cluster_cap(total_w, g.num_nodes, target, max_cluster, shrink),
                        *other_caps], dtype=np.int64)
        costly = g.num_entries >= RELAX_COSTLY_SHARE * levels[0].num_entries
        rounds = min(params.lp_rounds, params.cluster_costly_rounds) if costly \
            else params.lp_rounds
        clusters, nc = coarsen(g, ex, params, max_cluster=cap, depth=len(levels),
                                rounds=rounds)
        if nc > params.stall * g.num_nodes:
            logger.info("lp: coarsening stalled at %d nodes", g.num_nodes)
            break
        coarse = contract_level(g, clusters, nc, f"{base}level{len(levels)}",
                                params.max_task_entries, ex, pool)
        contracted = coarse.num_entries
        levels.append(thin_level(coarse, ex, params.thin_degree,
                                 seed=seed + 7919 * len(levels)))
        maps.append(clusters)
        logger.info("lp: level %d %r in %.1fs", len(levels) - 1, levels[-1],
                    time.perf_counter() - t)
    t = time.perf_counter()
    coarsest = levels[-1]
    if coarsest.num_entries > coarse_entries:
        logger.info("lp: the coarsest level keeps %d entries (> coarse_entries %d): "
                    "partitioning its heaviest edges", coarsest.num_entries, coarse_entries)
    options = MethodOptions(imbalance=imbalance, seed=seed, threads=threads)
    adj = gather(coarsest, ex, coarse_entries, seed)
    method = params.method
    with _coarse_balance_quiet():
        if isinstance(method, str):
            parts, chosen = run_method(adj, k, method, options), method
        else:
            parts, chosen = initial_partition(adj, k, method, options, max_part)
    del adj
    parts = parts.astype(label_dtype(k))
    logger.info("lp: initial partition of %d nodes by %s in %.1fs", levels[-1].num_nodes,
                chosen, time.perf_counter() - t)
    gain = 1.0  # what the relaxed rounds of the level above gained
    decay = None  # how its second strict round compared to its first
    for depth in range(len(levels) - 1, -1, -1):
        g = levels[depth]
        if depth < len(levels) - 1:
            parts = parts[maps[depth]]
        parts, gain, decay = _refine(g, ex, parts, k, max_part, seed=seed, depth=depth,
                                     rounds=params.refine_rounds,
                                     work_share=g.num_entries / max(1, levels[0].num_entries),
                                     coarser_gain=gain, coarser_decay=decay)
    message = unmet_balance(parts, levels[0].node_weights, k, max_part, imbalance)
    if message:  # columns: the node count, then in-edges with balance_edges
        logger.warning("lp: %s", message)
    return parts


class _UnmetFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "balance not met" not in record.getMessage()


@contextlib.contextmanager
def _coarse_balance_quiet() -> Any:
    """Drop the in-memory balancer's "balance not met" warnings while the coarsest level
    is partitioned: its clusters are too heavy to balance exactly, every finer level is
    rebalanced, and the driver warns about the finest level's result only."""
    balance_log = logging.getLogger("graphshard.partition.balance")
    quiet = _UnmetFilter()
    balance_log.addFilter(quiet)
    try:
        yield
    finally:
        balance_log.removeFilter(quiet)


def warm_up() -> float:
    """Run :func:`lp_assign` in-process on a tiny graph, so that this process has imported
    the pipeline and loaded (or compiled) every kernel it calls: what each Ray actor of
    :class:`~graphshard.runtime.executor.RayActorExecutor` runs as it starts.

    The in-process executor hands tasks read-only arrays, as Ray does, so the kernels are
    specialised exactly as the shard tasks of a real run will call them.

    Returns:
        Seconds spent.

    Example:
        >>> warm_up() >= 0
        True
    """
    from ...graph import graph
    from ...io.chunked import load_chunked_meta, write_chunked

    t = time.perf_counter()
    n = 64
    src = np.concatenate([np.arange(n), np.arange(0, n, 4)])
    dst = np.concatenate([(np.arange(n) + 1) % n, (np.arange(0, n, 4) + n // 2) % n])
    with tempfile.TemporaryDirectory(prefix="graphshard-warm-") as d:
        write_chunked(graph((src, dst), num_nodes=n), d, 2)
        lp_assign(load_chunked_meta(d), 2, coarse_nodes=8, max_task_entries=64,
                  lp_rounds=1, refine_rounds=1, num_workers=1, work_dir=d)
    return time.perf_counter() - t
