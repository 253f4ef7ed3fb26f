"""Index arithmetic with IDs and counts beyond 2^31 (issue 42), on arrays of a few elements:
nothing may assume int32 IDs or counts where the graph can outgrow them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import graphshard as gs
from graphshard.io.chunked import load_chunked_meta
from graphshard.partition.build_kernels import halo_of_part, new_ids_of_block
from graphshard.partition.local_graphs import assemble_local_graph, one_hop_local_graph
from graphshard.partition.lp.driver import MAX_LP_NODES, lp_assign
from graphshard.partition.lp.kernels.levels import bucket_entries
from graphshard.partition.lp.shards import shard_bounds

BIG = 3_000_000_000  # nodes: past 2^31 and 2^32


def test_new_ids_past_2_to_the_32():
    starts = np.array([5 << 32, 7 << 32], dtype=np.int64)
    assert new_ids_of_block(np.array([1, 0, 1]), starts).tolist() == [
        (7 << 32), (5 << 32), (7 << 32) + 1]


def test_lp_entry_keys_and_shard_ranges_past_2_to_the_31():
    rows = np.array([BIG - 1, 5, 2_500_000_000], dtype=np.int64)
    cols = np.array([1, BIG - 2, 7], dtype=np.int64)
    keys, _, off = bucket_entries(rows, cols, np.zeros(0, np.int64), np.int64(BIG),
                                  np.array([0, 2_000_000_000, BIG], dtype=np.int64))
    assert off.tolist() == [0, 1, 3]
    assert sorted(zip((keys // BIG).tolist(), (keys % BIG).tolist(), strict=True)) == sorted(
        zip(rows.tolist(), cols.tolist(), strict=True))
    assert shard_bounds(np.array([2**31, 2**31, 5, 2**32]), 2**32).tolist() == [0, 2, 4]


def test_lp_refuses_a_graph_its_keys_cannot_hold(tmp_path):
    gs.io.write_chunked(gs.graph(([0, 1], [1, 0])), tmp_path / "g", 1)
    meta = load_chunked_meta(tmp_path / "g")
    huge = replace(meta, num_nodes={t: MAX_LP_NODES + 1 for t in meta.num_nodes})
    with pytest.raises(gs.ValidationError, match="holds up to 3,037,000,499 nodes"):
        lp_assign(huge, 2)


def test_local_graph_with_global_ids_past_2_to_the_32():
    """A part owning IDs beyond 2^32: the linear hop-1 build says it cannot pack them
    (None) and the general build gives the local graph."""
    lo, hi, n = (1 << 32) + 10, (1 << 32) + 13, 1 << 33
    src = np.array([lo + 2, 7, (1 << 32) + 99, 7], dtype=np.int64)
    dst = np.array([lo, lo + 1, lo + 2, lo + 2], dtype=np.int64)
    assert halo_of_part(src.copy(), lo, hi, n) is None
    assert one_hop_local_graph(0, lo, hi, n, 1 << 40, src.copy(), dst.copy()) is None
    local = assemble_local_graph(0, (lo, hi), 1 << 40, src, dst, 1)
    assert local.nodes.tolist() == [lo, lo + 1, lo + 2, 7, (1 << 32) + 99]
    assert local.src.tolist() == [2, 3, 4, 3] and local.dst.tolist() == [0, 1, 2, 2]
    assert local.edges.tolist() == [(1 << 40) + i for i in range(4)]
