"""Edge lists through pyarrow: CSV/TSV/Parquet/NPY/NPZ, string IDs, edge types."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from io_helpers import FAST

from graphshard.errors import FormatError, ValidationError
from graphshard.io import node_id_strings, read_edgelist
from graphshard.io.convert import read_graph


def test_csv_named_columns(tmp_path: Path) -> None:
    p = tmp_path / "e.csv"
    p.write_text("a,b,w,t\n0,1,0.5,3\n2,0,1.5,4\n")
    g = read_edgelist(p, src="a", dst="b", weight="w", features=["t"])
    assert g.num_nodes() == 3 and g.edges()[0].tolist() == [0, 2]
    assert g.edata["weight"].tolist() == [0.5, 1.5] and g.edata["t"].tolist() == [3, 4]


def test_tsv_headerless_and_strings(tmp_path: Path) -> None:
    p = tmp_path / "e.tsv"
    p.write_text("# comment\nbob\talice\ncarol\tbob\n")
    g = read_edgelist(p, header=False)
    assert node_id_strings(g.ndata["node_id"]) == ["alice", "bob", "carol"]
    assert g.edges()[0].tolist() == [1, 2] and g.edges()[1].tolist() == [0, 1]


def test_parquet_etype_column(tmp_path: Path) -> None:
    p = tmp_path / "e.parquet"
    pq.write_table(pa.table({"src": ["u1", "u2", "i1"], "dst": ["i1", "i2", "u1"],
                             "rel": ["user:buys:item", "user:buys:item", "item:by:user"]}), p)
    g = read_edgelist(p, etype="rel")
    assert g.canonical_etypes == [("user", "buys", "item"), ("item", "by", "user")]
    assert node_id_strings(g.nodes["item"].data["node_id"]) == ["i1", "i2"]
    assert g.edges(etype="by")[1].tolist() == [0]


def test_npy_npz(tmp_path: Path) -> None:
    np.save(tmp_path / "e.npy", np.array([[0, 1], [1, 2]]))
    assert read_edgelist(tmp_path / "e.npy").edges()[1].tolist() == [1, 2]
    np.savez(tmp_path / "e.npz", src=np.array([5, 6]), dst=np.array([6, 5]))
    g = read_edgelist(tmp_path / "e.npz", relabel=True)
    assert g.ndata["node_id"].tolist() == [5, 6] and g.edges()[0].tolist() == [0, 1]


def test_blogcatalog(shared_file) -> None:
    g = read_edgelist(shared_file("blogcatalog-pgl", "edges.csv"), header=False, relabel=True)
    assert (g.num_nodes(), g.num_edges()) == (10312, 333983)


def test_errors(tmp_path: Path) -> None:
    p = tmp_path / "e.csv"
    p.write_text("src,dst\n0,1\n2,\n")
    with pytest.raises(FormatError, match=r"e\.csv:3: field 'dst': missing value"):
        read_edgelist(p)
    with pytest.raises(FormatError, match=r"no column 'w'; columns are \['src', 'dst'\]"):
        read_edgelist(p, weight="w")
    with pytest.raises(FormatError, match="does not exist"):
        read_edgelist(tmp_path / "nope.csv")


@settings(max_examples=40, **FAST)
@given(blob=st.binary(max_size=80), suffix=st.sampled_from([".csv", ".parquet", ".npy"]))
def test_fuzz(tmp_path: Path, blob: bytes, suffix: str) -> None:
    p = tmp_path / f"e{suffix}"
    p.write_bytes(b"src,dst\n0,1\n" + blob if suffix == ".csv" else blob)
    with contextlib.suppress(FormatError):
        read_edgelist(p)


# ----- issue 24: bounded ID spaces, explicit ID parsing, no raw exceptions ---------------------

def test_sparse_id_space_refused_before_any_work(tmp_path: Path) -> None:
    # 2 lines, one ID of 999999999999: partition used to allocate terabytes
    p = tmp_path / "e.csv"
    p.write_text("src,dst\n0,999999999999\n1,2\n")
    with pytest.raises(FormatError, match=r"e\.csv:2: field 'dst': row 1: the largest node ID, "
                       r"999999999999, implies 1,000,000,000,000 nodes for 2 edges \(8\.0 TB "
                       r".*relabel=True") as err:
        read_edgelist(p)
    assert (err.value.line, err.value.field, err.value.value) == (2, "dst", 999999999999)
    with pytest.raises(FormatError, match="implies 1,000,000,000,000 nodes"):
        read_graph("edgelist", [p])  # what `graphshard partition e.csv` calls
    g = read_edgelist(p, relabel=True)
    assert g.ndata["node_id"].tolist() == [0, 1, 2, 999999999999]
    assert read_edgelist(p, num_nodes=10**12).num_nodes() == 10**12  # declared: accepted


def test_sparse_id_space_per_node_type(tmp_path: Path) -> None:
    p = tmp_path / "e.csv"
    p.write_text("src,dst,t\n0,5000000000,u:buys:i\n1,2,u:buys:i\n")
    with pytest.raises(FormatError, match=r"node ID of type 'i', 5000000000, implies"):
        read_edgelist(p, etype="t")


def test_ids_moderately_sparse_are_kept(tmp_path: Path) -> None:
    p = tmp_path / "e.csv"
    p.write_text("src,dst\n0,1000000\n")  # 1M + 1 nodes: under the 2**20 floor
    assert read_edgelist(p).num_nodes() == 1000001


@pytest.mark.parametrize(("token", "line"), [("abc", 3), ("1.5", 3), ("true", 3), ("", 3)])
def test_one_bad_token_is_an_error_naming_row_and_column(tmp_path: Path, token: str,
                                                          line: int) -> None:
    # it used to turn the whole file into string IDs, renumbering every node
    p = tmp_path / "e.csv"
    p.write_text(f"# comment\nsrc,dst\n0,1\n\n{token},2\n3,4\n")
    what = "missing value" if token == "" else f"'{token}' is not an integer node ID"
    with pytest.raises(FormatError, match=rf"e\.csv:{line + 2}: field 'src': .*{what}") as err:
        read_edgelist(p)
    assert err.value.line == line + 2


def test_bad_token_after_the_first_block(tmp_path: Path) -> None:
    # pyarrow infers int64 from the first block and fails on a later one
    p = tmp_path / "e.csv"
    rows = "".join(f"{i},{i + 1}\n" for i in range(300000))
    p.write_text("src,dst\n" + rows + "abc,1\n")
    with pytest.raises(FormatError, match=r"e\.csv:300002: field 'src': row 300001: 'abc'"):
        read_edgelist(p)


def test_string_ids_when_a_whole_column_is_text_and_logged(tmp_path: Path, caplog) -> None:
    p = tmp_path / "e.csv"
    p.write_text("src,dst\nalice,bob\nbob,carol\n")
    with caplog.at_level(logging.INFO, logger="graphshard"):
        g = read_edgelist(p)
    assert node_id_strings(g.ndata["node_id"]) == ["alice", "bob", "carol"]
    assert "column 'src' holds no numbers: node IDs are read as strings" in caplog.text
    with pytest.raises(FormatError, match=r"e\.csv:2: field 'src': row 1: 'alice' is not an "):
        read_edgelist(p, ids="int")


def test_ids_str_reads_every_id_as_text(tmp_path: Path) -> None:
    p = tmp_path / "e.csv"
    p.write_text("src,dst\n0,1\nabc,2\n007,1\n")
    g = read_edgelist(p, ids="str")
    assert node_id_strings(g.ndata["node_id"]) == ["0", "007", "1", "2", "abc"]
    assert g.edges()[0].tolist() == [0, 4, 1]
    with pytest.raises(ValidationError, match=r"ids 'x' is not one of \['auto', 'int', 'str'\]"):
        read_edgelist(p, ids="x")


def _write_u64(path: Path, fmt: str, src: np.ndarray, dst: np.ndarray) -> None:
    if fmt == "npy":
        np.save(path, np.stack([src, dst], axis=1))
    elif fmt == "npz":
        np.savez(path, src=src, dst=dst)
    elif fmt == "parquet":
        pq.write_table(pa.table({"src": src, "dst": dst}), path)
    else:
        path.write_text("src,dst\n" + "".join(f"{a},{b}\n" for a, b in zip(src, dst, strict=True)))


@pytest.mark.parametrize("fmt", ["npy", "npz", "parquet", "csv"])
def test_uint64_ids_never_wrap(tmp_path: Path, fmt: str) -> None:
    big = np.array([2**64 - 1, 2**63, 5], np.uint64)
    p = tmp_path / f"e.{fmt}"
    _write_u64(p, fmt, big, np.array([5, 5, 2**63], np.uint64))
    with pytest.raises(FormatError, match=r"row 1: node ID 18446744073709551615 does not fit "
                       r"in int64; pass relabel=True"):
        read_edgelist(p)
    g = read_edgelist(p, relabel=True)
    assert g.ndata["node_id"].dtype == np.uint64
    assert g.ndata["node_id"].tolist() == [5, 2**63, 2**64 - 1]
    assert g.edges()[0].tolist() == [2, 1, 0] and g.edges()[1].tolist() == [0, 0, 1]


def test_small_uint64_ids_are_plain_integers(tmp_path: Path) -> None:
    np.save(tmp_path / "e.npy", np.array([[0, 1], [1, 2]], np.uint64))
    g = read_edgelist(tmp_path / "e.npy")
    assert g.edges()[1].dtype == np.int64 and g.edges()[1].tolist() == [1, 2]


def test_float_ids_must_be_exact_integers(tmp_path: Path) -> None:
    np.save(tmp_path / "e.npy", np.array([[0.0, 1.0], [1.0, 2.0]]))  # as np.loadtxt gives
    assert read_edgelist(tmp_path / "e.npy").edges()[1].tolist() == [1, 2]
    np.save(tmp_path / "f.npy", np.array([[0.0, 1.0], [1.0, 2.5]]))
    with pytest.raises(FormatError, match=r"f\.npy: field 'dst': row 2: node ID 2\.5 is not "
                       r"an exact integer"):
        read_edgelist(tmp_path / "f.npy")


def test_broken_npz_and_npy_are_format_errors(tmp_path: Path) -> None:
    (tmp_path / "a.npz").write_bytes(b"PK\x03\x04 not a zip archive")
    with pytest.raises(FormatError, match=r"a\.npz: unreadable npz edge list \(BadZipFile"):
        read_edgelist(tmp_path / "a.npz")
    np.savez(tmp_path / "b.npz", a=np.arange(3))
    with pytest.raises(FormatError, match=r"b\.npz: field 'src': no column 'src'"):
        read_edgelist(tmp_path / "b.npz")
    np.save(tmp_path / "c.npy", np.array([[1 + 2j, 3j]]))
    with pytest.raises(FormatError, match=r"c\.npy: .*dtype complex128"):
        read_edgelist(tmp_path / "c.npy")
    np.save(tmp_path / "d.npz", np.arange(4))  # a plain .npy under a .npz name
    (tmp_path / "d.npz.npy").rename(tmp_path / "d.npz")
    with pytest.raises(FormatError, match=r"d\.npz: .*not an \.npz archive"):
        read_edgelist(tmp_path / "d.npz")


def test_snap_edgelist_no_header_by_suffix(shared_file) -> None:
    """networkit's MIT8.edgelist: tab-separated, no header; the suffix names an edge list."""
    from graphshard.io.convert import format_of_path

    path = shared_file("snap-small", "MIT8.edgelist")
    assert format_of_path(path) == "edgelist"
    g = read_graph("edgelist", [path])
    assert (g.num_nodes(), g.num_edges()) == (6440, 251252)


