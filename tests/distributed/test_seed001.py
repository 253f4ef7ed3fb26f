"""Seed 001 (DGL guide 7.5, heterogeneous graph internals): each of its code blocks, run as
written against graphshard with ``dgl.`` replaced by our module names, on HGB ACM.

The replacements: ``dgl.distributed.sample_neighbors`` -> ``gs.distributed.sample_neighbors``,
``dgl.to_block`` -> ``gs.sampling.to_block``, ``dgl.NID``/``EID``/``NTYPE``/``ETYPE`` ->
``gs.sampling.NID``/..., ``dgl.distributed.DistGraph``/``DistTensor`` -> ``gs.distributed.*``; the
graph names ('graph_name', 'T0', 'paper') become ACM's, and ``seeds``/``fanout`` (left free in
the seed) are chosen here.  Each block is then checked against the unpartitioned graph.
"""

from __future__ import annotations

import json
from bisect import bisect_left

import numpy as np
import pytest

import graphshard as gs


# ----- block 1: the seed's IDConverter, transcribed as the reference ------------------------
class SeedIDConverter:
    """The seed's class as written (scalar methods over metadata.json)."""

    def __init__(self, meta):
        # meta is the JSON object loaded from metadata.json
        self.node_type = meta['node_type']
        self.edge_type = meta['edge_type']
        self.ntype2id_map = {ntype: i for i, ntype in enumerate(self.node_type)}
        self.etype2id_map = {etype: i for i, etype in enumerate(self.edge_type)}
        self.num_nodes = [sum(ns) for ns in meta['num_nodes_per_chunk']]
        self.num_edges = [sum(ns) for ns in meta['num_edges_per_chunk']]
        self.nid_offset = np.cumsum([0] + self.num_nodes)  # noqa: RUF005 (as written)
        self.eid_offset = np.cumsum([0] + self.num_edges)  # noqa: RUF005

    def ntype2id(self, ntype):
        return self.ntype2id_map[ntype]

    def etype2id(self, etype):
        return self.etype2id_map[etype]

    def id2ntype(self, id):
        return self.node_type[id]

    def id2etype(self, id):
        return self.edge_type[id]

    def nid_het2hom(self, ntype, id):
        tid = self.ntype2id(ntype)
        if id < 0 or id >= self.num_nodes[tid]:
            raise ValueError(f'Invalid node ID of type {ntype}. Must be within range '
                             f'[0, {self.num_nodes[tid]})')
        return self.nid_offset[tid] + id

    def nid_hom2het(self, id):
        if id < 0 or id >= self.nid_offset[-1]:
            raise ValueError('Invalid homogeneous node ID. Must be within range '
                             '[0, self.nid_offset[-1])')
        tid = bisect_left(self.nid_offset, id) - 1
        # Return a pair (node_type, type_wise_id)
        return self.id2ntype(tid), id - self.nid_offset[tid]

    def eid_het2hom(self, etype, id):
        tid = self.etype2id(etype)
        if id < 0 or id >= self.num_edges[tid]:
            raise ValueError(f'Invalid edge ID of type {etype}. Must be within range '
                             f'[0, {self.num_edges[tid]})')
        return self.eid_offset[tid] + id

    def eid_hom2het(self, id):
        if id < 0 or id >= self.eid_offset[-1]:
            raise ValueError('Invalid homogeneous edge ID. Must be within range '
                             '[0, self.eid_offset[-1])')
        tid = bisect_left(self.eid_offset, id) - 1
        # Return a pair (edge_type, type_wise_id)
        return self.id2etype(tid), id - self.eid_offset[tid]


def test_block1_id_converter_on_chunked_acm(acm, tmp_path):
    """ACM written in the chunked format; IDConverter(metadata.json) against the seed's
    class and against Graph.to_homogeneous (the numbering spelled out node by node)."""
    gs.io.write_chunked(acm, tmp_path / "acm", 3, graph_name="acm")
    meta = json.loads((tmp_path / "acm" / "metadata.json").read_text())
    conv, ref = gs.IDConverter(meta), SeedIDConverter(meta)
    homo = acm.to_homogeneous()
    truth_t, truth_id = homo.ndata["_TYPE"], homo.ndata["_ID"]
    rng = np.random.default_rng(0)
    picks = rng.integers(0, acm.num_nodes(), 300)
    inside = picks[~np.isin(picks, ref.nid_offset)]  # the seed is off at type starts
    for h in inside.tolist():
        name, i = conv.nid_hom2het(h)
        assert (name, i) == ref.nid_hom2het(h) == (acm.ntypes[truth_t[h]], truth_id[h])
        assert conv.nid_het2hom(name, i) == ref.nid_het2hom(name, i) == h
    names, ids = conv.nid_hom2het(picks)  # vectorised: all at once, starts included
    assert names.tolist() == [acm.ntypes[t] for t in truth_t[picks]]
    assert ids.tolist() == truth_id[picks].tolist()
    # at a type's first ID the seed's bisect_left picks the previous type; we do not
    start = int(ref.nid_offset[1])
    assert conv.nid_hom2het(start) == (acm.ntypes[1], 0) != ref.nid_hom2het(start)
    assert conv.nid_hom2het(0) == (acm.ntypes[0], 0)
    etypes = [":".join(et) for et in acm.canonical_etypes]
    for e, et in enumerate(etypes):
        assert conv.etype2id(et) == ref.etype2id(et) == e and conv.id2etype(e) == et
        n = acm.num_edges(et)
        last = conv.eid_het2hom(et, n - 1)
        assert last == ref.eid_het2hom(et, n - 1) == acm.edge_type_offsets()[e + 1] - 1
        assert conv.eid_hom2het(last) == ref.eid_hom2het(last) == (et, n - 1)
        with pytest.raises(ValueError, match=rf"ID {n} at position 0 is out of range"):
            conv.eid_het2hom(et, n)
        with pytest.raises(ValueError, match="Invalid edge ID"):
            ref.eid_het2hom(et, n)
    assert [conv.id2ntype(i) for i in range(4)] == [ref.id2ntype(i) for i in range(4)]
    assert [conv.ntype2id(t) for t in acm.ntypes] == [0, 1, 2, 3]


