"""The out-edges a DGL export adds (issue 46 item 3): every part holds every out-edge of
its inner nodes, as DGL 2.1's own partitions do, checked against the whole graph without
DGL (tests/partition/test_dgl_interop.py runs DGL's DistGraph on the export)."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs
from graphshard.partition.dgl_layout import to_dgl_part
from graphshard.partition.dgl_out_edges import concat_cross_edges, cross_edges, with_out_edges
from graphshard.partition.files import load_partition_data


def _graph(hetero: bool) -> gs.Graph:
    rng = np.random.default_rng(7)
    if not hetero:
        return gs.graph((rng.integers(0, 300, 2000), rng.integers(0, 300, 2000)),
                        num_nodes=300)
    return gs.heterograph({("u", "buys", "i"): (rng.integers(0, 80, 500),
                                                rng.integers(0, 60, 500)),
                           ("i", "by", "u"): (rng.integers(0, 60, 400),
                                              rng.integers(0, 80, 400)),
                           ("u", "knows", "u"): (rng.integers(0, 80, 300),
                                                 rng.integers(0, 80, 300))},
                          num_nodes_dict={"u": 80, "i": 60})


@pytest.mark.parametrize(("hetero", "num_hops"), [(False, 1), (False, 2), (True, 1)])
def test_every_part_holds_all_out_edges_of_its_inner_nodes(tmp_path, hetero, num_hops):
    g = _graph(hetero)
    gs.partition_graph(g, "g", 3, tmp_path, part_method="random", num_hops=num_hops)
    config = tmp_path / "g.json"
    parts = [to_dgl_part(load_partition_data(config, p), typed=True, features=False)
             for p in range(3)]
    cross = concat_cross_edges([cross_edges(part, p) for p, part in enumerate(parts)])
    # the whole graph in shuffled IDs: every part's inner edges, once each
    whole: dict[int, tuple[int, int]] = {}
    for part in parts:
        inner = part.edata["inner_edge"].astype(bool)
        ids = part.ndata["_ID"]
        for e, s, d in zip(part.edata["_ID"][inner], ids[part.src[inner]],
                           ids[part.dst[inner]], strict=True):
            whole[int(e)] = (int(s), int(d))
    assert len(whole) == g.num_edges()
    eids = np.array(sorted(whole))
    ends = np.array([whole[int(e)] for e in eids])
    added_somewhere = False
    for p, part in enumerate(parts):
        out = with_out_edges(part, p, cross)
        ids, owner = out.ndata["_ID"], out.ndata["part_id"]
        assert len(np.unique(ids)) == len(ids), "a node appears once"
        assert len(np.unique(out.edata["_ID"])) == len(out.src), "an edge appears once"
        # what the part held is unchanged, in place
        n, m = len(part.ndata["_ID"]), len(part.src)
        assert (ids[:n] == part.ndata["_ID"]).all() and (out.src[:m] == part.src).all()
        assert (out.edata["inner_edge"][m:] == 0).all() and (out.ndata["inner_node"][n:] == 0).all()
        added_somewhere |= len(out.src) > m
        # every local edge is the global edge of its ID
        got = np.stack([ids[out.src], ids[out.dst]], axis=1)
        assert (got == ends[np.searchsorted(eids, out.edata["_ID"])]).all()
        # the inner nodes' out-edges and in-edges are all here
        inner_ids = ids[out.ndata["inner_node"].astype(bool)]
        want_out = set(eids[np.isin(ends[:, 0], inner_ids)].tolist())
        want_in = set(eids[np.isin(ends[:, 1], inner_ids)].tolist())
        have = set(out.edata["_ID"].tolist())
        assert want_out <= have and want_in <= have
        # halo nodes added for out-edges carry their owner's part and type
        book = gs.partition.load_partition_book(config)
        assert (owner == book.nid2partid(ids)).all()
        if hetero:
            assert (out.ndata["_TYPE"] == book.map_to_per_ntype(ids)[0]).all()
            assert (out.edata["_TYPE"] == book.map_to_per_etype(out.edata["_ID"])[0]).all()
    assert added_somewhere, "random parts of a random graph have out-edges to add"
