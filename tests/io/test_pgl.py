"""PGL / Graph4Rec tab-separated files."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from io_helpers import FAST

import graphshard as gs
from graphshard.errors import FormatError
from graphshard.io import read_pgl


def test_graph4rec_toy(shared_file) -> None:
    d = shared_file("format-pgl-graph4rec-toy")
    g = read_pgl(f"u2buy2i:{d}/u2buy2i_with_weight.txt,u2click2i:{d}/u2click2i.txt",
                 f"u:{d}/node_types_with_features.txt,i:{d}/node_types_with_features.txt",
                 symmetry=True)
    assert g.ntypes == ["u", "i"] and (g.num_nodes("u"), g.num_nodes("i")) == (144, 155)
    assert g.canonical_etypes == [("u", "u2buy2i", "i"), ("i", "i2buy2u", "u"),
                                  ("u", "u2click2i", "i"), ("i", "i2click2u", "u")]
    assert g.num_edges("u2buy2i") == 790 and g.num_edges("i2click2u") == 888
    assert g.edges["u2buy2i"].data["weight"][0] == np.float32(0.34)
    assert "weight" not in g.edges["u2click2i"].data
    s, d_ = g.edges(etype="u2buy2i")
    rs, rd = g.edges(etype="i2buy2u")
    assert (s == rd).all() and (d_ == rs).all()
    u = g.nodes["u"].data
    row = u["node_id"].tolist().index(1127)
    assert (u["s_1"][row, 0], u["s_2"][row, 0]) == (583, 697)


def test_without_node_files(shared_file) -> None:
    d = shared_file("format-pgl-graph4rec-toy")
    g = read_pgl({"u2click2i": d / "u2click2i.txt"})
    ids = g.nodes["u"].data["node_id"]
    assert (np.diff(ids) > 0).all()
    src = g.edges(etype="u2click2i")[0]
    first = (d / "u2click2i.txt").read_text().split("\n")[0].split("\t")
    assert ids[src[0]] == int(first[0])


def test_gpu_engine_features_and_homogeneous_symmetry(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("37\t111\n")
    (tmp_path / "n.txt").write_text("u\t37\ta 0.34\tb 13 14\tc hello\nu\t111\ta 0.21\n")
    g = read_pgl({"u2f2u": tmp_path / "e.txt"}, tmp_path / "n.txt", symmetry=True)
    assert g.canonical_etypes == [("u", "u2f2u", "u")]  # its own inverse: one type
    assert g.edges(etype="u2f2u")[0].tolist() == [0, 1]
    data = g.nodes["u"].data
    assert data["a"].tolist() == [[np.float32(0.34)], [np.float32(0.21)]]
    assert data["b"][0].tolist() == [13, 14] and len(data["b"][1]) == 0
    assert bytes(data["c"][0]) == b"hello"


@pytest.mark.parametrize("name", ["u2i", "u2buy2i"])
def test_symmetry_names_reverse_types_as_pgl(tmp_path: Path, name: str) -> None:
    # the README's metapath="u2i-i2u" on a graph read with symmetry=True (issue 24)
    (tmp_path / "e.txt").write_text("1\t7\n2\t7\n2\t8\n")
    g = read_pgl({name: tmp_path / "e.txt"}, symmetry=True)
    inverse = "i2u" if name == "u2i" else "i2buy2u"
    assert g.canonical_etypes == [("u", name, "i"), ("i", inverse, "u")]
    walk = gs.sampling.random_walk(g, [0, 1], 5, metapath=f"{name}-{inverse}", seed=0)
    assert walk.node_types() == ["u", "i", "u", "i", "u"] and (walk.traces >= 0).all()


def test_error_endpoint_not_a_node(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("1\t2\n1\t3\n")
    (tmp_path / "n.txt").write_text("u\t1\ni\t2\n")
    msg = r"e\.txt:2: field 'dst'.*ID 3 is not a node of type 'i'"
    with pytest.raises(FormatError, match=msg) as e:
        read_pgl({"u2buy2i": tmp_path / "e.txt"}, {"u": tmp_path / "n.txt",
                                                    "i": tmp_path / "n.txt"})
    assert e.value.line == 2


def test_error_bad_lines(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("1\t2\n1\n")
    with pytest.raises(FormatError, match=r"e\.txt"):
        read_pgl({"u2buy2i": tmp_path / "e.txt"})
    with pytest.raises(FormatError, match=r"missing\.txt.*does not exist"):
        read_pgl({"u2buy2i": tmp_path / "missing.txt"})


@settings(max_examples=40, **FAST)
@given(blob=st.binary(max_size=60))
def test_fuzz(tmp_path: Path, blob: bytes) -> None:
    (tmp_path / "e.txt").write_bytes(b"1\t2\t0.5\n" + blob)
    (tmp_path / "n.txt").write_bytes(b"u\t1\ni\t2\n" + blob)
    for nodes in (None, tmp_path / "n.txt"):
        with contextlib.suppress(FormatError):
            read_pgl({"u2buy2i": tmp_path / "e.txt"}, nodes)
