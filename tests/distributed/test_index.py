"""The server side without Ray: partition index, graph server, tensor shard, routing helpers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import graphshard as gs
from graphshard.distributed._index import PartIndex
from graphshard.distributed._rpc import group_by_owner, merge_calls, split_results
from graphshard.distributed._server import GraphServer
from graphshard.distributed._tensors import TensorShard
from graphshard.errors import FormatError, ValidationError
from graphshard.storage.tensorfile import load_tensors, save_tensors
from graphshard.store import as_store


@pytest.mark.parametrize("k", [1, 2, 4])
def test_assembled_graph_matches_original_under_id_maps(shop_parts, k):
    p = shop_parts[k]
    for t in ("u", "i"):
        np.testing.assert_array_equal(p.whole.nodes[t].data["feat"],
                                      p.graph.nodes[t].data["feat"][p.nids[t]])
    for et in p.graph.canonical_etypes:
        src, dst = p.whole.edges(etype=et)
        osrc, odst = p.graph.edges(etype=et)
        e = p.eids[et]
        np.testing.assert_array_equal(p.nids[et[0]][src], osrc[e])
        np.testing.assert_array_equal(p.nids[et[2]][dst], odst[e])


def test_part_index_answers_like_the_whole_graph(shop_parts, tmp_path):
    p = shop_parts[4]
    ref = as_store(p.whole)
    servers = [GraphServer(p.config, i, str(tmp_path)) for i in range(4)]
    book = gs.load_partition_book(p.config)
    for et in p.whole.canonical_etypes:
        ids = np.arange(p.whole.num_nodes(et[2]))
        owner = book.nid2partid(ids, et[2])
        for i, srv in enumerate(servers):
            mine = ids[owner == i]
            got = srv.neighbors(mine, et, "in")
            want = ref.neighbors(mine, et, edge_dir="in")
            for a, b in zip(got, (want.indptr, want.indices, want.eids), strict=True):
                np.testing.assert_array_equal(a, b)
        # out-edges: the shares of all parts add up to the whole row
        src_ids = np.arange(p.whole.num_nodes(et[0]))
        total = sum(s.degrees(src_ids, et, "out") for s in servers)
        np.testing.assert_array_equal(total, ref.degrees(src_ids, et, edge_dir="out"))


def test_feature_rows_are_the_whole_graphs_in_request_order(shop_parts):
    """Dense node and edge feature rows (2-D and 1-D) come back as new arrays, in the order
    asked, repeats included, equal to the whole graph's."""
    p = shop_parts[4]
    book = gs.load_partition_book(p.config)
    for part in range(4):
        idx = PartIndex(gs.partition.load_partition_data(p.config, part))
        for t, name in (("u", "feat"), ("i", "feat"), ("i", "label")):
            mine = book.partid2nids(part, t)
            ids = np.concatenate([mine[::-1], mine[:1]])  # reversed, first one twice
            got = idx.node_features(t, name, ids)
            assert type(got) is np.ndarray and got.flags.writeable
            np.testing.assert_array_equal(got, p.whole.nodes[t].data[name][ids])
        for et in (("u", "buys", "i"), ("u", "follows", "u")):
            eids = book.partid2eids(part, et)[::-1]
            np.testing.assert_array_equal(idx.edge_features(et, "w", eids),
                                          p.whole.edges[et].data["w"][eids])


def test_part_index_rejects_nodes_owned_elsewhere(shop_parts):
    p = shop_parts[2]
    idx = PartIndex(gs.partition.load_partition_data(p.config, 0))
    foreign = gs.load_partition_book(p.config).partid2nids(1, "u")[:1]
    with pytest.raises(ValidationError, match="is not owned here"):
        idx.node_features("u", "feat", foreign)
    with pytest.raises(ValidationError, match="no node feature 'u/nope'"):
        idx.node_features("u", "nope", idx.owned_nodes("u")[:1])


def test_group_by_owner_keeps_input_order():
    groups = group_by_owner(np.array([2, 0, 2, 1, 0]), 4)
    assert [g.tolist() for g in groups] == [[1, 4], [3], [0, 2], []]


