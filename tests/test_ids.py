"""IDConverter and RangePartitionBook against brute-force references."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphshard.errors import FormatError, ValidationError
from graphshard.ids import IDConverter
from graphshard.partition_book import RangePartitionBook


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=4), min_size=1, max_size=3))
def test_partition_book_matches_reference(sizes):
    # sizes[t][p]: nodes of type t in part p; build ranges part-major, type-minor
    num_parts = min(len(s) for s in sizes)
    sizes = [s[:num_parts] for s in sizes]
    ranges, start = [[None] * num_parts for _ in sizes], 0
    owner, types, per_type = [], [], []
    seen = [0] * len(sizes)
    for p in range(num_parts):
        for t in range(len(sizes)):
            ranges[t][p] = [start, start + sizes[t][p]]
            for _ in range(sizes[t][p]):
                owner.append(p)
                types.append(t)
                per_type.append(seen[t])
                seen[t] += 1
            start += sizes[t][p]
    names = [f"t{t}" for t in range(len(sizes))]
    book = RangePartitionBook(0, dict(zip(names, ranges, strict=True)),
                              {"t0:r:t0": [[0, 0]] * num_parts})
    homo = np.arange(start)
    assert book.nid2partid(homo).tolist() == owner
    t, ids = book.map_to_per_ntype(homo)
    assert t.tolist() == types and ids.tolist() == per_type
    for ti, name in enumerate(names):
        mine = homo[np.array(types, dtype=int) == ti] if start else homo
        assert book.map_to_homo_nid(np.arange(seen[ti]), name).tolist() == mine.tolist()
        for p in range(num_parts):
            local = book.partid2nids(p, name)
            assert len(local) == sizes[ti][p]
            assert np.all(book.nid2partid(local, name) == p)
    with pytest.raises(ValidationError, match="out of range"):
        book.nid2partid([start])


def test_id_converter():
    conv = IDConverter({"a": 2, "b": 3})
    assert conv.to_homo("b", [0, 2]).tolist() == [2, 4]
    with pytest.raises(ValidationError, match="IDs of type 'b': ID 3"):
        conv.to_homo("b", [3])
    with pytest.raises(ValidationError, match="unknown type 'c'"):
        conv.to_homo("c", [0])


def test_bad_ranges():
    with pytest.raises(FormatError, match="must be contiguous"):
        RangePartitionBook(0, {"a": [[0, 2], [3, 4]]}, {})
    book = RangePartitionBook(0, {"a": [[0, 2], [2, 4]]}, {"a:r:a": [[0, 1], [1, 5]]})
    assert book.metadata() == [{"machine_id": 0, "num_nodes": 2, "num_edges": 1},
                               {"machine_id": 1, "num_nodes": 2, "num_edges": 4}]
    assert book.nid2localnid([2, 3], 1).tolist() == [0, 1]
    with pytest.raises(ValidationError, match="not owned by partition 0"):
        book.nid2localnid([2], 0)
    assert book.eid2partid([0, 1, 4]).tolist() == [0, 1, 1]
    assert book.map_to_homo_eid([0, 1], "r").tolist() == [0, 1]


def _reference(sizes):
    """(type index, per-type ID) of every homogeneous ID, by enumeration."""
    types = [t for t, n in enumerate(sizes) for _ in range(n)]
    ids = [i for n in sizes for i in range(n)]
    return types, ids


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=4),
       st.lists(st.integers(0, 6), min_size=1, max_size=3))
def test_id_converter_from_metadata_matches_reference(node_sizes, edge_sizes):
    ntypes = [f"n{i}" for i in range(len(node_sizes))]
    etypes = [f"n0:r{i}:n{len(node_sizes) - 1}" for i in range(len(edge_sizes))]
    # split each count over chunks, as a chunked metadata.json does
    meta = {"node_type": ntypes, "num_nodes_per_chunk": [[n // 2, n - n // 2] for n in node_sizes],
            "edge_type": etypes, "num_edges_per_chunk": [[n] for n in edge_sizes]}
    conv = IDConverter(meta)
    for sizes, names, het2hom, hom2het in (
            (node_sizes, ntypes, conv.nid_het2hom, conv.nid_hom2het),
            (edge_sizes, etypes, conv.eid_het2hom, conv.eid_hom2het)):
        types, ids = _reference(sizes)
        homo = np.arange(len(types))
        got_names, got_ids = hom2het(homo)
        assert got_names.tolist() == [names[t] for t in types] and got_ids.tolist() == ids
        for h, (t, i) in enumerate(zip(types, ids, strict=True)):  # scalars, boundaries too
            assert hom2het(h) == (names[t], i)
            assert het2hom(names[t], i) == h and isinstance(het2hom(names[t], i), int)
        for t, name in enumerate(names):
            assert het2hom(name, np.arange(sizes[t])).tolist() == [
                h for h in homo if types[h] == t]
            with pytest.raises(ValueError, match=rf"ID {sizes[t]} at position 0 is out of "
                               rf"range \[0, {sizes[t]}\)"):
                het2hom(name, sizes[t])
        n = len(types)
        with pytest.raises(ValidationError, match=rf"ID {n} at position {min(n, 1)} is out of"):
            hom2het([0, n] if n else [0])
    assert [conv.ntype2id(t) for t in ntypes] == list(range(len(ntypes)))
    assert [conv.id2ntype(i) for i in range(len(ntypes))] == ntypes
    assert [conv.etype2id(e) for e in etypes] == list(range(len(etypes)))
    assert conv.id2etype(np.arange(len(etypes))).tolist() == etypes


def test_id_converter_metadata_forms_and_errors(shared_file):
    meta = json.loads(shared_file("format-dgl-chunked", "mag240m-metadata.json").read_text())
    conv = IDConverter(meta)
    totals = {t: sum(c) for t, c in zip(meta["node_type"], meta["num_nodes_per_chunk"],
                                        strict=True)}
    assert conv.total == sum(totals.values()) == 244160499
    assert conv.nid_hom2het(totals["author"]) == ("institution", 0)
    assert conv.nid_het2hom("paper", 0) == totals["author"] + totals["institution"]
    # an edge type by its string, its tuple or its (unique) relation name
    assert conv.etype2id("paper:cites:paper") == conv.etype2id(("paper", "cites", "paper")) \
        == conv.etype2id("cites") == 3
    assert conv.eid_hom2het(int(conv.eid_offset[3]) + 7) == ("paper:cites:paper", 7)
    # the per-type totals of newer DGL revisions give the same numbering
    per_type = {"node_type": meta["node_type"], "edge_type": meta["edge_type"],
                "num_nodes_per_type": list(totals.values()),
                "num_edges_per_type": [sum(c) for c in meta["num_edges_per_chunk"]]}
    assert IDConverter(per_type).eid_offset.tolist() == conv.eid_offset.tolist()
    with pytest.raises(ValidationError, match="unknown node type 'venue'"):
        conv.nid_het2hom("venue", 0)
    with pytest.raises(FormatError, match="missing key 'num_edges_per_chunk'") as err:
        IDConverter({k: v for k, v in meta.items() if k != "num_edges_per_chunk"})
    assert err.value.field == "num_edges_per_chunk"
    with pytest.raises(FormatError, match=r"num_nodes_per_chunk must hold one entry per node "
                       "type"):
        IDConverter({**meta, "num_nodes_per_chunk": [[1], [2]]})
    with pytest.raises(FormatError, match=r"metadata\.json: canonical_etypes"):
        IDConverter({**meta, "edge_type": ["paper-cites-paper"] * 5})
    # counts with edge counts: the same API over names we choose
    small = IDConverter({"u": 2, "i": 1}, edge_counts={("u", "buys", "i"): 3})
    assert small.eid_hom2het([2]) [1].tolist() == [2] and small.etype2id("buys") == 0
    with pytest.raises(ValidationError, match="no edge types"):
        IDConverter({"u": 2}).eid_hom2het(0)


def test_seed_attributes_follow_the_seeds_definitions():
    """Seed 001's IDConverter sets ntype2id_map, etype2id_map, num_nodes (sum of each
    type's chunks), num_edges, and nid_offset/eid_offset as their cumulative sums."""
    meta = {"node_type": ["u", "i", "t"], "num_nodes_per_chunk": [[2, 5], [0, 4], [1]],
            "edge_type": ["u:b:i", "i:r:u"], "num_edges_per_chunk": [[3, 3, 1], [9]]}
    conv = IDConverter(meta)
    assert conv.ntype2id_map == {t: i for i, t in enumerate(meta["node_type"])}
    assert conv.etype2id_map == {t: i for i, t in enumerate(meta["edge_type"])}
    assert conv.num_nodes == [sum(c) for c in meta["num_nodes_per_chunk"]] == [7, 4, 1]
    assert conv.num_edges == [sum(c) for c in meta["num_edges_per_chunk"]] == [7, 9]
    assert conv.nid_offset.tolist() == np.cumsum([0, *conv.num_nodes]).tolist()
    assert conv.eid_offset.tolist() == np.cumsum([0, *conv.num_edges]).tolist()
    for t, i in conv.ntype2id_map.items():
        assert conv.ntype2id(t) == i


def test_range_partition_book_is_still_importable_from_ids():
    import graphshard as gs
    import graphshard.ids as ids
    import graphshard.partition_book as book

    assert ids.RangePartitionBook is book.RangePartitionBook is gs.RangePartitionBook
