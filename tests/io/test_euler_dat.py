"""Euler 1.0 binary .dat: the layout byte by byte, round trips, equality with the JSON
reader on the authors' examples, errors naming file and offset, and fuzzing."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from fuzz_graph import graph_problem
from hypothesis import given, settings
from hypothesis import strategies as st
from io_helpers import FAST, assert_graphs_equal, random_graph

import graphshard as gs
from fuzzing import mutate_bytes, mutate_json, run_fuzz
from graphshard.cli import main
from graphshard.errors import FormatError
from graphshard.io import (
    convert,
    node_id_strings,
    read_euler,
    read_euler_dat,
    write_euler,
    write_euler_dat,
)
from graphshard.io.convert import format_of_path


# ----- a json2dat written here from the layout (docs/formats.md), field by field -------------
def _feats(obj: dict, counts: dict, side: str) -> bytes:
    """The three feature sections: i32 slot count, i32 lengths, values (u64 / f32 / bytes)."""
    out = b""
    for kind, code in (("uint64", "Q"), ("float", "f"), ("binary", None)):
        num = counts[f"{side}_{kind}_feature_num"]
        rows = [obj.get(f"{kind}_feature", {}).get(str(i), "" if code is None else [])
                for i in range(num)]
        rows = [r.encode() if code is None else r for r in rows]
        out += struct.pack("<i", num) + struct.pack(f"<{num}i", *map(len, rows))
        for r in rows:
            out += r if code is None else struct.pack(f"<{len(r)}{code}", *r)
    return out


def json2dat(line: dict, meta: dict) -> bytes:
    """One block, as Euler 1.0's ``euler/tools/json2dat.py`` makes it of a JSON line."""
    groups = [line["neighbor"][str(t)] for t in range(meta["edge_type_num"])]
    ids = [int(k) for g in groups for k in g]
    ws = [w for g in groups for w in g.values()]
    node = (struct.pack("<Qif", line["node_id"], line["node_type"], line["node_weight"])
            + struct.pack("<i", len(groups))
            + struct.pack(f"<{len(groups)}i", *map(len, groups))
            + struct.pack(f"<{len(groups)}f", *(sum(g.values()) for g in groups))
            + struct.pack(f"<{len(ids)}Q", *ids) + struct.pack(f"<{len(ws)}f", *ws)
            + _feats(line, meta, "node"))
    edges = [struct.pack("<QQif", e["src_id"], e["dst_id"], e["edge_type"], e["weight"])
             + _feats(e, meta, "edge") for e in line["edge"]]
    rest = (struct.pack("<i", len(node)) + node + struct.pack("<i", len(edges))
            + struct.pack(f"<{len(edges)}i", *map(len, edges)) + b"".join(edges))
    return struct.pack("<i", len(rest)) + rest


def json_file_to_dat(src: Path, meta: dict, out: Path) -> Path:
    out.write_bytes(b"".join(json2dat(json.loads(t), meta)
                             for t in src.read_text().splitlines() if t.strip()))
    return out


# ----- the hand-built file ------------------------------------------------------------------
HAND_META = {"node_type_num": 2, "edge_type_num": 2, "node_uint64_feature_num": 1,
             "node_float_feature_num": 1, "node_binary_feature_num": 1,
             "edge_uint64_feature_num": 0, "edge_float_feature_num": 1,
             "edge_binary_feature_num": 0}


