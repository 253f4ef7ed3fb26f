"""IDConverter and RangePartitionBook against brute-force references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphshard.errors import FormatError, ValidationError
from graphshard.ids import IDConverter, RangePartitionBook


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
