"""f1_scores against hand-computed Micro- and Macro-F1."""

from __future__ import annotations

import numpy as np
import pytest

from graphshard.errors import ValidationError
from graphshard.train.metrics import f1_scores


def test_single_label_by_hand():
    # class 0: TP 2, FP 1, FN 0 -> 4/5; class 1: TP 1, FP 1, FN 1 -> 1/2;
    # class 2: TP 0, FP 0, FN 1 -> 0; micro = accuracy = 3/5
    f = f1_scores([0, 0, 1, 1, 2], [0, 0, 1, 0, 1])
    assert f.per_class == pytest.approx([0.8, 0.5, 0.0])
    assert f.macro == pytest.approx(1.3 / 3)
    assert f.micro == pytest.approx(3 / 5)


def test_macro_counts_only_seen_classes():
    # class 5 never appears: not part of the mean (scikit-learn's default labels)
    f = f1_scores(np.array([0, 3, 3]), np.array([0, 3, 0]))
    assert len(f.per_class) == 2 and f.macro == pytest.approx((2 / 3 + 2 / 3) / 2)


def test_multi_label_by_hand():
    t = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 0]])
    p = np.array([[1, 0, 0], [0, 1, 1], [1, 0, 0], [0, 0, 1]])
    # column 0: TP 2 -> 1; column 1: TP 1, FN 1 -> 2/3; column 2: TP 0, FP 2, FN 1 -> 0
    f = f1_scores(t, p)
    assert f.per_class == pytest.approx([1.0, 2 / 3, 0.0])
    assert f.macro == pytest.approx(5 / 9)
    assert f.micro == pytest.approx(2 * 3 / (2 * 3 + 2 + 2))  # TP 3, FP 2, FN 2


def test_perfect_empty_and_bad_input():
    assert f1_scores([2, 1], [2, 1]).macro == 1.0
    assert np.isnan(f1_scores(np.zeros(0, np.int64), np.zeros(0, np.int64)).micro)
    assert f1_scores(np.zeros((2, 2)), np.zeros((2, 2))).micro == 0.0  # nothing true nor predicted
    with pytest.raises(ValidationError, match="shape"):
        f1_scores([0, 1], [0])
    with pytest.raises(ValidationError, match="0/1 matrix"):
        f1_scores([[2, 0]], [[1, 0]])
    with pytest.raises(ValidationError, match=">= 0"):
        f1_scores([-1, 0], [0, 0])