# ----- blocks 2-4: a heterogeneous DistGraph ---------------------------------------------
@pytest.fixture(scope="module")
def acm_parts(acm, tmp_path_factory):
    out = tmp_path_factory.mktemp("acm_parts")
    gs.partition_graph(acm, "acm", 2, str(out), part_method="random")
    cfg = str(out / "acm.json")
    return cfg, gs.distributed.assemble_graph(cfg)


@pytest.fixture(scope="module")
def acm_dist(ray_cluster, acm_parts):
    """A DistGraph over ACM's two partitions, every request through the servers."""
    dg = gs.distributed.DistGraph(acm_parts[0], colocate=())
    yield dg
    dg.close()


def test_block2_sample_neighbors_to_block_flow(acm_dist, acm_parts):
    """The seed's sampling block, as written, then checked edge by edge against the
    unpartitioned (shuffled) graph and against local sampling for the same seed."""
    g, whole = acm_dist, acm_parts[1]
    seeds, fanout = np.array([0, 17, 2024, 3000, 5]), 4
    # --- seed block ---
    gpb = g.get_partition_book()
    # We need to map the type-wise node IDs to homogeneous IDs.
    cur = gpb.map_to_homo_nid(seeds, 'paper')
    # For a heterogeneous input graph, the returned frontier is stored in
    # the homogeneous graph format.
    frontier = gs.distributed.sample_neighbors(g, cur, fanout, replace=False)
    block = gs.sampling.to_block(frontier, cur)
    cur = block.srcdata[gs.sampling.NID]
    block.edata[gs.sampling.EID] = frontier.edata[gs.sampling.EID]
    # Map the homogeneous edge Ids to their edge type.
    block.edata[gs.sampling.ETYPE], block.edata[gs.sampling.EID] = gpb.map_to_per_etype(
        block.edata[gs.sampling.EID])
    # Map the homogeneous node Ids to their node types and per-type Ids.
    block.srcdata[gs.sampling.NTYPE], block.srcdata[gs.sampling.NID] = \
        gpb.map_to_per_ntype(block.srcdata[gs.sampling.NID])
    block.dstdata[gs.sampling.NTYPE], block.dstdata[gs.sampling.NID] = \
        gpb.map_to_per_ntype(block.dstdata[gs.sampling.NID])
    # --- checks ---
    NID, EID, TYPE = gs.sampling.NID, gs.sampling.EID, gs.sampling.NTYPE
    assert [g.ntypes[t] for t in block.dstdata[TYPE]] == ["paper"] * len(seeds)
    assert block.dstdata[NID].tolist() == seeds.tolist()
    assert len(cur) == block.num_src_nodes() > len(seeds)
    src_local, dst_local = block.edge_index()
    e_types, e_ids = block.edata[TYPE], block.edata[EID]
    assert len(e_ids) == block.num_edges() > 0
    for t in np.unique(e_types):
        et = g.canonical_etypes[t]
        sel = e_types == t
        s, d = whole.find_edges(e_ids[sel], et)  # each edge's real endpoints
        assert [g.ntypes[x] for x in block.srcdata[TYPE][src_local[sel]]] == [et[0]] * len(s)
        assert np.array_equal(block.srcdata[NID][src_local[sel]], s)
        assert np.array_equal(block.dstdata[NID][dst_local[sel]], d)
        deg = gs.sampling.degrees(whole, seeds, et)  # without replacement: min(fanout, deg)
        assert np.bincount(dst_local[sel], minlength=len(seeds)).tolist() == np.minimum(
            deg, fanout).tolist()
    # the frontier's draws are the local engine's for a seed
    front = gs.distributed.sample_neighbors(g, gpb.map_to_homo_nid(seeds, "paper"), fanout, seed=9)
    local = gs.sampling.sample_neighbors(whole, {"paper": seeds}, fanout, seed=9)
    types, per_type = gpb.map_to_per_etype(front.edata[EID])
    for t, et in enumerate(g.canonical_etypes):
        if et in local.eids:
            assert per_type[types == t].tolist() == local.eids[et].tolist()
    by_type = gs.distributed.sample_neighbors(g, {"paper": seeds}, fanout, seed=9)
    assert by_type.edges["author2paper"].data[EID].tolist() == local.eids[
        ("author", "author2paper", "paper")].tolist()
    assert by_type.num_edges("paper2author") == 0  # no author seeds: present but empty
    # homogeneous edge IDs to exclude: the rest of the in-edges, and nothing excluded
    homo_seeds = gpb.map_to_homo_nid(seeds, "paper")
    rest = gs.distributed.sample_neighbors(g, homo_seeds, -1, exclude_edges=front.edata[EID])
    assert not np.isin(rest.edata[EID], front.edata[EID]).any()
    every = gs.distributed.sample_neighbors(g, homo_seeds, -1)
    assert sorted(np.concatenate([rest.edata[EID], front.edata[EID]]).tolist()) == sorted(
        every.edata[EID].tolist())
    with pytest.raises(gs.ValidationError, match="out of range"):
        gs.distributed.sample_neighbors(g, [g.num_nodes()], fanout)


