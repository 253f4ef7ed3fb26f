"""Euler JSON: the authors' examples, round trips, partitions, errors and fuzzing."""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from fuzz_graph import graph_problem
from hypothesis import given, settings
from hypothesis import strategies as st
from io_helpers import FAST, assert_graphs_equal, random_graph

import graphshard as gs
from fuzzing import mutate_json, mutate_text, run_fuzz
from graphshard.errors import FormatError
from graphshard.io import node_id_strings, read_euler, write_euler

SEED_EXAMPLE = (  # the example of the Euler seed, verbatim
    '{"node_id":0,"node_type":0,"node_weight":5.0,"neighbor":{"0":{"1":2.0,"2":4.0},"'
    '1":{}},"uint64_feature":{"0":[]},"float_feature":{"0":[]},"binary_feature":{"0":'
    '"phone"},"edge":[{"src_id":0,"dst_id":1,"edge_type":0,"weight":2.0,"uint64_featu'
    're":{},"float_feature":{"0":[4.0],"1":[]},"binary_feature":{}},{"src_id":0,"dst_'
    'id":2,"edge_type":0,"weight":4.0,"uint64_feature":{},"float_feature":{"0":[8.0],'
    '"1":[]},"binary_feature":{}}]}\n'
    '{"node_id":1,"node_type":1,"node_weight":2.0,"neighbor":{"0":{},"1":{"2":3.0}},"'
    'uint64_feature":{"0":[0]},"float_feature":{"0":[5999.9]},"binary_feature":{"0":"'
    'a sapple 6 phone"},"edge":[{"src_id":1,"dst_id":2,"edge_type":1,"weight":3.0,"ui'
    'nt64_feature":{},"float_feature":{"0":[],"1":[6.0]},"binary_feature":{}}]}\n'
    '{"node_id":2,"node_type":1,"node_weight":3.0,"neighbor":{"0":{},"1":{}},"uint64_'
    'feature":{"0":[1]},"float_feature":{"0":[5888.8]},"binary_feature":{"0":"a '
    'sungsung s8 phone"},"edge":[]}\n'
)
SEED_META = {"node_type_num": 2, "edge_type_num": 2, "node_uint64_feature_num": 1,
             "node_float_feature_num": 1, "node_binary_feature_num": 1,
             "edge_uint64_feature_num": 0, "edge_float_feature_num": 2,
             "edge_binary_feature_num": 0}


def _seed(tmp_path: Path, text: str = SEED_EXAMPLE) -> Path:
    (tmp_path / "meta.json").write_text(json.dumps(SEED_META))
    (tmp_path / "graph.json").write_text(text)
    return tmp_path / "graph.json"


def test_seed_example(tmp_path: Path) -> None:
    g = read_euler(_seed(tmp_path))
    assert g.ntypes == ["0", "1"]
    assert g.canonical_etypes == [("0", "0", "1"), ("1", "1", "1")]
    assert g.edges(etype=("0", "0", "1"))[1].tolist() == [0, 1]
    assert g.edges[("0", "0", "1")].data["weight"].tolist() == [2.0, 4.0]
    item = g.nodes["1"].data
    assert item["node_id"].tolist() == [1, 2]
    assert item["float_0"].tolist() == [[np.float32(5999.9)], [np.float32(5888.8)]]
    assert node_id_strings(item["binary_0"]) == ["a sapple 6 phone", "a sungsung s8 phone"]
    assert g.nodes["0"].data["uint64_0"].lengths.tolist() == [0]
    assert g.edges[("0", "0", "1")].data["float_0"].tolist() == [[4.0], [8.0]]
    assert isinstance(g.edges[("1", "1", "1")].data["float_1"], np.ndarray)


def test_euler1_testdata(shared_file) -> None:
    g = read_euler(shared_file("format-euler", "euler1_tf_euler_testdata", "graph.json"))
    assert g.num_nodes() == 6 and g.num_edges() == 12
    assert g.nodes["1"].data["node_id"].tolist() == [1, 3, 5]
    assert g.nodes["1"].data["uint64_0"][0].tolist() == [12341, 56781, 1234, 5678]
    assert node_id_strings(g.edges[("0", "1", "1")].data["binary_1"])[0] == "ebb"


