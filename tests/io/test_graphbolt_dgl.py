"""GraphBolt OnDiskDataset against DGL 2.1 itself: our export opens in
``dgl.graphbolt.OnDiskDataset`` and gives our graph, features and task sets; a dataset that
DGL preprocessed imports equal to what DGL loads from it.

Skipped where ``dgl`` does not import (our CI; tests/io/test_graphbolt.py checks the layout
against DGL's rules there).  Run with a Python that has DGL 2.1::

    DGLBACKEND=pytorch PYTHONPATH=src /tmp/venv-dgl/bin/python -m pytest -q -p no:xdist \\
        tests/io/test_graphbolt_dgl.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from graphbolt_helpers import DGL_EXAMPLE, dgl_example, shop
from io_helpers import assert_graphs_equal

import graphshard as gs
from graphshard.errors import FormatError
from graphshard.io import convert, read_graph, read_graphbolt, write_graphbolt

gb = pytest.importorskip("dgl.graphbolt")
torch = pytest.importorskip("torch")


def dgl_edges(ds) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DGL's graph per edge type: (src, dst, original per-type edge ID), from the fused CSC
    (loaded with include_original_edge_id=True)."""
    graph = ds.graph
    indptr, indices = graph.csc_indptr.numpy(), graph.indices.numpy().astype(np.int64)
    dst = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    eid = graph.edge_attributes[gb.ORIGINAL_EDGE_ID].numpy()
    if graph.type_per_edge is None:
        return {"_N:_E:_N": (indices, dst, eid)}
    offset = graph.node_type_offset.numpy()
    ntype_id, etypes = graph.node_type_to_id, graph.edge_type_to_id
    kinds = graph.type_per_edge.numpy()
    out = {}
    for et, k in etypes.items():
        s, _, d = et.split(":")
        sel = kinds == k
        out[et] = (indices[sel] - offset[ntype_id[s]], dst[sel] - offset[ntype_id[d]], eid[sel])
    return out


def assert_dgl_equals(ds, g: gs.Graph) -> None:
    """DGL's loaded dataset holds g: every edge (by its original ID), every feature (1-D
    ones as DGL stores them, (N, 1)) and the first task's sets (masks and labels)."""
    typed = (g.ntypes, g.canonical_etypes) != (["_N"], [("_N", "_E", "_N")])
    edges = dgl_edges(ds)
    assert sorted(edges) == sorted(":".join(et) for et in g.canonical_etypes)
    for et in g.canonical_etypes:
        src, dst, eid = edges[":".join(et)]
        s, d = g.edges(etype=et)
        assert sorted(eid.tolist()) == list(range(len(s)))
        np.testing.assert_array_equal(s[eid], src)
        np.testing.assert_array_equal(d[eid], dst)
    kinds = [("node", nt, nt, g.nodes[nt].data) for nt in g.ntypes] + \
        [("edge", ":".join(et), et, g.edges[et].data) for et in g.canonical_etypes]
    for domain, name_of_type, _, frame in kinds:
        for name, col in frame.items():
            if name.endswith("_mask"):
                continue
            got = ds.feature.read(domain, name_of_type if typed else None, name).numpy()
            want = np.asarray(col)
            np.testing.assert_array_equal(got, want.reshape(len(want), -1) if want.ndim == 1
                                          else want, err_msg=f"{name_of_type}/{name}")
            assert got.dtype == want.dtype
    task = ds.tasks[0]
    for set_name, mask in (("train_set", "train_mask"), ("validation_set", "val_mask"),
                           ("test_set", "test_mask")):
        itemset = getattr(task, set_name)
        has = [nt for nt in g.ntypes if mask in g.nodes[nt].data]
        if not has:
            assert itemset is None
            continue
        sets = itemset._itemsets if typed else {"_N": itemset}
        assert sorted(sets) == sorted(has)
        for nt, items in sets.items():
            assert items.names == ("seed_nodes", "labels")
            seeds, labels = (t.numpy() for t in items[:])
            np.testing.assert_array_equal(seeds, np.flatnonzero(g.nodes[nt].data[mask]))
            np.testing.assert_array_equal(labels, g.nodes[nt].data["label"][seeds])


@pytest.mark.parametrize("typed", [False, True])
def test_our_export_opens_in_dgl_and_equals_ours(tmp_path: Path, typed: bool) -> None:
    g = shop(typed)
    write_graphbolt(g, tmp_path / "gb", dataset_name="shop")
    ds = gb.OnDiskDataset(str(tmp_path / "gb"), include_original_edge_id=True).load()
    assert ds.dataset_name == "shop"
    classes = 1 + max(int(g.nodes[nt].data["label"].max()) for nt in g.ntypes)
    assert ds.tasks[0].metadata == {"name": "node_classification", "num_classes": classes}
    assert_dgl_equals(ds, g)
    # DGL's preprocessing left its folder beside ours; we still read ours, and rewrite it
    assert (tmp_path / "gb" / "preprocessed" / "metadata.yaml").is_file()
    assert_graphs_equal(g, read_graphbolt(tmp_path / "gb"))
    g.nodes[g.ntypes[0]].data["feat"] = g.nodes[g.ntypes[0]].data["feat"] * 2
    write_graphbolt(g, tmp_path / "gb", dataset_name="shop")
    ds = gb.OnDiskDataset(str(tmp_path / "gb"), include_original_edge_id=True).load()
    assert_dgl_equals(ds, g)  # DGL saw the change and preprocessed again


