"""DGL round trip through DGL itself: our partitions load in ``dgl.distributed`` and give
our inner nodes, edges and features; DGL's partitions imported by us give DGL's.

Skipped where ``dgl`` does not import (our CI).  Run with a Python that has DGL 2.1, e.g.
``PYTHONPATH=src /tmp/venv-dgl/bin/python -m pytest -q -p no:xdist
tests/partition/test_dgl_interop.py`` (../shared/bench/README.md builds that venv).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import graphshard as gs
from dgl_machines import ROLES, own_shm_works, run_machines, write_ip_config
from graphshard.partition import load_partition_data, read_config
from graphshard.partition.dgl_io import export_dgl, import_dgl
from graphshard.partition.dgl_layout import to_dgl_part
from graphshard.partition.dgl_out_edges import concat_cross_edges, cross_edges, with_out_edges

dgl = pytest.importorskip("dgl")
torch = pytest.importorskip("torch")


def _np(t) -> np.ndarray:
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


def _view(ids, inner, src, dst, eids, einner, types=None):
    """What must agree per part: the inner nodes (sorted global IDs, with their types), the
    inner edges and all local edges as (global src, global dst, edge ID)."""
    ids, inner, eids, einner = (np.asarray(a) for a in (ids, inner, eids, einner))
    inner, einner = inner.astype(bool), einner.astype(bool)
    triples = list(zip(ids[src].tolist(), ids[dst].tolist(), eids.tolist(), strict=True))
    view = {"inner_nodes": sorted(ids[inner].tolist()),
            "inner_edges": sorted(t for t, i in zip(triples, einner, strict=True) if i),
            "all_edges": sorted(triples), "halo_nodes": sorted(ids[~inner].tolist())}
    if types is not None:
        view["inner_types"] = np.asarray(types)[inner][np.argsort(ids[inner])].tolist()
    return view


def _ours_view(cfg, p, typed=True):
    part = load_partition_data(cfg, p)
    nd, ed = part.graph.ndata, part.graph.edata
    src, dst = part.graph.edges()
    return part, _view(nd["_ID"], nd["inner_node"], src, dst, ed["_ID"], ed["inner_edge"],
                       nd["_TYPE"] if typed else None)


def _export_view(cfg, p, typed=True):
    """What part ``p`` of our export must hold: ours plus the out-edges of its inner nodes
    (DGL's own partitions hold them; tests/partition/test_dgl_out_edges.py checks them
    against the whole graph)."""
    parts = [to_dgl_part(load_partition_data(cfg, q), typed=True, features=False)
             for q in range(cfg.num_parts)]
    cross = concat_cross_edges([cross_edges(part, q) for q, part in enumerate(parts)])
    part = with_out_edges(parts[p], p, cross)
    return part, _view(part.ndata["_ID"], part.ndata["inner_node"], part.src, part.dst,
                       part.edata["_ID"], part.edata["inner_edge"],
                       part.ndata["_TYPE"] if typed else None)


def _dgl_view(local, typed=True):
    src, dst = local.edges(order="eid")
    return _view(_np(local.ndata["_ID"]), _np(local.ndata["inner_node"]), _np(src), _np(dst),
                 _np(local.edata["_ID"]), _np(local.edata["inner_edge"]),
                 _np(local.ndata["_TYPE"]) if typed else None)


def _same_feats(ours: dict, theirs: dict) -> None:
    assert sorted(ours) == sorted(theirs)
    for key, col in ours.items():
        np.testing.assert_array_equal(np.asarray(col), _np(theirs[key]), err_msg=key)


@pytest.mark.parametrize(("graph", "num_parts", "hops"), [("cora", 3, 1), ("cora", 2, 2),
                                                          ("acm", 3, 1)])
def test_our_partitions_load_in_dgl(request, tmp_path, graph, num_parts, hops):
    g = request.getfixturevalue(graph)
    gs.partition_graph(g, "g", num_parts, tmp_path / "ours", num_hops=hops,
                       part_method="metis")
    cfg = read_config(tmp_path / "ours" / "g.json")
    path = export_dgl(cfg, tmp_path / "dgl", graphbolt=True)
    typed = len(g.ntypes) > 1
    for p in range(num_parts):
        local, nfeat, efeat, book, name, ntypes, etypes = dgl.distributed.load_partition(
            str(path), p)
        ours, _ = _ours_view(cfg, p, typed)
        expected, view = _export_view(cfg, p, typed)
        assert name == "g" and ntypes == cfg.ntypes
        assert [":".join(e) for e in etypes] == cfg.etypes
        assert _dgl_view(local, typed) == view
        assert _np(local.ndata["part_id"]).tolist() == expected.ndata["part_id"].tolist()
        _same_feats(ours.node_feats, nfeat)
        _same_feats(ours.edge_feats, efeat)
        # DGL's partition book agrees with ours on owners of every node
        ids = torch.arange(sum(cfg.type_sizes("node").values()))
        np.testing.assert_array_equal(_np(book.nid2partid(ids)),
                                      cfg.book().nid2partid(_np(ids)))
        gb = dgl.distributed.load_partition(str(path), p, use_graphbolt=True)[0]
        assert sorted(_np(gb.node_attributes["_ID"]).tolist()) == sorted(
            expected.ndata["_ID"].tolist())
        assert gb.total_num_nodes == len(expected.ndata["_ID"])


def test_dist_graph_loads_an_export(tmp_path, acm, monkeypatch):
    """DGL's DistGraph (standalone mode: one part) reads the graph and the features."""
    monkeypatch.setenv("DGL_DIST_MODE", "standalone")
    gs.partition_graph(acm, "acm", 1, tmp_path / "ours")
    cfg = read_config(tmp_path / "ours" / "acm.json")
    path = export_dgl(cfg, tmp_path / "dgl")
    dgl.distributed.initialize(None)
    try:
        dg = dgl.distributed.DistGraph("acm", part_config=str(path))
        assert dg.ntypes == sorted(acm.ntypes) or set(dg.ntypes) == set(acm.ntypes)
        for t in acm.ntypes:
            assert dg.num_nodes(t) == acm.num_nodes(t)
        for et in acm.canonical_etypes:
            assert dg.num_edges(et) == acm.num_edges(et)
        feats = load_partition_data(cfg, 0).node_feats
        n = acm.num_nodes("paper")
        got = _np(dg.nodes["paper"].data["feat"][torch.arange(n)])
        np.testing.assert_array_equal(got, feats["paper/feat"])
        seeds = torch.arange(5)
        frontier = dgl.distributed.sample_neighbors(dg, {"paper": seeds}, -1)
        cites = ("paper", "paper-cite-paper", "paper") if ("paper", "paper-cite-paper",
                                                            "paper") in acm.canonical_etypes \
            else next(et for et in acm.canonical_etypes if et[2] == "paper")
        got_in = int(frontier.num_edges(cites))
        book = cfg.book()
        local = load_partition_data(cfg, 0).graph
        k = cfg.etypes.index(":".join(cites))
        dst_types = np.asarray(local.edata["_TYPE"])
        gdst = np.asarray(local.ndata["_ID"])[local.edges()[1]]
        first = book.map_to_homo_nid(np.arange(5), "paper")
        assert got_in == int(np.count_nonzero((dst_types == k) & np.isin(gdst, first)))
    finally:
        dgl.distributed.exit_client()


