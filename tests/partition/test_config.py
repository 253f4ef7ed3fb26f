"""A partition config opens only files inside its folder that it lists with size and
SHA-256, its keys are checked for their JSON types, and part files whose checksum holds
but whose arrays disagree with the partition book are refused: FormatError naming the
config (or the file) and the field, never a raw KeyError/TypeError or a wrong result."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil

import numpy as np
import pytest

import graphshard as gs
from graphshard.errors import FormatError, ValidationError
from graphshard.storage.files import file_sha256


@pytest.fixture
def parts(tmp_path):
    """A 2-part ring with a node feature, in ``tmp_path/out``; returns the config path."""
    g = gs.graph((np.arange(8), (np.arange(8) + 1) % 8))
    g.ndata["x"] = np.arange(8.0)
    gs.partition_graph(g, "ring", 2, tmp_path / "out", part_method="hash")
    return tmp_path / "out" / "ring.json"


def edit(config, change):
    cfg = json.loads(config.read_text())
    change(cfg)
    config.write_text(json.dumps(cfg))


def relist(cfg, config, rel):
    """Record the size and SHA-256 of ``rel`` (as a writer would have)."""
    file = config.parent / rel
    cfg["graphshard"]["files"][rel] = {"bytes": file.stat().st_size,
                                       "sha256": file_sha256(file)}


@pytest.mark.parametrize("where", ["parent", "absolute", "symlink"])
def test_a_part_path_never_leads_outside_the_folder(parts, where):
    outside = parts.parent.parent / "node_feats.safetensors"
    shutil.copy(parts.parent / "part0" / "node_feats.safetensors", outside)
    rel = {"parent": "../node_feats.safetensors", "absolute": str(outside),
           "symlink": "part0/link.safetensors"}[where]
    if where == "symlink":
        os.symlink(outside, parts.parent / rel)

    def point(cfg):
        cfg["part-0"]["node_feats"] = rel
        cfg["graphshard"]["files"][rel] = cfg["graphshard"]["files"].pop(
            "part0/node_feats.safetensors")  # even listed with the right checksum
    edit(parts, point)
    with pytest.raises(FormatError, match=r"ring.json: part-0.node_feats is .*which leads "
                                          r"outside the folder"):
        gs.load_partition(parts, 0)
    gs.load_partition(parts, 1)


@pytest.mark.parametrize("how", ["unlisted", "no files", "no graphshard"])
def test_only_files_listed_with_size_and_sha256_are_opened(parts, how):
    shutil.copy(parts.parent / "part0" / "node_feats.safetensors",
                parts.parent / "part0" / "copy.safetensors")

    def change(cfg):
        if how == "unlisted":
            cfg["part-0"]["node_feats"] = "part0/copy.safetensors"
        elif how == "no files":
            del cfg["graphshard"]["files"]
        else:
            del cfg["graphshard"]
    edit(parts, change)
    with pytest.raises(FormatError, match=r"ring.json: part-0.\w+ is '.*', which "
                                          r"graphshard.files does not list"):
        gs.load_partition(parts, 0, verify=False)


@pytest.mark.parametrize(("path", "value", "field"), [
    (("num_parts",), "2", "num_parts"),
    (("num_parts",), True, "num_parts"),
    (("node_map",), 5, "node_map"),
    (("node_map", "_N"), {"a": 1}, "node_map"),
    (("node_map", "_N", 0), [0, "4"], r"node_map\['_N'\]\[0\]"),
    (("node_map", "_N", 0), [0, 2**64], r"node_map\['_N'\]\[0\]"),
    (("node_map", "_N", 0), None, r"node_map\['_N'\]\[0\]"),
    (("node_map", "_N", 1), [5, 8], "node_map"),  # not contiguous
    (("edge_map",), [], "edge_map"),
    (("ntypes",), [], "ntypes"),
    (("ntypes",), {"_N": 1}, "ntypes"),
    (("etypes",), {"x": 0}, "etypes"),
    (("part-0",), [], "part-0"),
    (("part-0",), None, "part-0"),
    (("part-0", "part_graph"), 5, "part-0.part_graph"),
    (("part-0", "part_graph"), "", "part-0.part_graph"),
    (("part-0", "node_feats"), "part1/node_feats.safetensors", "part-0.node_feats"),
    (("graph_name",), 5, "graph_name"),
    (("graphshard",), 5, "graphshard"),
    (("graphshard", "files"), [], "graphshard"),
    (("graphshard", "files", "part0/graph.safetensors"), 5, "part-0.part_graph"),
    (("graphshard", "files", "part0/graph.safetensors", "bytes"), "12", "part-0.part_graph"),
    (("graphshard", "files", "part0/graph.safetensors", "sha256"), None, "part-0.part_graph"),
    (("ntypes",), None, "ntypes"),  # deleted
])
def test_type_confusion_in_the_config_is_a_format_error(parts, path, value, field):
    def change(cfg):
        node = cfg
        for key in path[:-1]:
            node = node[key]
        if path == ("ntypes",) and value is None:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    edit(parts, change)
    with pytest.raises(FormatError, match=rf"ring.json: .*{field}") as info:
        gs.load_partition(parts, 0)
    assert info.value.path == str(parts)
    if not field.startswith("part-0.") and "graphshard" not in field:
        with pytest.raises(FormatError, match=rf"ring.json: .*{field}"):
            gs.load_partition_book(parts)


def test_part_id_of_the_wrong_type_is_a_validation_error(parts):
    with pytest.raises(ValidationError, match="part_id must be an integer, got '0'"):
        gs.load_partition(parts, "0")


def test_part_arrays_behind_a_valid_checksum_are_checked_against_the_book(parts):
    """Part 1's graph in part 0's place, listed with its true size and SHA-256: the
    checksum holds, the IDs do not (a silent wrong result before)."""
    rel = "part0/graph.safetensors"
    shutil.copy(parts.parent / "part1" / "graph.safetensors", parts.parent / rel)
    edit(parts, lambda cfg: relist(cfg, parts, rel))
    with pytest.raises(FormatError, match=r"part0.graph.safetensors: node/_ID of the inner "
                                          r"nodes must be 0, 1, \.\.\. \(the book's range "
                                          r"of part 0\)"):
        gs.load_partition(parts, 0)


def test_feature_rows_behind_a_valid_checksum_are_checked(parts):
    from graphshard.partition.files import write_features

    rel = "part0/node_feats.safetensors"
    write_features(parts.parent / rel, {"_N/x": np.zeros(3)})  # the part has 4 nodes
    edit(parts, lambda cfg: relist(cfg, parts, rel))
    with pytest.raises(FormatError, match=r"node_feats.safetensors: feature '_N/x' has 3 "
                                          r"rows, but part 0 has 4 '_N' nodes"):
        gs.load_partition(parts, 0)
    write_features(parts.parent / rel, {"other/x": np.zeros(4)})
    edit(parts, lambda cfg: relist(cfg, parts, rel))
    with pytest.raises(FormatError, match=r"feature 'other/x' is not '<type>/<name>'"):
        gs.load_partition(parts, 0)


@pytest.mark.parametrize(("tensors", "meta", "message"), [
    ({"indptr": [0, 1, 2, 3, 9]}, None, r"sparse feature '_N/s' is incomplete or "
                                        r"inconsistent \(SparseRows indptr must .* end at"),
    ({"indices": [0, 1, 7, 2]}, None, r"'_N/s' .*indices\[2\] = 7 is not a column in "
                                      r"\[0, 3\)"),
    ({}, '{"_N/s": 3, "_N/t": 2}', r"sparse feature '_N/t' is incomplete"),
    ({}, '{"_N/s": -3}', r"metadata 'sparse' must map feature names to column counts"),
    ({}, '["_N/s"]', r"metadata 'sparse' must map"),
    ({}, "{", r"metadata 'sparse' is not JSON"),
])
def test_sparse_features_behind_a_valid_checksum_are_checked(parts, tensors, meta, message):
    from graphshard.storage.tensorfile import save_tensors

    rel = "part0/node_feats.safetensors"
    arrays = {"_N/x": np.zeros(4), "_N/s/indptr": np.array([0, 1, 2, 3, 4]),
              "_N/s/indices": np.array([0, 1, 2, 0], np.int32),
              "_N/s/values": np.ones(4, np.float32)}
    arrays.update({f"_N/s/{k}": np.array(v, arrays[f"_N/s/{k}"].dtype)
                   for k, v in tensors.items()})
    save_tensors(parts.parent / rel, arrays, {"ragged": "[]",
                                              "sparse": meta or '{"_N/s": 3}'})
    edit(parts, lambda cfg: relist(cfg, parts, rel))
    with pytest.raises(FormatError, match=message) as info:
        gs.load_partition(parts, 0)
    assert "node_feats.safetensors" in str(info.value)


def test_a_huge_declared_range_is_refused_without_allocating_it(parts):
    """The fuzz test's 79-second case: part 1 declared with 2**62 nodes made the checks
    build an array of the declared size (MemoryError, or minutes for 2**31)."""
    edit(parts, lambda cfg: cfg["node_map"]["_N"][1].__setitem__(1, 2**62))
    with pytest.raises(FormatError, match=r"part1.graph.safetensors: node/inner_node must "
                                          r"mark the first 4611686018427387900 nodes"):
        gs.load_partition(parts, 1)


@pytest.mark.parametrize("etype", ["_E", "x:_E:_N", "_N:_E"])
def test_edge_types_must_be_canonical_to_load_a_part(parts, etype):
    """A relation name alone (older DGL configs) still gives a book, but a part loaded with
    it had canonical_etypes [('_E',)] before."""
    def rename(cfg):
        cfg["edge_map"] = {etype: cfg["edge_map"].pop("_N:_E:_N")}
        cfg["etypes"] = {etype: 0}
    edit(parts, rename)
    with pytest.raises(FormatError, match=r"ring.json: etypes must be 'src:rel:dst' over the "
                                          r"node types \['_N'\], got '" + etype):
        gs.load_partition(parts, 0)
    assert gs.load_partition_book(parts).num_partitions() == 2


def test_the_typed_config_holds_what_the_file_holds(parts):
    """read_config's object writes back the same JSON, key for key and in the same order."""
    cfg = gs.partition.read_config(parts)
    raw = json.loads(parts.read_text())
    assert cfg.to_dict() == raw
    assert list(cfg.to_dict()) == list(raw)
    assert list(cfg.to_dict()["graphshard"]) == list(raw["graphshard"])
    assert (cfg.graph_name, cfg.num_parts, cfg.halo_hops, cfg.part_method) == ("ring", 2, 1,
                                                                               "hash")
    assert cfg.ntypes == ["_N"] and cfg.canonical_etypes() == [("_N", "_E", "_N")]
    assert cfg.type_sizes("node") == {"_N": 8} and cfg.type_sizes("edge") == {"_N:_E:_N": 8}
    record = cfg.files["part0/graph.safetensors"]
    assert (record.bytes, record.sha256) == tuple(
        raw["graphshard"]["files"]["part0/graph.safetensors"].values())
    assert cfg.read_report().edge_cut == raw["graphshard"]["report"]["edge_cut"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.num_parts = 3


def test_a_config_read_once_is_not_parsed_again(parts, tmp_path):
    """Loaders, the book, the whole graph and a co-located server take the object: a config
    file damaged after reading does not matter to them."""
    from graphshard.distributed._server import GraphServer
    from graphshard.distributed.whole import assemble_graph

    cfg = gs.partition.read_config(parts)
    parts.write_text("{")
    assert gs.load_partition(cfg, 1)[0].num_nodes() == 8  # 4 inner, 4 halo
    assert gs.load_partition_book(cfg).num_partitions() == 2
    assert assemble_graph(cfg).num_edges() == 8
    server = GraphServer(cfg, 0, str(tmp_path / "tensors"))
    assert server.config == str(parts.resolve())
    with pytest.raises(FormatError, match=r"ring\.json: not valid JSON"):
        gs.load_partition(parts, 1)


def test_what_is_neither_a_path_nor_a_config_is_refused(parts):
    from graphshard.partition_book import RangePartitionBook

    with pytest.raises(ValidationError, match="config must be the path of a partition config "
                                              "or a PartitionConfig, got dict"):
        gs.load_partition_book(json.loads(parts.read_text()))
    with pytest.raises(ValidationError, match="config must be a PartitionConfig"):
        RangePartitionBook.from_config(json.loads(parts.read_text()))


def test_a_config_without_a_report_says_so(parts):
    edit(parts, lambda cfg: cfg["graphshard"].pop("report"))
    with pytest.raises(ValidationError, match=r"ring\.json: no graphshard report in this config"):
        gs.partition.read_config(parts).read_report()
