"""Thinning of dense coarse levels (``graphshard.partition.lp.thin``)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import graphshard as gs
from graphshard.io.chunked import load_chunked_meta
from graphshard.partition.backends import adjacency_cut, max_part_weight
from graphshard.partition.lp import lp_assign
from graphshard.partition.lp.kernels.levels import weight_histogram
from graphshard.partition.lp.levels import contract_level, level0_from_chunks
from graphshard.partition.lp.shards import gather
from graphshard.partition.lp.thin import thin_level, thin_weight
from graphshard.partition.methods import MethodOptions, run_method
from graphshard.runtime.executor import InProcessExecutor


def _csr(adj, n):
    return sp.csr_matrix((adj.edge_weights, adj.indices, adj.indptr), shape=(n, n))


def _split(m, tau):
    """(entries of weight >= tau, lighter entries) of a CSR matrix."""
    heavy, light = m.copy(), m.copy()
    heavy.data = np.where(m.data >= tau, m.data, 0)
    light.data = np.where(m.data < tau, m.data, 0)
    heavy.eliminate_zeros()
    light.eliminate_zeros()
    return heavy, light


def test_a_thinned_level_is_symmetric_unbiased_and_keeps_its_heavy_edges(tmp_path):
    g = gs.datasets.rmat(5000, 50000, seed=1, num_features=0)
    d = tmp_path / "chunked"
    gs.io.write_chunked(g, d, 3)
    ex = InProcessExecutor(2)
    fine = level0_from_chunks(load_chunked_meta(d), tmp_path / "l0", 20000, ex)
    clusters = np.arange(5000) // 3
    level = contract_level(fine, clusters, int(clusters.max()) + 1, tmp_path / "l1", 20000, ex)
    n = level.num_nodes
    f = _csr(gather(level), n)
    degree = level.num_entries / n / 4
    tau = thin_weight(weight_histogram(f.data), int(degree * n))
    assert tau > 1 and (f.data >= tau).any() and (f.data < tau).any()

    thinned = thin_level(level, ex, degree, seed=5)  # rewrites the shards in place
    a = _csr(gather(thinned), n)
    assert thinned.degrees.tolist() == np.diff(a.indptr).tolist()
    assert 0.7 * degree * n <= a.nnz <= 1.3 * degree * n < f.nnz
    assert abs(a - a.T).sum() == 0  # both directions of an edge share the decision
    assert (a != 0).multiply(f != 0).nnz == a.nnz  # no new edge
    heavy, light_f = _split(f, tau)
    assert abs(a.multiply(heavy != 0) - heavy).sum() == 0  # heavy edges kept as they were
    light = a.multiply(light_f != 0)
    assert set(light.data.tolist()) == {tau}
    # the light weight kept is the light weight there was, within 4 standard deviations
    # (one draw per undirected edge: count the upper triangle)
    lf = sp.triu(light_f).tocsr()
    kept, total = sp.triu(light).sum(), lf.sum()
    sd = np.sqrt((lf.data * (tau - lf.data)).sum())
    assert abs(kept - total) <= 4 * sd


def test_lp_with_thinned_levels_stays_valid_and_good(tmp_path, caplog):
    g = gs.datasets.sbm(6000, 60000, num_blocks=8, p_in=0.9, seed=3, num_features=0)
    d = tmp_path / "chunked"
    gs.io.write_chunked(g, d, 4)
    with caplog.at_level(logging.INFO, logger="graphshard.partition.lp"):
        parts = lp_assign(load_chunked_meta(d), 4, coarse_nodes=200, thin_degree=6)["_N"]
    assert "thinned" in caplog.text
    assert np.bincount(parts, minlength=4).max() <= max_part_weight(6000, 4, 0.03)
    src, dst, _ = g.homogeneous_edges()
    from graphshard.partition.adjacency import symmetric_adjacency

    adj = symmetric_adjacency(src, dst, 6000)
    cut = adjacency_cut(adj, parts)
    assert cut <= 1.15 * adjacency_cut(adj, run_method(adj, 4, "metis", MethodOptions()))
    assert cut < 0.5 * adjacency_cut(adj, run_method(adj, 4, "random", MethodOptions()))


def test_thin_level_leaves_a_sparse_level_alone(tmp_path):
    g = gs.graph((np.arange(99), np.arange(1, 100)))
    d = tmp_path / "chunked"
    gs.io.write_chunked(g, d, 2)
    ex = InProcessExecutor(1)
    level = level0_from_chunks(load_chunked_meta(d), Path(tmp_path) / "l0", 1000, ex)
    assert thin_level(level, ex, 4.0, seed=0) is level