def _run_dgl_machines(tmp_path: Path, part_config: Path, num_parts: int, request: dict,
                      *, timeout: float = 300) -> dict[str, np.ndarray]:
    """DGL's distributed stack on loopback (tests/dgl_machines.py): machine ``m`` runs the
    DistGraphServer of part ``m``; machine 0 also runs the one client, which answers
    ``request``."""
    ip_config = write_ip_config(tmp_path, num_parts)
    (tmp_path / "request.json").write_text(json.dumps(request))
    out = tmp_path / "answers.npz"
    client = [sys.executable, ROLES, "client", str(ip_config), str(tmp_path / "request.json"),
              str(out)]
    rc, logs = run_machines(ip_config, part_config, client, timeout=timeout)
    assert rc == 0 and out.exists(), f"DGL run failed (client rc {rc}): {logs}"
    with np.load(out, allow_pickle=False) as z:
        return dict(z)


@pytest.mark.parametrize("num_parts", [2, 4])
def test_dgl_dist_graph_machines(tmp_path, acm, num_parts):
    """DGL's own distributed stack on our ACM export: a DistGraphServer per part (each
    on a machine of its own), a DistGraph client reading features by original IDs (through
    our ID maps), degrees, edges, and sampling neighbours; every answer checked against
    the original graph."""
    if not own_shm_works():
        pytest.skip("needs `unshare --user --mount` to give each DGL server its own "
                    "/dev/shm (DGL's servers of one graph on one host share its segments)")
    orig_nids, orig_eids = gs.partition_graph(acm, "acm", num_parts, tmp_path / "ours",
                                              part_method="metis", return_mapping=True)
    cfg = read_config(tmp_path / "ours" / "acm.json")
    path = export_dgl(cfg, tmp_path / "dgl")

    def new_of(orig_of_new, orig):
        inv = np.empty_like(orig_of_new)
        inv[orig_of_new] = np.arange(len(orig_of_new))
        return inv[orig]

    book = cfg.book()
    paper_orig = np.arange(0, acm.num_nodes("paper"), 23)
    paper_new = new_of(orig_nids["paper"], paper_orig)
    assert set(book.nid2partid(book.map_to_homo_nid(paper_new, "paper"))) == set(range(num_parts))
    etype = next(e for e in acm.canonical_etypes if e[0] == e[2] == "paper")
    eid_orig = np.arange(0, acm.num_edges(etype), 17)
    eid_new = new_of(orig_eids[etype], eid_orig)
    seeds_orig = paper_orig[:40]
    got = _run_dgl_machines(tmp_path, path, num_parts, {
        "graph_name": "acm", "ntype": "paper", "feat": "feat", "nids": paper_new.tolist(),
        "etype": ":".join(etype), "eids": eid_new.tolist(),
        "seeds": new_of(orig_nids["paper"], seeds_orig).tolist(), "fanout": 3,
        "ntypes": acm.ntypes, "etypes": [":".join(e) for e in acm.canonical_etypes]})

    assert got["num_nodes"].tolist() == [acm.num_nodes(t) for t in acm.ntypes]
    assert got["num_edges"].tolist() == [acm.num_edges(e) for e in acm.canonical_etypes]
    # features by original ID, read half through machine 0's shared memory, half by RPC
    np.testing.assert_array_equal(got["feat"], np.asarray(acm.nodes["paper"].data["feat"])[
        paper_orig])
    np.testing.assert_array_equal(got["homo"], book.map_to_homo_nid(paper_new, "paper"))
    in_deg = sum(acm.in_degrees(e) for e in acm.canonical_etypes if e[2] == "paper")
    np.testing.assert_array_equal(got["in_degrees"], np.asarray(in_deg)[paper_orig])
    # out-edges (issue 46 item 3): exact, as on DGL's own partitions
    out_deg = sum(acm.out_degrees(e) for e in acm.canonical_etypes if e[0] == "paper")
    np.testing.assert_array_equal(got["out_degrees"], np.asarray(out_deg)[paper_orig])
    seeds_new_all = new_of(orig_nids["paper"], seeds_orig)
    for et in acm.canonical_etypes:
        if et[0] != "paper":
            continue
        key = ":".join(et)
        e_new = got.get(f"out_eid/{key}", np.zeros(0, np.int64))
        src_all, _ = acm.edges(et)
        want = np.flatnonzero(np.isin(np.asarray(src_all), seeds_orig))
        assert sorted(orig_eids[et][e_new].tolist()) == sorted(want.tolist()), key
        assert np.isin(got.get(f"out_src/{key}", np.zeros(0, np.int64)), seeds_new_all).all()
    # find_edges answers in new per-type IDs: back to original, the original endpoints
    src, dst = acm.find_edges(eid_orig, etype)
    np.testing.assert_array_equal(orig_nids[etype[0]][got["find_src"]], src)
    np.testing.assert_array_equal(orig_nids[etype[2]][got["find_dst"]], dst)
    # every sampled edge exists with these endpoints, none twice; DGL samples a
    # heterogeneous graph's fanout over all in-edge types together: min(3, in-degree)
    seeds_new = new_of(orig_nids["paper"], seeds_orig)
    order = np.argsort(seeds_new)
    per_seed = np.zeros(len(seeds_new), np.int64)
    none = np.zeros(0, np.int64)
    for et in acm.canonical_etypes:  # DGL's frontier leaves out the types with no edges
        key = ":".join(et)
        s_new, d_new, e_new = (got.get(f"sample_{k}/{key}", none) for k in ("src", "dst", "eid"))
        if et[2] != "paper":  # no seeds of this destination type
            assert len(e_new) == 0, key
            continue
        e = orig_eids[et][e_new]
        es, ed = acm.find_edges(e, et)
        np.testing.assert_array_equal(orig_nids[et[0]][s_new], es, err_msg=key)
        np.testing.assert_array_equal(orig_nids[et[2]][d_new], ed, err_msg=key)
        assert len(np.unique(e)) == len(e), key
        per_seed += np.bincount(np.searchsorted(seeds_new[order], d_new),
                                minlength=len(seeds_new))
    np.testing.assert_array_equal(per_seed, np.minimum(np.asarray(in_deg)[seeds_orig], 3)[order])


