"""Label-propagation rounds of the ``lp`` pipeline and the refinement of one level.

:func:`label_rounds` runs size-constrained label propagation over every shard (clustering
and refinement alike); :func:`refine` is the uncoarsening step of one level: strict
label propagation, then relaxed rounds in the spirit of Jet (positive-gain moves may
overload a part's node count by :data:`RELAX` of the average, a balancer moves the
cheapest nodes back out, and the best balanced state is kept).
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass

import numpy as np

from ...runtime.executor import Executor
from ...typing import IdArray
from ..balance import commit_moves, rebalance_loop, weight_sums
from .shards import ShardedGraph, cut_task, rebalance_task, sweep_task

__all__ = [
    "REFINE_MIN_GAIN",
    "REFINE_MIN_MOVED",
    "RELAX",
    "RELAXED_ROUNDS",
    "RELAXED_SWEEPS",
    "RELAX_COSTLY_SHARE",
    "RELAX_MIN_GAIN",
    "RELAX_PREDICT_GAIN",
    "RoundStats",
    "label_rounds",
    "level_cut",
    "rebalance",
    "refine",
]

logger = logging.getLogger(__name__)

#: sub-rounds per round on a level with several shards: rows active in one sub-round see
#: the others' labels of the previous one (fewer simultaneous, conflicting moves).  Each
#: sub-round is one task per shard and one commit; fewer sub-rounds trade a little cut
#: for CPU time and tasks (benchmarks/TUNING.md)
SUBROUNDS = 2
#: relaxed refinement rounds may overload a part's node count by this fraction of the
#: average (the other balance columns, e.g. in-edges, stay at their limit: a balancer
#: that must shed in-edges has to move hubs, which rarely fit anywhere)
RELAX = 0.1
#: at most this many relaxed rounds per level
RELAXED_ROUNDS = 3
#: label-propagation sweeps per relaxed round
RELAXED_SWEEPS = 2
#: relaxed rounds stop after one that gains less than this fraction of the level's cut
RELAX_MIN_GAIN = 0.005
#: on levels with at least this share of the finest level's entries (where a relaxed
#: round costs about a full sweep of the graph and two cut passes) ...
RELAX_COSTLY_SHARE = 0.5
#: ... relaxed rounds run only if those of the next coarser level gained at least this
#: fraction of its cut: the gains of consecutive levels go together (benchmarks/TUNING.md)
RELAX_PREDICT_GAIN = 0.001
#: strict refinement stops after a round that moves fewer than this fraction of the nodes
REFINE_MIN_MOVED = 0.01
#: ... or that gains less than this fraction of the cut, on the finest level; a coarser
#: level's threshold shrinks with its entries (a round there costs that much less)
REFINE_MIN_GAIN = 0.001


@dataclass(frozen=True)
class RoundStats:
    """The last round of :func:`label_rounds`, as its sweeps saw it.

    Attributes:
        moved: Nodes whose move was committed.
        gained: Connection those moves gained (the cut they removed, had they been alone).
        cut: Half the weight from the visited rows to other labels as the sweeps saw
            them: the cut before the round, moves included as they happened, when
            every row is visited (refinement).
        gains: ``gained`` of every round that ran, first to last.
    """

    moved: int = 0
    gained: int = 0
    cut: int = 0
    gains: tuple[int, ...] = ()


def label_rounds(level: ShardedGraph, ex: Executor, labels: IdArray, label_w: IdArray,
                 max_w: IdArray, *, seed: int, step0: int, rounds: int, strict: bool,
                 min_moved: float = 0.001, min_gain: float = 0.0, norm: float = 0.0,
                 max_row: int = 0, decay: float | None = None
                 ) -> tuple[IdArray, IdArray, RoundStats]:
    """``rounds`` label-propagation rounds over all shards, each in sub-rounds (one task
    per shard, then one commit); stops early after a round in which fewer than
    ``min_moved`` of the nodes moved, or whose moves gained less than ``min_gain`` of the
    cut.  A move counts once committed: the moves that
    :func:`~graphshard.partition.balance.commit_moves` reverts (their label was full)
    do not keep a level sweeping.  The cut is the sweeps' own estimate
    (:class:`RoundStats`), so ``min_gain`` suits rounds that visit every row
    (refinement).  Rows with more than ``max_row`` entries (if > 0) stay where they are.
    With ``decay`` (how much the next round is expected to gain, as a fraction of the
    last one's) it also stops once that prediction falls below ``min_gain``.
    ``labels`` and ``label_w`` are updated in place (a caller that needs them passes
    copies; the driver's largest arrays are these, one of each is all it holds) and
    returned, with the last round's :class:`RoundStats`."""
    num_sub = SUBROUNDS if level.num_shards > 1 else 1
    shards = [level.shard(b) for b in range(level.num_shards)]
    stats = RoundStats()
    round_gains: list[int] = []
    for r in range(rounds):
        moved = gained = external = 0
        for sub in range(num_sub):
            res = ex.map(sweep_task, shards, shared={
                "labels": labels, "node_w": level.node_weights, "label_w": label_w,
                "max_w": max_w, "seed": seed, "step": step0 + r, "sub": sub,
                "num_sub": num_sub, "strict": strict, "norm": norm, "max_row": max_row,
                "snapshot": secrets.randbits(63)})
            nodes, targets, gains = (np.concatenate([x[i] for x in res]) for i in range(3))
            external += sum(x[3] for x in res)
            del res
            before = labels[nodes]
            labels, label_w = commit_moves(labels, nodes, targets, gains,
                                           level.node_weights, label_w, max_w, inplace=True)
            done = (labels[nodes] == targets) & (before != targets)
            moved += int(np.count_nonzero(done))
            gained += int(gains[done].sum())
        round_gains.append(gained)
        stats = RoundStats(moved, gained, external // 2, tuple(round_gains))
        logger.debug("lp: %d nodes, round %d: %s", level.num_nodes, step0 + r, stats)
        if moved < min_moved * level.num_nodes or gained < min_gain * stats.cut or \
                (decay is not None and gained * decay < min_gain * stats.cut):
            break
    return labels, label_w, stats


def refine(g: ShardedGraph, ex: Executor, parts: IdArray, k: int, max_part: IdArray, *,
           seed: int, depth: int, rounds: int, work_share: float = 1.0,
           coarser_gain: float = 1.0, coarser_decay: float | None = None
           ) -> tuple[IdArray, float, float | None]:
    """Balance ``parts`` on level ``g``, then refine: strict label propagation within the
    limit (until a round gains less than :data:`REFINE_MIN_GAIN` times ``work_share``
    of the cut; ``work_share``: the level's entries over the finest level's), then rounds
    that may overload the node counts by :data:`RELAX` of the average (moves into full
    parts become possible), each followed by rebalancing; the lowest-cut balanced state
    is kept, and the relaxed rounds stop once one gains less than
    :data:`RELAX_MIN_GAIN` of the cut.  On a level with at least
    :data:`RELAX_COSTLY_SHARE` of the finest level's entries they run only when those of
    the next coarser level gained at least :data:`RELAX_PREDICT_GAIN` of its cut
    (``coarser_gain``), and the strict rounds stop once the next is predicted to gain
    too little: its gain taken as the last round's times ``coarser_decay``, the ratio
    of the next coarser level's second to first round (figures: benchmarks/TUNING.md).

    Returns ``(parts, gain, decay)``: ``gain`` is the fraction of the cut that the
    relaxed rounds removed (0 when they did not run), ``decay`` this level's ratio of
    the second round's gain to the first's (``coarser_decay`` when it ran one)."""
    given = parts
    parts = rebalance(g, ex, parts, k, max_part, seed=seed + depth, warn=False)
    if parts is given:  # label_rounds updates its labels in place; the caller's stay
        parts = parts.copy()
    step0 = 10**6 + depth * 1000
    pw = weight_sums(parts, g.node_weights, k)
    costly = work_share >= RELAX_COSTLY_SHARE
    parts, pw, stats = label_rounds(g, ex, parts, pw, max_part, seed=seed, step0=step0,
                                    rounds=rounds, strict=True, min_moved=REFINE_MIN_MOVED,
                                    min_gain=REFINE_MIN_GAIN * work_share,
                                    decay=coarser_decay if costly else None)
    decay = stats.gains[1] / stats.gains[0] if len(stats.gains) > 1 and stats.gains[0] > 0 \
        else coarser_decay
    if RELAXED_ROUNDS == 0 or (costly and coarser_gain < RELAX_PREDICT_GAIN):
        return parts, 0.0, decay
    best, best_cut = parts, level_cut(g, ex, parts)
    relaxed = np.array(max_part, dtype=np.int64)
    relaxed[0] += int(RELAX * pw[:, 0].sum() / k)
    cut0 = best_cut
    for r in range(RELAXED_ROUNDS):
        parts, pw, _ = label_rounds(g, ex, best.copy(), pw, relaxed, seed=seed,
                                    step0=step0 + 100 + r, rounds=RELAXED_SWEEPS,
                                    strict=True, min_moved=REFINE_MIN_MOVED)
        parts = rebalance(g, ex, parts, k, max_part, seed=seed + depth + r, warn=False)
        pw = weight_sums(parts, g.node_weights, k)
        cut = level_cut(g, ex, parts)
        if cut >= best_cut or (pw > max_part).any():
            break
        gained = best_cut - cut
        best, best_cut = parts, cut
        if gained < RELAX_MIN_GAIN * cut0:
            break
    logger.debug("lp: level %d refined cut %d (after LP) -> %d", depth, cut0, best_cut)
    return best, (cut0 - best_cut) / max(1, cut0), decay


def rebalance(level: ShardedGraph, ex: Executor, parts: IdArray, num_parts: int,
              max_w: IdArray, *, seed: int, max_iter: int = 20, warn: bool = True
              ) -> IdArray:
    """Move nodes out of parts heavier than ``max_w`` in any column, best gain first,
    into parts with room.  Returns the new parts (unchanged when already balanced)."""
    shards = [level.shard(b) for b in range(level.num_shards)]
    node_w = level.node_weights
    def candidates(labels: IdArray, part_w: IdArray, it: int) -> tuple[IdArray, ...]:
        res = ex.map(rebalance_task, shards, shared={
            "labels": labels, "node_w": node_w, "part_w": part_w, "max_w": max_w,
            "seed": seed + it})
        return tuple(np.concatenate([x[i] for x in res]) for i in range(4))

    return rebalance_loop(parts, node_w, num_parts, max_w, candidates, max_iter=max_iter,
                          warn=warn)


def level_cut(level: ShardedGraph, ex: Executor, parts: IdArray) -> int:
    """Weighted cut of ``parts`` on ``level`` (each undirected edge counted once)."""
    shards = [level.shard(b) for b in range(level.num_shards)]
    return sum(ex.map(cut_task, shards, shared={"labels": parts})) // 2