def test_snap_comments_then_numbers_and_sparse_ids(shared_file, caplog) -> None:
    path = shared_file("snap-small", "wiki-Vote.txt")
    with caplog.at_level(logging.WARNING):
        g = read_edgelist(path)
    assert (g.num_nodes(), g.num_edges()) == (8298, 103689)
    assert "node IDs run to 8297, but 1183 of the 8298 nodes (14%) appear in no edge" in \
        caplog.text and "(CLI: --relabel)" in caplog.text
    g = read_edgelist(path, relabel=True)
    assert (g.num_nodes(), g.num_edges()) == (7115, 103689)  # the README's counts


def test_header_sniffed_and_first_two_columns(shared_file, tmp_path: Path) -> None:
    g = read_edgelist(shared_file("musae-karateclub", "lastfm", "edges.csv"))  # id_1,id_2
    assert (g.num_nodes(), g.num_edges()) == (7624, 27806)
    p = tmp_path / "e.txt"
    p.write_text("from to\n1 2\n2 3\n")
    assert read_edgelist(p).edges()[0].tolist() == [1, 2]  # a header of words
    p.write_text("1.5 2\n2 3\n")  # numbers: data (and a float ID is then an error)
    with pytest.raises(FormatError, match=r"e\.txt:1: field 'src': row 1: '1\.5' is not an "
                       r"integer node ID"):
        read_edgelist(p)
    p.write_text("a b\nb c\n")  # string IDs without a header need header=False
    assert read_edgelist(p, header=False).num_edges() == 2
    assert read_edgelist(p).num_edges() == 1


