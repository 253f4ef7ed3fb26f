"""Kernels and round logic of the ``lp`` pipeline: level-building kernels against numpy
references, the visit order, and when label-propagation rounds stop."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphshard.partition.balance import weight_sums
from graphshard.partition.lp import refinement as lp_refine
from graphshard.partition.lp.kernels.levels import bucket_entries, contract_entries
from graphshard.partition.lp.kernels.sweep import _visit_order
from graphshard.partition.lp.shards import ShardedGraph


def _reference_buckets(rows, cols, w, n, bounds):
    """Keys and weights grouped by the bucket of their row, input order inside a bucket."""
    which = np.searchsorted(bounds, rows, side="right") - 1
    order = np.argsort(which, kind="stable")
    keys = rows * n + cols
    return keys[order], w[order], np.searchsorted(which[order], np.arange(len(bounds)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bucket_entries_groups_by_range_in_input_order(seed):
    rng = np.random.default_rng(seed)
    n, m = 300, 5000
    rows, cols, w = rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 9, m)
    bounds = np.unique(np.r_[0, rng.integers(1, n, 4), n])
    keys, wts, off = bucket_entries(rows, cols, w, np.int64(n), bounds)
    ref_k, ref_w, ref_off = _reference_buckets(rows, cols, w, n, bounds)
    np.testing.assert_array_equal(keys, ref_k)
    np.testing.assert_array_equal(wts, ref_w)
    np.testing.assert_array_equal(off, ref_off)
    unit_keys, unit_w, unit_off = bucket_entries(rows, cols, np.zeros(0, np.int64),
                                                 np.int64(n), bounds)  # unit weights
    np.testing.assert_array_equal(unit_keys, ref_k)
    np.testing.assert_array_equal(unit_off, ref_off)
    assert len(unit_w) == 0


@pytest.mark.parametrize("n", [70_000, 300_000])
def test_bucket_entries_with_row_blocks_and_empty_ranges(n):
    """Above 65536 rows the range of a row comes from a table of row blocks: ranges
    smaller than a block, empty ranges and a last row at the end still bucket exactly."""
    rng = np.random.default_rng(n)
    m = 20_000
    rows, cols, w = rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 9, m)
    rows[:3] = [0, n - 1, 5]
    cuts = np.sort(rng.integers(1, n, 30))
    bounds = np.sort(np.r_[0, cuts, cuts[:5], 6, 7, 8, n])  # repeats: empty ranges
    keys, wts, off = bucket_entries(rows, cols, w, np.int64(n), bounds)
    ref_k, ref_w, ref_off = _reference_buckets(rows, cols, w, n, bounds)
    np.testing.assert_array_equal(keys, ref_k)
    np.testing.assert_array_equal(wts, ref_w)
    np.testing.assert_array_equal(off, ref_off)


@pytest.mark.parametrize("seed", [0, 1])
def test_contract_entries_maps_drops_internal_and_buckets(seed):
    rng = np.random.default_rng(seed)
    n, rows_here, lo, nc = 400, 120, 50, 37
    deg = rng.integers(0, 12, rows_here)
    indptr = np.r_[0, np.cumsum(deg)]
    indices = rng.integers(0, n, indptr[-1])
    weights = rng.integers(1, 5, indptr[-1])
    clusters = rng.integers(0, nc, n).astype(np.int32)
    bounds = np.array([0, 10, 11, 30, nc])
    keys, wts, off = contract_entries(indptr, indices, weights, lo, clusters, np.int64(nc),
                                      bounds)
    fine_rows = np.repeat(np.arange(lo, lo + rows_here), deg)
    cu, cv = clusters[fine_rows].astype(np.int64), clusters[indices].astype(np.int64)
    keep = cu != cv
    ref_k, ref_w, ref_off = _reference_buckets(cu[keep], cv[keep], weights[keep], nc, bounds)
    np.testing.assert_array_equal(keys, ref_k)
    np.testing.assert_array_equal(wts, ref_w)
    np.testing.assert_array_equal(off, ref_off)


def test_visit_order_covers_each_row_once_and_ignores_where_the_shard_starts():
    n = 1000
    subs = [_visit_order(0, n, 5, 3, s, 2) for s in range(2)]
    np.testing.assert_array_equal(np.sort(np.concatenate(subs)), np.arange(n))
    for order in subs:  # a shard starting at row 500 visits its rows in the same order
        tail = order[order >= 500]
        s = 0 if order is subs[0] else 1
        np.testing.assert_array_equal(_visit_order(500, 500, 5, 3, s, 2) + 500, tail)
    other = _visit_order(0, n, 5, 4, 0, 1)  # another step, another order
    assert not np.array_equal(other, np.sort(other))
    assert not np.array_equal(other, _visit_order(0, n, 5, 3, 0, 1))


class _Proposals:
    """An executor whose sweep tasks propose that every node of the shard outside label 0
    moves to label 0, which is full: ``commit_moves`` reverts them all."""

    def __init__(self) -> None:
        self.maps: list[np.ndarray] = []

    def map(self, fn, calls, shared=None):
        self.maps.append(np.asarray(shared["max_w"]).copy())
        labels = shared["labels"]
        out = []
        for _, lo in calls:
            nodes = np.arange(lo, lo + 5)
            nodes = nodes[labels[nodes] != 0]
            out.append((nodes, np.zeros(len(nodes), np.int64), np.ones(len(nodes), np.int64),
                        len(nodes)))
        return out


def test_rounds_stop_when_every_proposed_move_is_reverted():
    level = ShardedGraph(Path("."), np.array([0, 5, 10]), np.ones((10, 1), np.int32),
                         np.ones(10, np.int32))
    labels = np.r_[np.zeros(5), np.ones(5)].astype(np.int32)
    label_w = weight_sums(labels, level.node_weights, 2)
    ex = _Proposals()
    out, _, _ = lp_refine.label_rounds(level, ex, labels.copy(), label_w, np.array([5]), seed=0,
                                       step0=0, rounds=4, strict=True, min_moved=0.01)
    np.testing.assert_array_equal(out, labels)
    assert len(ex.maps) == 2  # one round of two sub-rounds, not four rounds


def test_relaxed_rounds_relax_the_node_column_only(monkeypatch):
    """Relaxed refinement may overload node counts, never the in-edge column: a balancer
    must then move hubs, which rarely fit anywhere."""
    level = ShardedGraph(Path("."), np.array([0, 50, 100]),
                         np.c_[np.ones(100), np.arange(100)].astype(np.int32),
                         np.ones(100, np.int32))
    limits: list[np.ndarray] = []

    def rounds(g, ex, labels, label_w, max_w, **kwargs):
        limits.append(np.asarray(max_w).copy())
        return labels, weight_sums(labels, g.node_weights, 2), lp_refine.RoundStats()

    monkeypatch.setattr(lp_refine, "label_rounds", rounds)
    monkeypatch.setattr(lp_refine, "level_cut", lambda g, ex, parts: 10)
    monkeypatch.setattr(lp_refine, "rebalance", lambda g, ex, parts, *a, **kw: parts)
    parts = np.r_[np.zeros(50), np.ones(50)].astype(np.int32)
    max_part = np.array([55, 4000])
    lp_refine.refine(level, None, parts, 2, max_part, seed=0, depth=0, rounds=2)
    assert len(limits) == 2
    np.testing.assert_array_equal(limits[0], max_part)
    assert limits[1][0] > max_part[0] and limits[1][1] == max_part[1]


@pytest.mark.parametrize(("share", "passed"), [(1.0, 0.25), (0.1, None)])
def test_refine_predicts_from_the_coarser_level_on_costly_levels_only(monkeypatch, share,
                                                                      passed):
    """The coarser level's decay reaches the strict rounds of a costly level only; refine
    hands its own second-to-first round ratio on to the next finer level."""
    level = ShardedGraph(Path("."), np.array([0, 50, 100]), np.ones((100, 1), np.int32),
                         np.ones(100, np.int32))
    decays = []

    def rounds(g, ex, labels, label_w, max_w, **kwargs):
        decays.append(kwargs.get("decay"))
        return labels, label_w, lp_refine.RoundStats(gains=(100, 40))

    monkeypatch.setattr(lp_refine, "label_rounds", rounds)
    monkeypatch.setattr(lp_refine, "RELAXED_ROUNDS", 0)
    monkeypatch.setattr(lp_refine, "rebalance", lambda g, ex, parts, *a, **kw: parts)
    parts = np.r_[np.zeros(50), np.ones(50)].astype(np.int32)
    _, _, decay = lp_refine.refine(level, None, parts, 2, np.array([55]), seed=0, depth=0,
                                   rounds=2, work_share=share, coarser_decay=0.25)
    assert decays == [passed] and decay == 0.4


def test_sweep_leaves_its_reused_rating_scratch_zeroed():
    """Sweep tasks reuse per-thread scratch; ``lp_sweep`` must leave ``rating`` zeroed and
    give the same moves as with fresh arrays."""
    from graphshard.partition.lp.kernels.sweep import lp_sweep
    from graphshard.partition.lp.shards import _scratch, release_scratch

    rng = np.random.default_rng(4)
    n, k = 200, 8
    deg = rng.integers(1, 9, n)
    indptr = np.r_[0, np.cumsum(deg)]
    indices, weights = rng.integers(0, n, indptr[-1]), rng.integers(1, 4, indptr[-1])
    labels = rng.integers(0, k, n).astype(np.int32)
    node_w = np.ones((n, 1), np.int32)
    label_w = weight_sums(labels, node_w, k).astype(np.int32)
    args = (indptr, indices, weights, 0, labels, node_w, label_w, np.array([40]), 3, 1, 0,
            1, True, 0.0)
    fresh = lp_sweep(*args, labels.copy(), label_w.copy(), np.zeros(k, np.int64))
    release_scratch()
    for _ in range(2):
        got = lp_sweep(*args, _scratch("live", labels.shape, labels.dtype),
                       _scratch("lw", label_w.shape, label_w.dtype),
                       _scratch("rating", (k,), np.dtype(np.int64)))
        assert not _scratch("rating", (k,), np.dtype(np.int64)).any()
        np.testing.assert_array_equal(got[0], fresh[0])
        np.testing.assert_array_equal(got[1], fresh[1])
    assert (fresh[0] != labels).any()  # the sweep moved something
    release_scratch()


def test_sweep_tasks_of_one_snapshot_reuse_the_scratch_and_give_the_same_moves(tmp_path):
    """Tasks of one map name their snapshot: a thread's second task skips copying the
    labels and label weights into its scratch (the first left them as it found them)."""
    from graphshard.partition.lp.shards import _scratch, release_scratch, sweep_task

    rng = np.random.default_rng(7)
    n, num_shards = 300, 3
    deg = rng.integers(0, 12, n)
    indptr = np.r_[0, np.cumsum(deg)]
    indices, weights = rng.integers(0, n, indptr[-1]), rng.integers(1, 4, indptr[-1])
    bounds = [0, 100, 200, 300]
    for b in range(num_shards):
        lo, hi = bounds[b], bounds[b + 1]
        np.save(tmp_path / f"shard{b}_indptr.npy", indptr[lo:hi + 1] - indptr[lo])
        np.save(tmp_path / f"shard{b}_indices.npy", indices[indptr[lo]:indptr[hi]])
        np.save(tmp_path / f"shard{b}_weights.npy", weights[indptr[lo]:indptr[hi]])
    labels = np.arange(n, dtype=np.int32)
    node_w = np.ones((n, 1), np.int32)
    shared = dict(labels=labels, node_w=node_w, label_w=node_w.copy(),
                  max_w=np.array([3]), seed=1, step=0, sub=0, num_sub=1, strict=False)

    def run(snapshot):
        release_scratch()
        out = [sweep_task(str(tmp_path / f"shard{b}"), bounds[b], snapshot=snapshot,
                          **shared) for b in range(num_shards)]
        np.testing.assert_array_equal(_scratch("live", (n,), labels.dtype), labels)
        np.testing.assert_array_equal(_scratch("lw", (n, 1), np.dtype(np.int32)), node_w)
        release_scratch()
        return out

    alone, reused = run(None), run(12345)
    assert sum(len(moves[0]) for moves in alone) > 0
    for a, b in zip(alone, reused, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)


def test_clustering_sweep_leaves_rows_above_max_row_alone():
    """With ``max_row``, rows with more entries keep their label: a hub (40 entries) whose
    neighbours are all in cluster 1 joins it without the limit, not with ``max_row`` 30;
    the clique 1..30 (30 entries a row) stays together either way."""
    from graphshard.partition.lp.kernels.sweep import lp_sweep

    n = 41
    clique = [(u, v) for u in range(1, 31) for v in range(1, 31) if u != v]
    rows = np.r_[np.zeros(40, np.int64), np.arange(1, 41), [u for u, _ in clique]]
    cols = np.r_[np.arange(1, 41), np.zeros(40, np.int64), [v for _, v in clique]]
    w = np.r_[np.ones(80, np.int64), np.full(len(clique), 5)]
    order = np.argsort(rows, kind="stable")
    indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=n))]
    indices, weights = cols[order], w[order]
    labels = np.ones(n, dtype=np.int32)
    labels[0] = 0
    node_w = np.ones((n, 1), np.int32)
    label_w = np.bincount(labels, minlength=n).astype(np.int32).reshape(n, 1)

    def sweep(max_row):
        return lp_sweep(indptr, indices, weights, 0, labels, node_w, label_w,
                        np.array([n]), 5, 0, 0, 1, False, 0.0, labels.copy(),
                        label_w.copy(), np.zeros(n, np.int64), np.int64(max_row))[0]

    assert np.diff(indptr)[0] == 40 and np.diff(indptr)[1:31].max() == 30
    free, capped = sweep(0), sweep(30)
    assert free[0] == 1 and capped[0] == 0
    assert (free[1:31] == 1).all() and (capped[1:31] == 1).all()


def _csr(n, edges):
    """Symmetric CSR (int64) of undirected ``(u, v, weight)`` edges (tuples, or three
    arrays)."""
    u, v, w = (np.asarray(a) for a in (zip(*edges, strict=True) if isinstance(edges, list)
                                        else edges))
    rows, cols, w = np.r_[u, v], np.r_[v, u], np.r_[w, w]
    order = np.argsort(rows, kind="stable")
    return np.r_[0, np.cumsum(np.bincount(rows, minlength=n))], cols[order], w[order]


def test_refinement_sweep_sees_the_cut_from_both_ends():
    """Two triangles joined by a bridge, and node 6 tied to two nodes of triangle B but
    labelled A (4 nodes in A, 3 in B).  With labels capped at 3 nodes nothing moves and
    the sweep sees the cut (bridge 1 + node 6's 2) from both ends: 6.  With room in B,
    node 6 moves first or last: the sweep sees 6 or 2, never less than the cut after."""
    from graphshard.partition.lp.kernels.sweep import lp_sweep

    n = 7
    edges = [(0, 1, 1), (1, 2, 1), (0, 2, 1), (3, 4, 1), (4, 5, 1), (3, 5, 1), (2, 3, 1),
             (6, 4, 1), (6, 5, 1)]
    indptr, indices, weights = _csr(n, edges)
    labels = np.array([0, 0, 0, 1, 1, 1, 0], dtype=np.int32)
    node_w = np.ones((n, 1), np.int32)
    label_w = weight_sums(labels, node_w, 2).astype(np.int32)

    def sweep(cap):
        return lp_sweep(indptr, indices, weights, 0, labels, node_w, label_w,
                        np.array([cap]), 1, 0, 0, 1, True, 0.0, labels.copy(),
                        label_w.copy(), np.zeros(2, np.int64))

    new, gains, external = sweep(3)
    np.testing.assert_array_equal(new, labels)
    assert external == 6 and not gains.any()
    new, gains, external = sweep(4)
    assert new[6] == 1 and gains[6] == 2 and external in (2, 6)


class _Gains:
    """An executor whose sweep tasks move one node of each shard to the other label,
    gaining ``gain``, and see external weight 1000 per sub-round (a cut of 1000 a round
    of two sub-rounds)."""

    def __init__(self, gain: int) -> None:
        self.gain, self.calls = gain, 0

    def map(self, fn, calls, shared=None):
        self.calls += 1
        labels, out = shared["labels"], []
        for _, lo in calls:
            node = np.array([lo + self.calls % 5])
            out.append((node, 1 - labels[node], np.array([self.gain]),
                        1000 // len(calls)))
        return out


@pytest.mark.parametrize("gain, rounds", [(1, 1), (2, 4)])
def test_refinement_rounds_stop_once_a_round_gains_too_little(gain, rounds):
    """With ``min_gain`` 0.005 of a cut of 1000, a round that gains 8 (four moves of gain
    2) goes on, one that gains 4 stops; every move here is committed."""
    level = ShardedGraph(Path("."), np.array([0, 5, 10]), np.ones((10, 1), np.int32),
                         np.ones(10, np.int32))
    labels = np.r_[np.zeros(5), np.ones(5)].astype(np.int32)
    ex = _Gains(gain)
    _, _, last = lp_refine.label_rounds(
        level, ex, labels, weight_sums(labels, level.node_weights, 2), np.array([10]),
        seed=0, step0=0, rounds=4, strict=True, min_moved=0.0, min_gain=0.005)
    assert ex.calls == 2 * rounds  # two sub-rounds a round
    assert last.cut == 1000 and last.gained == 4 * gain and last.moved == 4


@pytest.mark.parametrize("decay, rounds", [(None, 4), (1.0, 4), (0.5, 1)])
def test_refinement_rounds_stop_once_the_next_is_predicted_to_gain_too_little(decay, rounds):
    """Rounds gaining 8 each go on under ``min_gain`` 0.005 of a cut of 1000 (5), unless
    the next is predicted (``decay`` times the last) to gain less than that."""
    level = ShardedGraph(Path("."), np.array([0, 5, 10]), np.ones((10, 1), np.int32),
                         np.ones(10, np.int32))
    labels = np.r_[np.zeros(5), np.ones(5)].astype(np.int32)
    ex = _Gains(2)
    _, _, last = lp_refine.label_rounds(
        level, ex, labels, weight_sums(labels, level.node_weights, 2), np.array([10]),
        seed=0, step0=0, rounds=4, strict=True, min_moved=0.0, min_gain=0.005, decay=decay)
    assert ex.calls == 2 * rounds and last.gains == (8,) * rounds


def test_clustering_sweep_rates_short_rows_in_a_table_with_the_same_moves():
    """With labels beyond the caches (``FAR_LABELS``), rows of up to ``table_row``
    entries are rated in a small hash table: the same moves, gains and cut estimate as
    rating every row in the per-label array (``table_row=0``); rows longer than the
    table limit (hubs) take the array path either way."""
    from graphshard.partition.lp.kernels.sweep import FAR_LABELS, lp_sweep

    rng = np.random.default_rng(7)
    n = FAR_LABELS + 1000
    rows = np.r_[rng.integers(0, n, 400_000), np.repeat([5, 77], 3000)]
    cols = np.r_[rng.integers(0, 2000, 200_000), rng.integers(0, n, 200_000),
                 rng.integers(0, 5000, 6000)]
    keep = rows != cols
    indptr, indices, weights = _csr(n, (rows[keep], cols[keep],
                                        rng.integers(1, 4, keep.sum())))
    assert np.diff(indptr).max() > 1024
    labels = (np.arange(n) // 2).astype(np.int32)
    node_w = np.ones((n, 1), np.int32)
    label_w = np.bincount(labels, minlength=n).astype(np.int32).reshape(n, 1)

    def sweep(table_row):
        return lp_sweep(indptr, indices, weights, 0, labels, node_w, label_w,
                        np.array([5]), 3, 1, 0, 1, False, 0.0, labels.copy(),
                        label_w.copy(), np.zeros(n, np.int64), np.int64(0),
                        np.int64(table_row))

    table, plain = sweep(1024), sweep(0)
    np.testing.assert_array_equal(table[0], plain[0])
    np.testing.assert_array_equal(table[1], plain[1])
    assert table[2] == plain[2] and (table[0] != labels).sum() > n // 4
