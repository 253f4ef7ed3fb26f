"""PyG's partition folders, both ways, against torch_geometric itself.

Import: folders written by PyG's own ``torch_geometric.distributed.Partitioner`` (Cora, and a
small heterogeneous shop graph) become our partitions holding exactly the graph PyG
partitioned: PyG's owner for every node, every edge with its destination's part, features
by original ID.  Export: PyG's ``LocalGraphStore.from_partition`` and
``LocalFeatureStore.from_partition`` load our export and give each part's inner edges and
features as ours; importing the export gives our partition back.  Unsafe or malformed files
are refused with our error naming the file, and a pickle that would run code is not run.

PyG's folders come from the ``pyg_partitioner`` fixture (tests/partition/conftest.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import graphshard as gs
from graphshard.cli import main
from graphshard.errors import FormatError, PartitionNotFoundError, ValidationError
from graphshard.partition import load_partition_data, read_config
from graphshard.partition.pyg_io import export_pyg, import_pyg
from graphshard.storage.tensorfile import load_tensors
from pyg_parts import shop_hetero
from shop import shop_graph

torch = pytest.importorskip("torch")
pyg = pytest.importorskip("torch_geometric", reason="needs torch_geometric (pip install "
                          "'graphshard[pyg]')")
from torch_geometric.data import Data  # noqa: E402
from torch_geometric.distributed import (  # noqa: E402
    LocalFeatureStore,
    LocalGraphStore,
)


def _t(a) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


def _cora_data(cora) -> tuple[Data, np.ndarray]:
    src, dst = cora.edges()
    time = (np.arange(cora.num_nodes()) * 7919 % 101).astype(np.int64)
    data = Data(x=_t(cora.ndata["feat"]), edge_index=_t(np.stack([src, dst])),
                edge_attr=_t(cora.edata["weight"][:, None]), time=_t(time),
                num_nodes=cora.num_nodes())
    return data, time


def _ours(cfg, p: int) -> dict:
    """Part ``p`` of our partition by original per-type IDs: inner nodes and their features
    per node type, inner edges ``(src, dst, edge ID)`` and their features per edge type."""
    part = load_partition_data(cfg, p)
    nd, ed = part.graph.ndata, part.graph.edata
    sizes_n = [cfg.type_sizes("node")[t] for t in cfg.ntypes]
    sizes_e = [cfg.type_sizes("edge")[e] for e in cfg.etypes]
    noff, eoff = np.cumsum([0, *sizes_n]), np.cumsum([0, *sizes_e])
    local = np.asarray(nd["orig_id"]) - noff[np.asarray(nd["_TYPE"])]
    view: dict = {"nodes": {}, "nfeat": {}, "edges": {}, "efeat": {}}
    inner = np.flatnonzero(np.asarray(nd["inner_node"]))
    inner = inner[np.argsort(np.asarray(nd["_ID"])[inner])]
    for i, t in enumerate(cfg.ntypes):
        sel = inner[np.asarray(nd["_TYPE"])[inner] == i]
        view["nodes"][t] = local[sel]
        view["nfeat"][t] = {k.split("/")[1]: np.asarray(v) for k, v in part.node_feats.items()
                            if k.split("/")[0] == t}
    src, dst = part.graph.edges()
    einner = np.flatnonzero(np.asarray(ed["inner_edge"]))
    einner = einner[np.argsort(np.asarray(ed["_ID"])[einner])]
    for i, e in enumerate(cfg.etypes):
        sel = einner[np.asarray(ed["_TYPE"])[einner] == i]
        view["edges"][e] = (local[src[sel]], local[dst[sel]],
                            np.asarray(ed["orig_id"])[sel] - eoff[i])
        view["efeat"][e] = {k.split("/")[1]: np.asarray(v) for k, v in part.edge_feats.items()
                            if k.split("/")[0] == e}
    return view


def _triples(src, dst, eid) -> list[tuple[int, int, int]]:
    return sorted(zip(np.asarray(src).tolist(), np.asarray(dst).tolist(),
                      np.asarray(eid).tolist(), strict=True))


def _load(path: Path):
    return torch.load(path, weights_only=True)  # plain tensors and dicts: PyG's maps, graph


def _check_import(cfg, g: gs.Graph, root: Path, hetero: bool) -> None:
    """Our partition ``cfg`` holds the graph ``g`` as PyG partitioned it in ``root``."""
    assert cfg.params["imported_from"] == "pyg" and cfg.ntypes == g.ntypes
    assert cfg.etypes == [":".join(e) for e in g.canonical_etypes]
    for p in range(cfg.num_parts):
        ours = _ours(cfg, p)
        graph_pt = _load(root / f"part_{p}" / "graph.pt")
        eoff = np.cumsum([0, *(g.num_edges(e) for e in g.canonical_etypes)])
        for i, et in enumerate(g.canonical_etypes):
            name = ":".join(et)
            owners = _load(root / ("node_map" if hetero else "") /
                           (f"{et[2]}.pt" if hetero else "node_map.pt")).numpy()
            emap = _load(root / (f"edge_map/{'__'.join(et)}.pt" if hetero
                                 else "edge_map.pt")).numpy()
            s, d, e = ours["edges"][name]
            gs_src, gs_dst = g.edges(etype=et)
            # our inner edges: the graph's, by edge ID; exactly PyG's part; owned by p
            assert _triples(s, d, e) == _triples(gs_src[e], gs_dst[e], e)
            theirs = graph_pt[et] if hetero else graph_pt
            assert _triples(s, d, e) == _triples(
                theirs["row"], theirs["col"], theirs["edge_id"].numpy() - eoff[i])
            assert (emap[e] == p).all() and (owners[d] == p).all()
            for col, rows in ours["efeat"][name].items():
                np.testing.assert_array_equal(rows, g.edges[et].data[col][e], err_msg=col)
        for t in g.ntypes:
            owners = _load(root / (f"node_map/{t}.pt" if hetero else "node_map.pt")).numpy()
            ids = ours["nodes"][t]
            assert sorted(ids.tolist()) == np.flatnonzero(owners == p).tolist()
            assert sorted(ours["nfeat"][t]) == sorted(g.nodes[t].data.keys())
            for col, rows in ours["nfeat"][t].items():
                np.testing.assert_array_equal(rows, g.nodes[t].data[col][ids], err_msg=col)


def test_import_cora_is_the_graph_pyg_partitioned(cora, pyg_partitioner, tmp_path):
    data, time = _cora_data(cora)
    root = pyg_partitioner(data, 4, tmp_path / "pyg")
    cfg = import_pyg(root, tmp_path / "ours", graph_name="cora")
    g = gs.graph(cora.edges(), num_nodes=cora.num_nodes())
    g.ndata["x"], g.ndata["time"] = cora.ndata["feat"], time
    g.edata["edge_attr"] = cora.edata["weight"][:, None]
    _check_import(cfg, g, root, hetero=False)
    assert cfg.num_parts == 4 and read_config(tmp_path / "ours" / "cora.json").report
    # our orig_ids files hold PyG's IDs of each part's nodes, in our ID order
    owners = _load(root / "node_map.pt").numpy()
    for p in range(4):
        orig, _ = load_tensors(cfg.part_file(p, "orig_ids"))
        assert orig["node/_N"].tolist() == np.flatnonzero(owners == p).tolist()


def test_import_heterogeneous_is_the_graph_pyg_partitioned(pyg_partitioner, tmp_path):
    g, h = shop_hetero()
    root = pyg_partitioner(h, 3, tmp_path / "pyg")
    assert json.loads((root / "META.json").read_text())["is_hetero"] is True
    registered = set(torch.serialization.get_safe_globals())  # PyG's: defaultdict, ...
    cfg = import_pyg(root / "META.json", tmp_path / "ours")  # edge_feats.pt: defaultdicts
    assert set(torch.serialization.get_safe_globals()) == registered
    assert cfg.graph_name == "pyg"
    _check_import(cfg, g, root, hetero=True)


def _check_export(cfg, root: Path, original: gs.Graph) -> None:
    """PyG's stores load every part of the export ``root`` of ``cfg`` and give its inner
    edges and features by original IDs, and every node's and edge's owner."""
    hetero = original.ntypes != ["_N"]
    for p in range(cfg.num_parts):
        ours = _ours(cfg, p)
        graph = LocalGraphStore.from_partition(str(root), p)
        feats = LocalFeatureStore.from_partition(str(root), p)
        eoff = np.cumsum([0, *(original.num_edges(e) for e in original.canonical_etypes)])
        for i, et in enumerate(original.canonical_etypes):
            key = et if hetero else None
            edge_index = graph.get_edge_index(edge_type=key, layout="coo")
            eid = graph.get_edge_id(edge_type=key, layout="coo").numpy()
            s, d, e = ours["edges"][":".join(et)]
            assert _triples(edge_index[0], edge_index[1], eid - (eoff[i] if hetero else 0)) \
                == _triples(s, d, e)
            assert (np.diff(edge_index[1].numpy()) >= 0).all()  # PyG's is_sorted
            group = et if hetero else (None, None)
            for col in original.edges[et].data:
                got = feats.get_tensor_from_global_id(group_name=group, attr_name=col,
                                                      index=_t(e)).numpy()
                np.testing.assert_array_equal(got, original.edges[et].data[col][e])
        for i, t in enumerate(original.ntypes):
            ids = ours["nodes"][t]
            group = t if hetero else None
            noff = int(sum(original.num_nodes(u) for u in original.ntypes[:i]))
            assert sorted((feats.get_global_id(group).numpy() - noff).tolist()) == sorted(
                ids.tolist())
            for col in original.nodes[t].data:
                got = feats.get_tensor_from_global_id(
                    group_name=group, attr_name=col, index=_t(ids + noff)).numpy()
                want = original.nodes[t].data[col]
                if col == "time":  # PyG's node time: every node's, by original ID
                    got = feats.get_tensor(group_name=group, attr_name=col).numpy()
                    np.testing.assert_array_equal(got, want)
                else:
                    np.testing.assert_array_equal(got, want[ids])
    # every node's part in PyG's map (as each store holds it) is ours
    graph = LocalGraphStore.from_partition(str(root), cfg.num_parts - 1)
    views = [_ours(cfg, q) for q in range(cfg.num_parts)]
    for t in original.ntypes:
        owners = np.full(original.num_nodes(t), -1)
        for q, view in enumerate(views):
            owners[view["nodes"][t]] = q
        node_pb = graph.node_pb[t] if hetero else graph.node_pb
        np.testing.assert_array_equal(node_pb.numpy(), owners)


@pytest.mark.parametrize("graph", ["cora", "shop"])
def test_export_loads_in_pyg_stores_and_round_trips(request, graph, tmp_path):
    if graph == "cora":
        cora = request.getfixturevalue("cora")
        g = gs.graph(cora.edges(), num_nodes=cora.num_nodes())
        g.ndata["feat"], g.ndata["label"] = cora.ndata["feat"], cora.ndata["label"]
        g.ndata["time"] = (np.arange(g.num_nodes()) % 13).astype(np.int64)
        g.edata["weight"] = cora.edata["weight"]
        g.edata["edge_time"] = np.arange(g.num_edges(), dtype=np.int64) % 29  # PyG's edge_time
        num_parts = 3
    else:
        g, num_parts = shop_hetero()[0], 2
    gs.partition_graph(g, "g", num_parts, tmp_path / "ours", part_method="metis")
    cfg = read_config(tmp_path / "ours" / "g.json")
    root = export_pyg(cfg, tmp_path / "pyg")
    _check_export(cfg, root, g)
    # and back: the same partition (PyG's owners, our reshuffled IDs and files)
    back = import_pyg(root, tmp_path / "back", graph_name="g")
    assert back.node_map == cfg.node_map and back.edge_map == cfg.edge_map
    for p in range(num_parts):
        a, b = load_partition_data(cfg, p), load_partition_data(back, p)
        for key in ("_ID", "orig_id", "inner_node", "part_id", "_TYPE"):
            np.testing.assert_array_equal(a.graph.ndata[key], b.graph.ndata[key], err_msg=key)
        for key in ("_ID", "orig_id", "inner_edge", "_TYPE"):
            np.testing.assert_array_equal(a.graph.edata[key], b.graph.edata[key], err_msg=key)
        assert [x.tolist() for x in a.graph.edges()] == [x.tolist() for x in b.graph.edges()]
        for ours, theirs in ((a.node_feats, b.node_feats), (a.edge_feats, b.edge_feats)):
            assert sorted(ours) == sorted(theirs)
            for key in ours:
                np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)
    # exporting again into the same folder replaces it
    assert export_pyg(back, root) == root


def test_export_of_an_import_is_pyg_folder_again(pyg_partitioner, tmp_path):
    """PyG -> ours -> PyG: the same maps, and each part the same edges and features."""
    g, h = shop_hetero()
    root = pyg_partitioner(h, 2, tmp_path / "pyg")
    cfg = import_pyg(root, tmp_path / "ours")
    again = export_pyg(cfg, tmp_path / "again")
    for kind, names in (("node", g.ntypes), ("edge", ["__".join(e) for e in
                                                      g.canonical_etypes])):
        for name in names:
            assert torch.equal(_load(root / f"{kind}_map" / f"{name}.pt"),
                               _load(again / f"{kind}_map" / f"{name}.pt"))
    for p in range(2):
        a, b = _load(root / f"part_{p}/graph.pt"), _load(again / f"part_{p}/graph.pt")
        assert a.keys() == b.keys()
        for et in a:
            assert _triples(a[et]["row"], a[et]["col"], a[et]["edge_id"]) == _triples(
                b[et]["row"], b[et]["col"], b[et]["edge_id"]) and a[et]["size"] == b[et]["size"]


def test_export_refuses_what_pyg_cannot_hold(tmp_path):
    shop = shop_graph(0)  # Ragged tags and sparse bow
    gs.partition_graph(shop, "shop", 2, tmp_path / "ours", part_method="hash")
    with pytest.raises(ValidationError, match="'u/tags' is Ragged; PyG's feature files"):
        export_pyg(tmp_path / "ours" / "shop.json", tmp_path / "pyg")
    assert not (tmp_path / "pyg").exists()


class _Opens:
    """Unpickling this would create the file ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.fixture
