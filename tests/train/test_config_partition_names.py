"""Issue 41 item 4: a config whose ``graph:`` is a partition config has its names (feature
names, metapath, slots) checked against that graph's files before any server starts;
before, only its node and edge types were, and a wrong feature name failed after the graph
was served and the model built."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphshard as gs
from graphshard.errors import ConfigError
from graphshard.train.config import validate_config
from shop import hetero_graph

yaml = pytest.importorskip("yaml", reason="needs pyyaml")


@pytest.fixture(scope="module")
def parts(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("names")
    gs.partition_graph(hetero_graph(0), "shop", 2, str(out / "shop"), part_method="random")
    g = gs.datasets.from_spec("sbm:nodes=60,edges=300,blocks=2,features=4")
    gs.partition_graph(g, "sbm", 2, str(out / "sbm"), part_method="random")
    return {"hetero": out / "shop" / "shop.json", "homo": out / "sbm" / "sbm.json"}


def _check(folder: Path, cfg: dict) -> None:
    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    validate_config(path)


@pytest.mark.parametrize(("graph", "cfg", "key", "match"), [
    ("hetero", {"task": "hetero", "target": "i", "label": "nope"}, "label",
     r"label names no node feature of 'i': got 'nope'; its features are \['feat', 'label'"),
    ("hetero", {"task": "hetero", "target": "i", "train_mask": "nope"}, "train_mask",
     "train_mask names no node feature of 'i'"),
    ("hetero", {"task": "hetero", "target": "i", "val_mask": "nope"}, "val_mask",
     "val_mask names no node feature of 'i'"),
    ("homo", {"task": "sage", "feat": "nope"}, "feat", "feat names no node feature of '_N'"),
    ("homo", {"task": "sage", "label": "nope"}, "label", "label names no node feature"),
    ("homo", {"task": "walk", "slots": ["nope"]}, "slots",
     "slots: slot 'nope' is no node feature"),
    ("homo", {"task": "walk", "meta_path": "a2b2c"}, "meta_path",
     "meta_path: unknown edge type 'a2b2c'"),
])
def test_names_are_checked_against_the_partition_files(tmp_path, parts, graph, cfg, key,
                                                        match):
    with pytest.raises(ConfigError, match=match) as info:
        _check(tmp_path, {**cfg, "graph": str(parts[graph]), "epochs": 1})
    assert info.value.field == key and "\n" not in str(info.value)


@pytest.mark.parametrize(("graph", "cfg"), [
    ("hetero", {"task": "hetero", "target": "i", "label": "label", "val_mask": "val_mask"}),
    ("homo", {"task": "sage", "feat": "feat", "label": "label"}),
    ("homo", {"task": "walk", "slots": ["label"], "sparse_type": "adagrad"}),
    ("homo", {"task": "walk", "meta_path": "_N2_N"}),
])
def test_names_of_the_graph_pass(tmp_path, parts, graph, cfg):
    _check(tmp_path, {**cfg, "graph": str(parts[graph]), "epochs": 1})


def test_a_damaged_feature_file_is_named_under_graph(tmp_path, parts):
    """The feature files are read (not hashed) to learn the names: a damaged one is the
    config's ``graph`` problem, naming the file."""
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(parts["homo"].parent, folder)
    (folder / "part1" / "node_feats.safetensors").write_bytes(b"\x05")
    with pytest.raises(ConfigError, match=r"graph: .*node_feats\.safetensors") as info:
        _check(tmp_path, {"task": "sage", "graph": str(folder / "sbm.json")})
    assert info.value.field == "graph"
