"""shchur_split (issue 43 item 2): Shchur et al.'s per-class split, seeded and exact; classes
too small for it named or skipped; reachable from load_shchur_npz and the shchur reader."""

from __future__ import annotations

import numpy as np
import pytest

from graphshard.datasets import NodeSplit, load_shchur_npz, shchur_split
from graphshard.errors import ValidationError


def _labels(sizes: list[int], seed: int = 0) -> np.ndarray:
    """Classes of the given sizes, in a shuffled node order."""
    return np.random.default_rng(seed).permutation(np.repeat(np.arange(len(sizes)), sizes))


def test_twenty_and_thirty_per_class_the_rest_test():
    labels = _labels([50, 51, 120, 333])
    split = shchur_split(labels, seed=3)
    train, val, test = split.train_mask, split.val_mask, split.test_mask
    assert isinstance(split, NodeSplit) and split.skipped_classes == ()
    assert train.dtype == val.dtype == test.dtype == np.bool_
    assert not (train & val).any() and not (train & test).any() and not (val & test).any()
    assert (train | val | test).all()
    assert np.bincount(labels[train]).tolist() == [20] * 4
    assert np.bincount(labels[val]).tolist() == [30] * 4
    assert np.bincount(labels[test], minlength=4).tolist() == [0, 1, 70, 283]
    assert repr(split) == "NodeSplit(train=80, val=120, test=354)"
    assert set(split.as_ndata()) == {"train_mask", "val_mask", "test_mask"}


def test_seeded_and_other_counts():
    labels = _labels([80, 90])
    a, b = shchur_split(labels, seed=5), shchur_split(labels, seed=5)
    for name in ("train_mask", "val_mask", "test_mask"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.train_mask, shchur_split(labels, seed=6).train_mask)
    c = shchur_split(labels, train_per_class=5, val_per_class=0, seed=5)
    assert np.bincount(labels[c.train_mask]).tolist() == [5, 5] and not c.val_mask.any()
    assert c.test_mask.sum() == 160


def test_each_node_of_a_class_is_drawn_equally_often():
    """Over many seeds every node of a 60-node class is a training node 20/60 of the time
    (chi-square against the uniform count at alpha 0.001, a fixed set of seeds)."""
    from scipy import stats

    labels = _labels([60, 75])
    seeds = 600
    counts = np.zeros(len(labels))
    for seed in range(seeds):
        counts += shchur_split(labels, seed=seed).train_mask
    first = counts[labels == 0]
    assert stats.chisquare(first).pvalue > 1e-3
    assert first.sum() == 20 * seeds


def test_unlabelled_nodes_are_in_no_mask():
    labels = _labels([55, 60]).astype(np.int64)
    labels[:7] = -1
    split = shchur_split(labels)
    assert not (split.train_mask | split.val_mask | split.test_mask)[:7].any()
    assert split.test_mask.sum() == len(labels) - 7 - 100


def test_a_class_smaller_than_train_plus_val_is_named_or_skipped():
    labels = _labels([60, 12, 49, 80])
    with pytest.raises(ValidationError, match=r"shchur_split: class 1 has 12 nodes, fewer "
                       r"than train_per_class \+ val_per_class = 50 \(and 1 more classes\); "
                       r"pass small_classes='skip'") as err:
        shchur_split(labels)
    assert err.value.field == "labels" and err.value.value == 1
    split = shchur_split(labels, small_classes="skip")
    assert split.skipped_classes == (1, 2)
    assert not (split.train_mask | split.val_mask | split.test_mask)[
        (labels == 1) | (labels == 2)].any()
    assert np.bincount(labels[split.train_mask], minlength=4).tolist() == [20, 0, 0, 20]
    assert shchur_split(labels, train_per_class=5, val_per_class=5).skipped_classes == ()


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"labels": np.zeros((2, 2), int)}, r"labels must be a 1-D integer array"),
    ({"labels": np.zeros(3)}, r"labels must be a 1-D integer array.*float64"),
    ({"train_per_class": 0}, r"train_per_class must be an integer >= 1, got 0"),
    ({"val_per_class": -1}, r"val_per_class must be an integer >= 0"),
    ({"small_classes": "drop"}, r"small_classes must be one of \['error', 'skip'\]"),
])
def test_bad_arguments_are_named(kwargs, match):
    args = {"labels": np.zeros(60, int), **kwargs}
    with pytest.raises(ValidationError, match=match):
        shchur_split(args.pop("labels"), **args)


def _tiny_npz(path, labels: np.ndarray) -> None:
    n = len(labels)
    np.savez(path, adj_data=np.ones(n), adj_indices=np.roll(np.arange(n), -1),
             adj_indptr=np.arange(n + 1), adj_shape=[n, n], attr_data=np.ones(n, np.float32),
             attr_indices=np.zeros(n, int), attr_indptr=np.arange(n + 1), attr_shape=[n, 2],
             labels=labels)


def test_load_shchur_npz_and_the_reader_add_the_split(tmp_path):
    from graphshard.io.convert import read_graph

    labels = _labels([50, 70])
    _tiny_npz(tmp_path / "g.npz", labels)
    assert "train_mask" not in load_shchur_npz(tmp_path / "g.npz").ndata
    g = load_shchur_npz(tmp_path / "g.npz", split_seed=4)
    want = shchur_split(labels, seed=4)
    for name, mask in want.as_ndata().items():
        np.testing.assert_array_equal(g.ndata[name], mask)
    r = read_graph("shchur", [tmp_path / "g.npz"], split_seed=4)
    np.testing.assert_array_equal(r.ndata["val_mask"], want.val_mask)
    _tiny_npz(tmp_path / "small.npz", _labels([50, 20]))
    with pytest.raises(ValidationError, match=r"small\.npz: shchur_split: class 1 has 20"):
        load_shchur_npz(tmp_path / "small.npz", split_seed=0)


def test_coauthor_cs_split(shared_file):
    g = load_shchur_npz(shared_file("gnn-benchmark-shchur", "coauthor-cs.zip"), split_seed=0)
    label = g.ndata["label"]
    assert np.bincount(label[g.ndata["train_mask"]]).tolist() == [20] * 15
    assert np.bincount(label[g.ndata["val_mask"]]).tolist() == [30] * 15
    assert int(g.ndata["test_mask"].sum()) == 18333 - 15 * 50
