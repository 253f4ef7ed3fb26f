"""What docs/train.md promises about reproducibility: the same seed gives bitwise-equal
losses and parameters on one machine whatever the thread count (numba's and torch's), and
a walk checkpoint resumes as an uninterrupted run.  Nothing here compares with numbers
computed on another machine: across CPUs the promise is float rounding only."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
import numba
import torch

from graphshard.train import train_sage, train_walk_embedding

WALK = dict(walk_len=5, walk_times=2, win_size=2, neg_num=2, emb_size=16, epochs=2, seed=1)


def _with_threads(threads: int, run):
    """``run()`` with numba and torch on ``threads`` threads (restored after)."""
    before = numba.get_num_threads(), torch.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    torch.set_num_threads(threads)
    try:
        return run()
    finally:
        numba.set_num_threads(before[0])
        torch.set_num_threads(before[1])


@pytest.mark.parametrize("optimizer", ["auto", "adagrad"])  # word2vec's pair_sgd, Adagrad
def test_walk_embedding_is_bitwise_equal_on_one_and_two_threads(sbm_graph, optimizer):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba was started with one thread")
    runs = [_with_threads(t, lambda: train_walk_embedding(sbm_graph, **WALK,
                                                          optimizer=optimizer))
            for t in (1, 2)]
    assert runs[0].step_losses == runs[1].step_losses
    np.testing.assert_array_equal(runs[0].embeddings["_N"], runs[1].embeddings["_N"])
    assert np.isfinite(runs[0].step_losses).all() and len(runs[0].step_losses) > 2


def test_sage_losses_are_bitwise_equal_on_one_and_two_threads(sbm_graph):
    kw = dict(epochs=2, fanouts=(5, 5), hidden=32, batch_size=64, seed=1)
    runs = [_with_threads(t, lambda: train_sage(sbm_graph, **kw)) for t in (1, 2)]
    assert runs[0].losses == runs[1].losses
    assert runs[0].val_acc == runs[1].val_acc
    assert runs[0].losses[-1] < runs[0].losses[0]
