"""DGL chunked format: round trips, streaming, validation errors, fuzzing."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from fuzz_graph import graph_problem
from hypothesis import given, settings
from hypothesis import strategies as st
from io_helpers import FAST, assert_graphs_equal, random_graph

import graphshard as gs
from fuzzing import mutate_bytes, mutate_json, mutate_text, run_fuzz
from graphshard.errors import FormatError
from graphshard.io import (
    iter_edge_chunks,
    iter_node_data_chunks,
    load_chunked_meta,
    read_chunked,
    write_chunked,
)

FMTS = ["numpy", "csv", "parquet"]


def _hetero() -> gs.Graph:
    g = gs.heterograph({("user", "buys", "item"): ([0, 1, 2, 2], [1, 0, 1, 2]),
                        ("item", "bought_by", "user"): ([1, 0], [0, 1])},
                       num_nodes_dict={"user": 3, "item": 4})
    g.nodes["user"].data["feat"] = np.arange(6, dtype=np.float32).reshape(3, 2)
    g.nodes["item"].data["year"] = np.array([2000, 2001, 2002, 2003], dtype=np.int64)
    g.nodes["item"].data["tags"] = gs.Ragged.from_rows([[1], [], [2, 3], [4]], dtype="int64")
    g.edges["buys"].data["w"] = np.array([0.5, 1.5, 2.5, 3.5])
    return g


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("num_chunks", [1, 3])
def test_round_trip(tmp_path: Path, fmt: str, num_chunks: int) -> None:
    g = _hetero()
    write_chunked(g, tmp_path, num_chunks, fmt=fmt)
    assert_graphs_equal(g, read_chunked(tmp_path))
    assert_graphs_equal(g, read_chunked(tmp_path / "metadata.json"))


@settings(max_examples=15, **FAST)
@given(seed=st.integers(0, 2**32 - 1), fmt=st.sampled_from(FMTS), chunks=st.integers(1, 3))
def test_round_trip_random(tmp_path: Path, seed: int, fmt: str, chunks: int) -> None:
    g = random_graph(seed)
    out = tmp_path / f"{seed}-{fmt}-{chunks}"
    write_chunked(g, out, chunks, fmt=fmt)
    assert_graphs_equal(g, read_chunked(out))


def test_streaming_offsets(tmp_path: Path) -> None:
    g = gs.graph((np.arange(10), (np.arange(10) + 1) % 10))
    g.ndata["x"] = np.arange(10.0)
    write_chunked(g, tmp_path, 3, fmt="csv")
    meta = load_chunked_meta(tmp_path)
    chunks = list(iter_edge_chunks(meta, "_N:_E:_N"))
    assert [c.offset for c in chunks] == [0, 4, 7]
    assert np.concatenate([c.src for c in chunks]).tolist() == list(range(10))
    data = list(iter_node_data_chunks(meta, "_N", "x"))
    assert [(d.offset, len(d.data)) for d in data] == [(0, 4), (4, 3), (7, 3)]


def test_absolute_paths_and_per_type_counts(tmp_path: Path) -> None:
    g = _hetero()
    write_chunked(g, tmp_path / "a", 2, fmt="csv")
    meta = json.loads((tmp_path / "a" / "metadata.json").read_text())
    for spec in meta["edges"].values():
        spec["data"] = [str((tmp_path / "a" / p).resolve()) for p in spec["data"]]
    meta["num_nodes_per_type"] = [sum(c) for c in meta.pop("num_nodes_per_chunk")]
    meta["num_edges_per_type"] = [sum(c) for c in meta.pop("num_edges_per_chunk")]
    (tmp_path / "b").mkdir()
    shutil.copytree(tmp_path / "a" / "node_data", tmp_path / "b" / "node_data")
    shutil.copytree(tmp_path / "a" / "edge_data", tmp_path / "b" / "edge_data")
    (tmp_path / "b" / "metadata.json").write_text(json.dumps(meta))
    assert_graphs_equal(g, read_chunked(tmp_path / "b"))


def test_writer_gives_per_type_totals_and_reader_checks_them(tmp_path: Path) -> None:
    g = _hetero()
    write_chunked(g, tmp_path, 2, fmt="csv")  # DGL's tools read the totals
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["num_nodes_per_type"] == [g.num_nodes(nt) for nt in g.ntypes]
    assert meta["num_edges_per_type"] == [g.num_edges(et) for et in g.canonical_etypes]
    meta["num_edges_per_type"][0] += 1
    (tmp_path / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(FormatError, match=r"num_edges_per_type.*disagree"):
        load_chunked_meta(tmp_path)


def test_mag240m_metadata(shared_file) -> None:
    meta = load_chunked_meta(shared_file("format-dgl-chunked", "mag240m-metadata.json"))
    assert list(meta.num_nodes) == ["author", "institution", "paper"]
    assert meta.num_edges[("paper", "cites", "paper")] == 4 * 648874463
    assert set(meta.node_data["paper"]) == {"feat", "label", "year"}
    with pytest.raises(FormatError, match=r"author:affiliated_with:institution0\.txt.*does not"):
        next(iter_edge_chunks(meta, ("author", "affiliated_with", "institution")))


def _write(tmp_path: Path, fmt: str = "csv") -> Path:
    write_chunked(_hetero(), tmp_path, 2, fmt=fmt)
    return tmp_path


def _edit(path: Path, fn) -> None:
    meta = json.loads((path / "metadata.json").read_text())
    fn(meta)
    (path / "metadata.json").write_text(json.dumps(meta))


def test_error_count_disagrees(tmp_path: Path) -> None:
    d = _write(tmp_path)
    _edit(d, lambda m: (m.pop("num_edges_per_type"),  # else the totals disagree first
                        m["num_edges_per_chunk"][0].__setitem__(0, 1)))
    with pytest.raises(FormatError, match=r"0-user_buys_item-0\.csv.*num_edges_per_chunk") as e:
        read_chunked(d)
    assert e.value.field.startswith("num_edges_per_chunk")


@pytest.mark.parametrize("fmt", FMTS)
def test_declared_counts_bounded_by_the_files(tmp_path: Path, fmt: str) -> None:
    # 1e15 nodes in metadata.json made `partition` allocate terabytes (raw ArrayMemoryError);
    # counts are now checked against what the files can hold and the RAM, before any work
    d = _write(tmp_path / "a", fmt)
    _edit(d, lambda m: (m.pop("num_nodes_per_type"), m["num_nodes_per_chunk"].__setitem__(
        1, [10**15, 0])))
    with pytest.raises(FormatError, match=r"metadata\.json: field 'num_nodes_per_chunk': "
                       r"1,000,000,000,000,003 nodes .*GiB of memory"):
        load_chunked_meta(d)
    d = _write(tmp_path / "b", fmt)
    _edit(d, lambda m: (m.pop("num_nodes_per_type"), m["num_nodes_per_chunk"].__setitem__(
        1, [10**7, 0])))
    with pytest.raises(FormatError, match=r"metadata\.json: field 'num_nodes_per_chunk': "
                       r"10,000,000 nodes of type 'item' declared but the files of feature "
                       r"'\w+' can hold at most \d+ rows"):
        read_chunked(d)
    d = _write(tmp_path / "c", fmt)
    _edit(d, lambda m: (m.pop("num_edges_per_type"), m["num_edges_per_chunk"][0].__setitem__(
        0, 10**7)))
    with pytest.raises(FormatError, match=r"metadata\.json: field 'num_edges_per_chunk': "
                       r".*\[0\] declares 10,000,000 edges but 0-user_buys_item-0\.\w+ can "
                       r"hold at most \d+"):
        read_chunked(d)


@pytest.mark.parametrize(("edit", "field"), [
    (lambda m: m.__setitem__("num_nodes_per_chunk", [[True, 2], [2, 2]]), "num_nodes_per_chunk"),
    (lambda m: m.__setitem__("node_type", ["user", "user"]), "node_type"),
    (lambda m: m.__setitem__("edge_type", ["user:buys:item"] * 2), "edge_type"),
])
def test_metadata_type_confusion(tmp_path: Path, edit, field: str) -> None:
    # booleans counted as 1 and repeated types collapsed silently
    d = _write(tmp_path)
    _edit(d, edit)
    with pytest.raises(FormatError, match=rf"metadata\.json: field '{field}'"):
        load_chunked_meta(d)


@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
def test_chunk_path_must_be_a_regular_file(tmp_path: Path, kind: str) -> None:
    # a FIFO made the reader block forever; DGL allows absolute paths, so they stay allowed
    d = _write(tmp_path / "g")
    target = {"fifo": tmp_path / "fifo", "folder": tmp_path, "device": Path("/dev/zero")}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    _edit(d, lambda m: m["edges"]["user:buys:item"]["data"].__setitem__(0, str(target)))
    what = {"fifo": "a FIFO", "folder": "a folder", "device": "a character device"}[kind]
    with pytest.raises(FormatError, match=rf"metadata\.json: field .edges\['user:buys:item'\]"
                       rf"\.data\[0\].: file .* is {what}, not a regular file") as e:
        read_chunked(d)
    assert e.value.path == str(d / "metadata.json")
    meta = load_chunked_meta(d)
    with pytest.raises(FormatError, match=f"is {what}"):
        next(iter_edge_chunks(meta, "user:buys:item"))


def test_error_missing_chunk(tmp_path: Path) -> None:
    d = _write(tmp_path)
    (d / "edges" / "1-item_bought_by_user-1.csv").unlink()
    with pytest.raises(FormatError, match=r"1-item_bought_by_user-1\.csv.*does not exist") as e:
        read_chunked(d)
    assert "edges['item:bought_by:user'].data[1]" in e.value.field


def test_error_id_out_of_range(tmp_path: Path) -> None:
    d = _write(tmp_path)
    (d / "edges" / "0-user_buys_item-1.csv").write_text("2 1\n2 9\n")
    with pytest.raises(FormatError, match=r"-1\.csv:2: .*dst ID 9 is not a 'item' node") as e:
        read_chunked(d)
    assert e.value.line == 2


def test_error_feature_rows(tmp_path: Path) -> None:
    d = _write(tmp_path)
    np.save(d / "node_data" / "0-user-feat-1.npy", np.zeros((5, 2), np.float32))
    with pytest.raises(FormatError, match=r"0-user-feat-1\.npy.*node type 'user' has only 3"):
        read_chunked(d)


def test_error_bad_metadata(tmp_path: Path) -> None:
    d = _write(tmp_path)
    _edit(d, lambda m: m.__setitem__("edge_type", ["user:buys"]))
    with pytest.raises(FormatError, match=r"metadata\.json.*'edge_type'"):
        read_chunked(d)
    (d / "metadata.json").write_text('{"node_type": ["a"],\n "x": }')
    with pytest.raises(FormatError, match=r"metadata\.json:2: malformed JSON"):
        read_chunked(d)
    _edit_ok = _write(tmp_path / "c")
    _edit(_edit_ok, lambda m: m["edges"]["user:buys:item"]["format"].__setitem__("name", "orc"))
    with pytest.raises(FormatError, match=r"'orc' is not one of"):
        read_chunked(_edit_ok)


def test_writer_refuses_a_sparse_feature_by_name(tmp_path: Path) -> None:
    g = _hetero()
    g.nodes["item"].data["bow"] = gs.SparseRows([0, 1, 1, 2, 2], [3, 0], [1.0, 2.0], 5)
    with pytest.raises(gs.ValidationError, match="node type 'item': feature 'bow' is sparse; "
                                                 "the chunked format has no sparse column"):
        write_chunked(g, tmp_path / "c", 2)
    assert not (tmp_path / "c").exists()


def test_writer_validates_first(tmp_path: Path) -> None:
    g = _hetero()
    write_chunked(g, tmp_path, 1)
    before = (tmp_path / "metadata.json").read_bytes()
    g.nodes["user"].data["bad"] = np.array(["a", "b", "c"])
    with pytest.raises(gs.ValidationError, match="'bad'"):
        write_chunked(g, tmp_path, 2)
    assert (tmp_path / "metadata.json").read_bytes() == before


@settings(max_examples=40, **FAST)
@given(data=st.data())
def test_fuzz_chunk_files(tmp_path: Path, data) -> None:
    d = tmp_path / "g"
    if not d.exists():
        _write(d, "csv")
        write_chunked(_hetero(), tmp_path / "p", 2, fmt="parquet")
    root = data.draw(st.sampled_from([d, tmp_path / "p"]))
    files = sorted(p for p in root.rglob("*") if p.is_file())
    target = data.draw(st.sampled_from(files))
    original = target.read_bytes()
    blob = bytearray(original)
    for _ in range(data.draw(st.integers(1, 4))):
        if not blob:
            break
        pos = data.draw(st.integers(0, len(blob) - 1))
        blob[pos] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        blob = blob[: data.draw(st.integers(0, len(blob)))]
    target.write_bytes(bytes(blob))
    try:
        read_chunked(root)
    except FormatError:
        pass
    finally:
        target.write_bytes(original)


def test_single_chunk_readers_name_missing_feature(tmp_path):
    from graphshard.io.chunked import load_chunked_meta, read_data_chunk

    g = gs.graph(([0, 1], [1, 0]))
    g.ndata["x"] = np.arange(2.0)
    gs.io.write_chunked(g, tmp_path, 1)
    meta = load_chunked_meta(tmp_path)
    assert read_data_chunk(meta, "node", "_N", "x", 0, 0).data.tolist() == [0.0, 1.0]
    with pytest.raises(gs.FormatError, match="no node feature 'y' for node type '_N'"):
        read_data_chunk(meta, "node", "_N", "y", 0, 0)


# ----- seeded mutation fuzzing (tests/fuzzing.py) ---------------------------------------------
@pytest.fixture(scope="module")
def chunked_bases(tmp_path_factory) -> dict[str, Path]:
    """The hetero graph in each chunk format, 2 chunks (copied for every fuzz case)."""
    root = tmp_path_factory.mktemp("bases")
    for fmt in FMTS:
        write_chunked(_hetero(), root / fmt, 2, fmt=fmt)
    return {fmt: root / fmt for fmt in FMTS}


def _chunked_case(bases: dict[str, Path]):
    def make(rng, folder: Path) -> Path:
        d = folder / "g"
        shutil.copytree(bases[rng.choice(FMTS)], d)
        files = sorted(p for p in d.rglob("*") if p.is_file())
        target = d / "metadata.json" if rng.random() < 0.5 else rng.choice(files)
        data = target.read_bytes()
        if target.name == "metadata.json" and rng.random() < 0.8:
            target.write_text(json.dumps(mutate_json(rng, json.loads(data))))
        elif target.suffix in (".csv", ".txt", ".json"):
            target.write_bytes(mutate_text(rng, data.decode()))
        else:  # .npy (header and data) and .parquet
            target.write_bytes(mutate_bytes(rng, data))
        return d
    return make


def test_fuzz_chunked(tmp_path: Path, chunked_bases) -> None:
    run_fuzz("chunked", _chunked_case(chunked_bases), read_chunked, tmp_path,
             check=lambda g: graph_problem(g, max_nodes=7))


def _dgl_parquet(path: Path, arr: np.ndarray, shape: str | None = None) -> None:
    """A feature chunk as DGL's ``chunk_graph`` writes it: columns "0".."d-1" of the array
    flattened to 2-D, and its shape as the schema metadata ``shape`` (a tuple literal)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    flat = arr.reshape(arr.shape[0], -1) if arr.ndim > 1 else arr.reshape(-1, 1)
    table = pa.table({str(k): flat[:, k] for k in range(flat.shape[1])})
    pq.write_table(table.replace_schema_metadata(
        {"shape": shape if shape is not None else str(arr.shape)}), path)