def test_block3_and_4_features_and_dist_tensor(acm_dist, acm_parts):
    """Feature access by type-wise IDs, and a DistTensor for one node type created with the
    seed's torch dtype and the type's partition policy; then node2vec on the servers'
    graph equals node2vec on the local one (PGL's walks on a DistGraph)."""
    th = pytest.importorskip("torch")
    whole = acm_parts[1]
    # --- seed block 3 (DistGraph('graph_name', part_config='data/graph_name.json')) ---
    g = gs.distributed.DistGraph('acm', part_config=acm_parts[0])
    feat = g.nodes['paper'].data['feat'][[0, 10, 20]]
    assert np.array_equal(feat, whole.nodes["paper"].data["feat"][[0, 10, 20]])
    assert g.ntypes[g.get_ntype_id("term")] == "term"
    with pytest.raises(gs.ValidationError, match="the graph is 'acm', not 'graph_name'"):
        gs.distributed.DistGraph('graph_name', part_config=acm_parts[0])
    # --- seed block 4 ---
    g.nodes['paper'].data['feat1'] = gs.distributed.DistTensor(
        (g.num_nodes('paper'), 1), th.float32, 'feat1',
        part_policy=g.get_node_partition_policy('paper'))
    t = g.nodes['paper'].data['feat1']
    assert (t.shape, t.dtype, t.part_policy) == ((3025, 1), np.float32, "node:paper")
    t[[3000, 1]] = th.tensor([[2.5], [-1.0]], requires_grad=True)
    # created with a torch dtype: reads are torch tensors, as DGL's (ids may be torch too)
    rows = t[th.tensor([1, 3000, 2])]
    assert isinstance(rows, th.Tensor) and rows.dtype == th.float32
    assert rows.tolist() == [[-1.0], [2.5], [0.0]]
    assert t.read([3000]).tolist() == [[2.5]] and isinstance(t.read([3000]), np.ndarray)
    # an edge type's policy; init_func gets the torch dtype it was given, as in DGL
    pol = acm_dist.get_edge_partition_policy("paper2author")
    assert (str(pol), pol.get_size()) == ("edge:paper:paper2author:author", 9949)
    assert pol.to_partid([0, 9948]).tolist() == acm_dist.get_partition_book().eid2partid(
        [0, 9948], "paper2author").tolist()
    e = gs.distributed.DistTensor((9949, 2), th.int64, part_policy=pol,
                           init_func=lambda shape, dtype: th.full(shape, 7, dtype=dtype))
    assert e.dtype == np.int64 and e[[0, 9948]].dtype == th.int64
    assert e[[0, 9948]].tolist() == [[7, 7], [7, 7]]
    # a NumPy dtype keeps NumPy rows
    n = gs.distributed.DistTensor((9949,), np.int32, part_policy=pol)
    assert isinstance(n[[5]], np.ndarray) and n[[5]].dtype == np.int32
    n.delete()
    with pytest.raises(gs.ValidationError, match="no NumPy equivalent"):
        gs.distributed.DistTensor((9949, 2), th.bfloat16, part_policy=pol)
    e.delete()
    t.delete()
    g.close()
    # node2vec walks, step-wise over the servers: the local traces for the same seed
    n2v = {"p": 0.5, "q": 2.0, "walk_times": 2, "etype": "paper2cite2paper", "seed": 3}
    starts = [0, 7, 100, 2500, 3024]
    got = gs.sampling.node2vec_walk(acm_dist, starts, 6, **n2v).traces
    assert np.array_equal(got, gs.sampling.node2vec_walk(whole, starts, 6, **n2v).traces)
    assert (got[:, 1:] >= 0).sum() > 0
