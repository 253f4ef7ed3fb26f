"""Skip-gram pairs against a plain reference, type filters, negative sampling."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.sampling import in_batch_negatives, negative_sample, random_walk, skip_gram_pairs
from graphshard.sampling.kernels.rng import item_state, randint

ALPHA = 1e-4


def reference_pairs(walks, types, win, excl=(), random_window=False, seed=0):
    out = []
    for i, walk in enumerate(walks.tolist()):
        st = np.uint64(item_state(seed, 0, i))
        for a, x in enumerate(walk):
            if x < 0:
                continue
            w = 1 + randint(st, a, win) if random_window else win
            for b in range(max(0, a - w), min(len(walk), a + w + 1)):
                y = walk[b]
                if y < 0 or (y == x and types[a] == types[b]) or (types[a], types[b]) in excl:
                    continue
                out.append((x, y, types[a], types[b]))
    return out


@pytest.mark.parametrize("random_window", [False, True])
def test_skip_gram_equals_reference(random_window):
    rng = np.random.default_rng(0)
    walks = rng.integers(0, 6, size=(40, 9))
    walks[rng.random(walks.shape) < 0.1] = -1
    walks[3, 5:] = -1
    for win in (1, 2, 4):
        p = skip_gram_pairs(walks, win, random_window=random_window, seed=3)
        ref = reference_pairs(walks, [0] * 9, win, random_window=random_window,
                              seed=3 if random_window else 0)
        assert list(zip(p.src.tolist(), p.dst.tolist(), strict=True)) == [r[:2] for r in ref]


def test_skip_gram_metapath_filters(pgl_toy):
    w = random_walk(pgl_toy, np.arange(50), 7, metapath="u2click2i-i2click2u", seed=1)
    p = skip_gram_pairs(w, 3, exclude_pairs=["u2u", ("i", "i")])
    types = w.types.tolist()
    ref = reference_pairs(w.traces, types, 3, excl={(0, 0), (1, 1)})
    assert list(zip(p.src.tolist(), p.dst.tolist(), p.src_type.tolist(), p.dst_type.tolist(),
                    strict=True)) == ref
    assert not np.any(p.src_type == p.dst_type)
    with pytest.raises(ValidationError, match=r"exclude_pairs: cannot read 'x2y' as "
                       r"'<src>2<dst>' with node types \['u', 'i'\]"):
        skip_gram_pairs(w, 2, exclude_pairs=["x2y"])
    with pytest.raises(ValidationError, match=r"win_size must be an int >= 1, got 0"):
        skip_gram_pairs(w, 0)


def test_negative_sample_distributions(blogcatalog):
    g = gs.graph(([0, 0, 0, 1, 1, 2], [1, 2, 3, 2, 3, 3]), num_nodes=5)
    neg = negative_sample(g, 40000, distribution="degree", seed=1)
    deg = (g.in_degrees() + g.out_degrees()).astype(float)
    p = deg ** 0.75 / (deg ** 0.75).sum()
    counts = np.bincount(neg, minlength=5)
    assert counts[4] == 0
    assert stats.chisquare(counts[:4], p[:4] * 40000).pvalue > ALPHA
    uni = negative_sample(g, (100, 50), seed=2)
    assert uni.shape == (100, 50)
    assert stats.chisquare(np.bincount(uni.ravel(), minlength=5)).pvalue > ALPHA
    real = negative_sample(blogcatalog, 1000, distribution="degree", seed=0)
    assert real.min() >= 0 and real.max() < blogcatalog.num_nodes()


def test_negative_sample_per_type(pgl_toy):
    neg = negative_sample(pgl_toy, 500, ntype="i", seed=0)
    assert neg.max() < pgl_toy.num_nodes("i")
    with pytest.raises(ValidationError, match=r"unknown node type 'x'; node types are "
                       r"\['u', 'i'\]"):
        negative_sample(pgl_toy, 5, ntype="x")
    with pytest.raises(ValidationError, match=r"distribution must be 'uniform' or 'degree'"):
        negative_sample(pgl_toy, 5, ntype="u", distribution="zipf")


def test_in_batch_negatives():
    src = np.arange(50)
    dst = np.arange(100, 150)
    neg = in_batch_negatives(src, dst, 5, seed=3)
    assert neg.shape == (50, 5)
    assert not np.any(neg == dst[:, None])
    assert all(len(set(r)) == 5 for r in neg.tolist())
    with pytest.raises(ValidationError, match=r"num_neg=5 needs a batch of more than 5 pairs"):
        in_batch_negatives([0, 1], [2, 3], 5)


@pytest.mark.parametrize("weights", [[0.0, 1.0, 2.5, 0.0, 7.0, 0.5], "random"])
def test_alias_table_is_exact(weights):
    from graphshard.sampling.kernels.pairs import alias_table, sample_alias

    rng = np.random.default_rng(4)
    w = rng.random(1000) ** 3 * (rng.random(1000) > 0.2) if weights == "random" \
        else np.array(weights)
    prob, alias = alias_table(w)
    implied = prob.copy()  # bucket i keeps itself with prob[i], else gives alias[i]
    np.add.at(implied, alias, 1.0 - prob)
    np.testing.assert_allclose(implied / len(w), w / w.sum(), rtol=1e-9, atol=1e-12)
    out = np.empty(200_000, dtype=np.int64)
    sample_alias(prob, alias, 7, 1, out)
    counts = np.bincount(out, minlength=len(w))
    assert not counts[w == 0].any()
    again = np.empty_like(out)
    sample_alias(prob, alias, 7, 1, again)
    np.testing.assert_array_equal(out, again)
    if weights != "random":
        p = w[w > 0] / w.sum()
        assert stats.chisquare(counts[w > 0], p * len(out)).pvalue > ALPHA