def test_multi_batches_reads_and_merged_calls_split_back(shop_parts, tmp_path):
    p = shop_parts[2]
    srv = GraphServer(p.config, 1, str(tmp_path))
    ids = srv.index.owned_nodes("u")[:5]
    et = ("u", "follows", "u")
    calls = [(1, "node_features", ("u", "feat", ids)), (0, "degrees", (ids, et, "out")),
             (1, "sample", ([(et, ids, 2, 0)], False, None, {}, 3, "cpu", True))]
    merged, where = merge_calls(calls)
    assert [c[:2] for c in merged] == [(1, "multi"), (0, "degrees")]
    answers = [srv.multi(*merged[0][2]), "part0"]
    feats, deg, sampled = split_results(answers, where)
    np.testing.assert_array_equal(feats, p.whole.nodes["u"].data["feat"][ids])
    assert deg == "part0"
    nbrs, eids, counts = sampled[0]
    assert nbrs.dtype == np.int32  # narrowed for the wire
    want = srv.sample([(et, ids, 2, 0)], False, None, {}, 3)[0]
    for a, b in zip((nbrs, eids, counts), want, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValidationError, match="'tensor_write' cannot be batched"):
        srv.multi([("tensor_write", ("w", ids, ids))])


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
def test_shard_sparse_update_equals_dense_reference(tmp_path, optimizer):
    rng = np.random.default_rng(0)
    shard = TensorShard(tmp_path)
    shard.create("w", (6, 3), "float32")
    shard.create("w.adagrad", (6, 3), "float32")
    w0 = rng.normal(size=(6, 3)).astype(np.float32)
    shard.write("w", np.arange(6), w0)
    ref_w, ref_s = w0.astype(np.float64), np.zeros((6, 3))
    for _ in range(3):
        rows = rng.integers(0, 6, 8)
        grads = rng.normal(size=(8, 3))
        shard.update("w", rows, grads, optimizer, 0.1, "w.adagrad")
        dense = np.zeros((6, 3))
        np.add.at(dense, rows, grads)
        touched = np.unique(rows)
        if optimizer == "sgd":
            ref_w[touched] -= 0.1 * dense[touched]
        else:
            ref_s[touched] += dense[touched] ** 2
            ref_w[touched] -= 0.1 * dense[touched] / (np.sqrt(ref_s[touched]) + 1e-10)
    np.testing.assert_allclose(shard.read("w", np.arange(6)), ref_w, rtol=1e-5, atol=1e-6)


def test_shard_errors_name_the_problem(tmp_path):
    shard = TensorShard(tmp_path)
    shard.create("w", (2, 2), "float32")
    with pytest.raises(ValidationError, match=r"exists with shape/dtype"):
        shard.create("w", (3, 2), "float32")
    with pytest.raises(ValidationError, match=r"local row 5 at position 1 is out of range"):
        shard.read("w", [0, 5])
    with pytest.raises(ValidationError, match="must be a plain file name"):
        shard.create("../x", (1,), "float32")
    with pytest.raises(ValidationError, match="must be letters"):
        shard.create("x y", (1,), "float32")
    with pytest.raises(ValidationError, match="unknown sparse optimizer 'adam'"):
        shard.update("w", [0], np.ones((1, 2)), "adam", 0.1)
    shard.delete("w")
    with pytest.raises(ValidationError, match="no distributed tensor 'w'"):
        shard.read("w", [0])


def test_import_dist_does_not_import_ray():
    import subprocess
    import sys

    code = "import graphshard, graphshard.distributed, sys; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def _rss_file_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssFile:"))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/self/status")
def test_a_part_index_keeps_few_pages_of_its_memory_mapped_part(tmp_path):
    """The load checks and the index build read every page of the part once; the index
    gives them back, so a server's resident set is not its whole part (issue 42)."""
    rng = np.random.default_rng(0)
    g = gs.graph((rng.integers(0, 200_000, 3_000_000), rng.integers(0, 200_000, 3_000_000)),
                 num_nodes=200_000)
    gs.partition_graph(g, "big", 2, tmp_path, part_method="random")
    part_bytes = (tmp_path / "part0" / "graph.safetensors").stat().st_size
    before = _rss_file_kib()
    part = gs.partition.load_partition_data(tmp_path / "big.json", 0)
    index = PartIndex(part)
    held = (_rss_file_kib() - before) * 1024
    assert part_bytes > 40 << 20
    assert held < part_bytes // 4, (held, part_bytes)
    owned = index.owned_nodes("_N")[:100]  # still answers, from pages read back on demand
    orig = np.asarray(part.graph.ndata["orig_id"][:100])  # inner nodes first, in ID order
    in_degree = np.bincount(np.asarray(g.edges()[1]), minlength=g.num_nodes())
    np.testing.assert_array_equal(index.degrees(owned, ("_N", "_E", "_N")), in_degree[orig])


def test_an_inner_edge_ending_outside_its_part_is_a_format_error(tmp_path):
    g = gs.graph(([0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]))
    gs.partition_graph(g, "ring", 2, tmp_path, part_method="random")
    path = tmp_path / "part0" / "graph.safetensors"
    tensors, meta = load_tensors(path, mmap=False)
    inner_nodes = int(tensors["node/inner_node"].sum())
    assert len(tensors["node/_ID"]) > inner_nodes, "the part needs a halo node"
    tensors["dst"][0] = len(tensors["node/_ID"]) - 1  # a halo node: not owned here
    save_tensors(path, tensors, meta)
    part = gs.partition.load_partition_data(tmp_path / "ring.json", 0, verify=False)
    with pytest.raises(FormatError, match=r"inner edge 0 of .* ends at local node \d+, not an "
                                          r"owned '_N' node"):
        PartIndex(part)
