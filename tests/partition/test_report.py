"""The partition report's cut figures: directed edge cut, and the undirected one when it exists."""

from __future__ import annotations

import json

import numpy as np
import pytest

import graphshard as gs
from graphshard.partition import PartitionReport, build_partitions, edge_cut, undirected_edge_cut


def _pairs_cut(parts, src, dst):
    """Undirected edges {u, v} with u < v across parts, counted with multiplicity."""
    keep = src < dst
    return int(np.count_nonzero(parts[src[keep]] != parts[dst[keep]]))


def test_walshaw_cut_is_reported_both_ways(shared_file, tmp_path):
    g = gs.io.read_metis(shared_file("walshaw", "graphs", "add20.graph"))
    res = build_partitions(g, "add20", 4, tmp_path, part_method="metis")
    src, dst = g.edges()
    r = res.report
    assert r.edge_cut == edge_cut(res.parts, src, dst) == 2 * r.undirected_edge_cut
    assert r.undirected_edge_cut == _pairs_cut(res.parts, src, dst) > 0
    saved = json.loads(res.config_path.read_text())["graphshard"]["report"]
    assert saved["undirected_edge_cut"] == r.undirected_edge_cut
    assert PartitionReport.from_dict(saved).undirected_edge_cut == r.undirected_edge_cut


def test_directed_graph_has_no_undirected_cut(tmp_path):
    ring = gs.graph((np.arange(8), (np.arange(8) + 1) % 8))
    res = build_partitions(ring, "ring", 2, tmp_path, assignment=np.arange(8) % 2)
    assert res.report.edge_cut == 8 and res.report.undirected_edge_cut is None
    # an older report without the key reads back as None
    old = {k: v for k, v in res.report.to_dict().items() if k != "undirected_edge_cut"}
    assert PartitionReport.from_dict(old).undirected_edge_cut is None


@pytest.mark.parametrize("seed", range(5))
def test_undirected_cut_random_multigraphs(seed):
    rng = np.random.default_rng(seed)
    s, d = rng.integers(0, 30, 120), rng.integers(0, 30, 120)  # parallel edges, self loops
    src, dst = np.concatenate([s, d]), np.concatenate([d, s])
    parts = rng.integers(0, 3, 30)
    assert undirected_edge_cut(parts, src, dst) == _pairs_cut(parts, src, dst)
    assert undirected_edge_cut(parts, src, dst) * 2 == edge_cut(parts, src, dst)
    # one direction of a cut edge missing: no undirected figure
    cut = np.flatnonzero(parts[src] != parts[dst])
    drop = np.delete(np.arange(len(src)), cut[0])
    assert undirected_edge_cut(parts, src[drop], dst[drop]) is None


def test_undirected_cut_balanced_but_not_symmetric():
    """A directed 4-cycle across two parts: in- and out-cut-degrees agree, no reverses."""
    src, dst = np.array([0, 1, 2, 3]), np.array([1, 2, 3, 0])
    assert undirected_edge_cut(np.array([0, 1, 0, 1]), src, dst) is None
    assert undirected_edge_cut(np.array([0, 0, 0, 0]), src, dst) == 0


class _Parity:
    """Part = ID % 2 for any ID, without an array as long as the largest ID."""

    def __getitem__(self, ids):
        return np.asarray(ids) % 2


def test_undirected_cut_large_ids():
    big = 5_000_000_000  # (big + 1) ** 2 overflows int64: the lexsort path
    src, dst = np.array([big, 3, 1, 4, big - 1]), np.array([3, big, 4, 1, big - 1])
    assert undirected_edge_cut(_Parity(), src, dst) == 2
    # big -> 3 and 3 -> big + 2 are cut, but neither has its reverse
    src, dst = np.array([big, 1, 4, 3]), np.array([3, 4, 1, big + 2])
    assert undirected_edge_cut(_Parity(), src, dst) is None