def small_pyg(pyg_partitioner, tmp_path) -> Path:
    return pyg_partitioner(shop_hetero()[1], 2, tmp_path / "pyg")


def test_a_pickle_that_runs_code_is_refused_without_running(small_pyg, tmp_path):
    marker = tmp_path / "ran"
    bad = small_pyg / "part_1" / "graph.pt"
    torch.save({("u", "buys", "i"): {"row": _Opens(str(marker))}}, bad)
    with pytest.raises(FormatError, match=r"weights_only=True.*GLOBAL io\.open was not an "
                       r"allowed global by default\.\)$") as err:
        import_pyg(small_pyg, tmp_path / "ours")
    assert err.value.path == str(bad) and str(bad) in str(err.value)
    assert not marker.exists() and not (tmp_path / "ours").exists()
    torch.load(bad, weights_only=False)  # what an unsafe loader does with it
    assert marker.exists()


@pytest.mark.parametrize(("file", "obj", "message"), [
    ("part_0/graph.pt", {("u", "buys", "i"): {"row": [0, 1], "col": [0, 1],
                                                "edge_id": [0, 1]}},
     "u__buys__i.row: must be a tensor, got list"),
    ("part_0/node_feats.pt", {"u": {"global_id": torch.tensor([0.5])}},
     "u.global_id: must be a 1-D integer tensor"),
    ("part_1/edge_feats.pt", {("x", "y", "z"): {}}, "is not a type of META.json"),
    ("node_map/i.pt", torch.tensor([0, 5]), r"map: \[1\] = 5 is not in \[0, 2\)"),
    ("part_0/node_feats.pt", b"PK\x03\x04 truncated zip", "not a tensor file"),
])
def test_malformed_files_are_refused_naming_them(small_pyg, tmp_path, file, obj, message):
    path = small_pyg / file
    if isinstance(obj, bytes):
        path.write_bytes(obj)
    else:
        torch.save(obj, path)
    with pytest.raises(FormatError, match=message) as err:
        import_pyg(small_pyg, tmp_path / "ours")
    assert str(path) in str(err.value)


