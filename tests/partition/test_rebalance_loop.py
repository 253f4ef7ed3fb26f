"""``rebalance_loop``: the balancer shared by in-memory repair and the ``lp`` pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from graphshard.partition.balance import rebalance_loop


def _out_of_part0(labels, part_w, it, calls):
    calls.append(it)
    rows = np.flatnonzero(labels == 0)
    return rows, np.ones_like(rows), np.zeros_like(rows), rows


@pytest.mark.parametrize("max_w", [[2, 10], [3, 10]])
def test_stops_after_a_round_that_sheds_nothing(max_w):
    """Part 0 is over its in-edge limit (and its node limit with ``[2, 10]``), and part 1,
    the only target, has no room for a node: every move is reverted, so a second round
    would propose the same moves again."""
    parts = np.array([0, 0, 0, 1, 1, 1])
    node_w = np.array([[1, 5], [1, 5], [1, 5], [1, 1], [1, 1], [1, 1]])
    calls: list[int] = []
    out = rebalance_loop(parts, node_w, 2, np.array(max_w),
                         lambda lab, pw, it: _out_of_part0(lab, pw, it, calls),
                         max_iter=20, warn=False)
    np.testing.assert_array_equal(out, parts)
    assert calls == [0]


def test_rounds_go_on_while_they_shed_excess():
    """One move fits per round (the target fills up): the loop keeps going until part 0
    is within its limit."""
    parts = np.zeros(6, dtype=np.int64)
    node_w = np.ones((6, 1), dtype=np.int64)
    calls: list[int] = []

    def one_at_a_time(labels, part_w, it):
        calls.append(it)
        rows = np.flatnonzero(labels == 0)[:1]
        return rows, np.ones_like(rows), np.zeros_like(rows), rows

    out = rebalance_loop(parts, node_w, 2, np.array([3]), one_at_a_time, max_iter=20)
    assert np.bincount(out, minlength=2).tolist() == [3, 3] and calls == [0, 1, 2]
