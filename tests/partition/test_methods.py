"""What the simple methods do, as their registry descriptions say."""

from __future__ import annotations

import json

import numpy as np

import graphshard as gs
from graphshard.partition import METHODS, build_partitions


def _euler_graph(tmp_path):
    """Euler 1 nodes 10, 13, 21, 34 (type 0) and 7 (type 1): dense IDs differ from node_id."""
    lines = [(10, 0, [13, 34]), (13, 0, [21]), (21, 0, [7]), (34, 0, [10]), (7, 1, [10])]
    text = "".join(json.dumps({"node_id": v, "node_type": t, "node_weight": 1.0, "edge": [
        {"src_id": v, "dst_id": u, "edge_type": 0, "weight": 1.0} for u in nb]}) + "\n"
        for v, t, nb in lines)
    (tmp_path / "g.json").write_text(text)
    return gs.io.read_euler(tmp_path / "g.json")


def test_hash_uses_original_node_ids(tmp_path):
    g = _euler_graph(tmp_path)
    res = build_partitions(g, "e", 3, tmp_path / "hash", part_method="hash")
    node_id = np.concatenate([np.asarray(g.nodes[t].data["node_id"], np.int64)
                              for t in g.ntypes])
    assert sorted(node_id.tolist()) == [7, 10, 13, 21, 34]
    # Euler's own split, by its node_id (the dense IDs would give 0, 1, 2, 0, 1)
    assert res.parts.tolist() == (node_id % 3).tolist() == [1, 1, 0, 1, 1]
    assert res.parts.tolist() != (np.arange(g.num_nodes()) % 3).tolist()
    assert "original node ID" in METHODS["hash"].description


def test_hash_issue_example_and_fallback(tmp_path):
    """Euler IDs [2, 4, 6, 1, 3, 5] in 2 parts: [0, 0, 0, 1, 1, 1] (issue 27); a graph
    without an integer node_id feature falls back to its homogeneous IDs."""
    g = gs.graph(([0, 1, 2, 3, 4], [1, 2, 3, 4, 5]))
    g.ndata["node_id"] = np.array([2, 4, 6, 1, 3, 5], dtype=np.uint64)
    res = build_partitions(g, "e", 2, tmp_path / "a", part_method="hash")
    assert res.parts.tolist() == [0, 0, 0, 1, 1, 1]
    plain = gs.graph(([0, 1, 2, 3, 4], [1, 2, 3, 4, 5]))
    res = build_partitions(plain, "e", 2, tmp_path / "b", part_method="hash")
    assert res.parts.tolist() == [0, 1, 0, 1, 0, 1]
    # with trainers, hash runs over parts * trainers, and trainers 2m, 2m+1 form machine m
    res = build_partitions(g, "e", 2, tmp_path / "c", part_method="hash",
                           num_trainers_per_machine=2)
    assert res.parts.tolist() == ((np.array([2, 4, 6, 1, 3, 5]) % 4) // 2).tolist()


def test_hash_on_euler_examples_matches_euler_files(shared_file, tmp_path):
    """Euler's shipped examples: hash parts equal node_id % k, and write_euler's
    ``graph_<idx>.json`` files hold exactly the nodes of part idx."""
    for folder in ("euler1_tf_euler_testdata", "euler2_tools_test_data"):
        g = gs.io.read_euler(shared_file("format-euler", folder, "graph.json"))
        node_id = np.concatenate([g.nodes[t].data["node_id"] for t in g.ntypes])
        assert len(np.unique(node_id)) == g.num_nodes() > 3
        for k in (2, 3):
            res = build_partitions(g, "e", k, tmp_path / f"{folder}{k}", part_method="hash")
            assert res.parts.tolist() == (node_id.astype(np.int64) % k).tolist()
            out = tmp_path / f"{folder}-euler{k}"
            gs.io.write_euler(g, out, num_partitions=k)
            for idx in range(k):
                lines = (out / f"graph_{idx}.json").read_text().splitlines()
                ids = sorted(json.loads(line)["node_id"] for line in lines)
                assert ids == sorted(node_id[res.parts == idx].tolist())
