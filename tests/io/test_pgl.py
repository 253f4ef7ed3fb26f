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


# ----- issue 24: exact IDs and values, no raw exceptions ----------------------------------------

def test_uint64_slot_values_stay_exact(tmp_path: Path) -> None:
    # 18446744073709551615 used to become float32 1.8446744e19
    (tmp_path / "e.txt").write_text("1\t2\n3\t2\n")
    (tmp_path / "n.txt").write_text("u\t1\ts 1:18446744073709551615\nu\t3\ts 1:5\ni\t2\n")
    g = read_pgl({"u2buy2i": tmp_path / "e.txt"}, tmp_path / "n.txt")
    col = g.nodes["u"].data["s_1"]
    assert col.dtype == np.uint64 and col[:, 0].tolist() == [2**64 - 1, 5]


def test_uint64_node_ids_stay_exact(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("18446744073709551615\t2\n5\t2\n")
    g = read_pgl({"u2buy2i": tmp_path / "e.txt"})
    ids = g.nodes["u"].data["node_id"]
    assert ids.dtype == np.uint64 and ids.tolist() == [5, 2**64 - 1]
    assert g.edges(etype="u2buy2i")[0].tolist() == [1, 0]


@pytest.mark.parametrize(("edges", "nodes", "match"), [
    # a float ID in an edge file: was a raw ArrowInvalid
    (b"1.5\t2\n3\t4\n", None, r"e\.txt:1: field 'src': row 1: '1\.5' is not an integer node ID"),
    (b"1\t2\n\n3\tx\n", None, r"e\.txt:3: field 'dst': row 2: 'x' is not an integer node ID"),
    (b"1\t2\n", b"u\t1\ni\t2\nu\t1.5\n", r"n\.txt:3: field 'id'.*'1\.5' is not an integer"),
    # undecodable node file: was a raw UnicodeDecodeError
    (b"1\t2\n", b"u\t1\ni\t\xff\n", r"n\.txt:2: line is not UTF-8 text"),
    (b"\xff\t2\n", None, r"e\.txt: unreadable edge file"),
    # one word among numbers used to turn the whole feature into text
    (b"1\t2\n", b"u\t1\ts 1:abc\nu\t3\ts 1:4\ni\t2\n", r"n\.txt:1: field 's_1': feature "
     r"value 'abc' is not a number"),
    (b"1\t2\n", b"u\t1\ts 1:99999999999999999999\ni\t2\n", r"n\.txt:1: field 's_1': feature "
     r"value 99999999999999999999 does not fit in 64 bits"),
])
def test_bad_ids_and_values_name_file_and_line(tmp_path: Path, edges: bytes,
                                               nodes: bytes | None, match: str) -> None:
    (tmp_path / "e.txt").write_bytes(edges)
    if nodes is not None:
        (tmp_path / "n.txt").write_bytes(nodes)
    with pytest.raises(FormatError, match=match):
        read_pgl({"u2buy2i": tmp_path / "e.txt"}, None if nodes is None else tmp_path / "n.txt")


def test_text_ids_and_text_features(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("1\tabc\n3\tdef\n")
    (tmp_path / "n.txt").write_text("u\t1\tc hello\nu\t3\tc world\ni\tabc\ni\tdef\n")
    g = read_pgl({"u2buy2i": tmp_path / "e.txt"}, tmp_path / "n.txt")
    assert g.nodes["u"].data["node_id"].tolist() == [1, 3]
    assert bytes(g.nodes["u"].data["c"][1]) == b"world"
    assert g.edges(etype="u2buy2i")[1].tolist() == [0, 1]


def test_non_ascii_text_feature_and_unsafe_feature_name(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("1\t2\n")
    (tmp_path / "n.txt").write_text("u\t1\tc café\ni\t2\n", encoding="utf-8")
    g = read_pgl({"u2buy2i": tmp_path / "e.txt"}, tmp_path / "n.txt")
    assert bytes(g.nodes["u"].data["c"][0]).decode() == "café"  # was a raw Ragged error
    (tmp_path / "n.txt").write_text("u\t1\n\ni\t2\t../../x 1\n")
    with pytest.raises(FormatError, match=r"n\.txt:3: .*feature name must be a plain file name"):
        read_pgl({"u2buy2i": tmp_path / "e.txt"}, tmp_path / "n.txt")