def _dgl_partitions(g, out, num_parts, hops):
    dg = gs.io.to_dgl(g)
    dgl.distributed.partition_graph(dg, "d", num_parts, str(out), num_hops=hops,
                                    part_method="metis")
    return out / "d.json"


@pytest.mark.parametrize(("graph", "num_parts", "hops"), [("cora", 3, 1), ("cora", 2, 2),
                                                          ("acm", 3, 1)])
def test_dgl_partitions_imported(request, tmp_path, graph, num_parts, hops):
    g = request.getfixturevalue(graph)
    dgl_json = _dgl_partitions(g, tmp_path / "dgl", num_parts, hops)
    cfg = import_dgl(dgl_json, tmp_path / "ours")
    typed = len(g.ntypes) > 1
    assert cfg.num_parts == num_parts and cfg.halo_hops == hops
    for p in range(num_parts):
        local, nfeat, efeat, _, _, ntypes, _ = dgl.distributed.load_partition(str(dgl_json), p)
        ours, view = _ours_view(read_config(cfg.path), p, typed)
        assert cfg.ntypes == ntypes
        assert view == _dgl_view(local, typed)
        _same_feats(ours.node_feats, nfeat)
        _same_feats(ours.edge_feats, efeat)
    # and back: our export of the import loads in DGL as DGL's own did
    back = export_dgl(cfg, tmp_path / "again")
    for p in range(num_parts):
        a = dgl.distributed.load_partition(str(dgl_json), p)
        b = dgl.distributed.load_partition(str(back), p)
        assert _dgl_view(a[0], typed) == _dgl_view(b[0], typed)
        _same_feats({k: _np(v) for k, v in a[1].items()}, b[1])