def _hand_built() -> bytes:
    """Node 10 (type 0, weight 5) -> node 11 by relation 0 (weight 2, float [4]); node 11
    (type 1, weight 2) -> node 10 by relation 1 (weight 3, float [6]); every field
    spelled out in file order."""
    node10 = (struct.pack("<Q", 10) + struct.pack("<i", 0) + struct.pack("<f", 5.0)
              + struct.pack("<i", 2)                    # edge groups
              + struct.pack("<ii", 1, 0)                # group sizes
              + struct.pack("<ff", 2.0, 0.0)            # group weight sums
              + struct.pack("<Q", 11)                   # neighbour IDs
              + struct.pack("<f", 2.0)                  # neighbour weights
              + struct.pack("<ii", 1, 1) + struct.pack("<Q", 7)          # uint64 slot 0: [7]
              + struct.pack("<ii", 1, 2) + struct.pack("<ff", 1.5, 2.5)  # float slot 0
              + struct.pack("<ii", 1, 2) + b"ab")                        # binary slot 0
    edge10 = (struct.pack("<QQif", 10, 11, 0, 2.0) + struct.pack("<i", 0)
              + struct.pack("<ii", 1, 1) + struct.pack("<f", 4.0) + struct.pack("<i", 0))
    node11 = (struct.pack("<Qif", 11, 1, 2.0) + struct.pack("<i", 2)
              + struct.pack("<ii", 0, 1) + struct.pack("<ff", 0.0, 3.0)
              + struct.pack("<Q", 10) + struct.pack("<f", 3.0)
              + struct.pack("<ii", 1, 0)
              + struct.pack("<ii", 1, 2) + struct.pack("<ff", 3.0, 4.0)
              + struct.pack("<ii", 1, 3) + b"xyz")
    edge11 = (struct.pack("<QQif", 11, 10, 1, 3.0) + struct.pack("<i", 0)
              + struct.pack("<ii", 1, 1) + struct.pack("<f", 6.0) + struct.pack("<i", 0))
    out = b""
    for node, edge in ((node10, edge10), (node11, edge11)):
        rest = struct.pack("<i", len(node)) + node + struct.pack("<ii", 1, len(edge)) + edge
        out += struct.pack("<i", len(rest)) + rest
    return out


HAND = _hand_built()
HAND_JSON = [
    {"node_id": 10, "node_type": 0, "node_weight": 5.0, "neighbor": {"0": {"11": 2.0}, "1": {}},
     "uint64_feature": {"0": [7]}, "float_feature": {"0": [1.5, 2.5]},
     "binary_feature": {"0": "ab"},
     "edge": [{"src_id": 10, "dst_id": 11, "edge_type": 0, "weight": 2.0,
               "float_feature": {"0": [4.0]}}]},
    {"node_id": 11, "node_type": 1, "node_weight": 2.0, "neighbor": {"0": {}, "1": {"10": 3.0}},
     "uint64_feature": {"0": []}, "float_feature": {"0": [3.0, 4.0]},
     "binary_feature": {"0": "xyz"},
     "edge": [{"src_id": 11, "dst_id": 10, "edge_type": 1, "weight": 3.0,
               "float_feature": {"0": [6.0]}}]},
]


def _hand(tmp_path: Path, data: bytes = HAND, meta: dict | None = HAND_META) -> Path:
    if meta is not None:
        (tmp_path / "meta.json").write_text(json.dumps(meta))
    (tmp_path / "graph_0.dat").write_bytes(data)
    return tmp_path / "graph_0.dat"


def test_hand_built_layout_reads(tmp_path: Path) -> None:
    g = read_euler_dat(_hand(tmp_path))
    assert g.ntypes == ["0", "1"]
    assert g.canonical_etypes == [("0", "0", "1"), ("1", "1", "0")]
    assert g.nodes["0"].data["node_id"].tolist() == [10]
    assert g.nodes["1"].data["weight"].tolist() == [2.0]
    assert g.nodes["0"].data["float_0"].tolist() == [[1.5, 2.5]]
    assert g.nodes["0"].data["uint64_0"][0].tolist() == [7]
    assert g.nodes["1"].data["uint64_0"].lengths.tolist() == [0]
    assert node_id_strings(g.nodes["1"].data["binary_0"]) == ["xyz"]
    assert g.edges[("1", "1", "0")].data["weight"].tolist() == [3.0]
    assert g.edges[("0", "0", "1")].data["float_0"].tolist() == [[4.0]]