def test_euler2_graph_json(shared_file) -> None:
    g = read_euler(shared_file("format-euler", "euler2_tools_test_data", "graph.json"))
    assert g.num_nodes() == 6 and g.num_edges() == 12
    assert g.nodes["1"].data["f4"][0].tolist() == pytest.approx([1.3, 1.4, 1.5])
    assert g.nodes["0"].data["f1"][0].tolist() == [21, 22]
    assert node_id_strings(g.nodes["1"].data["f5"]) == ["1a", "3a", "5a"]
    et = ("0", "1", "1")
    assert g.edges[et].data["f3"][0].tolist() == pytest.approx([23.1, 23.2])


@pytest.mark.parametrize("parts", [1, 3])
def test_round_trip_partitioned(tmp_path: Path, parts: int) -> None:
    g = random_graph(7, euler_safe=True)
    write_euler(g, tmp_path, num_partitions=parts)
    files = sorted(p.name for p in tmp_path.glob("graph_*.json"))
    assert files == [f"graph_{i}.json" for i in range(parts)]
    for i in range(parts):
        for line in (tmp_path / f"graph_{i}.json").read_text().splitlines():
            assert json.loads(line)["node_id"] % parts == i
    assert_graphs_equal(g, read_euler(tmp_path), src_sorted=True, ignore=("node_id",))


@settings(max_examples=25, **FAST)
@given(seed=st.integers(0, 2**32 - 1), parts=st.integers(1, 3))
def test_round_trip_random(tmp_path: Path, seed: int, parts: int) -> None:
    g = random_graph(seed, euler_safe=True)
    out = tmp_path / f"{seed}-{parts}"
    write_euler(g, out, num_partitions=parts)
    h = read_euler(out)
    assert_graphs_equal(g, h, src_sorted=True, ignore=("node_id",))
    assert np.concatenate([h.nodes[t].data["node_id"] for t in h.ntypes]).tolist() == \
        list(range(g.num_nodes()))
    write_euler(h, tmp_path / f"{seed}-{parts}-again", num_partitions=parts)
    assert_graphs_equal(h, read_euler(tmp_path / f"{seed}-{parts}-again"))


def test_shared_example_round_trip(tmp_path: Path, shared_file) -> None:
    g = read_euler(shared_file("format-euler", "euler1_tf_euler_testdata", "graph.json"))
    write_euler(g, tmp_path, num_partitions=2)
    assert_graphs_equal(g, read_euler(tmp_path))


def test_neighbor_only_blocks(tmp_path: Path) -> None:
    text = ('{"node_id":5,"node_type":0,"node_weight":1,"neighbor":{"0":{"6":2.5}}}\n\n'
            '{"node_id":6,"node_type":0,"node_weight":1,"neighbor":{"0":{}},"edge":[]}\n')
    (tmp_path / "g.json").write_text(text)
    g = read_euler(tmp_path / "g.json")
    assert g.edges()[1].tolist() == [1] and g.edata["weight"].tolist() == [2.5]


def _line(i: int, **extra) -> str:
    block = {"node_id": i, "node_type": 0, "node_weight": 1.0, "uint64_feature": {"0": [1]},
             "float_feature": {"0": [1.0]}, "binary_feature": {"0": "x"}, "edge": []}
    block.update(extra)
    return json.dumps(block)


def test_error_malformed_json(tmp_path: Path) -> None:
    p = _seed(tmp_path, _line(0) + "\n" + _line(1) + "\n" + '{"node_id": 2, "node_type": \n')
    with pytest.raises(FormatError, match=r"graph\.json:3: malformed JSON") as e:
        read_euler(p)
    assert e.value.line == 3 and e.value.path.endswith("graph.json")


def test_error_neighbor_not_a_node(tmp_path: Path) -> None:
    edge = {"src_id": 1, "dst_id": 42, "edge_type": 0, "weight": 1.0}
    p = _seed(tmp_path, _line(0) + "\n" + _line(1, edge=[dict(edge, dst_id=0), edge]) + "\n")
    with pytest.raises(FormatError, match=r"graph\.json:2: field 'edge\[1\]\.dst_id'.*42") as e:
        read_euler(p)
    assert e.value.field == "edge[1].dst_id"


def test_error_wrong_slot_kind(tmp_path: Path) -> None:
    p = _seed(tmp_path, _line(0) + "\n" + _line(1, uint64_feature={"0": ["a"]}) + "\n")
    with pytest.raises(FormatError, match=r"graph\.json:2: field 'uint64_feature\[\"0\"\]'"):
        read_euler(p)
    p = _seed(tmp_path, _line(0, binary_feature={"0": [1, 2]}) + "\n")
    with pytest.raises(FormatError, match=r"graph\.json:1: field 'binary_feature\[\"0\"\]'"):
        read_euler(p)


