"""Writers' output folders: never another's folder, an earlier output of ours replaced
safely (nothing stale, nothing that looks complete after a failure), names checked."""

from __future__ import annotations

import errno
import json
import logging
import re
from pathlib import Path

import numpy as np
import pytest
from io_helpers import assert_graphs_equal, random_graph

import graphshard as gs
from graphshard.errors import ConfigError, ValidationError
from graphshard.io import convert, read_chunked, read_euler, write_chunked, write_euler
from graphshard.storage import files as _files


def _ring(n: int) -> gs.Graph:
    return gs.graph((np.arange(n), (np.arange(n) + 1) % n))


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*")
            if p.is_file()}


@pytest.mark.parametrize("writer", ["chunked", "euler"])
def test_a_foreign_folder_is_refused_and_left_alone(tmp_path: Path, writer: str) -> None:
    out = tmp_path / "theirs"
    out.mkdir()
    (out / "metadata.json").write_text('{"graph_name": "theirs"}')  # e.g. DGL's own
    (out / "meta.json").write_text('{"node_type_num": 1}')  # e.g. Euler's own
    (out / "_N.txt").write_text("precious\n")
    before = _snapshot(out)
    (tmp_path / "e.csv").write_text("src,dst\n0,1\n1,2\n")
    with pytest.raises(ConfigError, match=r"theirs is not empty and holds no (chunked|Euler) "
                                          r"graph written by graphshard; refusing"):
        convert("edgelist", tmp_path / "e.csv", writer, out)
    with pytest.raises(ConfigError, match="refusing to write into it"):
        (write_chunked if writer == "chunked" else write_euler)(_ring(3), out, 1)
    assert _snapshot(out) == before


@pytest.mark.parametrize("writer", ["chunked", "euler"])
def test_an_output_named_like_a_file_is_refused(tmp_path: Path, writer: str) -> None:
    with pytest.raises(ValidationError, match=r"x\.json: the output is a folder, but this "
                                              r"name looks like a file"):
        (write_chunked if writer == "chunked" else write_euler)(_ring(3), tmp_path / "x.json",
                                                                1)
    assert not (tmp_path / "x.json").exists()
    (tmp_path / "f").write_text("a file")
    with pytest.raises(ConfigError, match="f exists and is not a directory"):
        convert("chunked", tmp_path / "nowhere", writer, tmp_path / "f")  # before reading


def test_chunked_rewrite_replaces_the_earlier_output(tmp_path: Path) -> None:
    out = tmp_path / "c"
    write_chunked(_ring(40), out, 8, fmt="csv")
    g = random_graph(5)
    write_chunked(g, out, 2)
    assert_graphs_equal(g, read_chunked(out))
    meta = json.loads((out / "metadata.json").read_text())
    listed = {r for spec in meta["edges"].values() for r in spec["data"]}
    listed |= {r for kind in ("node_data", "edge_data") for feats in meta[kind].values()
               for spec in feats.values() for r in spec["data"]}
    on_disk = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert on_disk == listed | {"metadata.json"}  # no stale chunk, no marker


def test_euler_rewrite_leaves_no_stale_partition(tmp_path: Path) -> None:
    out = tmp_path / "e"
    write_euler(_ring(9), out, num_partitions=4, name="old")
    g = random_graph(3, euler_safe=True)
    write_euler(g, out, num_partitions=2)
    assert sorted(p.name for p in out.iterdir()) == ["graph_0.json", "graph_1.json",
                                                     "meta.json"]
    assert_graphs_equal(g, read_euler(out), src_sorted=True, ignore=("node_id",))


@pytest.mark.parametrize("writer", ["chunked", "euler"])
def test_a_failed_rewrite_leaves_nothing_that_looks_complete(tmp_path: Path, monkeypatch,
                                                             writer: str) -> None:
    out = tmp_path / "o"
    write = write_chunked if writer == "chunked" else write_euler
    write(_ring(30), out, 3)
    real = _files.atomic_path
    calls = []

    def disk_full_on_second(path, **kw):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, **kw)

    monkeypatch.setattr(_files, "atomic_path", disk_full_on_second)
    with pytest.raises(OSError, match="No space left"):
        write(_ring(20), out, 3)
    names = {p.name for p in out.rglob("*")}
    assert "metadata.json" not in names and "meta.json" not in names
    assert _files.INCOMPLETE_MARKER in names
    monkeypatch.setattr(_files, "atomic_path", real)
    write(_ring(20), out, 2)  # the unfinished folder is ours: a rerun writes into it
    assert (read_chunked if writer == "chunked" else read_euler)(out).num_edges() == 20
    assert _files.INCOMPLETE_MARKER not in {p.name for p in out.iterdir()}


def test_a_failed_write_names_the_file(tmp_path: Path, monkeypatch) -> None:
    """A write that fails for space names no file; atomic_path adds the one it wrote."""
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "save", full)
    with pytest.raises(OSError, match=r"No space left on device: '.*0-_N__E__N-0\.npy'"):
        write_chunked(_ring(4), tmp_path / "c", 1)


def test_more_chunks_than_rows_is_capped(tmp_path: Path, caplog) -> None:
    g = _ring(156)
    with caplog.at_level(logging.WARNING):
        write_chunked(g, tmp_path / "c", 1000, fmt="csv")
    assert "num_chunks 1000 is more than the largest node or edge type has rows (156)" \
        in caplog.text
    assert len(list((tmp_path / "c" / "edges").iterdir())) == 156
    assert read_chunked(tmp_path / "c").num_edges() == 156


@pytest.mark.parametrize("where", ["ntype", "etype", "feature", "graph_name"])
def test_chunked_names_that_cannot_be_file_names(tmp_path: Path, where: str) -> None:
    bad = "../x"
    nt, rel = (bad if where == "ntype" else "u"), (bad if where == "etype" else "r")
    g = gs.heterograph({(nt, rel, nt): ([0], [1])})
    if where == "feature":
        bad = ".."  # frames refuse "/" already
        g.nodes[nt].data[bad] = np.zeros(2)
    with pytest.raises(ValidationError,
                       match=rf"must be a plain file name .* got '{re.escape(bad)}'"):
        write_chunked(g, tmp_path / "c", 1, graph_name=bad if where == "graph_name" else "g")
    assert not (tmp_path / "c").exists()


def test_euler_name_that_cannot_be_a_file_name(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"name must be a plain file name"):
        write_euler(_ring(3), tmp_path / "e", name="../../escape")
    assert not (tmp_path / "e").exists() and not list(tmp_path.parent.glob("escape*"))


def test_partition_does_not_take_a_chunked_folder_for_its_own(tmp_path: Path) -> None:
    """A chunked or Euler meta carries a "graphshard" key too: not a partition config."""
    write_chunked(_ring(4), tmp_path / "c", 1)
    before = _snapshot(tmp_path / "c")
    with pytest.raises(ConfigError, match="holds no graphshard partition config"):
        gs.partition_graph(_ring(4), "g", 2, tmp_path / "c", part_method="hash")
    assert _snapshot(tmp_path / "c") == before