def test_hand_built_equals_the_json_reader_and_the_reference_encoder(tmp_path: Path) -> None:
    (tmp_path / "j").mkdir()
    (tmp_path / "j" / "meta.json").write_text(json.dumps(HAND_META))
    (tmp_path / "j" / "g.json").write_text("\n".join(map(json.dumps, HAND_JSON)) + "\n")
    assert b"".join(json2dat(line, HAND_META) for line in HAND_JSON) == HAND
    assert_graphs_equal(read_euler(tmp_path / "j" / "g.json"), read_euler_dat(_hand(tmp_path)))


def test_writer_reproduces_the_hand_built_bytes(tmp_path: Path) -> None:
    """write(read(file)) gives the same bytes: the writer follows the layout too."""
    g = read_euler_dat(_hand(tmp_path))
    write_euler_dat(g, tmp_path / "out")
    assert (tmp_path / "out" / "graph_0.dat").read_bytes() == HAND
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert {k: meta[k] for k in HAND_META} == HAND_META


# ----- Euler's own examples ------------------------------------------------------------------
def test_shared_example_converted_by_reference_encoder(tmp_path: Path, shared_file) -> None:
    src = shared_file("format-euler", "euler1_tf_euler_testdata", "graph.json")
    meta = json.loads(src.with_name("meta.json").read_text())
    dat = json_file_to_dat(src, meta, tmp_path / "graph_0.dat")
    g = read_euler(src)
    assert_graphs_equal(g, read_euler_dat(dat, meta=src.with_name("meta.json")))
    assert g.num_edges() == 12  # from the edge records, not the neighbour lists


def test_shared_example_written_by_our_writer(tmp_path: Path, shared_file) -> None:
    g = read_euler(shared_file("format-euler", "euler1_tf_euler_testdata", "graph.json"))
    write_euler_dat(g, tmp_path / "d", num_partitions=2)
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == \
        ["graph_0.dat", "graph_1.dat", "meta.json"]
    assert_graphs_equal(g, read_euler_dat(tmp_path / "d"))


@pytest.mark.parametrize("parts", [1, 3])
def test_writer_bytes_are_json2dat_of_write_euler(tmp_path: Path, parts: int) -> None:
    """Each partition file is the reference json2dat of the JSON write_euler writes."""
    g = random_graph(11, euler_safe=True)
    g.nodes[g.ntypes[0]].data.pop("text", None)  # non-UTF-8-safe bytes are dat-only
    write_euler(g, tmp_path / "j", num_partitions=parts)
    write_euler_dat(g, tmp_path / "d", num_partitions=parts)
    meta = json.loads((tmp_path / "j" / "meta.json").read_text())
    for i in range(parts):
        ref = json_file_to_dat(tmp_path / "j" / f"graph_{i}.json", meta, tmp_path / f"r{i}")
        assert (tmp_path / "d" / f"graph_{i}.dat").read_bytes() == ref.read_bytes()


# ----- round trips ---------------------------------------------------------------------------
@settings(max_examples=25, **FAST)
@given(seed=st.integers(0, 2**32 - 1), parts=st.integers(1, 3))
def test_round_trip_random(tmp_path: Path, seed: int, parts: int) -> None:
    g = random_graph(seed, euler_safe=True)
    out = tmp_path / f"{seed}-{parts}"
    write_euler_dat(g, out, num_partitions=parts)
    for i in range(parts):
        data = (out / f"graph_{i}.dat").read_bytes()
        ids = []
        while data:  # walk the blocks by block_bytes: each holds a node of this partition
            ids.append(struct.unpack_from("<Q", data, 8)[0])
            data = data[4 + struct.unpack_from("<i", data)[0]:]
        assert all(n % parts == i for n in ids)
    h = read_euler_dat(out)
    assert_graphs_equal(g, h, src_sorted=True, ignore=("node_id",))
    write_euler_dat(h, tmp_path / f"{seed}-{parts}-again", num_partitions=parts)
    assert_graphs_equal(h, read_euler_dat(tmp_path / f"{seed}-{parts}-again"))
    for i in range(parts):
        assert (out / f"graph_{i}.dat").read_bytes() == \
            (tmp_path / f"{seed}-{parts}-again" / f"graph_{i}.dat").read_bytes()


