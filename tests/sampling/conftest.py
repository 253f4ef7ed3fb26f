"""Small loaders for the real graphs in ../shared/data used by the sampling tests.

(The project's io package reads these formats properly; these loaders are kept minimal and
local so the sampling tests do not depend on it.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import graphshard as gs


def load_blogcatalog(folder: Path) -> gs.Graph:
    """BlogCatalog: 1-based undirected edges -> symmetric homogeneous graph with a weight."""
    e = np.loadtxt(folder / "edges.csv", delimiter=",", dtype=np.int64) - 1
    n = int(np.loadtxt(folder / "nodes.csv", dtype=np.int64).max())
    g = gs.graph((np.concatenate([e[:, 0], e[:, 1]]), np.concatenate([e[:, 1], e[:, 0]])),
                 num_nodes=n)
    g.edata["w"] = (np.arange(g.num_edges()) % 5 + 1).astype(np.float32)
    return g


def load_pgl_toy(folder: Path, weighted: bool = False) -> gs.Graph:
    """PGL Graph4Rec toy data: u/i node types, u2click2i and u2buy2i plus reverse edges."""
    types = np.loadtxt(folder / "node_types.txt", dtype=str)
    local = {}
    for t in ("u", "i"):
        ids = np.unique(types[types[:, 0] == t, 1].astype(np.int64))
        local[t] = ids
    data, feats = {}, {}
    for rel in ("u2click2i", "u2buy2i"):
        name = f"{rel}_with_weight.txt" if weighted else f"{rel}.txt"
        arr = np.loadtxt(folder / name, ndmin=2)
        u = np.searchsorted(local["u"], arr[:, 0].astype(np.int64))
        i = np.searchsorted(local["i"], arr[:, 1].astype(np.int64))
        back = rel.replace("u2", "i2", 1)[:-1] + "u"
        data[("u", rel, "i")] = (u, i)
        data[("i", back, "u")] = (i, u)
        if weighted:
            feats[("u", rel, "i")] = feats[("i", back, "u")] = arr[:, 2]
    g = gs.heterograph(data, num_nodes_dict={t: len(v) for t, v in local.items()})
    for et, w in feats.items():
        g.edges[et].data["w"] = w
    return g


@pytest.fixture(scope="session")
def blogcatalog(shared_file) -> gs.Graph:
    return load_blogcatalog(shared_file("blogcatalog-pgl"))


@pytest.fixture(scope="session")
def pgl_toy(shared_file) -> gs.Graph:
    return load_pgl_toy(shared_file("format-pgl-graph4rec-toy"))


@pytest.fixture(scope="session")
def pgl_toy_weighted(shared_file) -> gs.Graph:
    return load_pgl_toy(shared_file("format-pgl-graph4rec-toy"), weighted=True)


@pytest.fixture(scope="session")
def dblp(shared_file) -> gs.Graph:
    """HGB DBLP's structure (no features; labels and masks on author)."""
    return gs.datasets.load_hgb(shared_file("hgb", "DBLP.zip"), features=False).graph


class ReferenceStore:
    """A plain GraphStore with no local-adjacency fast path (stands in for a remote store):
    every answer is computed from the COO arrays with NumPy, nothing shared with CSRStore."""

    def __init__(self, g: gs.Graph) -> None:
        self._g = g

    @property
    def ntypes(self):
        return self._g.ntypes

    @property
    def canonical_etypes(self):
        return self._g.canonical_etypes

    def num_nodes(self, ntype=None):
        return self._g.num_nodes(ntype)

    def num_edges(self, etype=None):
        return self._g.num_edges(etype)

    def to_canonical_etype(self, etype):
        return self._g.to_canonical_etype(etype)

    def neighbors(self, ids, etype, *, edge_dir="in"):
        src, dst = self._g.edges(etype=etype)
        own, other = (dst, src) if edge_dir == "in" else (src, dst)
        rows, nbrs, eids = [], [], []
        for v in np.asarray(ids, dtype=np.int64):
            e = np.flatnonzero(own == v)  # edge-ID order, as a CSR row
            rows.append(len(e))
            nbrs.append(other[e])
            eids.append(e)
        indptr = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
        def cat(parts):
            return (np.concatenate(parts).astype(np.int64) if parts
                       else np.zeros(0, np.int64))
        return gs.CSR(indptr, cat(nbrs), cat(eids))

    def degrees(self, ids, etype, *, edge_dir="in"):
        return np.diff(self.neighbors(ids, etype, edge_dir=edge_dir).indptr)

    def edge_features(self, etype, name, eids):
        return np.asarray(self._g.edges[etype].data[name])[np.asarray(eids)]

    def node_features(self, ntype, name, ids):
        return np.asarray(self._g.nodes[ntype].data[name])[np.asarray(ids)]

    def find_edges(self, eids, etype):
        return self._g.find_edges(eids, etype)


@pytest.fixture(scope="session")
def reference_store():
    """The :class:`ReferenceStore` class (conftest modules are not importable by name)."""
    return ReferenceStore
