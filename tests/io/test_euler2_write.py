"""write_euler(version=2): Euler 2's one graph.json document, read back by read_euler."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from io_helpers import FAST, assert_graphs_equal, random_graph

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.io import convert, read_euler, write_euler


@settings(max_examples=25, **FAST)
@given(seed=st.integers(0, 2**32 - 1))
def test_round_trip_random(tmp_path: Path, seed: int) -> None:
    g = random_graph(seed, euler_safe=True)
    out = tmp_path / str(seed)
    write_euler(g, out, version=2)
    assert sorted(p.name for p in out.iterdir()) == ["graph.json", "meta.json"]
    h = read_euler(out)
    assert_graphs_equal(g, h, src_sorted=True, ignore=("node_id",))
    write_euler(h, tmp_path / f"{seed}-again", version=2)
    assert_graphs_equal(h, read_euler(tmp_path / f"{seed}-again"))


def test_the_document_is_euler2(tmp_path: Path) -> None:
    g = gs.heterograph({("u", "buys", "i"): ([0, 1], [0, 0])})
    g.nodes["u"].data["tags"] = gs.Ragged(np.array([3, 4, 5], np.int64),
                                          np.array([0, 2, 3]))
    g.nodes["i"].data["price"] = np.array([[1.5, 2.0]], np.float32)
    g.edges["buys"].data["weight"] = np.array([0.5, 2.0])
    write_euler(g, tmp_path, version=2)
    doc = json.loads((tmp_path / "graph.json").read_text())
    assert doc["nodes"][0] == {"id": 0, "type": 0, "weight": 1.0, "features": [
        {"name": "tags", "type": "sparse", "value": [3, 4]}]}
    assert doc["nodes"][2]["features"] == [{"name": "price", "type": "dense",
                                            "value": [1.5, 2.0]}]
    assert doc["edges"][1] == {"src": 1, "dst": 2, "type": 0, "weight": 2.0, "features": []}
    # without our meta, as Euler's own tools would hand it over: still the same structure
    (tmp_path / "meta.json").unlink()
    h = read_euler(tmp_path / "graph.json")
    assert h.num_edges() == 2 and h.edata["weight"].tolist() == [0.5, 2.0]


def test_the_shared_euler2_example_round_trips(tmp_path: Path, shared_file) -> None:
    src = shared_file("format-euler", "euler2_tools_test_data", "graph.json")
    g = read_euler(src, meta={})
    convert("euler", src, "euler", tmp_path / "e", meta={}, version=2)
    assert_graphs_equal(g, read_euler(tmp_path / "e"), src_sorted=True)


def test_version_2_refuses_partitions_and_other_versions(tmp_path: Path) -> None:
    ring = gs.graph(([0, 1], [1, 0]))
    with pytest.raises(ValidationError, match="num_partitions must be 1, got 2"):
        write_euler(ring, tmp_path / "a", 2, version=2)
    with pytest.raises(ValidationError, match="version must be 1 or 2"):
        write_euler(ring, tmp_path / "b", version=3)
    assert not list(tmp_path.iterdir())


def test_a_sparse_feature_is_refused_by_name(tmp_path: Path) -> None:
    ring = gs.graph(([0, 1], [1, 0]))
    ring.ndata["bow"] = gs.SparseRows([0, 1, 2], [0, 3], [1.0, 2.0], 4)
    with pytest.raises(ValidationError, match="feature 'bow' is sparse"):
        write_euler(ring, tmp_path / "a")
    assert not list(tmp_path.iterdir())
