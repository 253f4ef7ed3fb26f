"""The walk corpus of the walk-embedding trainer: an epoch's walks, buffer by buffer, and
word2vec's subsampling of frequent nodes (``sample``), counted on the first epoch's walks as
word2vec counts its vocabulary before training.

Example:
    >>> import numpy as np
    >>> import graphshard as gs
    >>> g = gs.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
    >>> w = gs.sampling.random_walk(g, [0, 1], 4, seed=0)
    >>> out = apply_subsampling(w, np.array([1.0, 0.0, 1.0, 1.0]), np.array([0, 4]), seed=0)
    >>> out.traces.tolist()   # node 1 is always dropped; the rest move to the front
    [[0, 2, 3, -1], [2, 3, 0, -1]]
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .._util.progress import progress
from ..sampling import WalkResult, random_walk
from ..store import GraphStore
from ._common import subseed
from .kernels import subsample_walks

__all__ = ["apply_subsampling", "epoch_walks", "keep_probability"]

logger = logging.getLogger(__name__)


def epoch_walks(st: GraphStore, plans: list[tuple[Any, str]], walk_len: int,
                 walk_times: int, walk_buffer: int, seed: int, epoch: int, *,
                 bar: bool = False, prob: str | None = None
                 ) -> Iterator[tuple[int, int, np.random.Generator, Any]]:
    """``(plan, buffer, rng, walks)`` of one epoch, buffer by buffer: ``walk_times`` walks
    from every start node in a shuffled order, keyed by ``(seed, epoch)`` only; steps
    drawn in proportion to edge feature ``prob`` when given (``weighted_sample``)."""
    for k, (path, start_type) in enumerate(plans):
        rng = np.random.default_rng(subseed(seed, 3, epoch, k))
        starts = rng.permutation(np.tile(np.arange(st.num_nodes(start_type)), walk_times))
        offsets = range(0, len(starts), walk_buffer)
        chunks: Iterable[int] = offsets
        if bar:
            chunks = progress(offsets, desc=f"epoch {epoch}", unit="buffer", total=len(offsets))
        for c, lo in enumerate(chunks):
            yield k, c, rng, random_walk(st, starts[lo:lo + walk_buffer], walk_len, path,
                                         prob=prob, seed=subseed(seed, 4, epoch, k, c))


def keep_probability(st: GraphStore, plans: list[tuple[Any, str]], walk_len: int,
                     walk_times: int, walk_buffer: int, seed: int, sample: float,
                     prob: str | None = None) -> np.ndarray:
    """word2vec's keep probability of every node (float64, by global ID): the first epoch's
    walks are counted (``c`` per node, ``T`` in all) and a node is kept with probability
    ``min(1, (sqrt(c / (sample T)) + 1) sample T / c)``; 1 for a node never walked."""
    offsets = np.concatenate([[0], np.cumsum([st.num_nodes(t) for t in st.ntypes])])
    counts = np.zeros(int(offsets[-1]), dtype=np.int64)
    for _, _, _, w in epoch_walks(st, plans, walk_len, walk_times, walk_buffer, seed, 0,
                                  prob=prob):
        valid = w.traces >= 0
        ids = (w.traces + offsets[w.types][None, :].astype(np.int64))[valid]
        counts += np.bincount(ids, minlength=len(counts))
    keep = np.ones(len(counts))
    seen = counts > 0
    thr = sample * counts.sum()
    keep[seen] = np.minimum(1.0, (np.sqrt(counts[seen] / thr) + 1.0) * thr / counts[seen])
    logger.info("subsample %g: %d walk entries, %.1f%% expected to stay", sample,
                counts.sum(), 100 * (keep * counts).sum() / max(counts.sum(), 1))
    return keep


def apply_subsampling(walks: WalkResult, keep: np.ndarray, offsets: np.ndarray, *, seed: int
              ) -> WalkResult:
    """Drop each walk entry with probability ``1 - keep[global ID]`` (keyed by seed, walk
    row and position).  Walks of one node type are compacted (kept entries to the front,
    -1 after), so windows reach past dropped nodes as word2vec's; a metapath walk keeps
    its columns (each column has a node type) and a dropped entry becomes -1."""
    compact = bool(np.all(walks.types == walks.types[0])) if len(walks.types) else True
    col = np.ascontiguousarray(np.asarray(offsets, dtype=np.int64)[walks.types])
    out = np.empty_like(walks.traces)
    subsample_walks(walks.traces, col, keep, seed, compact, out)
    return dataclasses.replace(walks, traces=out)
