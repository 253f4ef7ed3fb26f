"""apply_edge_policy: reverse edges, self loops and duplicates on MUSAE's wikipedia list (counts
from ../shared/data/musae-karateclub/README.md), features following their edges, hetero
reverse types, warnings that count, and the invariants on random graphs."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.io import apply_edge_policy, read_edgelist, read_graph


def test_wikipedia_counts_from_its_readme(shared_file, caplog):
    path = shared_file("musae-karateclub", "wikipedia", "edges.csv")
    with caplog.at_level(logging.WARNING):
        g = read_graph("edgelist", [path], add_reverse=True)
    assert g.num_edges() == 2 * 180020 - 145  # self loops are not reversed
    assert "kept 145 self loop(s)" in caplog.text
    assert "kept 18204 duplicate edge(s)" in caplog.text  # 9102 pairs listed both ways
    h, counts = apply_edge_policy(read_edgelist(path), add_reverse=True, self_loops="drop",
                                  duplicates="drop")
    assert counts == gs.io.EdgeCounts(self_loops=145, duplicates=18204, added_reverse=179875,
                                      dropped=145 + 18204)
    assert h.num_edges() == 2 * 170773  # the README's undirected edges, both directions


def test_features_follow_their_edges():
    g = gs.graph(([0, 1, 2, 2], [1, 1, 0, 0]))
    g.edata["w"] = np.array([10.0, 11.0, 12.0, 13.0])
    h, _ = apply_edge_policy(g, add_reverse=True, duplicates="drop")
    s, d = h.edges()
    assert list(zip(s.tolist(), d.tolist(), h.edata["w"].tolist(), strict=True)) == [
        (0, 1, 10.0), (1, 1, 11.0), (2, 0, 12.0), (1, 0, 10.0), (0, 2, 12.0)]


def test_hetero_reverse_types_and_untouched_node_data():
    g = gs.heterograph({("user", "buys", "item"): ([0, 1], [1, 1]),
                        ("item", "sim", "item"): ([0, 1], [1, 1])},
                       num_nodes_dict={"user": 2, "item": 2})
    g.nodes["user"].data["age"] = np.array([30, 40])
    h, counts = apply_edge_policy(g, add_reverse=True, self_loops="drop")
    assert h.canonical_etypes == [("user", "buys", "item"), ("item", "sim", "item"),
                                  ("item", "rev_buys", "user")]
    assert h.edges(etype="rev_buys")[0].tolist() == [1, 1]
    assert h.edges(etype="sim")[0].tolist() == [0, 1] and h.num_edges("sim") == 2
    assert h.nodes["user"].data["age"].tolist() == [30, 40]
    assert counts.self_loops == 1 and counts.added_reverse == 3


def test_nothing_to_do_returns_the_graph_itself():
    g = gs.graph(([0, 1], [1, 2]))
    assert apply_edge_policy(g)[0] is g


def test_bad_choices_name_the_option():
    g = gs.graph(([0], [1]))
    with pytest.raises(ValidationError, match=r"self_loops must be one of \['keep', 'drop'\], "
                       r"got 'remove'"):
        apply_edge_policy(g, self_loops="remove")
    with pytest.raises(ValidationError, match=r"duplicates must be one of"):
        read_graph("metis", ["x.graph"], duplicates="count")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=0, max_size=30))
def test_undirected_simple_graph_invariants(pairs):
    src = np.array([p[0] for p in pairs], dtype=np.int64)
    dst = np.array([p[1] for p in pairs], dtype=np.int64)
    g = gs.graph((src, dst), num_nodes=6)
    h, counts = apply_edge_policy(g, add_reverse=True, self_loops="drop", duplicates="drop")
    s, d = h.edges()
    edges = set(zip(s.tolist(), d.tolist(), strict=True))
    expected = {(a, b) for a, b in pairs if a != b} | {(b, a) for a, b in pairs if a != b}
    assert edges == expected and len(edges) == h.num_edges()  # symmetric, simple
    assert counts.self_loops == sum(a == b for a, b in pairs)


@pytest.mark.parametrize("num_nodes", [10, 1 << 40])  # one int64 key per edge; two keys
def test_duplicates_in_a_huge_id_space(num_nodes):
    big = num_nodes - 1
    g = gs.graph(([big, 0, big, 3], [5, 1, 5, 3]), num_nodes=num_nodes)
    kept, counts = apply_edge_policy(g)
    assert kept is g and counts.duplicates == 1 and counts.self_loops == 1
    h, _ = apply_edge_policy(g, duplicates="drop")
    assert h.edges()[0].tolist() == [big, 0, 3] and h.edges()[1].tolist() == [5, 1, 3]