def test_binary_slots_take_any_bytes(tmp_path: Path) -> None:
    g = gs.graph(([0], [1]))
    g.ndata["blob"] = gs.Ragged(np.array([0, 255, 128], np.uint8), np.array([0, 2, 3]))
    write_euler_dat(g, tmp_path)
    assert read_euler_dat(tmp_path).ndata["blob"].equals(g.ndata["blob"])


def test_writer_refuses_floats_euler_cannot_hold(tmp_path: Path) -> None:
    g = gs.graph(([0], [1]))
    g.ndata["x"] = np.array([0.1, 0.5])  # float64: 0.1 is no float32
    with pytest.raises(gs.ValidationError, match=r"feature 'x' value 0\.1 .* not a float32"):
        write_euler_dat(g, tmp_path / "o")
    assert not (tmp_path / "o").exists()
    g.ndata["x"] = np.array([0.25, 0.5])  # float64 values that are float32: kept as float64
    write_euler_dat(g, tmp_path / "o")
    assert read_euler_dat(tmp_path / "o").ndata["x"].dtype == np.float64


def test_neighbor_lists_stand_for_missing_edge_records(tmp_path: Path) -> None:
    lines = [dict(HAND_JSON[0], edge=[]), HAND_JSON[1]]
    data = b"".join(json2dat(line, HAND_META) for line in lines)
    g = read_euler_dat(_hand(tmp_path, data))
    et = ("0", "0", "1")
    assert g.num_edges(et) == 1 and g.edges[et].data["weight"].tolist() == [2.0]


# ----- the registry, sniffing and the CLI ----------------------------------------------------
def test_format_of_path_looks_at_the_first_bytes(tmp_path: Path) -> None:
    dat = _hand(tmp_path)
    assert format_of_path(dat) == "euler-dat"
    assert format_of_path(tmp_path) == "euler-dat"
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "graph_0.dat").write_text("\n".join(map(json.dumps, HAND_JSON)))
    assert format_of_path(tmp_path / "t" / "graph_0.dat") is None  # JSON lines: --from euler
    assert format_of_path(tmp_path / "t") == "chunked"  # as before: not sniffed as binary
    assert read_euler(tmp_path / "t" / "graph_0.dat").num_edges() == 2


def test_convert_both_ways_and_cli(tmp_path: Path, shared_file) -> None:
    src = shared_file("format-euler", "euler1_tf_euler_testdata", "graph.json")
    report = convert("euler", src, "euler-dat", tmp_path / "d", num_partitions=2)
    assert report.dst_format == "euler-dat"
    convert("euler-dat", tmp_path / "d", "euler", tmp_path / "j")
    assert_graphs_equal(read_euler(src), read_euler(tmp_path / "j"))
    assert main(["convert", "--from", "euler", str(src), "--to", "euler-dat", "--out",
                 str(tmp_path / "c")]) == 0
    assert main(["partition", str(tmp_path / "c" / "graph_0.dat"), "-k", "2", "--out",
                 str(tmp_path / "p")]) == 0
    assert gs.load_partition(tmp_path / "p" / "graph_0.json", 0) is not None