def test_parquet_shape_metadata_is_honoured(tmp_path: Path) -> None:
    """Issue 27: a 1-D label chunked by DGL comes back 1-D (it came back (N, 1)); a 3-D
    feature comes back 3-D; (N, 1) stays (N, 1); no metadata keeps the 2-D reading."""
    g = gs.graph(([0, 1, 2, 3, 4], [1, 2, 3, 4, 5]))
    g.ndata["label"] = np.array([3, 1, 4, 1, 5, 9], np.int64)
    g.ndata["cube"] = np.arange(24, dtype=np.float32).reshape(6, 2, 2)
    g.ndata["col"] = np.arange(6, dtype=np.float32).reshape(6, 1)
    d = tmp_path / "g"
    write_chunked(g, d, 2, fmt="parquet")
    meta = json.loads((d / "metadata.json").read_text())
    for name in ("label", "cube", "col"):
        spec = meta["node_data"]["_N"][name]
        spec["format"] = {"name": "parquet"}
        for i, lo in enumerate((0, 3)):
            rel = f"node_data/dgl-{name}-{i}.parquet"
            _dgl_parquet(d / rel, g.ndata[name][lo:lo + 3])
            spec["data"][i] = rel
    (d / "metadata.json").write_text(json.dumps(meta))
    h = read_chunked(d)
    for name in ("label", "cube", "col"):
        assert h.ndata[name].shape == g.ndata[name].shape, name
        np.testing.assert_array_equal(h.ndata[name], g.ndata[name])
    # without the metadata a one-column chunk "0" is (N, 1), DGL's own reading
    _dgl_parquet(d / "node_data/dgl-label-0.parquet", g.ndata["label"][:3], shape="(3, 1)")
    _dgl_parquet(d / "node_data/dgl-label-1.parquet", g.ndata["label"][3:], shape="(3, 1)")
    assert read_chunked(d).ndata["label"].shape == (6, 1)


