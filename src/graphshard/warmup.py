"""Compile graphshard's numba kernels ahead of use, into numba's on-disk cache.

Every kernel is compiled the first time a process calls it and cached on disk (numba's
``cache=True``: beside the package, or under ``$NUMBA_CACHE_DIR``), so a later process
loads it in milliseconds.  A fresh install, a new machine image or a graph server's first
request would otherwise pay the compilation inside the run: seconds on a small graph,
minutes on a busy 2-core machine.  :func:`warm_kernels` runs the library's main paths once
on tiny graphs (partitioning in memory and out of core, the build, sampling, walks,
training kernels when torch is there), so the kernels they use compile now, with a
progress bar, instead of inside a run or a server's deadline.  ``graphshard warmup`` is the
command; run it once after installing (e.g. in a Docker build), or point every machine at
one ``$NUMBA_CACHE_DIR``.

Example:
    >>> report = warm_kernels(steps=["sampling"])
    >>> report.steps[0][0]
    'sampling'
"""

from __future__ import annotations

import importlib.util
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._util.progress import progress
from .errors import ValidationError
from .graph import Graph

__all__ = ["STEPS", "WarmupReport", "warm_kernels"]


@dataclass(frozen=True)
class WarmupReport:
    """What :func:`warm_kernels` ran: ``(step, seconds)`` in order, and the steps skipped
    with the reason (a missing optional dependency)."""

    steps: list[tuple[str, float]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        """All steps together."""
        return sum(s for _, s in self.steps)


def _tiny(seed: int = 0) -> Graph:
    from .datasets import from_spec

    g = from_spec(f"rmat:nodes=512,edges=4096,seed={seed}")
    rng = np.random.default_rng(seed)
    g.ndata["feat"] = rng.random((g.num_nodes(), 8), dtype=np.float32)
    g.ndata["label"] = rng.integers(0, 3, g.num_nodes())
    g.edata["weight"] = rng.random(g.num_edges(), dtype=np.float32) + 0.1
    return g


def _partition(work: Path) -> None:
    from .partition import partition_graph

    g = _tiny()
    for method in ("metis", "random", "lp"):
        partition_graph(g, "w", 2, work / f"mem-{method}", part_method=method, num_hops=1)
    partition_graph(g, "w", 2, work / "hops2", part_method="hash", num_hops=2)


def _pipeline(work: Path) -> None:
    from .io import write_chunked
    from .pipeline import run_pipeline

    write_chunked(_tiny(1), work / "chunked", 2)
    for method in ("lp", "random"):
        run_pipeline(work / "chunked", 2, work / f"pipe-{method}", method=method)


def _sampling(work: Path) -> None:
    from .sampling import (
        negative_sample,
        node2vec_walk,
        random_walk,
        sample_blocks,
        sample_neighbors,
        skip_gram_pairs,
    )

    g = _tiny(2)
    seeds = np.arange(64)
    sample_neighbors(g, seeds, 5, seed=0)
    sample_neighbors(g, seeds, 5, prob="weight", seed=0)
    sample_neighbors(g, seeds, 5, replace=True, seed=0)
    sample_blocks(g, seeds, [5, 5], seed=0)
    walks = random_walk(g, seeds, 5, seed=0)
    random_walk(g, seeds, 5, prob="weight", seed=0)
    node2vec_walk(g, seeds, 5, p=0.5, q=2.0, seed=0)
    skip_gram_pairs(walks, 2, random_window=True, seed=0)
    negative_sample(g, 64, seed=0)
    negative_sample(g, 64, distribution="degree", seed=0)
    # a store without the local fast path, as graph servers and DistGraph clients sample:
    # the kernels then run on int64 sub-CSRs (a Graph's own CSRs are int32 where IDs fit)
    remote = _NotLocal(g)
    for kw in ({}, {"prob": "weight"}, {"replace": True}, {"prob": "weight", "replace": True}):
        sample_neighbors(remote, seeds, 5, seed=0, **kw)
    sample_blocks(remote, seeds, [5, 5], seed=0)
    random_walk(remote, seeds, 5, prob="weight", seed=0)
    random_walk(remote, seeds, 5, seed=0)
    node2vec_walk(remote, seeds, 5, p=0.5, q=2.0, seed=0)


class _NotLocal:
    """A Graph's store without ``LocalAdjacency``'s methods (the samplers' fast path)."""

    _HIDDEN = frozenset({"adjacency", "edge_weights", "cached"})

    def __init__(self, g: Graph) -> None:
        from .store import as_store

        self._store = as_store(g)

    def __getattr__(self, name: str) -> object:
        if name in self._HIDDEN:
            raise AttributeError(name)
        return getattr(self._store, name)


def _training(work: Path) -> None:
    from .train import train_sage, train_walk_embedding

    g = _tiny(3)
    small = dict(walk_len=4, walk_times=1, win_size=2, neg_num=2, emb_size=8, epochs=1)
    train_walk_embedding(g, **small)
    train_walk_embedding(g, **small, optimizer="adagrad")
    train_sage(g, epochs=1, fanouts=(3, 3), hidden=8, batch_size=128,
               train_mask=np.ones(g.num_nodes(), bool), val_mask=np.ones(g.num_nodes(), bool),
               test_mask=np.ones(g.num_nodes(), bool))


#: The steps, in order: ``name -> (function of a scratch folder, module it needs or None)``.
STEPS: dict[str, tuple[Callable[[Path], None], str | None]] = {
    "partition": (_partition, None),
    "pipeline": (_pipeline, None),
    "sampling": (_sampling, None),
    "training": (_training, "torch"),
}


def warm_kernels(steps: Sequence[str] | None = None) -> WarmupReport:
    """Run ``steps`` (default: all of :data:`STEPS`) on tiny graphs so that their kernels
    are compiled and cached; a step whose optional dependency is missing is skipped.

    Raises:
        ValidationError: an unknown step name.
    """
    names = list(STEPS) if steps is None else list(steps)
    for name in names:
        if name not in STEPS:
            raise ValidationError(f"unknown warm-up step {name!r}; the steps are "
                                  f"{list(STEPS)}", field="steps", value=name)
    report = WarmupReport()
    with tempfile.TemporaryDirectory(prefix="graphshard-warmup-") as tmp:
        for name in progress(names, desc="compiling kernels", unit="step"):
            fn, needs = STEPS[name]
            if needs is not None and importlib.util.find_spec(needs) is None:
                report.skipped[name] = f"needs {needs}"
                continue
            clock = time.perf_counter()
            work = Path(tmp) / name
            work.mkdir()
            fn(work)
            report.steps.append((name, time.perf_counter() - clock))
    return report
