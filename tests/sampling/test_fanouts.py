"""Fanouts: what users write, normalised once (issue 39); every sampler takes the object."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.sampling import Fanouts
from shop import shop_graph


def test_the_three_spellings_give_one_object_and_the_same_sample():
    g = shop_graph()
    seeds = {"i": np.arange(5), "u": np.arange(4)}
    spellings = [[{"buys": 2, "bought_by": 1, "follows": 2}, 3],
                 [{"buys": 2, "bought_by": 1, "follows": 2},
                  {"buys": 3, "bought_by": 3, "follows": 3}]]
    want = gs.sampling.sample_blocks(g, seeds, spellings[0], seed=4)
    for fanouts in [*spellings, Fanouts.of(spellings[0])]:
        got = gs.sampling.sample_blocks(g, seeds, fanouts, seed=4)
        for x, y in zip(got.blocks, want.blocks, strict=True):
            for et in y.src:
                np.testing.assert_array_equal(x.src[et], y.src[et])
                np.testing.assert_array_equal(x.eids[et], y.eids[et])
    f = Fanouts.of({"buys": [2, 3], "bought_by": [1, 3], "follows": [2, 3]})
    assert f.num_layers == 2 and Fanouts.of(f) is f
    assert f.resolve(g) == Fanouts.of(spellings[1]).resolve(g)
    assert hash(f) == hash(Fanouts.of({"buys": [2, 3], "bought_by": [1, 3], "follows": [2, 3]}))


@pytest.mark.parametrize(("fanouts", "message"), [
    ([], "fanouts: expected a non-empty list"),
    ("10", "fanouts: expected a non-empty list"),
    ([10, True], r"fanouts\[1\]: a fanout must be an int >= -1"),
    ([{"buys": -3}], r"fanouts\[0\]\['buys'\]: a fanout must be an int >= -1"),
    ({"buys": [1, 2], "bought_by": [1]}, "all of the same length"),
])
def test_bad_fanouts_name_the_layer(fanouts, message):
    with pytest.raises(ValidationError, match=message):
        Fanouts.of(fanouts)


def test_an_unknown_edge_type_is_named_when_resolved():
    f = Fanouts.of([{"likes": 2}])  # the graph is not known yet: checked on resolve
    with pytest.raises(ValidationError, match="likes"):
        f.resolve(shop_graph())