def test_error_missing_field_and_duplicate(tmp_path: Path) -> None:
    block = json.loads(_line(1))
    del block["node_type"]
    p = _seed(tmp_path, _line(0) + "\n" + json.dumps(block) + "\n")
    with pytest.raises(FormatError, match=r"graph\.json:2: field 'node_type'"):
        read_euler(p)
    p = _seed(tmp_path, _line(0) + "\n" + _line(0) + "\n")
    with pytest.raises(FormatError, match=r"graph\.json:2: field 'node_id'.*twice"):
        read_euler(p)
    p = _seed(tmp_path, _line(0, node_type=7) + "\n")
    with pytest.raises(FormatError, match=r"graph\.json:1: .*node_type_num=2"):
        read_euler(p)


def test_writer_refuses_and_keeps_old_output(tmp_path: Path) -> None:
    g = gs.graph(([0], [1]))
    write_euler(g, tmp_path)
    before = (tmp_path / "graph_0.json").read_bytes()
    g.ndata["neg"] = np.array([-1, 2])
    with pytest.raises(gs.ValidationError, match="'neg' has negative"):
        write_euler(g, tmp_path)
    assert (tmp_path / "graph_0.json").read_bytes() == before


@settings(max_examples=60, **FAST)
@given(data=st.data())
def test_fuzz_lines(tmp_path: Path, data) -> None:
    lines = SEED_EXAMPLE.encode().splitlines()
    k = data.draw(st.integers(0, len(lines) - 1))
    blob = bytearray(lines[k])
    for _ in range(data.draw(st.integers(1, 3))):
        pos = data.draw(st.integers(0, len(blob) - 1))
        blob[pos] = data.draw(st.sampled_from([*list(b'{}[]:,"0129.-ae \\'), 255]))
    lines[k] = bytes(blob)
    (tmp_path / "meta.json").write_text(json.dumps(SEED_META))
    (tmp_path / "graph.json").write_bytes(b"\n".join(lines) + b"\n")
    with contextlib.suppress(FormatError):
        read_euler(tmp_path / "graph.json")



@pytest.mark.parametrize("count", [10**6, 2**31])
def test_meta_count_bounded_before_any_work(tmp_path: Path, count: int) -> None:
    # a 228-byte meta declaring 10**6 float slots ran for minutes; 2**31 died in MemoryError
    p = _seed(tmp_path)
    (tmp_path / "meta.json").write_text(json.dumps(dict(SEED_META, node_float_feature_num=count)))
    with pytest.raises(FormatError, match=rf"meta\.json: field 'node_float_feature_num': "
                       rf"expected a count 0\.\.4096, got {count}") as e:
        read_euler(p)
    assert e.value.field == "node_float_feature_num"


def test_huge_type_or_slot_number_without_meta(tmp_path: Path) -> None:
    # without a meta every number up to the largest became a type or slot: 10**15 of them
    (tmp_path / "g.json").write_text(_line(0, node_type=10**15) + "\n")
    with pytest.raises(FormatError, match=r"g\.json:1: field 'node_type': type 10+ is not in "
                       r"0\.\.4095"):
        read_euler(tmp_path / "g.json")
    (tmp_path / "g.json").write_text(_line(0, float_feature={"2147483648": [1.0]}) + "\n")
    with pytest.raises(FormatError, match=r"g\.json:1: field 'float_feature': slot 2147483648"):
        read_euler(tmp_path / "g.json")


@pytest.mark.parametrize("edit", [
    lambda gsm: gsm.__setitem__("node_features", {"u": 1}),
    lambda gsm: gsm["node_features"]["u"][0].__delitem__("name"),
    lambda gsm: gsm["node_features"]["u"][0].__setitem__("dtype", "<U9"),
    lambda gsm: gsm["node_features"]["u"][0].__setitem__("slot", 7),
    lambda gsm: gsm.__setitem__("edge_types", [["u", "r"]]),
    lambda gsm: gsm.__setitem__("node_types", ["u"]),
])
def test_graphshard_key_type_confusion(tmp_path: Path, edit) -> None:
    data, meta = WRITTEN[0], json.loads(json.dumps(WRITTEN[1]))
    edit(meta["graphshard"])
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    (tmp_path / "g.json").write_text(data)
    with pytest.raises(FormatError, match=r"meta\.json: field .graphshard\.") as e:
        read_euler(tmp_path / "g.json")
    assert e.value.field.startswith("graphshard.")


