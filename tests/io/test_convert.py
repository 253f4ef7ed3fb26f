"""The format registry and convert()."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from io_helpers import assert_graphs_equal, random_graph

import graphshard as gs
from graphshard.errors import FormatError
from graphshard.io import READERS, WRITERS, convert, read_chunked, read_euler, read_graph


def test_registries_describe_themselves() -> None:
    assert set(READERS) == {"chunked", "euler", "pgl", "edgelist", "metis", "shchur", "hgb",
                            "planetoid", "ogb", "euler-dat", "graphbolt"}
    assert set(WRITERS) == {"chunked", "euler", "euler-dat", "graphbolt"}
    for entry in [*READERS.values(), *WRITERS.values()]:
        assert entry.description and "\n" not in entry.description
        assert all(isinstance(h, str) and h for h in entry.options.values())


def test_euler_to_chunked_to_euler(tmp_path: Path, shared_file) -> None:
    src = shared_file("format-euler", "euler1_tf_euler_testdata", "graph.json")
    report = convert("euler", src, "chunked", tmp_path / "c", num_chunks=2, fmt="parquet")
    assert sum(report.num_edges.values()) == 12
    g = read_euler(src)
    assert_graphs_equal(g, read_chunked(tmp_path / "c"))
    convert("chunked", tmp_path / "c", "euler", tmp_path / "e", num_partitions=2)
    assert_graphs_equal(g, read_euler(tmp_path / "e"))


def test_pgl_and_metis_and_edgelist(tmp_path: Path, shared_file) -> None:
    d = shared_file("format-pgl-graph4rec-toy")
    convert("pgl", [f"u2buy2i:{d}/u2buy2i.txt"], "chunked", tmp_path / "p", symmetry=True)
    assert read_chunked(tmp_path / "p").num_edges() == 2 * 790
    (tmp_path / "t.graph").write_text("3 2\n2\n1 3\n2\n")
    assert read_graph("metis", [tmp_path / "t.graph"]).num_edges() == 4
    (tmp_path / "e.csv").write_text("s,d\nx,y\n")
    convert("edgelist", tmp_path / "e.csv", "euler", tmp_path / "el", src="s", dst="d")
    assert read_euler(tmp_path / "el").num_edges() == 1


def test_bad_choices_list_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(gs.ValidationError, match=r"unknown input format 'dgl'; choose"):
        convert("dgl", "x", "chunked", tmp_path)
    with pytest.raises(gs.ValidationError, match=r"unknown option 'bogus'.*num_chunks"):
        convert("metis", "x", "chunked", tmp_path, bogus=1)
    with pytest.raises(gs.ValidationError, match=r"taken by both .* write read\.fmt="):
        convert("edgelist", "x", "chunked", tmp_path, fmt="npy")


def test_failure_leaves_previous_output(tmp_path: Path) -> None:
    g = random_graph(3)
    out = tmp_path / "out"
    gs.io.write_chunked(g, out, 1)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = tmp_path / "bad.json"
    bad.write_text('{"node_id": 1, "node_type": 0}\n{"node_id": 2,\n')
    with pytest.raises(FormatError, match=r"bad\.json:2"):
        convert("euler", bad, "chunked", out, num_chunks=3)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert json.loads((out / "metadata.json").read_text())["num_nodes_per_chunk"]


def test_suffix_names_are_aliases_of_edgelist(tmp_path: Path) -> None:
    from graphshard.io.convert import format_of_path

    (tmp_path / "e.dat").write_bytes(b"0\t1\n1\t2\n")
    g = read_graph("tsv", [tmp_path / "e.dat"], header=False, src=0, dst=1)
    assert g.num_edges() == 2
    report = convert("tsv", tmp_path / "e.dat", "chunked", tmp_path / "out", header=False,
                     src=0, dst=1, **{"read.fmt": "csv"})
    assert (report.src_format, report.num_edges) == ("edgelist", {"_N:_E:_N": 2})
    with pytest.raises(gs.ValidationError, match=r"unknown input format 'dgl'; choose "
                                                 r"one of \[.*'shchur', 'csv', 'npy'"):
        read_graph("dgl", [tmp_path / "e.dat"])
    assert [format_of_path(tmp_path / n) for n in ("a.csv.gz", "a.gz", "a.json", "a.pq")] == \
        ["edgelist", "metis", "euler", None]
    assert format_of_path(tmp_path) == "chunked"


@pytest.mark.parametrize(("parts", "expected"), [
    (("planetoid", "npz_shchur", "cora.npz"), "shchur"),  # an .npz with adj_* arrays
    (("gnn-benchmark-shchur", "coauthor-cs.zip"), "shchur"),
    (("hgb", "ACM.zip"), "hgb"),
    (("planetoid",), "planetoid"),
    (("planetoid", "ind.cora.tx"), "planetoid"),
    (("snap-small", "MIT8.edgelist"), "edgelist"),
    (("dimacs10-small", "karate.graph"), "metis"),
])
def test_format_of_path_looks_inside(shared_file, parts, expected) -> None:
    from graphshard.io.convert import format_of_path

    assert format_of_path(shared_file(*parts)) == expected


def test_an_edge_list_npz_stays_an_edge_list(tmp_path: Path) -> None:
    import numpy as np

    from graphshard.io.convert import format_of_path

    np.savez(tmp_path / "e.npz", src=np.arange(3), dst=np.arange(3))
    assert format_of_path(tmp_path / "e.npz") == "edgelist"
    (tmp_path / "HGB").mkdir()
    (tmp_path / "HGB" / "node.dat").write_text("")
    assert format_of_path(tmp_path / "HGB") == "chunked"  # no link.dat: not HGB
    (tmp_path / "HGB" / "link.dat").write_text("")
    assert format_of_path(tmp_path / "HGB") == "hgb"
