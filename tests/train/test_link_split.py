"""Edge splits for link prediction: no leak, fractions, pairs together, seeded, on disk."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs
from graphshard.train.link_files import (
    link_split_path,
    load_link_split,
    partition_for_link,
    save_link_split,
)
from graphshard.train.link_split import pair_keys, split_edges


def symmetric_graph(n=300, m=1500, seed=0) -> gs.Graph:
    g = gs.datasets.sbm(n, m, num_blocks=3, num_features=4, seed=seed)
    s, d = (np.asarray(a) for a in g.edges())
    keep = s != d
    s, d = s[keep], d[keep]
    out = gs.graph((np.concatenate([s, d, [5]]), np.concatenate([d, s, [5]])), num_nodes=n)
    out.ndata["feat"] = g.ndata["feat"]
    out.edata["w"] = np.arange(out.num_edges(), dtype=np.float32)
    return out


def keys_of(g, undirected):
    s, d = (np.asarray(a) for a in g.edges())
    return pair_keys(s, d, g.num_nodes(), undirected=undirected)


def test_symmetric_pairs_leave_together_and_nothing_leaks():
    g = symmetric_graph()
    s = split_edges(g, val_fraction=0.1, test_fraction=0.2, num_negatives=7, seed=1)
    assert s.undirected
    src, dst = (np.asarray(a) for a in g.edges())
    pairs = len(np.unique(keys_of(g, True)[src != dst]))
    assert (len(s.held_out.val), len(s.held_out.test)) == (round(0.1 * pairs), round(0.2 * pairs))
    train_keys = set(keys_of(s.train_graph, True).tolist())
    for ev in (s.held_out.val, s.held_out.test):
        held = pair_keys(ev.src, ev.dst, g.num_nodes(), undirected=True)
        assert not train_keys & set(held.tolist())  # neither direction stays
        assert len(np.unique(held)) == len(held)
    # every edge is either kept or belongs to a held-out pair (both directions, copies)
    held = np.concatenate([pair_keys(ev.src, ev.dst, g.num_nodes(), undirected=True)
                           for ev in (s.held_out.val, s.held_out.test)])
    gone = np.isin(keys_of(g, True), held)
    np.testing.assert_array_equal(s.train_eids, np.flatnonzero(~gone))
    assert 5 in np.asarray(s.train_graph.edges()[0])[np.asarray(s.train_graph.edges()[1]) == 5]
    # features: all nodes, the kept edges
    np.testing.assert_array_equal(s.train_graph.ndata["feat"], g.ndata["feat"])
    np.testing.assert_array_equal(s.train_graph.edata["w"], s.train_eids.astype(np.float32))


def test_negatives_are_fixed_and_never_linked():
    g = symmetric_graph()
    a = split_edges(g, num_negatives=20, seed=3)
    b = split_edges(g, num_negatives=20, seed=3)
    c = split_edges(g, num_negatives=20, seed=4)
    np.testing.assert_array_equal(a.held_out.test.neg_dst, b.held_out.test.neg_dst)
    np.testing.assert_array_equal(a.held_out.val.src, b.held_out.val.src)
    np.testing.assert_array_equal(a.train_eids, b.train_eids)
    assert not np.array_equal(a.train_eids, c.train_eids)
    all_keys = set(keys_of(g, True).tolist())
    for ev in (a.held_out.val, a.held_out.test):
        assert ev.neg_dst.shape == (len(ev), 20)
        assert (ev.neg_dst != ev.src[:, None]).all()
        neg_keys = pair_keys(np.repeat(ev.src, 20), ev.neg_dst.reshape(-1), g.num_nodes(),
                             undirected=True)
        assert not all_keys & set(neg_keys.tolist())


def test_directed_graph_holds_out_edges_with_their_parallel_copies():
    g = gs.graph(([0, 0, 1, 2, 3, 3, 4], [1, 1, 2, 3, 4, 4, 0]), num_nodes=6)
    s = split_edges(g, val_fraction=0.0, test_fraction=0.5, num_negatives=1, seed=0)
    assert not s.undirected
    held = set(pair_keys(s.held_out.test.src, s.held_out.test.dst, 6,
                         undirected=False).tolist())
    assert len(held) == 2 and not held & set(keys_of(s.train_graph, False).tolist())
    assert s.train_graph.num_edges() == 7 - sum(
        int((keys_of(g, False) == k).sum()) for k in held)


@pytest.mark.parametrize(("kw", "match"), [
    (dict(val_fraction=1.0), "val_fraction must be in"),
    (dict(val_fraction=0.5, test_fraction=0.5), "must be below 1"),
    (dict(num_negatives=0), "num_negatives must be an int >= 1"),
])
def test_bad_arguments(kw, match):
    with pytest.raises(gs.ValidationError, match=match):
        split_edges(symmetric_graph(50, 100), **kw)
    two = gs.heterograph({("u", "r", "i"): ([0], [0]), ("i", "s", "u"): ([0], [0])})
    with pytest.raises(gs.ValidationError, match="name the one to predict with etype="):
        split_edges(two)
    with pytest.raises(gs.ValidationError, match="does not join 'i' back to 'u'"):
        split_edges(two, etype="r", reverse_etype="r")
    with pytest.raises(gs.ValidationError, match="undirected=True needs an edge type"):
        split_edges(two, etype="r", undirected=True)


def test_heterogeneous_split_holds_out_pairs_of_one_type_and_their_reverses():
    """etype's held-out pairs leave the training graph, and with reverse_etype their
    reverse edges too; every other edge, node feature and edge feature stays; negatives
    are destination-type nodes not linked to the source."""
    rng = np.random.default_rng(3)
    u, i = rng.integers(0, 40, 600), rng.integers(0, 70, 600)
    f, t = rng.integers(0, 40, 200), rng.integers(0, 40, 200)
    g = gs.heterograph({("u", "buys", "i"): (u, i), ("i", "bought_by", "u"): (i, u),
                        ("u", "follows", "u"): (f, t)}, num_nodes_dict={"u": 40, "i": 70})
    g.nodes["i"].data["feat"] = rng.normal(size=(70, 3)).astype(np.float32)
    g.edges["follows"].data["w"] = np.arange(200, dtype=np.float32)
    s = split_edges(g, etype="buys", reverse_etype="bought_by", num_negatives=5, seed=1)
    assert s.etype == ("u", "buys", "i") and not s.undirected
    tg = s.train_graph
    held = set()
    for ev in (s.held_out.val, s.held_out.test):
        assert len(ev) > 0 and ev.neg_dst.shape == (len(ev), 5)
        assert ev.neg_dst.min() >= 0 and ev.neg_dst.max() < 70
        linked = set(zip(u.tolist(), i.tolist(), strict=True))
        assert not {(a, b) for a, row in zip(ev.src.tolist(), ev.neg_dst.tolist(),
                                              strict=True) for b in row} & linked
        held |= set(zip(ev.src.tolist(), ev.dst.tolist(), strict=True))
    kept = set(zip(*(x.tolist() for x in tg.edges(etype="buys")), strict=True))
    back = set(zip(*(x.tolist() for x in tg.edges(etype="bought_by")), strict=True))
    assert not kept & held and not {(b, a) for a, b in held} & back
    assert kept | held == set(zip(u.tolist(), i.tolist(), strict=True))
    assert back | {(b, a) for a, b in held} == set(zip(i.tolist(), u.tolist(), strict=True))
    assert tg.num_edges("follows") == 200  # other types untouched
    np.testing.assert_array_equal(tg.edges["follows"].data["w"], np.arange(200))
    np.testing.assert_array_equal(tg.nodes["i"].data["feat"], g.nodes["i"].data["feat"])
    np.testing.assert_array_equal(s.train_eids, np.flatnonzero(np.isin(
        pair_keys(u, i, 70, undirected=False),
        pair_keys(*(x for x in tg.edges(etype="buys")), 70, undirected=False))))
    without = split_edges(g, etype="buys", num_negatives=5, seed=1)
    assert without.train_graph.num_edges("bought_by") == 600  # no reverse_etype: all kept


def test_partitions_hold_no_held_out_edge(tmp_path):
    g = symmetric_graph()
    res = partition_for_link(g, "sym", 4, tmp_path, val_fraction=0.1, test_fraction=0.1,
                             num_negatives=5, seed=2, part_method="random")
    held = load_link_split(res.config_path)
    new_of_orig = np.argsort(res.orig_nids)
    for name in ("val", "test"):
        want, got = getattr(res.split.held_out, name), getattr(held, name)
        np.testing.assert_array_equal(got.src, new_of_orig[want.src])
        np.testing.assert_array_equal(got.neg_dst, new_of_orig[want.neg_dst])
    n = g.num_nodes()
    held_keys = set(np.concatenate([pair_keys(ev.src, ev.dst, n, undirected=True)
                                    for ev in (held.val, held.test)]).tolist())
    seen = 0
    for p in range(4):
        local = gs.load_partition(res.config_path, p)[0]
        gid = np.asarray(local.ndata["_ID"])
        ls, ld = (np.asarray(a) for a in local.edges())
        seen += len(ls)
        assert not held_keys & set(pair_keys(gid[ls], gid[ld], n, undirected=True).tolist())
    assert seen >= res.split.train_graph.num_edges()
    assert sorted(p.name for p in tmp_path.glob("sym-link*")) == ["sym-link.json",
                                                                  "sym-link.safetensors"]


def test_stale_or_damaged_split_is_refused(tmp_path):
    g = symmetric_graph(80, 300)
    res = partition_for_link(g, "sym", 2, tmp_path, num_negatives=3, part_method="random")
    tensors = link_split_path(res.config_path).with_suffix(".safetensors")
    raw = tensors.read_bytes()
    tensors.write_bytes(raw[:-8] + b"\xff" * 8)
    with pytest.raises(gs.FormatError, match="SHA-256 differs"):
        load_link_split(res.config_path)
    tensors.write_bytes(raw)
    load_link_split(res.config_path)
    gs.partition_graph(res.split.train_graph, "sym", 2, tmp_path, part_method="random", seed=5)
    with pytest.raises(gs.FormatError, match="partitioned again"):
        load_link_split(res.config_path)
    with pytest.raises(gs.ValidationError, match="permutation"):
        save_link_split(res.split.held_out, res.config_path, orig_nids=np.zeros(80))
    with pytest.raises(gs.errors.PartitionNotFoundError, match="no link split"):
        load_link_split(tmp_path / "other.json")
