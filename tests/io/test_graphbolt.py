"""GraphBolt OnDiskDataset without DGL: round trips, the layout checked against the rules of
DGL 2.1's reader (dgl/graphbolt/impl/ondisk_dataset.py, ondisk_metadata.py, internal/utils.py),
a dataset laid out as DGL's own example, and metadata that is mangled or leads outside its
folder.  tests/io/test_graphbolt_dgl.py checks the same against DGL itself."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from graphbolt_helpers import DGL_EXAMPLE, dgl_example, shop
from io_helpers import assert_graphs_equal

import graphshard as gs
from graphshard.cli import main
from graphshard.errors import ConfigError, FormatError, MissingDependencyError, ValidationError
from graphshard.io import convert, read_graph, read_graphbolt, write_graphbolt
from graphshard.io._graphbolt_meta import TORCH_DTYPES, dump_yaml
from graphshard.io.convert import format_of_path

yaml = pytest.importorskip("yaml")


# ----- round trips ----------------------------------------------------------------------------
@pytest.mark.parametrize("typed", [False, True])
def test_round_trip_keeps_graph_features_and_masks(tmp_path: Path, typed: bool) -> None:
    g = shop(typed)
    write_graphbolt(g, tmp_path / "gb", dataset_name="shop")
    back = read_graphbolt(tmp_path / "gb")
    assert_graphs_equal(g, back)
    assert back.ntypes == g.ntypes and back.is_homogeneous == (not typed)
    # also through the registry and the metadata file itself
    assert_graphs_equal(g, read_graph("graphbolt", [tmp_path / "gb" / "metadata.yaml"]))


def test_labels_come_from_the_task_when_no_feature_holds_them(tmp_path: Path) -> None:
    g = shop(typed=False)
    write_graphbolt(g, tmp_path / "gb")
    meta = yaml.safe_load((tmp_path / "gb" / "metadata.yaml").read_text())
    meta["feature_data"] = [f for f in meta["feature_data"] if f["name"] != "label"]
    (tmp_path / "gb" / "metadata.yaml").write_text(yaml.safe_dump(meta))
    label = read_graphbolt(tmp_path / "gb").ndata["label"]
    in_a_set = g.ndata["train_mask"] | g.ndata["test_mask"]
    np.testing.assert_array_equal(label[in_a_set], g.ndata["label"][in_a_set])
    assert (label[~in_a_set] == -1).all() and label.dtype == np.int64


def test_writing_needs_no_yaml_library_and_reading_names_the_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml now fails
    write_graphbolt(shop(), tmp_path / "gb")
    with pytest.raises(MissingDependencyError, match=r"pip install 'graphshard\[graphbolt\]'"):
        read_graphbolt(tmp_path / "gb")


def test_rewrite_replaces_an_earlier_output_and_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "gb"
    write_graphbolt(shop(), out)
    (out / "preprocessed").mkdir()  # what DGL leaves: kept, DGL redoes it
    small = gs.heterograph({("user", "buys", "item"): ([0], [0])})
    write_graphbolt(small, out)
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["edges/0-user_buys_item.npy", "metadata.yaml"]
    assert_graphs_equal(small, read_graphbolt(out))
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="holds no GraphBolt dataset written by graphshard"):
        write_graphbolt(small, tmp_path / "theirs")


def test_hgb_acm_converts_both_ways(tmp_path: Path, shared_file) -> None:
    """A real heterogeneous dataset with features, labels and a split."""
    acm = shared_file("hgb", "ACM.zip")
    g = read_graph("hgb", [acm])
    report = convert("hgb", acm, "graphbolt", tmp_path / "gb", dataset_name="acm")
    assert sum(report.num_nodes.values()) == 10942
    assert_graphs_equal(g, read_graphbolt(tmp_path / "gb"))
    assert not dgl_layout_problems(tmp_path / "gb")


# ----- the layout DGL 2.1 reads -------------------------------------------------------------
def dgl_layout_problems(folder: Path) -> list[str]:
    """What DGL 2.1's OnDiskDataset would refuse or misread in ``folder``, rule by rule from
    its source; empty when it loads."""
    meta = yaml.safe_load((folder / "metadata.yaml").read_text())
    bad = []
    graph = meta["graph"]  # preprocess_ondisk_dataset: "does not contain graph field"
    homo = (len(graph["nodes"]) == 1 and len(graph["edges"]) == 1
            and "type" not in graph["nodes"][0] and "type" not in graph["edges"][0])
    ntypes = [n.get("type") for n in graph["nodes"]]
    paths = []

    def array(entry: dict) -> np.ndarray:
        paths.append(entry["path"])
        if os.path.isabs(entry["path"]) or ".." in entry["path"].split("/"):
            bad.append(f"{entry['path']}: not inside the folder")
        if entry["format"] != "numpy":  # read_data: np.load, allow_pickle False
            bad.append(f"{entry['path']}: format {entry['format']}")
        arr = np.load(folder / entry["path"], allow_pickle=False)
        if arr.dtype not in TORCH_DTYPES:  # torch.from_numpy
            bad.append(f"{entry['path']}: dtype {arr.dtype}")
        return arr

    for node in graph["nodes"]:
        if not isinstance(node["num"], int) or (not homo and not isinstance(node["type"], str)):
            bad.append(f"node entry {node}")
    for edge in graph["edges"]:
        arr = array(edge)  # read_edges: numpy (2, N), or csv
        if arr.shape[0] != 2 or arr.ndim != 2:
            bad.append(f"edges {edge['path']}: shape {arr.shape}")
        if not homo:  # etype_str_to_tuple, node_type_to_id[src_type]
            src, _, dst = edge["type"].split(":")
            if src not in ntypes or dst not in ntypes:
                bad.append(f"edge type {edge['type']}")
    for feat in meta.get("feature_data", []):  # OnDiskFeatureData: required fields
        if feat["domain"] not in ("node", "edge", "graph") or not isinstance(feat["name"], str):
            bad.append(f"feature {feat}")
        if homo == ("type" in feat):
            bad.append(f"feature {feat['name']}: type {'given' if homo else 'missing'}")
        array(feat)
    for task in meta.get("tasks", []):
        for set_name in ("train_set", "validation_set", "test_set"):
            sets = task.get(set_name, [])
            if sets and sets[0].get("type") is None and len(sets) != 1:
                bad.append(f"{set_name}: several sets without type")  # _init_tvt_set
            for tvt in sets:
                lengths = {len(array(d)) for d in tvt["data"]}  # ItemSet: equal lengths
                if len(lengths) > 1 or tvt["data"][0]["name"] != "seed_nodes":
                    bad.append(f"{set_name} {tvt}: lengths {lengths}")
    # preprocessing copies each file to preprocessed/<path with "pt" replaced by "npy">
    renamed = [p.replace("pt", "npy") for p in paths]
    if len(set(renamed)) != len(renamed):
        bad.append("two files collide once 'pt' becomes 'npy'")
    return bad


@pytest.mark.parametrize("typed", [False, True])
def test_layout_is_what_dgl_reads(tmp_path: Path, typed: bool) -> None:
    g = shop(typed)
    # names that DGL's preprocessing would mangle ("pt" -> "npy") or YAML would retype
    g.nodes[g.ntypes[0]].data["pt"] = np.arange(g.num_nodes(g.ntypes[0]))
    g.nodes[g.ntypes[0]].data["npy"] = np.arange(g.num_nodes(g.ntypes[0]))
    if typed:
        g = gs.heterograph({("yes", "null", "1e3"): ([0], [0])})
        g.nodes["yes"].data["train_mask"] = np.array([True])
    write_graphbolt(g, tmp_path / "gb")
    assert dgl_layout_problems(tmp_path / "gb") == []
    meta = yaml.safe_load((tmp_path / "gb" / "metadata.yaml").read_text())
    assert ("type" in meta["graph"]["nodes"][0]) == typed
    if typed:
        assert meta["graph"]["edges"][0]["type"] == "yes:null:1e3"  # strings, not bool/None
    assert meta["tasks"][0]["name"] == "node_classification"
    assert_graphs_equal(g, read_graphbolt(tmp_path / "gb"))


def test_yaml_writer_quotes_what_yaml_would_retype() -> None:
    names = ["yes", "no", "null", "~", "1e3", "0x10", "a: b", "- x", "#c", "é", "\u2028",
             "tab\there", 'q"uote', "back\\slash", "\x85", "\ufeff", "😀", "\x7f", ""]
    text = dump_yaml({"names": names, "nested": [{"a": 1, "b": True, "c": {"d": []}}]})
    assert yaml.safe_load(text) == {"names": names,
                                    "nested": [{"a": 1, "b": True, "c": {"d": []}}]}


def test_writer_refuses_what_dgl_cannot_hold(tmp_path: Path) -> None:
    def refused(g: gs.Graph, match: str) -> None:
        with pytest.raises(ValidationError, match=match):
            write_graphbolt(g, tmp_path / "x")
        assert not (tmp_path / "x").exists()  # checked before anything is written

    g = gs.graph(([0], [1]))
    g.ndata["u"] = np.array([1, 2], dtype=np.uint32)
    refused(g, r"feature 'u' has dtype uint32; DGL loads")
    g = gs.graph(([0], [1]))
    g.ndata["tags"] = gs.Ragged(np.array([1, 2, 3]), np.array([0, 1, 3]))
    refused(g, "feature 'tags' is Ragged")
    g = gs.graph(([0], [1]))
    g.ndata["train_mask"] = np.ones((2, 1), dtype=bool)
    refused(g, "train_mask must be a 1-D bool")
    refused(gs.heterograph({("a:b", "r", "c"): ([0], [0])}), "node type 'a:b' holds ':'")
    refused(gs.heterograph({}, num_nodes_dict={"a": 2}), "at least one edge type")


def test_big_endian_features_are_written_in_native_order(tmp_path: Path) -> None:
    g = gs.graph(([0], [1]))
    g.ndata["x"] = np.array([1.5, 2.5], dtype=">f8")
    write_graphbolt(g, tmp_path / "gb")
    x = read_graphbolt(tmp_path / "gb").ndata["x"]
    assert x.dtype == np.dtype("float64") and x.tolist() == [1.5, 2.5]


# ----- a dataset as DGL lays it out (its OnDiskDataset docstring's example) ------------------
def test_dgl_example_reads(tmp_path: Path) -> None:
    g = read_graphbolt(dgl_example(tmp_path))
    assert g.ntypes == ["paper", "author"]
    assert [a.tolist() for a in g.edges(etype="writes")] == [[0, 4, 2], [1, 3, 1]]
    assert [a.tolist() for a in g.edges(etype="cites")] == [[0, 1], [2, 3]]
    paper = g.nodes["paper"].data
    assert paper["train_mask"].tolist() == [True, False, True, False]
    assert paper["test_mask"].tolist() == [False, False, False, True]
    assert "val_mask" not in paper and "train_mask" not in g.nodes["author"].data
    assert paper["label"].tolist() == [7, -1, 9, -1]  # from the set: no label feature
    assert g.edges["writes"].data["feat"].tolist() == [1.0, 2.0, 3.0]
    # the link task holds node pairs: asked for, it is refused naming the field
    with pytest.raises(FormatError, match=r"tasks\[1\]\.train_set\[0\]\.type.*not a node type"):
        read_graphbolt(tmp_path, task="link_prediction")
    g = read_graphbolt(tmp_path, task="none")
    assert "train_mask" not in g.nodes["paper"].data and "label" not in g.nodes["paper"].data
    with pytest.raises(ValidationError, match=r"no task 'nope'; it has 2 tasks"):
        read_graphbolt(tmp_path, task="nope")


def test_node_pairs_are_not_read_as_a_node_set(tmp_path: Path) -> None:
    dgl_example(tmp_path)
    text = DGL_EXAMPLE.replace('type: "paper:cites:paper"\n        data:\n          - name: '
                               'node_pairs', 'type: paper\n        data:\n          - name: '
                               'node_pairs')
    (tmp_path / "metadata.yaml").write_text(text)
    with pytest.raises(FormatError, match=r"tasks\[1\]\.train_set\[0\]\.data\[0\]\.name.*"
                                          r"'node_pairs'.*task='none'"):
        read_graphbolt(tmp_path, task=1)


def test_torch_files_load_only_as_plain_tensors(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    dgl_example(tmp_path)
    meta = yaml.safe_load(DGL_EXAMPLE)
    meta["feature_data"][0].update(format="torch", path="node_data/paper-feat.pt")
    (tmp_path / "metadata.yaml").write_text(yaml.safe_dump(meta))
    torch.save(torch.arange(8.0).reshape(4, 2), tmp_path / "node_data" / "paper-feat.pt")
    assert read_graphbolt(tmp_path).nodes["paper"].data["feat"].tolist() == \
        np.arange(8.0).reshape(4, 2).tolist()
    torch.save({"feat": torch.zeros(4)}, tmp_path / "node_data" / "paper-feat.pt")
    with pytest.raises(FormatError, match=r"feature_data\[0\]\.path.*holds dict, not one "):
        read_graphbolt(tmp_path)
    torch.save(Path("x"), tmp_path / "node_data" / "paper-feat.pt")  # a pickled object
    with pytest.raises(FormatError, match=r"does not load with torch.load\(weights_only=True"):
        read_graphbolt(tmp_path)


def test_preprocessed_metadata_is_refused_with_the_way_out(tmp_path: Path) -> None:
    dgl_example(tmp_path)
    (tmp_path / "preprocessed").mkdir()
    (tmp_path / "preprocessed" / "metadata.yaml").write_text(
        "graph_topology:\n  path: preprocessed/fused_csc_sampling_graph.pt\n"
        "  type: FusedCSCSamplingGraph\ninclude_original_edge_id: false\n")
    with pytest.raises(FormatError, match=r"graph_topology.*pickle of a FusedCSCSampling.*"
                                          + str(tmp_path / "metadata.yaml")):
        read_graphbolt(tmp_path / "preprocessed")
    assert read_graphbolt(tmp_path).num_edges() == 5  # the folder DGL preprocessed


# ----- mangled and malicious metadata -------------------------------------------------------
def _mangle(tmp_path: Path, edit) -> Path:
    d = tmp_path / "m"
    write_graphbolt(shop(), d)
    meta = yaml.safe_load((d / "metadata.yaml").read_text())
    edit(meta)
    (d / "metadata.yaml").write_text(yaml.safe_dump(meta))
    return d


def _set(path: list, value):
    def edit(meta: dict) -> None:
        node = meta
        for key in path[:-1]:
            node = node[key]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = value(meta) if callable(value) else value
    return edit


@pytest.mark.parametrize(("path", "value", "match"), [
    (["graph", "edges", 0, "path"], "../../etc/passwd",
     r"graph\.edges\[0\]\.path is '\.\./\.\./etc/passwd', which leads outside"),
    (["graph", "edges", 0, "path"], "/etc/passwd", r"graph\.edges\[0\]\.path .*leads outside"),
    (["feature_data", 0, "path"], "node_data", r"feature_data\[0\]\.path.*not a regular file"),
    (["feature_data", 0, "path"], "node_data/none.npy",
     r"feature_data\[0\]\.path.*does not exist"),
    (["graph"], KeyError, r"field 'graph': missing"),
    (["graph", "nodes", 0, "num"], KeyError, r"graph\.nodes\[0\]\.num.*None, not an integer"),
    (["graph", "nodes", 0, "num"], "5", r"graph\.nodes\[0\]\.num.*'5', not an integer"),
    (["graph", "nodes", 0, "num"], True, r"graph\.nodes\[0\]\.num.*True, not an integer"),
    (["graph", "nodes", 0, "num"], 2, r"graph\.edges\[0\]\.path.*src\[2\] is 2, outside 0\.\.1"),
    (["graph", "nodes", 1, "type"], KeyError, r"graph\.nodes\[1\]\.type.*missing"),
    (["graph", "nodes", 1, "type"], "user", r"node type 'user' is listed twice"),
    (["graph", "edges", 0, "type"], "user:buys", r"graph\.edges\[0\]\.type.*'src:rel:dst'"),
    (["graph", "edges", 0, "format"], "torch", r"graph\.edges\[0\]\.format.*'torch' is not one"),
    (["graph", "edges"], {"a": 1}, r"graph\.edges.*expected a list"),
    (["feature_data", 0, "domain"], "nodes", r"feature_data\[0\]\.domain.*not one of"),
    (["feature_data", 0, "type"], "shop", r"feature_data\[0\]\.type.*'shop' is not a node type"),
    (["feature_data", 0, "name"], "a/b", r"feature_data\[0\]\.name.*holds no '/'"),
    (["feature_data", 0, "name"], "label", r"feature_data\[\d+\]\.name.*given twice"),
    (["feature_data", 0, "in_memory"], "no", r"feature_data\[0\]\.in_memory.*not true or false"),
    (["feature_data", 0, "path"], lambda m: m["graph"]["edges"][0]["path"],
     r"feature_data\[0\]\.path': expected 5 rows of numbers"),
    (["tasks", 0, "train_set", 0, "data", 0, "path"], lambda m: m["feature_data"][0]["path"],
     r"tasks\[0\]\.train_set\[0\]\.data\[0\]\.path.*must be 1-D node IDs"),
    (["tasks", 0, "train_set", 0, "data", 0, "name"], "negative_dsts",
     r"data\[0\]\.name.*'negative_dsts': graphshard reads node sets"),
    (["tasks", 0, "train_set", 0, "data"], [], r"train_set\[0\]\.data.*no seed_nodes"),
    (["tasks", 0, "train_set", 0, "type"], "item:x:user", r"train_set\[0\]\.type.*not a node"),
    (["tasks", 0, "train_set"], "all", r"tasks\[0\]\.train_set.*expected a list"),
    (["tasks"], [[1]], r"tasks\[0\].*expected a mapping"),
])
def test_mangled_metadata_names_file_and_field(tmp_path: Path, path, value, match) -> None:
    d = _mangle(tmp_path, _set(path, value))
    with pytest.raises(FormatError, match=match) as err:
        read_graphbolt(d)
    assert str(d / "metadata.yaml") in str(err.value)


def test_bad_arrays_name_file_and_field(tmp_path: Path) -> None:
    d = tmp_path / "m"
    write_graphbolt(shop(), d)
    meta = yaml.safe_load((d / "metadata.yaml").read_text())
    cases = [
        (meta["graph"]["edges"][0]["path"], np.array([[0.0, 1.0], [1.0, 0.0]]),
         r"graph\.edges\[0\]\.path.*src are float64, not integers"),
        (meta["graph"]["edges"][0]["path"], np.array([0, 1]),
         r"graph\.edges\[0\]\.path.*\(2, E\) array, got shape \(2,\)"),
        (meta["graph"]["edges"][0]["path"], np.array([[0, -1], [1, 0]]),
         r"src\[1\] is -1, outside 0\.\.4"),
        (meta["feature_data"][0]["path"], np.array(["a"] * 5),
         r"feature_data\[0\]\.path': expected 5 rows of numbers.*<U1"),
        (meta["tasks"][0]["train_set"][0]["data"][0]["path"], np.array([99]),
         r"train_set\[0\]\.data\[0\]\.path.*seed node IDs\[0\] is 99"),
        (meta["tasks"][0]["train_set"][0]["data"][1]["path"], np.arange(99),
         r"train_set\[0\]\.data\[1\]\.path.*expected \d+ labels"),
    ]
    for rel, arr, match in cases:
        keep = (d / rel).read_bytes()
        np.save(d / rel, arr)
        with pytest.raises(FormatError, match=match):
            read_graphbolt(d)
        (d / rel).write_bytes(keep)
    rel = meta["feature_data"][0]["path"]
    np.save(d / rel, np.array([{"x": 1}] * 5, dtype=object), allow_pickle=True)  # a pickle
    with pytest.raises(FormatError, match=r"feature_data\[0\]\.path.*not a readable \.npy"):
        read_graphbolt(d)


def test_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "m"
    write_graphbolt(shop(), d)
    np.save(tmp_path / "outside.npy", np.zeros(5))
    rel = yaml.safe_load((d / "metadata.yaml").read_text())["feature_data"][0]["path"]
    (d / rel).unlink()
    (d / rel).symlink_to(tmp_path / "outside.npy")
    with pytest.raises(FormatError, match=r"feature_data\[0\]\.path .*leads outside"):
        read_graphbolt(d)


def test_yaml_that_is_not_metadata(tmp_path: Path) -> None:
    d = tmp_path / "m"
    d.mkdir()
    for text, match in [("graph: [1\n", r"metadata\.yaml:2: not valid YAML"),
                        ("- 1\n", r"field 'metadata\.yaml': expected a mapping"),
                        ("a: !!python/object:os.system {}\n", "not valid YAML"),
                        ("graph: {}\n", r"field 'graph\.nodes': missing or empty")]:
        (d / "metadata.yaml").write_text(text)
        with pytest.raises(FormatError, match=match):
            read_graphbolt(d)
    (d / "metadata.yaml").write_bytes(b"graph: \xff\n")
    with pytest.raises(FormatError, match="not UTF-8"):
        read_graphbolt(d)
    (d / "metadata.yaml").unlink()
    with pytest.raises(FormatError, match=r"without metadata\.yaml"):
        read_graphbolt(d)


# ----- the registry and the command line -----------------------------------------------------
def test_cli_converts_to_and_from_graphbolt(tmp_path: Path) -> None:
    g = shop()
    write_graphbolt(g, tmp_path / "a")
    assert format_of_path(tmp_path / "a") == "graphbolt"
    assert format_of_path(tmp_path / "a" / "metadata.yaml") == "graphbolt"
    assert main(["convert", "--from", "graphbolt", str(tmp_path / "a"), "--to", "chunked",
                 "--out", str(tmp_path / "c")]) == 0
    assert main(["convert", "--from", "chunked", str(tmp_path / "c"), "--to", "graphbolt",
                 "-O", "dataset_name=again", "--out", str(tmp_path / "b")]) == 0
    assert_graphs_equal(g, read_graphbolt(tmp_path / "b"))
    assert yaml.safe_load((tmp_path / "b" / "metadata.yaml").read_text())["dataset_name"] \
        == "again"
    assert main(["convert", "--from", "graphbolt", str(tmp_path / "a"), "-O", "task=none",
                 "--to", "graphbolt", "--out", str(tmp_path / "n")]) == 0
    assert "tasks" not in yaml.safe_load((tmp_path / "n" / "metadata.yaml").read_text())
    assert main(["partition", str(tmp_path / "a"), "-k", "2", "--out",
                 str(tmp_path / "p")]) == 0


def test_convert_help_names_graphbolt_both_ways() -> None:
    from click.testing import CliRunner

    from graphshard.cli import cli

    out = " ".join(CliRunner().invoke(cli, ["convert", "--help"]).output.split())
    assert "graphbolt: DGL GraphBolt OnDiskDataset folder (metadata.yaml" in out
    assert "graphbolt: DGL GraphBolt OnDiskDataset folder: .npy files" in out