def test_hgb_acm_export_opens_in_dgl(tmp_path: Path, shared_file) -> None:
    acm = shared_file("hgb", "ACM.zip")
    convert("hgb", acm, "graphbolt", tmp_path / "gb")
    ds = gb.OnDiskDataset(str(tmp_path / "gb"), include_original_edge_id=True).load()
    assert_dgl_equals(ds, read_graph("hgb", [acm]))


def _built_by_dgl(folder: Path) -> tuple[Path, object]:
    """DGL's docstring example with a torch feature file, preprocessed by DGL itself.
    (Its CSV edges go through pandas, whose read-only arrays DGL 2.1's heterogeneous branch
    adds to in place, a failure under pandas 3: the heterogeneous example uses numpy edges.)"""
    dgl_example(folder)
    meta = yaml.safe_load(DGL_EXAMPLE)
    meta["graph"]["edges"][0].update(format="numpy", path="edge_data/author-writes-paper.npy")
    np.save(folder / "edge_data" / "author-writes-paper.npy", np.array([[0, 4, 2], [1, 3, 1]]))
    meta["feature_data"].append({"domain": "node", "type": "author", "name": "feat",
                                 "format": "torch", "path": "node_data/author-feat.pt"})
    torch.save(torch.arange(10, dtype=torch.int32).reshape(5, 2),
               folder / "node_data" / "author-feat.pt")
    meta["tasks"].pop()  # node pairs: a task graphshard does not turn into masks
    (folder / "metadata.yaml").write_text(yaml.safe_dump(meta))
    ds = gb.OnDiskDataset(str(folder), include_original_edge_id=True).load()
    return folder, ds


def test_a_dataset_dgl_preprocessed_imports_equal(tmp_path: Path) -> None:
    folder, ds = _built_by_dgl(tmp_path / "ex")
    assert (folder / "preprocessed" / "fused_csc_sampling_graph.pt").is_file()
    g = read_graphbolt(folder)
    edges = dgl_edges(ds)
    for et in g.canonical_etypes:
        src, dst, eid = edges[":".join(et)]
        s, d = g.edges(etype=et)
        np.testing.assert_array_equal(s[eid], src)
        np.testing.assert_array_equal(d[eid], dst)
    np.testing.assert_array_equal(g.nodes["author"].data["feat"],
                                  ds.feature.read("node", "author", "feat").numpy())
    np.testing.assert_array_equal(g.nodes["paper"].data["feat"],
                                  ds.feature.read("node", "paper", "feat").numpy())
    np.testing.assert_array_equal(g.edges["writes"].data["feat"].reshape(-1, 1),
                                  ds.feature.read("edge", "author:writes:paper", "feat").numpy())
    seeds, labels = (t.numpy() for t in ds.tasks[0].train_set._itemsets["paper"][:])
    assert np.flatnonzero(g.nodes["paper"].data["train_mask"]).tolist() == seeds.tolist()
    assert g.nodes["paper"].data["label"][seeds].tolist() == labels.tolist()
    test_seeds = ds.tasks[0].test_set._itemsets["paper"][:].numpy()
    assert np.flatnonzero(g.nodes["paper"].data["test_mask"]).tolist() == test_seeds.tolist()
    # DGL's preprocessed folder alone: its graph is a pickle of a DGL class, never read
    with pytest.raises(FormatError, match=r"graph_topology.*FusedCSCSamplingGraph.*"
                                          + str(folder / "metadata.yaml")):
        read_graphbolt(folder / "preprocessed")
    # and the pickle itself does not load the only way we would load a .pt file
    with pytest.raises(Exception, match="Weights only load failed"):
        torch.load(folder / "preprocessed" / "fused_csc_sampling_graph.pt", weights_only=True)


def test_a_homogeneous_csv_dataset_dgl_preprocessed_imports_equal(tmp_path: Path) -> None:
    d = tmp_path / "homo"
    (d / "set").mkdir(parents=True)
    (d / "edges.csv").write_text("0,1\n1,2\n2,0\n3,1\n")
    np.save(d / "feat.npy", np.arange(8, dtype=np.float32).reshape(4, 2))
    np.save(d / "set" / "train.npy", np.array([1, 3]))
    np.save(d / "set" / "train_labels.npy", np.array([5, 6]))
    (d / "metadata.yaml").write_text(
        "dataset_name: homo\ngraph:\n  nodes:\n    - num: 4\n  edges:\n    - format: csv\n"
        "      path: edges.csv\nfeature_data:\n  - domain: node\n    name: feat\n"
        "    format: numpy\n    path: feat.npy\ntasks:\n  - name: nc\n    train_set:\n"
        "      - data:\n          - name: seed_nodes\n            format: numpy\n"
        "            path: set/train.npy\n          - name: labels\n            format: numpy\n"
        "            path: set/train_labels.npy\n")
    ds = gb.OnDiskDataset(str(d), include_original_edge_id=True).load()
    g = read_graphbolt(d)
    assert g.is_homogeneous and g.ntypes == ["_N"]
    src, dst, eid = dgl_edges(ds)["_N:_E:_N"]
    s, t = g.edges()
    np.testing.assert_array_equal(s[eid], src)
    np.testing.assert_array_equal(t[eid], dst)
    np.testing.assert_array_equal(g.ndata["feat"], ds.feature.read("node", None, "feat").numpy())
    seeds, labels = (x.numpy() for x in ds.tasks[0].train_set[:])
    assert g.ndata["train_mask"].tolist() == [False, True, False, True]
    assert g.ndata["label"][seeds].tolist() == labels.tolist() == [5, 6]
    # and what we write of it opens in DGL again, equal
    write_graphbolt(g, tmp_path / "again")
    assert_dgl_equals(gb.OnDiskDataset(str(tmp_path / "again"),
                                       include_original_edge_id=True).load(), g)
