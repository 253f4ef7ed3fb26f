"""Link-prediction metrics against hand counts and brute force."""

from __future__ import annotations

import numpy as np
import pytest

from graphshard.train.link_metrics import auc, hits_at, link_metrics, mrr, ranks


def brute_auc(pos, neg):
    pairs = [(p > q) + 0.5 * (p == q) for p in pos for q in np.ravel(neg)]
    return sum(pairs) / len(pairs)


@pytest.mark.parametrize("seed", range(5))
def test_auc_is_the_pair_count_with_ties_half(seed):
    rng = np.random.default_rng(seed)
    pos = rng.integers(0, 5, 30).astype(float)  # many ties
    neg = rng.integers(0, 5, (30, 4)).astype(float)
    assert auc(pos, neg) == pytest.approx(brute_auc(pos, neg), abs=1e-12)


def test_hand_computed_ranks():
    pos = np.array([3.0, 1.0, 2.0, 0.0])
    neg = np.array([[1.0, 2.0, 0.0],    # above all: rank 1
                    [1.0, 1.0, 5.0],    # 5 above, two ties: 1 + 1 + 1 = 3
                    [2.0, 2.0, 2.0],    # three ties: 1 + 1.5 = 2.5
                    [1.0, 2.0, 3.0]])   # below all: 4
    np.testing.assert_array_equal(ranks(pos, neg), [1.0, 3.0, 2.5, 4.0])
    assert mrr(pos, neg) == pytest.approx((1 + 1 / 3 + 1 / 2.5 + 1 / 4) / 4)
    assert hits_at(pos, neg, 1) == 0.25 and hits_at(pos, neg, 3) == 0.75
    assert link_metrics(pos, neg, hits=(3,)) == {
        "auc": pytest.approx(brute_auc(pos, neg)), "mrr": mrr(pos, neg), "hits@3": 0.75}
    assert np.isnan(auc([], [[1.0]])) and np.isnan(mrr(np.zeros(0), np.zeros((0, 2))))


def test_perfect_and_reversed_scores():
    pos, neg = np.ones(5), np.zeros((5, 7))
    assert link_metrics(pos, neg, hits=(1,)) == {"auc": 1.0, "mrr": 1.0, "hits@1": 1.0}
    assert auc(neg[:, 0], np.ones((5, 7))) == 0.0 and mrr(-pos, neg) == 1 / 8