def test_import_refuses_a_broken_part_file(tmp_path, cora):
    dgl_json = _dgl_partitions(cora, tmp_path / "dgl", 2, 1)
    (tmp_path / "dgl" / "part1" / "graph.dgl").write_bytes(b"not a graph")
    with pytest.raises(gs.errors.FormatError, match="DGL could not read part 1"):
        import_dgl(dgl_json, tmp_path / "ours")
    assert not (tmp_path / "ours" / "d.json").exists()
    assert not os.path.exists(tmp_path / "ours" / "part0")


def test_cli_export_and_import(tmp_path, cora):
    """`graphshard export --to dgl` and `graphshard import --from dgl` call the same code."""
    from graphshard.cli import main

    gs.partition_graph(cora, "cora", 2, tmp_path / "ours", part_method="metis")
    assert main(["export", str(tmp_path / "ours" / "cora.json"), "--to", "dgl", "--out",
                 str(tmp_path / "dgl")]) == 0
    local = dgl.distributed.load_partition(str(tmp_path / "dgl" / "cora.json"), 1)[0]
    ours = read_config(tmp_path / "ours" / "cora.json")
    assert _dgl_view(local, False) == _export_view(ours, 1, False)[1]
    assert main(["import", str(tmp_path / "dgl" / "cora.json"), "--from", "dgl", "--out",
                 str(tmp_path / "back")]) == 0
    for p in range(2):  # the import keeps what DGL's parts hold, out-edges included
        assert _ours_view(read_config(tmp_path / "back" / "cora.json"), p)[1] == \
            _export_view(ours, p)[1]
    # an export refuses a folder it did not write
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    assert main(["export", str(tmp_path / "ours" / "cora.json"), "--out",
                 str(tmp_path / "other")]) == 1
    assert sorted(p.name for p in (tmp_path / "other").iterdir()) == ["notes.txt"]


def test_original_ids_travel_as_dgl_pipeline_files(tmp_path, acm):
    """save_orig_ids: export writes DGL's pipeline files orig_nids.dgl / orig_eids.dgl
    ({type: per-type original IDs}); import reads them back into orig_id and orig_ids."""
    from graphshard.storage.tensorfile import load_tensors

    gs.partition_graph(acm, "acm", 2, tmp_path / "ours", part_method="metis",
                       save_orig_ids=True)
    cfg = read_config(tmp_path / "ours" / "acm.json")
    path = export_dgl(cfg, tmp_path / "dgl")
    nids = dgl.data.utils.load_tensors(str(tmp_path / "dgl" / "part1" / "orig_nids.dgl"))
    ours_orig, _ = load_tensors(tmp_path / "ours" / cfg.parts[1]["orig_ids"])
    assert sorted(nids) == sorted(acm.ntypes)
    for t in acm.ntypes:
        np.testing.assert_array_equal(_np(nids[t]), ours_orig[f"node/{t}"])
    back = import_dgl(path, tmp_path / "back")
    for p in range(2):  # by global ID: the import also holds DGL's out-edges
        a = load_partition_data(cfg, p).graph
        b = load_partition_data(back, p).graph
        for data_a, data_b in ((a.ndata, b.ndata), (a.edata, b.edata)):
            ids_a, ids_b = np.asarray(data_a["_ID"]), np.asarray(data_b["_ID"])
            at = np.argsort(ids_b)
            pos = at[np.searchsorted(ids_b[at], ids_a)]
            assert (ids_b[pos] == ids_a).all()
            np.testing.assert_array_equal(data_a["orig_id"], np.asarray(data_b["orig_id"])[pos])
        ta, _ = load_tensors(tmp_path / "ours" / cfg.parts[p]["orig_ids"])
        tb, _ = load_tensors(tmp_path / "back" / back.parts[p]["orig_ids"])
        assert sorted(ta) == sorted(tb)
        for k in ta:
            np.testing.assert_array_equal(ta[k], tb[k])
