"""The options and tuned constants of the ``lp`` partitioner, in one frozen dataclass.

:class:`LpParams` holds what decides ``lp``'s result (balance, seed, rounds, the shard
layout, the initial methods) and the constants its coarsening was tuned with; where the
tasks run (threads or Ray, how many workers, the work folder) is not part of it, since
the result does not depend on it.  The figures behind each tuned default are in
``benchmarks/TUNING.md``, beside the command that reproduces them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ...errors import ValidationError
from ..registry import METHODS

__all__ = ["LpParams"]


@dataclass(frozen=True)
class LpParams:
    """Options of :func:`~graphshard.partition.lp.lp_assign`, validated when built.

    Attributes:
        imbalance: Allowed imbalance of the node counts, in ``[0, 1)``.
        seed: Seed of every random choice; same seed, same result.
        coarse_nodes: Coarsen until at most this many nodes remain (besides the entry
            limit ``coarse_entries``); None: coarsen only until the graph fits.
        lp_rounds: Clustering rounds per level (at most ``cluster_costly_rounds`` on the
            levels that cost about a sweep of the whole graph).
        refine_rounds: Refinement rounds per level.
        method: ``run_method`` backend for the coarsest graph (node-weighted), or several
            (a tuple): the lowest cut within the balance limit is kept.  A method not
            installed, or one that cannot balance several columns when there are several
            (``balance_edges``), is skipped; each then runs on one thread, so the result
            stays reproducible.
        max_task_entries: Edge entries per shard task: the per-task memory knob (16
            bytes an entry: 64 MiB of edges per task by default).  The result depends on
            it (the shard layout).
        coarse_entries: Largest coarsest graph (entries) partitioned on one worker.
        balance_edges: Balance in-edges per part as well as nodes (default): without,
            a skewed graph's node-balanced parts can hold 8-10x the average in-edges
            (R-MAT), which no trainer's memory budget fits (benchmarks/TUNING.md).
        initial_threads: Threads of a single initial ``method`` (METIS's threads); None:
            as many as the run's workers.
        cluster_norm: Clustering scores a cluster by connection / weight ** this.
        cluster_min_moved: Clustering stops after a round that moves fewer than this
            fraction of the nodes.
        cluster_max_row: Clustering leaves rows with more entries where they are (hubs;
            their leaves join them).
        cluster_costly_rounds: Most clustering rounds on a level with at least
            ``RELAX_COSTLY_SHARE`` of the finest level's entries, where a round costs
            about a sweep of the whole graph (TUNING.md).
        shrink: Most a level's average node weight may grow per coarsening step: gentle
            steps keep the structure that the initial partition and refinement need
            (TUNING.md).
        hard_shrink: ... and after a contraction that kept most entries (elasticity below
            ``hard_elasticity``): there each level costs about as much as the finest, so
            fewer levels pay.
        hard_elasticity: See ``hard_shrink``.
        min_elasticity: Floor of the entries-per-nodes shrink exponent used to aim the
            coarsening (power-law graphs keep most entries when their nodes merge; aiming
            by nodes alone over-levels them).
        stall: Stop coarsening when a level keeps more than this fraction of its nodes.
        max_levels: Most coarsening levels.
        thin_degree: Coarse levels denser than this (entries a node) are thinned to it,
            unbiased (:func:`~graphshard.partition.lp.thin.thin_level`); the price is some
            cut (TUNING.md).
        scratch_bytes_per_edge: Scratch bytes a run writes per input edge at its peak
            (TUNING.md): a warning below this much free space in the work folder.

    Raises:
        ValidationError: a field out of range, or an unknown ``method``.

    Example:
        >>> p = LpParams(coarse_nodes=10, method=["metis"])
        >>> p.method, p.shrink, p.coarse_nodes
        (('metis',), 2, 10)
        >>> LpParams(lp_rounds=0)
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: lp_rounds must be a positive integer, got 0
    """

    imbalance: float = 0.03
    seed: int = 0
    coarse_nodes: int | None = None
    lp_rounds: int = 3
    refine_rounds: int = 4
    method: str | tuple[str, ...] = ("metis", "kaminpar")
    max_task_entries: int = 1 << 22
    coarse_entries: int = 1 << 22
    balance_edges: bool = True
    initial_threads: int | None = None
    cluster_norm: float = 0.0
    cluster_min_moved: float = 0.01
    cluster_max_row: int = 1000
    cluster_costly_rounds: int = 2
    shrink: float = 2
    hard_shrink: float = 16
    hard_elasticity: float = 0.5
    min_elasticity: float = 0.25
    stall: float = 0.95
    max_levels: int = 30
    thin_degree: float = 32
    scratch_bytes_per_edge: int = 64

    def __post_init__(self) -> None:
        if not isinstance(self.method, str):
            object.__setattr__(self, "method", tuple(self.method))
        if not 0 <= self.imbalance < 1:
            raise ValidationError(f"imbalance must be in [0, 1), got {self.imbalance}",
                                  field="imbalance", value=self.imbalance)
        for name in ("max_task_entries", "coarse_entries", "lp_rounds", "refine_rounds",
                     "cluster_costly_rounds", "max_levels"):
            _positive(name, getattr(self, name))
        if self.initial_threads is not None:
            _positive("initial_threads", self.initial_threads, " or None")
        for name in [self.method] if isinstance(self.method, str) else self.method:
            if name not in METHODS:
                raise ValidationError(f"unknown initial partitioning method {name!r}; "
                                      f"choose one of {sorted(METHODS)}", field="method",
                                      value=name)
        if isinstance(self.method, tuple) and not self.method:
            raise ValidationError("method: at least one initial partitioning method, got "
                                  "none", field="method", value=self.method)

    @classmethod
    def with_options(cls, params: LpParams | None, options: dict[str, object]) -> LpParams:
        """``params`` (default: the defaults) with ``options`` replacing its fields.

        Example:
            >>> LpParams.with_options(LpParams(seed=3), {"lp_rounds": 1}).seed
            3
            >>> LpParams.with_options(None, {"rounds": 1})
            Traceback (most recent call last):
            ...
            graphshard.errors.ValidationError: unknown lp option 'rounds'; choose from \
balance_edges, cluster_costly_rounds, cluster_max_row, cluster_min_moved, cluster_norm, \
coarse_entries, coarse_nodes, hard_elasticity, hard_shrink, imbalance, initial_threads, \
lp_rounds, max_levels, max_task_entries, method, min_elasticity, refine_rounds, \
scratch_bytes_per_edge, seed, shrink, stall, thin_degree
        """
        names = sorted(f.name for f in fields(cls))
        for key in options:
            if key not in names:
                raise ValidationError(f"unknown lp option {key!r}; choose from "
                                      f"{', '.join(names)}", field=key)
        base = cls() if params is None else params
        if not isinstance(base, cls):
            raise ValidationError(f"params must be an LpParams, got {type(base).__name__}",
                                  field="params")
        return cls(**{**{f.name: getattr(base, f.name) for f in fields(cls)}, **options})


def _positive(name: str, value: object, extra: str = "") -> None:
    if not isinstance(value, (int, np.integer)) or value < 1:
        raise ValidationError(f"{name} must be a positive integer{extra}, got {value!r}",
                              field=name, value=value)
