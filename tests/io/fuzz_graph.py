"""What an accepted fuzz case must satisfy: a sane Graph (importable as fuzz_graph)."""

from __future__ import annotations

import numpy as np

from graphshard.graph import Graph
from graphshard.ragged import Ragged


def graph_problem(g: Graph, num_edges: int | None = None, *,
                  max_nodes: int | None = None) -> str | None:
    """None for a sane graph, else what is wrong: IDs outside ``0..num_nodes-1`` or not
    int64, features of the wrong length, ``node_id`` features with repeats, an edge count
    other than ``num_edges`` (when the file's count is known), or more than ``max_nodes``
    nodes (when the input bounds them)."""
    if not isinstance(g, Graph):
        return f"returned {type(g).__name__}, not a Graph"
    if max_nodes is not None and g.num_nodes() > max_nodes:
        return f"{g.num_nodes()} nodes from an input that holds at most {max_nodes}"
    for et in g.canonical_etypes:
        if any(len(col) != g.num_edges(et) for col in g.edges[et].data.values()):
            return f"{et}: an edge feature of the wrong length"
    for nt in g.ntypes:
        if any(len(col) != g.num_nodes(nt) for col in g.nodes[nt].data.values()):
            return f"{nt}: a node feature of the wrong length"
    for et in g.canonical_etypes:
        for ids, nt in zip(g.edges(etype=et), (et[0], et[2]), strict=True):
            n = g.num_nodes(nt)
            if ids.dtype != np.int64:
                return f"{et}: IDs are {ids.dtype}"
            if len(ids) and (ids.min() < 0 or ids.max() >= n):
                return f"{et}: IDs span {ids.min()}..{ids.max()} but {nt!r} has {n} nodes"
    for nt in g.ntypes:
        if "node_id" in g.nodes[nt].data:
            col = g.nodes[nt].data["node_id"]
            rows = len(col) if isinstance(col, Ragged) else np.asarray(col).shape[0]
            if rows != g.num_nodes(nt):
                return f"{nt}: node_id has {rows} rows for {g.num_nodes(nt)} nodes"
            if not isinstance(col, Ragged) and len(np.unique(col)) != len(col):
                return f"{nt}: node_id has repeats"
    if num_edges is not None and g.num_edges() != num_edges:
        return f"{g.num_edges()} edges, but the file holds {num_edges}"
    return None
