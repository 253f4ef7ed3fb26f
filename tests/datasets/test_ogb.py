"""load_ogb on an OGB-layout fixture built in tmp_path (no real OGB dataset is available
offline: ../shared/data/ogb-metadata holds only OGB's master.csv), its errors naming file and
line, the CLI on the folder, and seeded mutation fuzzing."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pytest

from fuzzing import dataset_graph_problem, mutate_text, run_fuzz
from graphshard.cli import main
from graphshard.datasets import load_ogb
from graphshard.errors import FormatError

FILES = {  # an ogbn-arxiv-like layout: 5 nodes, 6 directed edges, 3-dim features, years
    "raw/edge.csv.gz": "0,1\n1,2\n2,0\n3,4\n4,3\n1,3\n",
    "raw/num-node-list.csv.gz": "5\n",
    "raw/num-edge-list.csv.gz": "6\n",
    "raw/node-feat.csv.gz": "0.1,0.2,0.3\n1,0,0\n0,1,0\n0,0,1\n-0.5,0.5,2.0\n",
    "raw/node-label.csv.gz": "0\n1\n1\n2\n0\n",
    "raw/node_year.csv.gz": "2010\n2011\n2012\n2013\n2014\n",
    "split/time/train.csv.gz": "0\n1\n2\n",
    "split/time/valid.csv.gz": "3\n",
    "split/time/test.csv.gz": "4\n",
}


def write(folder: Path, **changes: str) -> Path:
    for name, text in {**FILES, **changes}.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(path, "wt") as handle:
            handle.write(text)
    return folder


def test_arxiv_like_layout(tmp_path):
    ds = load_ogb(write(tmp_path / "ogbn_tiny"))
    g = ds.graph
    assert (ds.name, ds.split, g.num_nodes(), g.num_edges()) == ("ogbn_tiny", "time", 5, 6)
    assert g.edges()[1].tolist() == [1, 2, 0, 4, 3, 3]
    assert g.ndata["feat"].dtype == np.float32 and g.ndata["feat"][4].tolist() == [-0.5, 0.5, 2]
    assert g.ndata["label"].tolist() == [0, 1, 1, 2, 0]
    assert g.ndata["year"].tolist() == [2010, 2011, 2012, 2013, 2014]
    assert g.ndata["train_mask"].tolist() == [True, True, True, False, False]
    assert g.ndata["val_mask"].tolist() == [False, False, False, True, False]
    assert g.ndata["test_mask"].tolist() == [False, False, False, False, True]
    assert load_ogb(tmp_path / "ogbn_tiny" / "raw").graph.num_edges() == 6  # raw/ works too


def test_nan_labels_become_minus_one(tmp_path):
    g = load_ogb(write(tmp_path / "d", **{"raw/node-label.csv.gz": "0\nnan\n1\n2\nnan\n"})).graph
    assert g.ndata["label"].tolist() == [0, -1, 1, 2, -1]


@pytest.mark.parametrize("change, message", [
    ({"raw/edge.csv.gz": "0,1\n1,7\n"}, r"edge\.csv\.gz:2: edge 1 -> 7 is outside the 5 nodes"),
    ({"raw/node-feat.csv.gz": "1,2\n"}, r"node-feat\.csv\.gz: 1 rows, expected 5"),
    ({"split/time/test.csv.gz": "4\n9\n"}, r"test\.csv\.gz:2: node ID 9 is not in \[0, 5\)"),
    ({"raw/edge.csv.gz": "0,a\n"}, r"edge\.csv\.gz: column 1 holds string, expected numbers"),
    ({"split/random/train.csv.gz": "0\n"}, r"several split schemes \['random', 'time'\]; "
     r"name one \(split='time'; CLI: -O split=time\)"),
])
def test_errors_name_file_and_line(tmp_path, change, message):
    with pytest.raises(FormatError, match=message):
        load_ogb(write(tmp_path / "d", **change))


def test_hetero_layout_is_refused(tmp_path):
    (write(tmp_path / "mag") / "raw" / "relations").mkdir()
    with pytest.raises(FormatError, match=r"heterogeneous \(relations/\) or binary"):
        load_ogb(tmp_path / "mag")


def test_cli_partitions_the_folder_with_reverse_edges(tmp_path, capsys):
    folder = write(tmp_path / "ogbn_tiny")
    assert main(["partition", str(folder), "--add-reverse", "--duplicates", "drop", "-k", "2",
                 "--out", str(tmp_path / "parts"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["num_nodes"] == 5 and report["num_edges"] == 10  # 4-3 and 3-4 listed twice


def test_fuzz_ogb(tmp_path):
    def case(rng: random.Random, folder: Path) -> Path:
        name = rng.choice(sorted(FILES))
        return write(folder, **{name: mutate_text(rng, FILES[name]).decode("latin-1")})

    run_fuzz("ogb", case, load_ogb, tmp_path, check=dataset_graph_problem, seed=3)


def test_convert_from_ogb(tmp_path, capsys):
    import graphshard as gs

    folder = write(tmp_path / "ogbn_tiny")
    assert main(["convert", "--from", "ogb", str(folder), "--to", "chunked", "--out",
                 str(tmp_path / "c")]) == 0
    g = gs.io.read_chunked(tmp_path / "c")
    assert g.num_edges() == 6 and g.ndata["year"].tolist()[-1] == 2014
    assert g.ndata["test_mask"].tolist() == [False, False, False, False, True]


@pytest.mark.parametrize("label", ["1.5", "1e30", "inf", "-inf", "9007199254740993.0"])
def test_labels_that_are_not_classes_are_refused(tmp_path, label):
    """Issue 41 item 3: 1.5, 1e30 and inf loaded as 1, -2^63, -2^63."""
    text = f"0\nnan\n{label}\n2\n0\n"
    with pytest.raises(FormatError, match=r"node-label\.csv\.gz:3: label .* is not an integer "
                       r"class"):
        load_ogb(write(tmp_path / "d", **{"raw/node-label.csv.gz": text}))


@pytest.mark.parametrize("count, message", [
    ("300000000", r"num-node-list\.csv\.gz: field 'node count': 300,000,000 nodes declared "
     r"for 6 edges; at most max\(1,048,576, 64 x edges\) = 1,048,576"),
    ("1000000000000", r"1,000,000,000,000 nodes declared for 6 edges"),
    ("-3", r"num-node-list\.csv\.gz:1: node count -3 is negative"),
])
def test_node_count_is_bounded_by_the_edges(tmp_path, count, message):
    """Issue 41 item 2: a num-node-list of 3e8 in a 201-byte folder was accepted (1e12: a
    raw MemoryError); it is bounded as the edge-list reader bounds an ID space."""
    with pytest.raises(FormatError, match=message):
        load_ogb(write(tmp_path / "d", **{"raw/num-node-list.csv.gz": count + "\n"}))


def test_fifo_edge_file_is_refused_without_opening(tmp_path):
    import os

    from fuzzing import call_releasing_fifos

    folder = write(tmp_path / "d")
    (folder / "raw" / "edge.csv.gz").unlink()
    os.mkfifo(folder / "raw" / "edge.csv.gz")
    with pytest.raises(FormatError, match=r"raw/edge\.csv\.gz: is a FIFO, not a regular file"):
        call_releasing_fifos(lambda: load_ogb(folder), [folder / "raw" / "edge.csv.gz"])
