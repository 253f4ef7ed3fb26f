"""partition_graph end to end: the DGL invariants checked on the files it writes."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphshard as gs
from graphshard.partition import build_partitions, load_partition_data, read_config
from graphshard.ragged import Ragged
from graphshard.sparse import SparseRows


def check_partitions(g: gs.Graph, config, num_hops: int = 1) -> list:
    """Load every part of ``config`` and assert the partition invariants against ``g``."""
    cfg = read_config(config)
    num_parts = cfg.num_parts
    parts = [load_partition_data(cfg, p) for p in range(num_parts)]
    src, dst, etype_ids = g.homogeneous_edges()
    n, e = g.num_nodes(), g.num_edges()
    ntype_of = np.repeat(np.arange(len(g.ntypes)), [g.num_nodes(t) for t in g.ntypes])
    noff, eoff = g.node_type_offsets(), g.edge_type_offsets()
    owner_new = np.full(n, -1)
    new_of_orig = np.full(n, -1)
    edge_seen = np.zeros(e, dtype=np.int64)
    for p, part in enumerate(parts):
        local = part.graph
        nd, ed = local.ndata, local.edata
        inner = np.asarray(nd["inner_node"])
        k = int(inner.sum())
        assert inner[:k].all() and not inner[k:].any(), "inner nodes come first"
        # inner node IDs of part p are exactly its node_map ranges, types contiguous
        gids = np.asarray(nd["_ID"])
        start = min(r[p][0] for r in cfg.node_map.values())
        assert np.array_equal(gids[:k], np.arange(start, start + k))
        for t, ntype in enumerate(g.ntypes):
            lo, hi = cfg.node_map[ntype][p]
            assert np.all(nd["_TYPE"][lo - start:hi - start] == t)
        assert np.all(np.diff(gids[k:]) > 0), "halo nodes sorted by global ID"
        assert np.all(nd["part_id"][:k] == p) and np.all(nd["part_id"][k:] != p)
        orig = np.asarray(nd["orig_id"])
        assert np.array_equal(ntype_of[orig], nd["_TYPE"])
        assert np.all(owner_new[orig[:k]] == -1), "a node is inner in two parts"
        owner_new[orig[:k]] = p
        new_of_orig[orig] = np.where(new_of_orig[orig] == -1, gids, new_of_orig[orig])
        assert np.array_equal(new_of_orig[orig], gids), "one global ID per node across parts"
        # edges: inner edges first; endpoints map back to the original edge
        inner_e = np.asarray(ed["inner_edge"])
        m = int(inner_e.sum())
        assert inner_e[:m].all() and not inner_e[m:].any()
        oe = np.asarray(ed["orig_id"])
        lsrc, ldst = local.edges()
        assert np.array_equal(orig[lsrc], src[oe]) and np.array_equal(orig[ldst], dst[oe])
        assert np.array_equal(ed["_TYPE"], etype_ids[oe])
        assert np.all(ldst[:m] < k), "inner edges end at inner nodes"
        edge_seen[oe[:m]] += 1
        if num_hops == 1:
            # every in-edge of an inner node is here, and halo = exactly the outside sources
            in_part = np.zeros(n, dtype=bool)
            in_part[orig[:k]] = True
            assert m == int(in_part[dst].sum()) and len(oe) == m
            assert np.array_equal(np.sort(orig[k:]), np.unique(src[in_part[dst] & ~in_part[src]]))
        # features of inner nodes/edges equal the originals under orig_id
        for t, ntype in enumerate(g.ntypes):
            lo, hi = cfg.node_map[ntype][p]
            rows = orig[lo - start:hi - start] - noff[t]
            for name, col in g.node_frame(ntype).items():
                stored = part.node_feats[f"{ntype}/{name}"]
                if isinstance(col, (Ragged, SparseRows)):
                    assert type(stored) is type(col) and stored.equals(col.take(rows))
                else:
                    np.testing.assert_array_equal(stored, col[rows])
        estart = min(r[p][0] for r in cfg.edge_map.values()) if cfg.edge_map else 0
        for t, et in enumerate(g.canonical_etypes):
            lo, hi = cfg.edge_map[":".join(et)][p]
            rows = oe[lo - estart:hi - estart] - eoff[t]
            assert np.all(ed["_TYPE"][lo - estart:hi - estart] == t)
            for name, col in g.edge_frame(et).items():
                stored = part.edge_feats[f"{':'.join(et)}/{name}"]
                if isinstance(col, (Ragged, SparseRows)):
                    assert type(stored) is type(col) and stored.equals(col.take(rows))
                else:
                    np.testing.assert_array_equal(stored, col[rows])
    assert np.all(owner_new >= 0), "every node is inner in some part"
    assert np.all(edge_seen == 1), "every edge is an inner edge of exactly one part"
    # the reported cut equals the cut recomputed from the files
    report = cfg.report
    assert report["edge_cut"] == int(np.count_nonzero(owner_new[src] != owner_new[dst]))
    return parts


def test_cora_metis_invariants_and_features(cora, tmp_path):
    res = build_partitions(cora, "cora", 4, tmp_path, part_method="metis")
    check_partitions(cora, res.config_path)
    assert res.report.node_balance <= 1.03 + 1e-9
    # METIS should beat random by far on a citation graph
    rnd = build_partitions(cora, "cora", 4, tmp_path / "rnd", part_method="random")
    assert res.report.edge_cut < 0.5 * rnd.report.edge_cut


@pytest.mark.parametrize("num_hops", [1, 2, 3])
def test_walshaw_halo_hops(shared_file, tmp_path, num_hops):
    g = gs.io.read_metis(shared_file("walshaw", "graphs", "add20.graph"))
    res = build_partitions(g, "add20", 3, tmp_path, num_hops=num_hops, part_method="metis")
    parts = check_partitions(g, res.config_path, num_hops)
    halos = [p.graph.num_nodes() - int(p.graph.ndata["inner_node"].sum()) for p in parts]
    if num_hops > 1:
        one = build_partitions(g, "add20", 3, tmp_path / "h1", part_method="metis")
        assert sum(halos) > sum(one.report.halo_nodes)
    # k-hop halo = nodes within k hops upstream of the part, computed by BFS here
    src, dst = g.edges()
    for p, part in enumerate(parts):
        inner = np.asarray(part.graph.ndata["orig_id"])[: part.graph.ndata["inner_node"].sum()]
        reach = np.zeros(g.num_nodes(), dtype=bool)
        reach[inner] = True
        frontier = reach.copy()
        for _ in range(num_hops):
            nxt = np.zeros_like(reach)
            nxt[src[frontier[dst]]] = True
            frontier = nxt & ~reach
            reach |= nxt
        expect = np.flatnonzero(reach)
        got = np.sort(np.asarray(part.graph.ndata["orig_id"]))
        assert np.array_equal(got, expect), f"part {p}"


def test_acm_heterogeneous(acm, tmp_path):
    res = build_partitions(acm, "acm", 3, tmp_path, part_method="metis",
                           balance_ntypes=np.repeat(np.arange(4), [acm.num_nodes(t)
                                                                   for t in acm.ntypes]))
    check_partitions(acm, res.config_path)
    # every type is balanced across parts
    for t, counts in res.report.part_nodes_per_type.items():
        assert max(counts) <= 1.1 * (sum(counts) / 3) + 2, t
    cfg = json.loads(res.config_path.read_text())
    assert list(cfg["ntypes"]) == acm.ntypes
    assert set(cfg["edge_map"]) == {":".join(et) for et in acm.canonical_etypes}
    book = gs.load_partition_book(res.config_path)
    assert book.num_partitions() == 3


def test_return_mapping_heterogeneous(acm, tmp_path):
    nids, eids = gs.partition_graph(acm, "acm", 2, tmp_path, part_method="random",
                                    return_mapping=True)
    assert set(nids) == set(acm.ntypes)
    for t in acm.ntypes:
        assert np.array_equal(np.sort(nids[t]), np.arange(acm.num_nodes(t)))
    book = gs.load_partition_book(tmp_path / "acm.json")
    # per-type shuffled ID i of type t is original per-type ID nids[t][i]
    feat = acm.nodes["paper"].data["feat"]
    for p in range(2):
        part = load_partition_data(tmp_path / "acm.json", p)
        ids = book.partid2nids(p, "paper")
        np.testing.assert_array_equal(part.node_feats["paper/feat"], feat[nids["paper"][ids]])
    for et in acm.canonical_etypes:
        assert np.array_equal(np.sort(eids[et]), np.arange(acm.num_edges(et)))


def test_trainers_per_machine(cora, tmp_path):
    res = build_partitions(cora, "cora", 2, tmp_path, part_method="metis",
                           num_trainers_per_machine=2)
    parts = check_partitions(cora, res.config_path)
    for p, part in enumerate(parts):
        trainer = np.asarray(part.node_feats["_N/trainer_id"])
        assert set(np.unique(trainer)) <= {2 * p, 2 * p + 1}
        assert len(np.unique(trainer)) == 2


def test_assignment_and_ragged(tmp_path):
    g = gs.graph(([0, 1, 2, 3, 4], [1, 2, 3, 4, 0]))
    g.ndata["tags"] = Ragged.from_rows([[1], [], [2, 3], [4, 5, 6], [7]], dtype="uint64")
    g.edata["w"] = np.arange(5, dtype=np.float32)
    assignment = np.array([1, 1, 0, 0, 1])
    res = build_partitions(g, "ring", 2, tmp_path, assignment=assignment)
    check_partitions(g, res.config_path)
    assert res.report.method == "assignment"
    assert np.array_equal(res.parts, assignment)
    assert res.report.part_nodes == [2, 3]


@pytest.mark.parametrize("num_parts", [1, 2, 4])
def test_sparse_features_round_trip_under_id_maps(tmp_path, num_parts):
    rng = np.random.default_rng(num_parts)
    g = gs.heterograph({("u", "r", "i"): (rng.integers(0, 30, 80), rng.integers(0, 20, 80))},
                       {"u": 30, "i": 20})
    bow = sp.random(20, 50, density=0.1, format="csr", random_state=1, dtype=np.float32)
    bow.indices = bow.indices.astype(np.int32)
    g.nodes["i"].data["bow"] = bow
    nids, _ = gs.partition_graph(g, "s", num_parts, str(tmp_path), part_method="random",
                                 return_mapping=True)
    parts = check_partitions(g, tmp_path / "s.json")
    cfg = read_config(tmp_path / "s.json")
    got = []
    for p, part in enumerate(parts):
        col = part.node_feats["i/bow"]
        assert isinstance(col, SparseRows) and col.num_cols == 50
        assert col.indices.dtype == np.int32
        for arr in (col.indptr, col.indices, col.values):  # views of the read-only map
            assert not arr.flags.owndata and not arr.flags.writeable
        lo, hi = cfg.node_map["i"][p]
        assert len(col) == hi - lo
        got.append(col)
    whole = SparseRows.concat(got)  # shuffled order: row k is original node nids["i"][k]
    np.testing.assert_array_equal(whole.to_dense(), bow.toarray()[nids["i"]])
    meta = json.loads(_metadata(tmp_path / "part0" / "node_feats.safetensors")["sparse"])
    assert meta == {"i/bow": 50}


def _metadata(path) -> dict:
    from graphshard.storage.tensorfile import load_tensors

    return load_tensors(path)[1]


def test_assignment_same_arrays_as_method(cora, tmp_path):
    a = build_partitions(cora, "c", 3, tmp_path / "a", part_method="metis")
    b = build_partitions(cora, "c", 3, tmp_path / "b", assignment=a.parts)
    for p in range(3):
        pa = load_partition_data(a.config_path, p)
        pb = load_partition_data(b.config_path, p)
        for k in pa.graph.ndata:
            np.testing.assert_array_equal(pa.graph.ndata[k], pb.graph.ndata[k])
        for k in pa.node_feats:
            np.testing.assert_array_equal(pa.node_feats[k], pb.node_feats[k])


@st.composite
def random_heterographs(draw):
    ntypes = draw(st.lists(st.sampled_from("abc"), min_size=1, max_size=3, unique=True))
    counts = {t: draw(st.integers(1, 12)) for t in ntypes}
    data = {}
    for i in range(draw(st.integers(1, 3))):
        s, d = draw(st.sampled_from(ntypes)), draw(st.sampled_from(ntypes))
        m = draw(st.integers(0, 30))
        src = draw(st.lists(st.integers(0, counts[s] - 1), min_size=m, max_size=m))
        dst = draw(st.lists(st.integers(0, counts[d] - 1), min_size=m, max_size=m))
        data[(s, f"r{i}", d)] = (src, dst)
    g = gs.heterograph(data, counts)
    for t in ntypes:
        g.nodes[t].data["x"] = np.arange(counts[t] * 2, dtype=np.float32).reshape(-1, 2)
        g.nodes[t].data["s"] = sp.random(counts[t], 5, density=0.3, format="csr",
                                         random_state=draw(st.integers(0, 99)))
    for et in g.canonical_etypes:
        g.edges[et].data["y"] = np.arange(g.num_edges(et), dtype=np.int64) * 7
        m = g.num_edges(et)
        g.edges[et].data["z"] = SparseRows(np.arange(m + 1), np.arange(m) % 3,
                                           np.arange(m, dtype=np.float32), 3)
    return g


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(g=random_heterographs(), num_parts=st.integers(1, 4), hops=st.integers(1, 2),
       method=st.sampled_from(["random", "hash", "metis"]))
def test_property_random_graphs(tmp_path_factory, g, num_parts, hops, method):
    num_parts = min(num_parts, g.num_nodes())
    out = tmp_path_factory.mktemp("p")
    res = build_partitions(g, "g", num_parts, out, num_hops=hops, part_method=method)
    check_partitions(g, res.config_path, hops)
    # reshuffle is a bijection
    nids = res.orig_nids
    for t in g.ntypes:
        arr = nids if isinstance(nids, np.ndarray) else nids[t]
        assert np.array_equal(np.sort(arr), np.arange(g.num_nodes(t)))


def test_assignment_folder_dgl_layout(acm, tmp_path):
    from graphshard.partition.assignment import write_assignment

    rng = np.random.default_rng(0)
    parts = {t: rng.integers(0, 3, acm.num_nodes(t)) for t in acm.ntypes}
    (tmp_path / "assign").mkdir()
    for t, arr in parts.items():  # text only, as DGL's random_partition.py writes it
        np.savetxt(tmp_path / "assign" / f"{t}.txt", arr, fmt="%d")
    res = build_partitions(acm, "acm", 3, tmp_path / "out", assignment=tmp_path / "assign")
    expect = np.concatenate([parts[t] for t in acm.ntypes])
    assert np.array_equal(res.parts, expect)
    write_assignment(tmp_path / "bin", parts, 3)
    res2 = build_partitions(acm, "acm", 3, tmp_path / "out2", assignment=tmp_path / "bin")
    assert res2.report.to_dict()["part_nodes"] == res.report.to_dict()["part_nodes"]
    (tmp_path / "assign" / "term.txt").write_text("0\nx\n")
    (tmp_path / "assign" / "term.npy").unlink(missing_ok=True)
    with pytest.raises(gs.FormatError, match=r"term\.txt: expected one integer part ID"):
        build_partitions(acm, "acm", 3, tmp_path / "out3", assignment=tmp_path / "assign")
