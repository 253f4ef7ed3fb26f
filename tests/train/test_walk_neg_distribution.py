"""Issue 41 item 9: ``neg_distribution`` changes the embeddings or is refused up front."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.train.walk_options import WalkOptions

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")


@pytest.mark.parametrize("bad", ["/etc/passwd", "Degree", "", None, 3])
def test_invalid_neg_distribution_is_refused_when_built(bad):
    """Refused when the options are built, not at the first negative draw (which a run
    that trains no pair never reaches)."""
    with pytest.raises(ValidationError, match="neg_distribution must be one of") as info:
        WalkOptions(neg_distribution=bad)
    assert info.value.field == "neg_distribution"


def _skewed() -> gs.Graph:
    """A hub joined to 59 leaves, plus a path over the leaves: degrees 59 vs 2-3."""
    hub = np.zeros(59, dtype=np.int64)
    leaves = np.arange(1, 60)
    src = np.concatenate([hub, leaves, leaves[:-1], leaves[1:]])
    dst = np.concatenate([leaves, hub, leaves[1:], leaves[:-1]])
    return gs.graph((src, dst), num_nodes=60)


@pytest.mark.parametrize("optimizer", ["pair_sgd", "adagrad"])
def test_uniform_and_degree_negatives_give_other_embeddings(optimizer):
    from graphshard.train import train_walk_embedding

    kw = dict(walk_len=6, walk_times=2, win_size=2, neg_num=3, emb_size=8, epochs=1,
              subsample=0.0, seed=0, optimizer=optimizer)
    uni = train_walk_embedding(_skewed(), neg_distribution="uniform", **kw)
    deg = train_walk_embedding(_skewed(), neg_distribution="degree", **kw)
    assert uni.num_pairs[0] > 0 and uni.num_pairs == deg.num_pairs
    assert not np.allclose(uni.embeddings["_N"], deg.embeddings["_N"])


def test_a_run_that_trains_no_pair_is_refused():
    """The reported case: on a 50-node graph the default subsample (1e-4) drops every walk
    entry, no pair is trained and uniform, degree and /etc/passwd all gave the initial
    tables.  Such a run is refused, naming subsample."""
    from graphshard.train import train_walk_embedding

    g = gs.datasets.from_spec("sbm:nodes=50,edges=200")
    with pytest.raises(ValidationError, match=r"trained no pair: subsample 0\.0001") as info:
        train_walk_embedding(g, walk_len=4, walk_times=2, emb_size=8, epochs=1)
    assert info.value.field == "subsample"
    with pytest.raises(ValidationError, match="trained no pair") as info:
        train_walk_embedding(g, walk_len=1, walk_times=1, emb_size=8, subsample=0)
    assert info.value.field == "walk_len"
