"""METIS / Walshaw .graph files: headers, weights and broken files (issue 24)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from graphshard.errors import FormatError
from graphshard.io import read_metis


def test_weights_and_ncon(tmp_path: Path) -> None:
    p = tmp_path / "w.graph"
    p.write_text("% two constraints, edge weights\n3 2 011 2\n1 5 2 7\n2 6 1 7 3 9\n3 4 2 9\n")
    g = read_metis(p)
    assert g.ndata["weight"].tolist() == [[1, 5], [2, 6], [3, 4]]
    assert g.edges()[1].tolist() == [1, 0, 2, 1] and g.edata["weight"].tolist() == [7, 7, 9, 9]


@pytest.mark.parametrize(("text", "match", "line"), [
    ("3 2 011 2\n1 5 2 7\n2\n3 4 2 9\n", r"vertex 2: 1 entries, but the header's format asks "
     r"for 2 leading vertex size/weights", 3),  # a line shorter than ncon: was a raw ValueError
    ("3 2 2\n2\n1 3\n2\n", r"fmt '2' is not up to 3 digits of 0/1", 1),
    ("3 2 1000\n2\n1 3\n2\n", r"fmt '1000' is not up to 3 digits", 1),
    ("3 2 010 -1\n1 2\n1 1 3\n1 2\n", r"ncon -1: expected >= 1", 1),
    ("3 2 0 2\n2\n1 3\n2\n", r"ncon 2: expected >= 1 with vertex weights in fmt, else 0", 1),
    ("-3 2\n", r"n and m must be >= 0", 1),
    ("3 2 0 1 5\n", r"expected 'n m \[fmt \[ncon\]\]', got 5 numbers", 1),
    ("3 2\n2\n1 99999999999999999999\n2\n", r"vertex 2: non-integer or out-of-range", 3),
    ("3 2 001\n2 -4\n1 -4 3 1\n2 1\n", r"vertex 1: negative vertex size or weight", 2),
])
def test_bad_files_name_file_and_line(tmp_path: Path, text: str, match: str, line: int) -> None:
    p = tmp_path / "bad.graph"
    p.write_text(text)
    with pytest.raises(FormatError, match=r"bad\.graph:\d+: .*" + match) as err:
        read_metis(p)
    assert err.value.line == line and err.value.path == str(p)


def test_huge_header_counts_are_refused_before_any_work(tmp_path: Path) -> None:
    p = tmp_path / "big.graph"
    p.write_text("1000000000000 5000000000000\n2\n1\n")
    with pytest.raises(FormatError, match=r"header says 1000000000000 vertices but the file has "
                       r"2 vertex lines") as err:
        read_metis(p)
    assert err.value.field == "n"


def test_undecodable_and_corrupt_compressed(tmp_path: Path) -> None:
    (tmp_path / "a.graph").write_bytes(b"2 1\n2\n\xff\xfe\n")
    with pytest.raises(FormatError, match=r"a\.graph: unreadable METIS file \(UnicodeDecode"):
        read_metis(tmp_path / "a.graph")
    (tmp_path / "b.graph.gz").write_bytes(gzip.compress(b"2 1\n2\n1\n")[:-6])
    with pytest.raises(FormatError, match=r"b\.graph\.gz: unreadable METIS file"):
        read_metis(tmp_path / "b.graph.gz")
    blob = bytearray(gzip.compress(b"2 1\n2\n1\n" * 50, mtime=0))
    blob[12:16] = b"\xff\xff\xff\xff"  # corrupt deflate data: zlib.error, not OSError
    (tmp_path / "z.graph.gz").write_bytes(bytes(blob))
    with pytest.raises(FormatError, match=r"z\.graph\.gz: unreadable METIS file"):
        read_metis(tmp_path / "z.graph.gz")
    (tmp_path / "c.graph.gz").write_bytes(gzip.compress(b"2 1\n2\n1\n"))
    assert np.array_equal(read_metis(tmp_path / "c.graph.gz").edges()[1], [1, 0])