def test_euler2_id_beyond_uint64(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(EULER2_DOC))
    doc["edges"][0]["src"] = 2**64
    (tmp_path / "graph.json").write_text(json.dumps(doc, indent=1))
    with pytest.raises(FormatError, match=r"graph\.json: field 'edges\[0\]'"):
        read_euler(tmp_path / "graph.json")


# ----- seeded mutation fuzzing (tests/fuzzing.py) ---------------------------------------------
EULER2_DOC = {"nodes": [{"id": 0, "type": 0, "weight": 1.0,
                         "features": [{"name": "f1", "type": "sparse", "value": [21, 22]},
                                      {"name": "f4", "type": "dense", "value": [1.5, 2.5]}]},
                        {"id": 1, "type": 1, "weight": 2.0,
                         "features": [{"name": "f5", "type": "binary", "value": "1a"}]}],
              "edges": [{"src": 0, "dst": 1, "type": 0, "weight": 3.0,
                         "features": [{"name": "f3", "type": "dense", "value": [1.0]}]},
                        {"src": 1, "dst": 0, "type": 1, "weight": 1.0, "features": []}]}


def _written_example() -> tuple[str, dict]:
    """Lines and meta (with its ``graphshard`` key) as :func:`write_euler` writes them."""
    g = gs.heterograph({("u", "r", "i"): ([0, 1], [1, 0])}, num_nodes_dict={"u": 2, "i": 2})
    g.nodes["u"].data["x"] = np.ones((2, 2), np.float32)
    g.nodes["i"].data["tags"] = gs.Ragged.from_rows([[1], [2, 3]], dtype="int64")
    g.edges["r"].data["w"] = np.array([1, 2], np.int64)
    with tempfile.TemporaryDirectory() as d:
        write_euler(g, d)
        return (Path(d, "graph_0.json").read_text(),
                json.loads(Path(d, "meta.json").read_text()))


WRITTEN = _written_example()


def _euler_case(rng, folder: Path) -> Path:
    """Euler 1 lines (text, one line's JSON, or the meta mutated), a meta's ``graphshard``
    key mutated, or an Euler 2 document."""
    lines = SEED_EXAMPLE.splitlines()
    meta: object = dict(SEED_META)
    how = rng.randrange(6)
    if how == 5:
        data, meta = WRITTEN[0].encode(), dict(WRITTEN[1])
        meta["graphshard"] = mutate_json(rng, WRITTEN[1]["graphshard"])
        how = -1
    if how == 0:
        data = mutate_text(rng, SEED_EXAMPLE)
    elif how == 1:
        k = rng.randrange(len(lines))
        lines[k] = json.dumps(mutate_json(rng, json.loads(lines[k])))
        data = "\n".join(lines).encode()
    elif how == 2:
        data, meta = SEED_EXAMPLE.encode(), mutate_json(rng, meta)
    elif how == 3:
        data, meta = SEED_EXAMPLE.encode(), mutate_text(rng, json.dumps(SEED_META, indent=0))
    elif how == 4:
        data, meta = json.dumps(mutate_json(rng, EULER2_DOC), indent=1).encode(), None
    if meta is not None:
        (folder / "meta.json").write_bytes(meta if isinstance(meta, bytes)
                                           else json.dumps(meta).encode())
    (folder / "graph.json").write_bytes(data)
    return folder / "graph.json"


def test_fuzz_euler(tmp_path: Path) -> None:
    run_fuzz("euler", _euler_case, read_euler, tmp_path,
             check=lambda g: graph_problem(g, max_nodes=4))


@pytest.mark.parametrize("value", ["1e308", "-1e39"])
def test_float_feature_beyond_float32_is_an_error(tmp_path, value):
    """A float feature is float32: 1e308 used to become inf with only a RuntimeWarning."""
    path = tmp_path / "g.json"
    line = json.dumps({"node_id": 0, "node_type": 0, "node_weight": 1, "neighbor": {},
                       "uint64_feature": {}, "float_feature": {"0": [1.0, "VALUE"]},
                       "binary_feature": {}, "edge": []}).replace('"VALUE"', value)
    path.write_text(line + "\n" + line.replace('"node_id": 0', '"node_id": 1')
                    .replace(value, "2.0") + "\n")
    with pytest.raises(FormatError, match=r"g\.json: field 'node feature float_0': value .* "
                                          r"does not fit float32"):
        read_euler(path)
    path.write_text(line.replace(value, "3e38") + "\n")
    assert read_euler(path).ndata["float_0"].tolist() == [[1.0, pytest.approx(3e38)]]
