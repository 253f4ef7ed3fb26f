"""Issue 41 item 5: a link-split file (``<name>-link.json``) is checked like the format
readers check theirs: its ``tensors`` stays a plain file name in its folder, its
``num_nodes`` is the graph's, and seeded mutations give our error or the stored edges."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

import graphshard as gs
from fuzzing import mutate_json, mutate_text, run_fuzz
from graphshard.storage.files import file_sha256
from graphshard.storage.tensorfile import load_tensors, save_tensors
from graphshard.train.link_files import link_split_path, load_link_split, partition_for_link


@pytest.fixture(scope="module")
def parts(tmp_path_factory) -> Path:
    """A 2-part partition of a 60-node graph with its link split."""
    out = tmp_path_factory.mktemp("linkparts")
    g = gs.datasets.sbm(60, 300, num_blocks=2, num_features=2, seed=0)
    return partition_for_link(g, "sbm", 2, out, test_fraction=0.2, num_negatives=3,
                              part_method="random").config_path


def _copy(config: Path, folder: Path) -> Path:
    """The config, the link JSON and its tensors (all load_link_split reads) in folder."""
    link = link_split_path(config)
    for f in (config, link, link.with_suffix(".safetensors")):
        shutil.copy(f, folder / f.name)
    return folder / config.name


@pytest.mark.parametrize("tensors", ["", ".", "..", "/", "../sbm-link.safetensors", 7, None])
def test_tensors_must_be_a_file_name_in_the_folder(parts, tmp_path, tensors):
    config = _copy(parts, tmp_path)
    link = link_split_path(config)
    meta = json.loads(link.read_text())
    link.write_text(json.dumps({**meta, "tensors": tensors}))
    with pytest.raises(gs.FormatError, match=r"sbm-link\.json: tensors ") as info:
        load_link_split(config)
    assert info.value.field == "tensors"


@pytest.mark.parametrize("num_nodes", [61, 10**6, 59, -1, 1.5, "60", True, None])
def test_num_nodes_must_be_the_graphs(parts, tmp_path, num_nodes):
    config = _copy(parts, tmp_path)
    link = link_split_path(config)
    meta = json.loads(link.read_text())
    link.write_text(json.dumps({**meta, "num_nodes": num_nodes}))
    with pytest.raises(gs.FormatError, match=r"sbm-link\.json: num_nodes ") as info:
        load_link_split(config)
    assert info.value.field == "num_nodes"


def test_held_out_ids_beyond_the_graph_are_refused(parts, tmp_path):
    """Tensors with node IDs past the 60-node graph, their SHA-256 and a num_nodes that
    covers them written consistently: refused, as the graph has 60 nodes."""
    config = _copy(parts, tmp_path)
    link = link_split_path(config)
    tensors, _ = load_tensors(link.with_suffix(".safetensors"), mmap=False)
    tensors = {k: np.asarray(v).copy() for k, v in tensors.items()}
    tensors["test/dst"][0] = 1000
    meta = json.loads(link.read_text())
    meta["sha256"] = save_tensors(link.with_suffix(".safetensors"), tensors)
    meta["num_nodes"] = 2000
    link.write_text(json.dumps(meta))
    with pytest.raises(gs.FormatError, match=r"num_nodes is 2000, but sbm\.json has 60 nodes"):
        load_link_split(config)
    meta["num_nodes"] = 60
    link.write_text(json.dumps(meta))
    with pytest.raises(gs.FormatError, match=r"test/dst has node IDs outside \[0, 60\)"):
        load_link_split(config)


def test_fuzz_link_split(parts, tmp_path):
    want = load_link_split(parts)
    meta = json.loads(link_split_path(parts).read_text())
    assert file_sha256(parts) == meta["config_sha256"]

    def case(rng: random.Random, folder: Path) -> Path:
        config = _copy(parts, folder)
        link_split_path(config).write_text(json.dumps(mutate_json(rng, meta)))
        return config

    def same(got) -> str | None:  # the files are checksummed: accepted means unchanged
        for s in ("val", "test"):
            a, b = getattr(got, s), getattr(want, s)
            if not all(np.array_equal(getattr(a, f), getattr(b, f))
                       for f in ("src", "dst", "neg_dst")):
                return f"{s} edges differ from the stored ones"
        return None

    run_fuzz("link_split", case, load_link_split, tmp_path, check=same, seed=41)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.bool_])
def test_held_out_ids_must_be_integers(parts, tmp_path, dtype):
    """IDs stored as floats (1.5) were cast to int64 (1) silently; with a consistent
    SHA-256 in the JSON such a file is refused naming the tensor."""
    config = _copy(parts, tmp_path)
    link = link_split_path(config)
    tensors, _ = load_tensors(link.with_suffix(".safetensors"), mmap=False)
    tensors = {k: np.asarray(v).copy() for k, v in tensors.items()}
    tensors["val/src"] = tensors["val/src"].astype(dtype)
    if dtype is not np.bool_:
        tensors["val/src"][0] += 0.5
    meta = json.loads(link.read_text())
    meta["sha256"] = save_tensors(link.with_suffix(".safetensors"), tensors)
    link.write_text(json.dumps(meta))
    with pytest.raises(gs.FormatError, match=r"tensor 'val/src' holds .*, expected integer"):
        load_link_split(config)


def test_fuzz_link_split_text(parts, tmp_path):
    """The link JSON's text mutated (bytes, tokens, lines): our error naming the file, or
    the stored edges."""
    want = load_link_split(parts)
    text = link_split_path(parts).read_text()

    def case(rng: random.Random, folder: Path) -> Path:
        config = _copy(parts, folder)
        link_split_path(config).write_bytes(mutate_text(rng, text.replace(", ", ",\n")))
        return config

    def same(got) -> str | None:
        for s in ("val", "test"):
            a, b = getattr(got, s), getattr(want, s)
            if not all(np.array_equal(getattr(a, f), getattr(b, f))
                       for f in ("src", "dst", "neg_dst")):
                return f"{s} edges differ from the stored ones"
        return None

    run_fuzz("link_split_text", case, load_link_split, tmp_path, check=same, seed=412)


def test_a_heterogeneous_split_is_stored_with_its_edge_type_and_checked(shop_hetero, tmp_path):
    """The held-out 'buys' pairs go to the type-wise IDs of 'u' (sources) and 'i'
    (destinations, negatives); a stored type the config lacks, or an ID beyond its own
    node type's count, is a FormatError naming the field."""
    res = partition_for_link(shop_hetero, "shop", 2, tmp_path, etype="buys",
                             reverse_etype="bought_by", test_fraction=0.2, num_negatives=4,
                             part_method="random")
    held = load_link_split(res.config_path)
    assert held.etype == ("u", "buys", "i")
    for name in ("val", "test"):
        got, want = getattr(held, name), getattr(res.split.held_out, name)
        np.testing.assert_array_equal(res.orig_nids["u"][got.src], want.src)
        np.testing.assert_array_equal(res.orig_nids["i"][got.dst], want.dst)
        np.testing.assert_array_equal(res.orig_nids["i"][got.neg_dst], want.neg_dst)
    link = link_split_path(res.config_path)
    meta = json.loads(link.read_text())
    assert meta["type_nodes"] == {"u": 160, "i": 120}
    link.write_text(json.dumps({**meta, "etype": ["u", "likes", "i"]}))
    with pytest.raises(gs.FormatError, match=r"etype \['u', 'likes', 'i'\] is not an edge "
                                             r"type of shop\.json") as err:
        load_link_split(res.config_path)
    assert err.value.field == "etype"
    tensors, _ = load_tensors(link.with_suffix(".safetensors"), mmap=False)
    tensors = {k: np.asarray(v).copy() for k, v in tensors.items()}
    tensors["val/src"][0] = 150  # a 'u' ID (160 of them) beyond the 120 'i' nodes: fine
    tensors["val/dst"][0] = 130  # an 'i' ID beyond the 120 'i' nodes
    meta["sha256"] = save_tensors(link.with_suffix(".safetensors"), tensors)
    link.write_text(json.dumps(meta))
    with pytest.raises(gs.FormatError, match=r"val/dst has node IDs outside \[0, 120\)"):
        load_link_split(res.config_path)
