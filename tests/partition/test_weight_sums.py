"""``weight_sums``: per-label sums of integer weight columns, exact, in one pass."""

from __future__ import annotations

import numpy as np
import pytest

from graphshard.errors import ValidationError
from graphshard.partition.balance import weight_sums


@pytest.mark.parametrize("label_dtype", [np.int8, np.int32, np.int64, np.uint16])
@pytest.mark.parametrize("weight_dtype", [np.int32, np.int64, np.uint8, np.bool_, np.float64])
@pytest.mark.parametrize("columns", [None, 1, 3])
def test_matches_bincount_per_column(label_dtype, weight_dtype, columns):
    rng = np.random.default_rng(7)
    n, size = 500, 40
    labels = rng.integers(0, size - 3, n).astype(label_dtype)  # the last labels stay empty
    shape = (n,) if columns is None else (n, columns)
    weights = rng.integers(0, 9, shape).astype(weight_dtype)
    cols = weights.reshape(n, -1).astype(np.float64)
    expected = np.stack([np.bincount(labels, weights=cols[:, c], minlength=size)
                         for c in range(cols.shape[1])], axis=1).astype(np.int64)
    got = weight_sums(labels, weights, size)
    assert got.dtype == np.int64
    assert got.shape == ((size,) if columns is None else (size, columns))
    assert got.reshape(size, -1).tolist() == expected.tolist()


def test_sums_beyond_float_precision_stay_exact():
    """Two weights of 2**53 + 1: a float sum (``np.bincount``'s) would lose the ones."""
    big = np.array([2**53 + 1, 2**53 + 1], dtype=np.int64)
    assert weight_sums(np.array([0, 0]), big, 1).tolist() == [2**54 + 2]


def test_no_rows_give_zeros():
    assert weight_sums(np.zeros(0, np.int32), np.zeros((0, 2), np.int32), 3).tolist() == \
        [[0, 0]] * 3


@pytest.mark.parametrize(("labels", "message"), [
    ([0, 3], r"labels must be in \[0, 3\), found 0\.\.3"),
    ([-1, 0], r"labels must be in \[0, 3\), found -1\.\.0"),
    ([0], "1 labels but 2 weights"),
])
def test_bad_labels_are_refused(labels, message):
    with pytest.raises(ValidationError, match=message):
        weight_sums(np.array(labels), np.ones(2, np.int64), 3)