def test_few_isolated_nodes_do_not_warn(tmp_path: Path, caplog) -> None:
    p = tmp_path / "e.csv"
    p.write_text("src,dst\n" + "".join(f"{i},{i + 1}\n" for i in range(1, 100)))
    with caplog.at_level(logging.WARNING):
        read_edgelist(p)  # node 0 only: 1 of 101 isolated
    assert "isolated" not in caplog.text


def test_negative_id_names_the_cli_flag(tmp_path: Path) -> None:
    p = tmp_path / "e.csv"
    p.write_text("src,dst\n0,1\n-3,1\n")
    with pytest.raises(FormatError, match=r"negative node ID -3; pass relabel=True "
                       r"\(CLI: --relabel\)"):
        read_edgelist(p)


def test_sparse_ids_refuse_an_id_space_mostly_in_no_edge(tmp_path: Path, caplog) -> None:
    """Issue 43: ``sparse_ids="refuse"`` (what graphshard partition asks for) refuses IDs
    most of which appear in no edge, naming the share and both ways out; a tenth to a half
    still only warns, and ``num_nodes`` or ``relabel`` say what is meant."""
    p = tmp_path / "snap.txt"
    p.write_text("".join(f"{5 * i}\t{5 * (i + 1)}\n" for i in range(100)))  # 0, 5, ..., 500
    with pytest.raises(ValidationError, match=r"snap\.txt: node IDs run to 500, but 400 of "
                       r"the 501 nodes \(80%\) appear in no edge: partitioned as they are.*"
                       r"relabel=True \(CLI: --relabel\).*relabel=False \(CLI: --no-relabel\)"
                       ) as err:
        read_edgelist(p, sparse_ids="refuse")
    assert err.value.field == "relabel" and err.value.path == str(p)
    with caplog.at_level(logging.WARNING):
        assert read_edgelist(p).num_nodes() == 501  # the default warns
    assert "400 of the 501 nodes (80%) appear in no edge" in caplog.text
    assert read_edgelist(p, sparse_ids="refuse", relabel=True).num_nodes() == 101
    assert read_edgelist(p, sparse_ids="refuse", num_nodes=600).num_nodes() == 600
    q = tmp_path / "some.txt"
    q.write_text("".join(f"{2 * i}\t{2 * i + 2}\n" for i in range(100)))  # 100 of 201 unused
    assert read_edgelist(q, sparse_ids="refuse").num_nodes() == 201
    with pytest.raises(ValidationError, match=r"sparse_ids must be one of \['warn', 'refuse'\]"):
        read_edgelist(q, sparse_ids="drop")