@pytest.mark.parametrize(("shape", "match"), [
    ("(4,)", r"declares shape \(4,\), but the chunk holds 3 rows"),
    ("(3, 2)", r"declares shape \(3, 2\), but the chunk holds 3 rows of 1"),
    ("__import__('os')", "expected a tuple of non-negative integers"),
    ("(3, -1)", "expected a tuple of non-negative integers"),
])
def test_parquet_shape_metadata_errors(tmp_path: Path, shape: str, match: str) -> None:
    g = gs.graph(([0, 1], [1, 2]))
    g.ndata["label"] = np.array([1, 2, 3], np.int64)
    d = tmp_path / "g"
    write_chunked(g, d, 1, fmt="parquet")
    meta = json.loads((d / "metadata.json").read_text())
    spec = meta["node_data"]["_N"]["label"]
    _dgl_parquet(d / spec["data"][0], g.ndata["label"], shape=shape)
    with pytest.raises(FormatError, match=match) as info:
        read_chunked(d)
    assert spec["data"][0].split("/")[-1] in str(info.value)


@pytest.mark.parametrize("array, match", [
    (np.zeros(1, np.float32), r"chunk 1 holds rows of shape \(\) \(numbers\), but chunk 0 "
     r"rows of shape \(2,\) \(numbers\)"),
    (np.zeros((1, 3), np.float32), r"chunk 1 holds rows of shape \(3,\)"),
    (np.zeros((1, 2, 1), np.float32), r"chunk 1 holds rows of shape \(2, 1\)"),
    (np.array(["ab"]), r"chunk 1 holds rows of shape \(\) \(<U2\)"),
    (np.float32(1), r"a 0-d array of float32; a feature chunk holds one row per node"),
])
def test_feature_chunk_of_another_rank(tmp_path: Path, array, match) -> None:
    """Issue 41 item 3: a chunk whose rows differ from chunk 0's (rank, width, dtype) was a
    raw ValueError from np.concatenate; now a FormatError naming the chunk."""
    d = _write(tmp_path)
    np.save(d / "node_data" / "0-user-feat-1.npy", array)
    with pytest.raises(FormatError, match=r"0-user-feat-1\.npy: field \"node_data.*" + match):
        read_chunked(d)


@pytest.mark.parametrize("shape", ["(100000000000000000000,)", "(1000000000000,)",
                                   "(4000000000, 4000000000)"])
def test_npy_header_larger_than_the_file(tmp_path: Path, shape: str) -> None:
    """Issue 41 item 3: an .npy header declaring shape 1e20 was a raw OverflowError (1e12
    without mmap: a MemoryError); the declared bytes are checked against the file first."""
    d = _write(tmp_path, fmt="numpy")
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}".ljust(117)
    (d / "node_data" / "0-user-feat-1.npy").write_bytes(
        b"\x93NUMPY\x01\x00" + (len(header) + 1).to_bytes(2, "little") + header.encode()
        + b"\n" + bytes(8))
    with pytest.raises(FormatError, match=r"0-user-feat-1\.npy: .*the header declares shape "
                       + r"\(.*\) of float32, [0-9,]+ bytes, but the file holds 8 after"):
        read_chunked(d)
