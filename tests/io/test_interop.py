"""Interop with NetworkX, SciPy, and (where installed) PyG and DGL."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import graphshard as gs
from graphshard.io import (
    from_networkx,
    from_pyg,
    from_scipy,
    to_dgl,
    to_networkx,
    to_pyg,
    to_scipy,
)


def _with(package: str):
    return pytest.mark.skipif(importlib.util.find_spec(package) is None,
                              reason=f"needs {package}")


def test_import_is_lazy() -> None:
    """In a fresh interpreter (this one may have imported them for other tests)."""
    code = ("import sys, graphshard.io; "
            "print([m for m in ('torch', 'dgl', 'torch_geometric') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_from_networkx() -> None:
    G = nx.DiGraph()
    G.add_edge(10, 20, w=0.5)
    G.add_edge(20, 30, w=1.5)
    for v in G.nodes:
        G.nodes[v]["x"] = [v, v]
    g = from_networkx(G, node_attrs=("x",), edge_attrs=("w",))
    assert g.edges()[1].tolist() == [1, 2] and g.edata["w"].tolist() == [0.5, 1.5]
    assert g.ndata["node_id"].tolist() == [10, 20, 30] and g.ndata["x"].shape == (3, 2)
    u = from_networkx(nx.karate_club_graph())
    assert u.num_edges() == 2 * 78 and "node_id" not in u.ndata


def test_from_scipy() -> None:
    a = sp.random(20, 20, density=0.2, format="csr", random_state=0)
    g = from_scipy(a)
    coo = a.tocoo()
    assert g.edges()[0].tolist() == coo.row.tolist()
    assert np.allclose(g.edata["weight"], coo.data)
    with pytest.raises(gs.ValidationError, match="square"):
        from_scipy(sp.csr_matrix((2, 3)))


def test_from_scipy_keeps_a_sparse_feature_matrix_sparse() -> None:
    a = sp.random(20, 20, density=0.2, format="csr", random_state=0)
    bow = sp.random(20, 300, density=0.05, format="coo", random_state=1, dtype=np.float32)
    dense = np.arange(40.0).reshape(20, 2)
    g = from_scipy(a, weight=None, ndata={"bow": bow, "x": dense})
    assert isinstance(g.ndata["bow"], gs.SparseRows) and g.ndata["bow"].shape == (20, 300)
    np.testing.assert_array_equal(g.ndata["bow"].to_dense(), bow.toarray())
    assert g.ndata["x"] is dense and "weight" not in g.edata
    with pytest.raises(gs.ValidationError, match="feature 'bow' has 19 rows, expected 20"):
        from_scipy(a, ndata={"bow": bow.tocsr()[:19]})
    with pytest.raises(gs.ValidationError, match="'bow' of the nodes is sparse"):
        to_networkx(g, node_attrs=("bow",))


def _multigraph() -> gs.Graph:
    """Parallel edges, a self loop, an isolated node, edges not sorted by source."""
    g = gs.graph(([3, 0, 1, 1, 0, 2], [0, 1, 2, 2, 0, 3]), num_nodes=5)
    g.ndata["x"] = np.arange(10, dtype=np.float32).reshape(5, 2)
    g.ndata["y"] = np.array([4, 3, 2, 1, 0])
    g.edata["w"] = np.array([0.5, 1.5, 2.5, 3.5, 4.5, 5.5])
    return g


def test_networkx_round_trip() -> None:
    g = _multigraph()
    nxg = to_networkx(g, node_attrs=("x", "y"), edge_attrs=("w",))
    assert isinstance(nxg, nx.MultiDiGraph) and nxg.number_of_nodes() == 5
    assert nxg.number_of_edges() == 6 and nxg.number_of_edges(1, 2) == 2
    back = from_networkx(nxg, node_attrs=("x", "y"), edge_attrs=("w",))
    order = np.argsort(g.edges()[0], kind="stable")  # NetworkX groups edges by source
    s, d = g.edges()
    assert back.edges()[0].tolist() == s[order].tolist()
    assert back.edges()[1].tolist() == d[order].tolist()
    assert back.edata["w"].tolist() == g.edata["w"][order].tolist()
    assert back.ndata["x"].tolist() == g.ndata["x"].tolist()
    assert back.ndata["y"].tolist() == g.ndata["y"].tolist() and "node_id" not in back.ndata
    # and from networkx first: a directed graph comes back edge for edge
    G = nx.gnm_random_graph(30, 90, seed=1, directed=True)
    again = to_networkx(from_networkx(G))
    assert sorted(again.edges()) == sorted(G.edges()) and again.number_of_nodes() == 30


def test_to_networkx_errors() -> None:
    hetero = gs.heterograph({("u", "buys", "i"): ([0], [0])})
    with pytest.raises(gs.ValidationError, match=r"to_networkx takes a homogeneous graph"):
        to_networkx(hetero)
    with pytest.raises(gs.ValidationError, match=r"edge_attrs: the edges has no feature 'z'"):
        to_networkx(_multigraph(), edge_attrs=("z",))
    g = _multigraph()
    g.ndata["tags"] = gs.Ragged.from_rows([[1], [], [2], [], []], dtype="int64")
    with pytest.raises(gs.ValidationError, match=r"'tags' of the nodes is Ragged"):
        to_networkx(g, node_attrs=("tags",))


def test_scipy_round_trip() -> None:
    g = _multigraph()
    back = from_scipy(to_scipy(g, weight="w", fmt="coo"), weight="w")
    assert [a.tolist() for a in back.edges()] == [a.tolist() for a in g.edges()]
    assert back.edata["w"].tolist() == g.edata["w"].tolist() and back.num_nodes() == 5
    csr = to_scipy(g)  # parallel edges summed
    assert isinstance(csr, sp.csr_array) and csr.shape == (5, 5)
    assert csr[1, 2] == 2 and csr.nnz == 5 and csr.dtype == np.int64
    assert to_scipy(g, fmt="csc", weight="w")[1, 2] == 6.0
    a = sp.random(40, 40, density=0.1, format="csr", random_state=3)
    assert (to_scipy(from_scipy(a), weight="weight") != a).nnz == 0


def test_to_scipy_hetero_and_errors() -> None:
    g = gs.heterograph({("u", "buys", "i"): ([0, 1], [2, 2]), ("i", "by", "u"): ([2], [0])},
                       num_nodes_dict={"u": 2, "i": 3})
    m = to_scipy(g, etype="buys")
    assert m.shape == (2, 3) and m.toarray().tolist() == [[0, 0, 1], [0, 0, 1]]
    with pytest.raises(gs.ValidationError, match=r"the graph has edge types .*: name one"):
        to_scipy(g)
    with pytest.raises(gs.ValidationError, match=r"fmt must be one of"):
        to_scipy(_multigraph(), fmt="dense")
    h = _multigraph()
    h.edata["v"] = np.ones((6, 2))
    with pytest.raises(gs.ValidationError, match=r"weight: feature 'v' .* must be 1-D numeric"):
        to_scipy(h, weight="v")
    with pytest.raises(gs.ValidationError, match=r"weight: .* no feature 'q'"):
        to_scipy(h, weight="q")


def test_missing_package_message() -> None:
    if importlib.util.find_spec("dgl") is not None:
        pytest.skip("dgl is installed")
    with pytest.raises(gs.MissingDependencyError, match=r"to_dgl needs .*pip install dgl"):
        to_dgl(gs.graph(([0], [1])))


@_with("torch_geometric")
def test_pyg_round_trip() -> None:
    g = gs.graph(([0, 1, 2, 2], [1, 2, 0, 1]))  # 4 edges, 3 nodes: PyG tells them apart
    g.ndata["x"] = np.arange(6, dtype=np.float32).reshape(3, 2)
    g.edata["w"] = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    g.ndata["tags"] = gs.Ragged.from_rows([[1], [], [2]], dtype="int64")
    data = to_pyg(g)
    assert data.edge_index.tolist() == [[0, 1, 2, 2], [1, 2, 0, 1]]
    back = from_pyg(data)
    assert back.ndata["x"].tolist() == g.ndata["x"].tolist()
    assert back.edata["w"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert "tags" not in back.ndata


@_with("torch_geometric")
def test_pyg_hetero_round_trip() -> None:
    g = gs.heterograph({("u", "buys", "i"): ([0, 1], [1, 1]), ("i", "by", "u"): ([1], [0])},
                       num_nodes_dict={"u": 2, "i": 3})
    g.nodes["i"].data["x"] = np.ones((3, 4), np.float32)
    data = to_pyg(g)
    back = from_pyg(data)
    assert back.canonical_etypes == g.canonical_etypes
    assert back.num_nodes("i") == 3 and back.nodes["i"].data["x"].shape == (3, 4)
    assert back.edges(etype="buys")[1].tolist() == [1, 1]


@_with("dgl")
def test_dgl_round_trip() -> None:  # pragma: no cover - dgl is rarely installed
    from graphshard.io import from_dgl
    g = gs.heterograph({("u", "buys", "i"): ([0, 1], [1, 1])})
    g.nodes["u"].data["x"] = np.ones((2, 3), np.float32)
    back = from_dgl(to_dgl(g))
    assert back.canonical_etypes == g.canonical_etypes
    assert back.nodes["u"].data["x"].tolist() == g.nodes["u"].data["x"].tolist()
