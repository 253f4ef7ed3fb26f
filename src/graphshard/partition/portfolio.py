"""Method portfolios on top of the backends: ``quality`` (best of several runs) and
``auto`` (the default: a backend picked per graph from measured properties).
"""

from __future__ import annotations

import logging

import numpy as np

from .._util.optional import is_installed
from ..typing import IdArray
from .adjacency import Adjacency
from .backends import (
    _metis_fallback,
    adjacency_cut,
    kaminpar_partition,
    mtkahypar_partition,
    part_imbalance,
)
from .registry import METHODS, MethodOptions, register_method

__all__ = ["QUALITY_PORTFOLIO", "auto_choice", "auto_partition", "degree_skew",
           "quality_partition"]

_log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- quality

#: (backend, preset, seed offsets) tried by :func:`quality_partition`; the lowest cut wins.
QUALITY_PORTFOLIO = (("kaminpar", "strong", (0, 1, 2, 3)),
                     ("mtkahypar", "deterministic_quality", (0,)))


def quality_partition(adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
    """The lowest cut of a small portfolio: KaMinPar strong (4 seeds) + Mt-KaHyPar.

    Runs every entry of :data:`QUALITY_PORTFOLIO` (KaMinPar's ``strong`` context with
    seeds ``options.seed + 0..3``, then Mt-KaHyPar's DETERMINISTIC_QUALITY preset, which
    ignores the seed) and keeps the assignment with the lowest cut, ties broken by lower
    imbalance, then by portfolio order.  Reproducible for a seed with ``threads=1``
    (KaMinPar's parallel refinement is racy; the Mt-KaHyPar preset is deterministic).

    On the Walshaw graphs it comes closer to the best-known cuts than any of its members
    alone (figures and the non-reproducible alternative: benchmarks/TUNING.md).  Falls back
    to whichever backend is installed, and to METIS for several balance constraints
    (logged).

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> adj = symmetric_adjacency(np.arange(7), np.arange(1, 8), 8)  # a path
        >>> opts = MethodOptions(seed=1, threads=1)
        >>> quality_partition(adj, 2, opts).tolist()  # doctest: +SKIP
        [0, 0, 0, 0, 1, 1, 1, 1]
    """
    fallback = _metis_fallback(adj, num_parts, options, "quality")
    if fallback is not None:
        return fallback
    runners = {"kaminpar": kaminpar_partition, "mtkahypar": mtkahypar_partition}
    best: tuple[int, float, IdArray] | None = None
    for backend, preset, offsets in QUALITY_PORTFOLIO:
        if not is_installed(backend):
            _log.info("quality: %s is not installed, skipping it", backend)
            continue
        for offset in offsets:
            opts = MethodOptions(options.imbalance, options.objtype, options.seed + offset,
                                 options.threads)
            parts = runners[backend](adj, num_parts, opts, preset=preset)
            score = (adjacency_cut(adj, parts), part_imbalance(adj, parts, num_parts))
            if best is None or score < best[:2]:
                best = (*score, parts)
    if best is None:
        _log.warning("quality: neither kaminpar nor mtkahypar is installed; using METIS")
        return METHODS["metis"].fn(adj, num_parts, options)
    return best[2]


@register_method("quality", "lowest cut of KaMinPar strong (4 seeds) and Mt-KaHyPar "
                 "DETERMINISTIC_QUALITY (slow)", requires="kaminpar, mtkahypar")
def _quality(adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
    return quality_partition(adj, num_parts, options)


# --------------------------------------------------------------------------- auto


def degree_skew(adj: Adjacency) -> float:
    """Coefficient of variation (std / mean) of the degrees of non-isolated nodes.

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> star = symmetric_adjacency(np.zeros(4, dtype=np.int64), np.arange(1, 5), 5)
        >>> round(degree_skew(star), 3)
        0.75
    """
    deg = np.diff(adj.indptr)
    deg = deg[deg > 0]
    return float(deg.std() / deg.mean()) if deg.size else 0.0


#: degree coefficient of variation from which a graph counts as skewed (power-law)
SKEW_THRESHOLD = 1.0
#: share of isolated nodes from which KaMinPar's isolated-node packing pays off
ISOLATED_THRESHOLD = 0.05
#: adjacency entries (2 x undirected edges) from which a skewed graph goes to Mt-KaHyPar
LARGE_ENTRIES = 10_000_000


#: Up to this many parts METIS's recursive bisection beats KaMinPar on skewed graphs.
SMALL_K = 4


def auto_choice(adj: Adjacency, num_parts: int, options: MethodOptions) -> tuple[str, str]:
    """The ``(backend, preset)`` that :func:`auto_partition` runs for this graph.

    Rule, from measured properties (the figures behind each branch:
    benchmarks/TUNING.md, "In-memory portfolio"):

    1. Several balance constraints (``ncon > 1``) -> METIS, the only backend balancing
       them all.
    2. Skewed degrees (:func:`degree_skew` >= 1.0) or >= 5% isolated nodes (the values of
       the benchmark graphs: benchmarks/TUNING.md):

       a. with >= 10M adjacency entries and k <= 8 -> Mt-KaHyPar ``default``: METIS
          scales badly on big power-law graphs; at larger k Mt-KaHyPar's time grows past
          METIS's, so larger k goes to (b), and on smaller graphs it is slower too.
       b. smaller, k > 4 -> KaMinPar ``default`` with isolated-node packing: a lower cut
          than METIS's in no more time.
       c. smaller, k <= 4 -> METIS (recursive bisection): KaMinPar's cut is higher there.
    3. Otherwise (near-uniform degrees) -> METIS: KaMinPar's cut is about the same but
       it takes longer than the time budget (1.0x METIS's).

    A rule whose backend is not installed falls through to the next one (finally METIS).

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> path = symmetric_adjacency(np.arange(7), np.arange(1, 8), 8)
        >>> auto_choice(path, 2, MethodOptions())
        ('metis', 'recursive')
    """
    if adj.vertex_weights is not None and np.ndim(adj.vertex_weights) == 2 \
            and np.shape(adj.vertex_weights)[1] > 1:
        return "metis", "kway"
    isolated = float(np.mean(np.diff(adj.indptr) == 0)) if adj.num_nodes else 0.0
    skewed = degree_skew(adj) >= SKEW_THRESHOLD or isolated >= ISOLATED_THRESHOLD
    if skewed and adj.num_entries >= LARGE_ENTRIES and num_parts <= 8 \
            and is_installed("mtkahypar"):
        return "mtkahypar", "default"
    if skewed and num_parts > SMALL_K and is_installed("kaminpar"):
        return "kaminpar", "default"
    return "metis", "recursive" if num_parts <= 8 else "kway"


@register_method("auto", "picks METIS, KaMinPar or Mt-KaHyPar from the graph's size and "
                 "degree skew (default)", multi_constraint=True)
def auto_partition(adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
    """Run the backend :func:`auto_choice` picks for this graph.

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> adj = symmetric_adjacency(np.arange(7), np.arange(1, 8), 8)  # a path
        >>> sorted(np.bincount(auto_partition(adj, 2, MethodOptions(threads=1))).tolist())
        [4, 4]
    """
    backend, preset = auto_choice(adj, num_parts, options)
    _log.info("auto: n=%d, entries=%d, k=%d -> %s (%s)", adj.num_nodes, adj.num_entries,
              num_parts, backend, preset)
    if backend == "kaminpar":
        return kaminpar_partition(adj, num_parts, options, preset=preset)
    if backend == "mtkahypar":
        return mtkahypar_partition(adj, num_parts, options, preset=preset)
    return METHODS["metis"].fn(adj, num_parts, options)
