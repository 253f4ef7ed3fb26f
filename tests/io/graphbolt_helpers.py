"""Graphs and folders the GraphBolt tests share (importable as graphbolt_helpers): a graph
with every kind of column GraphBolt holds, and a dataset laid out as DGL's own example."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import graphshard as gs


def shop(typed: bool = True) -> gs.Graph:
    """A graph with every kind of column GraphBolt holds: 1-D/2-D/3-D features of several
    dtypes, labels, the three masks (val_mask on one type only), an edge feature."""
    rng = np.random.default_rng(0)
    if typed:
        g = gs.heterograph({("user", "buys", "item"): ([0, 1, 2, 2, 4], [1, 0, 1, 2, 0]),
                            ("item", "bought-by", "user"): ([1, 0], [0, 4]),
                            ("user", "follows", "user"): ([0, 3], [1, 1])},
                           num_nodes_dict={"user": 5, "item": 3})
    else:
        g = gs.graph(([0, 1, 2, 2, 4, 3], [1, 0, 1, 2, 0, 3]), num_nodes=6)
    for nt in g.ntypes:
        n = g.num_nodes(nt)
        frame = g.nodes[nt].data
        frame["feat"] = rng.standard_normal((n, 3)).astype(np.float32)
        frame["label"] = rng.integers(0, 4, n)
        frame["train_mask"] = rng.random(n) < 0.5
        frame["test_mask"] = ~frame["train_mask"]
        frame["half"] = rng.random(n).astype(np.float16)
        frame["cube"] = rng.integers(0, 9, (n, 2, 2)).astype(np.int8)
    first = g.ntypes[0]
    g.nodes[first].data["val_mask"] = np.zeros(g.num_nodes(first), dtype=bool)
    et = g.canonical_etypes[0]
    g.edges[et].data["w"] = rng.random(g.num_edges(et))
    return g


DGL_EXAMPLE = """\
dataset_name: graphbolt_test
graph:
  nodes:
    - type: paper # could be omitted for homogeneous graph.
      num: 4
    - type: author
      num: 5
  edges:
    - type: author:writes:paper # could be omitted for homogeneous graph.
      format: csv # Can be csv only.
      path: edge_data/author-writes-paper.csv
    - type: paper:cites:paper
      format: numpy
      path: edge_data/paper-cites-paper.npy
feature_data:
  - domain: node
    type: paper # could be omitted for homogeneous graph.
    name: feat
    format: numpy
    in_memory: false # If not specified, default to true.
    path: node_data/paper-feat.npy
  - domain: edge
    type: "author:writes:paper"
    name: feat
    format: numpy
    in_memory: false
    path: edge_data/author-writes-paper-feat.npy
tasks:
  - name: "node_classification"
    num_classes: 10
    train_set:
      - type: paper # could be omitted for homogeneous graph.
        data: # multiple data sources could be specified.
          - name: seed_nodes
            format: numpy # Can be numpy or torch.
            in_memory: true # If not specified, default to true.
            path: set/paper-train-seed_nodes.npy
          - name: labels
            format: numpy
            path: set/paper-train-labels.npy
    test_set:
      - type: paper
        data:
          - name: seed_nodes
            format: numpy
            path: set/paper-test-seed_nodes.npy
  - name: "link_prediction"
    train_set:
      - type: "paper:cites:paper"
        data:
          - name: node_pairs
            format: numpy
            path: set/pairs.npy
"""


def dgl_example(folder: Path) -> Path:
    for sub in ("edge_data", "node_data", "set"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / "edge_data" / "author-writes-paper.csv").write_text("0,1\n4,3\n2,1\n")
    np.save(folder / "edge_data" / "paper-cites-paper.npy", np.array([[0, 1], [2, 3]]))
    np.save(folder / "edge_data" / "author-writes-paper-feat.npy", np.array([1.0, 2.0, 3.0]))
    np.save(folder / "node_data" / "paper-feat.npy", np.arange(8.0).reshape(4, 2))
    np.save(folder / "set" / "paper-train-seed_nodes.npy", np.array([0, 2]))
    np.save(folder / "set" / "paper-train-labels.npy", np.array([7, 9]))
    np.save(folder / "set" / "paper-test-seed_nodes.npy", np.array([3]))
    np.save(folder / "set" / "pairs.npy", np.array([[0, 1]]))
    (folder / "metadata.yaml").write_text(DGL_EXAMPLE)
    return folder
