"""load_planetoid: the real Cora/CiteSeer/PubMed raw files (counts from
../shared/data/planetoid/README.md, and equal to PyG's reader), the restricted unpickler
refusing any other global, and seeded mutation fuzzing of a tiny dataset."""

from __future__ import annotations

import collections
import pickle
import random
from pathlib import Path

import numpy as np
import pytest

from fuzzing import dataset_graph_problem, mutate_bytes, mutate_text, run_fuzz
from graphshard.datasets import load_planetoid
from graphshard.errors import FormatError, ValidationError
from graphshard.io import apply_edge_policy


@pytest.mark.parametrize("name, nodes, pairs, feats, classes, train", [
    ("cora", 2708, 5278, 1433, 7, 140), ("citeseer", 3327, 4552, 3703, 6, 120)])
def test_counts_from_the_readme(shared_file, name, nodes, pairs, feats, classes, train):
    ds = load_planetoid(shared_file("planetoid", f"ind.{name}.graph"))
    g = ds.graph
    assert (ds.name, ds.num_classes, g.num_nodes()) == (name, classes, nodes)
    assert g.ndata["feat"].shape == (nodes, feats)
    assert [int(g.ndata[k].sum()) for k in ("train_mask", "val_mask", "test_mask")] == \
        [train, 500, 1000]
    h, _ = apply_edge_policy(g, self_loops="drop", duplicates="drop")
    s, d = h.edges()
    assert h.num_edges() == 2 * pairs  # both directions of every undirected pair
    assert np.array_equal(np.sort(s * nodes + d), np.sort(d * nodes + s))
    labelled = g.ndata["label"] >= 0
    assert labelled.sum() == nodes - (15 if name == "citeseer" else 0)  # CiteSeer's padding


def test_same_as_pyg(shared_data):
    """Features, labels and split equal PyG's reader (which unpickles the files as they are);
    edges equal after PyG's coalescing (no duplicates, no self loops)."""
    pytest.importorskip("torch_geometric")
    from torch_geometric.io import read_planetoid_data

    folder = shared_data / "planetoid"
    if not (folder / "ind.citeseer.graph").exists():
        pytest.skip("planetoid files absent")
    data = read_planetoid_data(str(folder), "citeseer")
    g = load_planetoid(folder, name="citeseer").graph
    np.testing.assert_array_equal(g.ndata["feat"].to_dense(), data.x.numpy())
    np.testing.assert_array_equal(np.maximum(g.ndata["label"], 0), data.y.numpy())
    for k in ("train_mask", "val_mask", "test_mask"):
        np.testing.assert_array_equal(g.ndata[k], getattr(data, k).numpy())
    h, _ = apply_edge_policy(g, self_loops="drop", duplicates="drop")
    n = g.num_nodes()
    ours = np.sort(h.edges()[0] * n + h.edges()[1])
    theirs = np.sort(data.edge_index[0].numpy() * n + data.edge_index[1].numpy())
    np.testing.assert_array_equal(ours, theirs)


def test_pubmed_without_allx(shared_file):
    x = shared_file("planetoid", "ind.pubmed.x")
    with pytest.raises(FormatError, match=r"ind\.pubmed\.allx: missing"):
        load_planetoid(x)
    g = load_planetoid(x, features=False).graph
    assert g.num_nodes() == 19717 and "feat" not in g.ndata
    assert int(g.ndata["label"].max()) == 2 and int(g.ndata["test_mask"].sum()) == 1000


def _tiny(folder: Path) -> Path:
    eye = np.eye(3, dtype=np.float32)
    parts = {"x": eye[:1], "y": eye[:1], "allx": eye[:2], "ally": eye[:2], "tx": eye[1:],
             "ty": eye[1:], "graph": collections.defaultdict(list, {0: [1, 2], 1: [0], 3: [2]})}
    folder.mkdir(parents=True, exist_ok=True)
    for part, obj in parts.items():
        (folder / f"ind.tiny.{part}").write_bytes(pickle.dumps(obj, protocol=2))
    (folder / "ind.tiny.test.index").write_text("3\n2\n")
    return folder


def test_only_array_globals_are_unpickled(tmp_path):
    folder = _tiny(tmp_path / "d")

    class Evil:
        def __reduce__(self):
            import os
            return (os.system, ("touch " + str(tmp_path / "pwned"),))

    (folder / "ind.tiny.y").write_bytes(pickle.dumps(Evil(), protocol=2))
    with pytest.raises(FormatError, match=r"ind\.tiny\.y: not a Planetoid pickle of arrays "
                       r"\(UnpicklingError: global posix\.system is not"):
        load_planetoid(folder)
    assert not (tmp_path / "pwned").exists()


def test_folder_with_several_datasets_needs_a_name(tmp_path):
    _tiny(tmp_path)
    for part in ("graph",):
        (tmp_path / f"ind.other.{part}").write_bytes(b"")
    with pytest.raises(ValidationError, match=r"holds the Planetoid datasets \['other', "
                       r"'tiny'\]; name one \(name='cora'; CLI: -O name=cora\)"):
        load_planetoid(tmp_path)
    assert load_planetoid(tmp_path, name="tiny").graph.num_nodes() == 4


def test_fuzz_planetoid(tmp_path):
    names = ["x", "y", "tx", "ty", "allx", "ally", "graph", "test.index"]

    def case(rng: random.Random, folder: Path) -> Path:
        _tiny(folder)
        name = rng.choice(names)
        path = folder / f"ind.tiny.{name}"
        data = path.read_bytes()
        path.write_bytes(mutate_text(rng, data.decode()) if name == "test.index"
                         else mutate_bytes(rng, data))
        return folder

    run_fuzz("planetoid", case, load_planetoid, tmp_path, check=dataset_graph_problem, seed=5)