# ----- errors name the file and the byte offset ----------------------------------------------
@pytest.mark.parametrize("cut", [3, 9, 30, 60, len(HAND) // 2, len(HAND) - 1])
def test_truncated_file(tmp_path: Path, cut: int) -> None:
    p = _hand(tmp_path, HAND[:cut])
    with pytest.raises(FormatError, match=r"graph_0\.dat: .*byte \d+") as info:
        read_euler_dat(p)
    assert info.value.path == str(p)


def _patch(offset: int, fmt: str, value: object) -> bytes:
    data = bytearray(HAND)
    struct.pack_into(fmt, data, offset, value)
    return bytes(data)


@pytest.mark.parametrize(("offset", "fmt", "value", "message"), [
    (0, "<i", 10**9, r"byte 0: not Euler binary data"),
    (4, "<i", 20, r"byte 0: not Euler binary data"),
    (24, "<i", -1, r"field 'edge_group_num': byte 24 \(block 0 at byte 0\): "
                   r"edge_group_num=-1 is not in"),
    (24, "<i", 1, r"edge_group_num=1, but the meta says 2"),
    (28, "<i", 2**30, r"field 'neighbor_id': byte 44 .*truncated: neighbor_id needs 8589934592"),
    (16, "<i", 7, r"byte 0: node type 7 is not in 0\.\.1"),
    (0, "<i", len(HAND), r"byte 0: not Euler binary data"),
])
def test_corrupt_counts(tmp_path: Path, offset: int, fmt: str, value: int, message: str
                        ) -> None:
    with pytest.raises(FormatError, match=r"graph_0\.dat: .*" + message):
        read_euler_dat(_hand(tmp_path, _patch(offset, fmt, value)))


def test_block_bytes_checksum(tmp_path: Path) -> None:
    first = struct.unpack_from("<i", HAND)[0]
    data = _patch(0, "<i", first + 4) + b"\0" * 0
    data = data[:4 + first] + b"\0\0\0\0" + data[4 + first:]
    with pytest.raises(FormatError, match=r"block_bytes=\d+ does not match its records"):
        read_euler_dat(_hand(tmp_path, data))


def test_graph_errors_name_the_offset(tmp_path: Path) -> None:
    second = 4 + struct.unpack_from("<i", HAND)[0]
    twice = _patch(second + 8, "<Q", 10)
    with pytest.raises(FormatError, match=rf"byte {second}: node 10 appears twice"):
        read_euler_dat(_hand(tmp_path, twice))
    lines = [HAND_JSON[0], dict(HAND_JSON[1], edge=[dict(HAND_JSON[1]["edge"][0], dst_id=99)])]
    data = b"".join(json2dat(line, HAND_META) for line in lines)
    with pytest.raises(FormatError, match=r"field 'edge\[0\]\.dst_id': byte \d+: dst_id 99 "
                                          r"is not a node"):
        read_euler_dat(_hand(tmp_path, data))
    lines[1]["edge"][0].update(dst_id=10, src_id=10)
    data = b"".join(json2dat(line, HAND_META) for line in lines)
    with pytest.raises(FormatError, match=r"src_id 10 differs from the block's node_id 11"):
        read_euler_dat(_hand(tmp_path, data))


def test_json_text_is_sent_to_read_euler(tmp_path: Path) -> None:
    p = _hand(tmp_path, ("\n".join(map(json.dumps, HAND_JSON)) + "\n").encode())
    with pytest.raises(FormatError, match=r"graph_0\.dat: .*it holds JSON text: read it with "
                                          r"read_euler"):
        read_euler_dat(p)


def test_declared_sizes_are_bounded_by_the_file(tmp_path: Path) -> None:
    """A count near 2**31 in a tiny file fails at once instead of allocating."""
    for offset in (28, 60):  # a group size, a feature length
        with pytest.raises(FormatError, match="truncated"):
            read_euler_dat(_hand(tmp_path, _patch(offset, "<i", 2**31 - 1)))


# ----- seeded mutation fuzzing (tests/fuzzing.py) ---------------------------------------------
def _dat_case(rng, folder: Path) -> Path:
    """The hand-built file's bytes mutated, or its meta mutated (sometimes dropped)."""
    data, meta = HAND, dict(HAND_META)
    how = rng.randrange(4)
    if how <= 1:
        data = mutate_bytes(rng, HAND)
    elif how == 2:
        meta = mutate_json(rng, HAND_META)
    else:
        data = mutate_bytes(rng, HAND)
        meta = None
    if data == HAND and meta == HAND_META:
        return None
    return _hand(folder, data, meta)


def test_fuzz_euler_dat(tmp_path: Path) -> None:
    run_fuzz("euler-dat", _dat_case, read_euler_dat, tmp_path,
             check=lambda g: graph_problem(g, max_nodes=2))
