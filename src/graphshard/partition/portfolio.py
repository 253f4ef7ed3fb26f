"""Method portfolios on top of the backends: ``quality`` (best of several runs) and
``auto`` (the default: a backend picked per graph from measured properties).
"""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np

from .._util.optional import is_installed
from ..runtime.alone import run_alone
from ..typing import IdArray
from .adjacency import Adjacency
from .backends import (
    _metis_fallback,
    adjacency_cut,
    kaminpar_partition,
    mtkahypar_partition,
    part_imbalance,
)
from .metis_lib import metis_kway
from .registry import METHODS, MethodOptions, register_method

__all__ = ["AUTO_TIME_BUDGET", "QUALITY_PORTFOLIO", "SKEWED_CANDIDATES", "auto_choice",
           "auto_partition", "degree_skew", "quality_partition"]

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
        return METHODS["metis"].partition(adj, num_parts, options)
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
#: share of isolated nodes from which a graph counts as skewed (R-MAT has 34-43%)
ISOLATED_THRESHOLD = 0.05

#: ``auto``'s default time budget: the backend it picks for a skewed graph is expected to
#: use at most this many times the CPU seconds of METIS k-way (what DGL's
#: ``partition_graph`` runs) on the same graph.  Override per call with
#: ``MethodOptions(time_budget=...)``, ``partition_graph(..., time_budget=...)`` or
#: ``graphshard partition --time-budget``.
AUTO_TIME_BUDGET = 1.0

#: Candidates for skewed graphs, lowest cut first: ``(backend, preset, CPU seconds / METIS
#: k-way's, cut / METIS k-way's)``, measured on R-MAT 1M nodes / 10M edges, k=8
#: (benchmarks/TUNING.md, "auto's time budget").  ``("metis", "recursive")`` applies to
#: k <= 8 only (METIS's recursive bisection, what pymetis runs there).
#: Mt-KaHyPar ``default`` (5.2x, 0.24x) and KaMinPar ``eco`` (5.0x, 0.35x) were measured too:
#: no lower cut than Mt-KaHyPar ``deterministic`` for their time, so they are not candidates.
SKEWED_CANDIDATES: tuple[tuple[str, str, float, float], ...] = (
    ("mtkahypar", "deterministic", 4.4, 0.25),
    ("metis", "recursive", 3.5, 0.60),
    ("kaminpar", "default", 0.41, 0.95),
    ("metis", "kway", 1.0, 1.0),
)


def auto_choice(adj: Adjacency, num_parts: int, options: MethodOptions) -> tuple[str, str]:
    """The ``(backend, preset)`` that :func:`auto_partition` runs for this graph.

    Rule, from measured properties (the figures behind each branch:
    benchmarks/TUNING.md, "In-memory portfolio" and "auto's time budget"):

    1. Several balance constraints (``ncon > 1``) -> METIS, the only backend balancing
       them all.
    2. Skewed degrees (:func:`degree_skew` >= 1.0) or >= 5% isolated nodes: the
       lowest-cut entry of :data:`SKEWED_CANDIDATES` whose installed backend is expected
       to take at most ``time_budget`` x METIS k-way's CPU seconds (``options.time_budget``,
       default :data:`AUTO_TIME_BUDGET`).  From the figures of R-MAT 1M nodes / 10M edges,
       k=8: budget >= 4.4 -> Mt-KaHyPar ``deterministic`` (cut 0.25x k-way's);
       >= 3.5 -> METIS recursive bisection (0.60x; k <= 8 and the cut objective);
       else KaMinPar ``default`` (0.95x in 0.41x the time: the default budget's pick),
       or METIS k-way when KaMinPar is missing or the budget is below 0.41.
    3. Otherwise (near-uniform degrees) -> METIS (recursive bisection for k <= 8):
       KaMinPar's cut is about the same but it takes longer.

    The budget counts CPU seconds: Mt-KaHyPar and KaMinPar run on ``options.threads``
    threads, METIS on one, so with many idle cores their wall time is shorter than the
    ratio says.

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> path = symmetric_adjacency(np.arange(7), np.arange(1, 8), 8)
        >>> auto_choice(path, 2, MethodOptions())
        ('metis', 'recursive')
        >>> star = symmetric_adjacency(np.zeros(30, dtype=np.int64), np.arange(1, 31), 31)
        >>> auto_choice(star, 4, MethodOptions(time_budget=4.0))  # degree CV 2.6
        ('metis', 'recursive')
        >>> auto_choice(star, 16, MethodOptions(time_budget=0.1))  # below every estimate
        ('metis', 'kway')
    """
    # what part_method="metis" runs: recursive bisection up to 8 parts for the cut
    bisect = num_parts <= 8 and options.objtype == "cut"
    if options.objtype == "vol":  # only METIS k-way (of these) minimises the volume
        return "metis", "kway"
    if adj.vertex_weights is not None and np.ndim(adj.vertex_weights) == 2 \
            and np.shape(adj.vertex_weights)[1] > 1:
        return "metis", "recursive" if bisect else "kway"
    isolated = float(np.mean(np.diff(adj.indptr) == 0)) if adj.num_nodes else 0.0
    skewed = degree_skew(adj) >= SKEW_THRESHOLD or isolated >= ISOLATED_THRESHOLD
    if not skewed:
        return "metis", "recursive" if bisect else "kway"
    budget = AUTO_TIME_BUDGET if options.time_budget is None else options.time_budget
    for backend, preset, cost, _ in SKEWED_CANDIDATES:
        if cost > budget or (preset == "recursive" and not bisect):
            continue
        if backend == "metis" or is_installed(backend):
            return backend, preset
    return "metis", "kway"


@register_method("auto", "the lowest-cut backend expected within a time budget (default "
                 "1.0x METIS k-way's CPU time) on skewed graphs, else METIS (default); "
                 "objtype vol: METIS k-way", multi_constraint=True, objectives=("cut", "vol"))
def auto_partition(adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
    """Run the backend :func:`auto_choice` picks for this graph.  Reproducible for a seed:
    KaMinPar runs on one thread unless ``options.threads`` is set (its parallel refinement
    is racy), Mt-KaHyPar's ``deterministic`` preset and METIS are deterministic.

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
        # one thread unless the caller set threads: KaMinPar's parallel refinement is racy,
        # and auto (the default method) must give the same parts for the same seed
        single = options if options.threads is not None else replace(options, threads=1)
        return kaminpar_partition(adj, num_parts, single, preset=preset)
    if backend == "mtkahypar":
        return mtkahypar_partition(adj, num_parts, options, preset=preset)
    # run_alone: METIS draws from libc's rand(), which Ray's threads share (methods._metis)
    return run_alone(metis_kway, adj, num_parts, imbalance=options.imbalance,
                     objtype=options.objtype, seed=options.seed,
                     recursive=preset == "recursive")
