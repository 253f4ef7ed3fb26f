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


def test_hash_uses_dense_homogeneous_ids(tmp_path):
    g = _euler_graph(tmp_path)
    assert "not a file's own IDs" in METHODS["hash"].description
    res = build_partitions(g, "e", 3, tmp_path / "hash", part_method="hash")
    assert res.parts.tolist() == (np.arange(g.num_nodes()) % 3).tolist()
    # Euler's own split, by its node_id, is an assignment in homogeneous order
    node_id = np.concatenate([np.asarray(g.nodes[t].data["node_id"], np.int64)
                              for t in g.ntypes])
    assert sorted(node_id.tolist()) == [7, 10, 13, 21, 34]
    euler = build_partitions(g, "e", 3, tmp_path / "euler", assignment=node_id % 3)
    assert euler.parts.tolist() == (node_id % 3).tolist() != res.parts.tolist()
