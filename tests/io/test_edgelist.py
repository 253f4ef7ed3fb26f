"""Edge lists through pyarrow: CSV/TSV/Parquet/NPY/NPZ, string IDs, edge types."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from io_helpers import FAST

from graphshard.errors import FormatError
from graphshard.io import node_id_strings, read_edgelist


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