def test_paths_stay_in_the_folder_and_missing_files_are_named(small_pyg, tmp_path):
    meta = json.loads((small_pyg / "META.json").read_text())
    (small_pyg / "META.json").write_text(json.dumps({**meta, "node_types": ["../u", "i"]}))
    with pytest.raises(FormatError, match=r"node_types\[0\] must be a plain file name"):
        import_pyg(small_pyg, tmp_path / "a")
    (small_pyg / "META.json").write_text(json.dumps(meta))
    outside = tmp_path / "outside.pt"
    (small_pyg / "node_map" / "u.pt").rename(outside)
    os.symlink(outside, small_pyg / "node_map" / "u.pt")
    with pytest.raises(FormatError, match="leads outside the folder"):
        import_pyg(small_pyg, tmp_path / "b")
    (small_pyg / "node_map" / "u.pt").unlink()
    with pytest.raises(PartitionNotFoundError, match=r"node_map/u.pt is missing"):
        import_pyg(small_pyg, tmp_path / "c")


def test_cli_export_and_import_pyg(tmp_path, capsys):
    g, _ = shop_hetero()
    gs.partition_graph(g, "shop", 2, tmp_path / "ours", part_method="hash")
    config = str(tmp_path / "ours" / "shop.json")
    assert main(["export", config, "--to", "pyg", "--out", str(tmp_path / "pyg")]) == 0
    assert "LocalGraphStore.from_partition" in capsys.readouterr().out
    assert main(["import", str(tmp_path / "pyg"), "--from", "pyg", "--name", "shop2",
                 "--out", str(tmp_path / "back")]) == 0
    assert read_config(tmp_path / "back" / "shop2.json").node_map == read_config(
        config).node_map
    assert main(["export", config, "--to", "pyg", "--graphbolt", "--out",
                 str(tmp_path / "x")]) == 2
    assert main(["import", config, "--from", "dgl", "--name", "x", "--out",
                 str(tmp_path / "y")]) == 2
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
