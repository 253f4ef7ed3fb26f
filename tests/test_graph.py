"""The Graph model: construction, validation, views, CSR, homogeneous conversion."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.graph import build_csr
from graphshard.store import as_store


def test_heterograph_basics():
    g = gs.heterograph({("user", "buys", "item"): ([0, 1, 1], [2, 0, 1]),
                        "user:follows:user": ([0], [1])}, {"user": 2, "item": 3})
    assert g.ntypes == ["user", "item"]
    assert g.canonical_etypes == [("user", "buys", "item"), ("user", "follows", "user")]
    assert g.num_nodes() == 5 and g.num_edges() == 4 and g.num_edges("buys") == 3
    src, dst = g.edges(etype="buys")
    assert src.dtype == np.int64 and dst.tolist() == [2, 0, 1]
    g.nodes["item"].data["x"] = np.ones((3, 2))
    assert g.ndata["x"]["item"].shape == (3, 2)
    h = g.to_homogeneous()
    hs, hd = h.edges()
    assert hs.tolist() == [0, 1, 1, 0] and hd.tolist() == [4, 2, 3, 1]
    assert h.edata["_TYPE"].tolist() == [0, 0, 0, 1]


@pytest.mark.parametrize(("data", "num_nodes", "message"), [
    (([0, 1], [1]), None, "src has 2 IDs but dst has 1"),
    (([0, 3], [1, 1]), 3, r"src of \('_N', '_E', '_N'\): ID 3 at position 1 is out of range"),
    (([0, -1], [1, 1]), None, r"ID -1 at position 1"),
    (([0.5], [1]), None, "expected integer IDs"),
])
def test_bad_edges(data, num_nodes, message):
    with pytest.raises(ValidationError, match=message):
        gs.graph(data, num_nodes=num_nodes)


def test_bad_feature_and_types():
    g = gs.graph(([0, 1], [1, 2]))
    with pytest.raises(ValidationError, match="feature 'x' has 2 rows, expected 3"):
        g.ndata["x"] = np.zeros(2)
    with pytest.raises(ValidationError, match="unknown edge type 'nope'"):
        g.num_edges("nope")
    h = gs.heterograph({("a", "r", "b"): ([0], [0]), ("b", "r", "a"): ([0], [0])})
    with pytest.raises(ValidationError, match="ambiguous"):
        h.edges(etype="r")


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)),
                                    max_size=80))
def test_csr_matches_scipy(n, pairs):
    pairs = [(s % n, d % n) for s, d in pairs]
    src = np.array([p[0] for p in pairs], dtype=np.int64)
    dst = np.array([p[1] for p in pairs], dtype=np.int64)
    g = gs.graph((src, dst), num_nodes=n)
    csr = g.in_csr()
    ref = sp.csr_matrix((np.ones(len(src)), (dst, src)), shape=(n, n))
    ours = sp.csr_matrix((np.ones(len(src)), csr.indices, csr.indptr), shape=(n, n))
    assert (ours != ref).nnz == 0  # same matrix, duplicates summed by scipy
    for v in range(n):
        row = slice(csr.indptr[v], csr.indptr[v + 1])
        assert np.array_equal(np.sort(csr.indices[row]), np.sort(src[dst == v]))
        assert np.array_equal(csr.eids[row], np.flatnonzero(dst == v))  # edge-ID order
    assert np.array_equal(g.out_degrees(), np.bincount(src, minlength=n))


def test_torch_like_input():
    class FakeTensor:
        def __init__(self, a):
            self.a = np.asarray(a)

        def detach(self):
            return self

        def cpu(self):
            return self

        def numpy(self):
            return self.a

    g = gs.graph((FakeTensor([0, 1]), FakeTensor([1, 0])))
    assert g.num_edges() == 2


def test_sparse_features_node_and_edge():
    g = gs.heterograph({("u", "r", "i"): ([0, 1, 1], [0, 0, 1])},
                       num_nodes_dict={"u": 2, "i": 3})
    mat = sp.random(3, 6, density=0.4, format="csr", random_state=0, dtype=np.float32)
    g.nodes["i"].data["bow"] = mat
    x = g.nodes["i"].data["bow"]
    assert isinstance(x, gs.SparseRows) and x.shape == (3, 6) and x.dtype == np.float32
    g.edges["r"].data["e"] = gs.SparseRows.from_scipy(sp.eye(3, 2, format="coo"))
    with pytest.raises(ValidationError, match="feature 'bad' has 2 rows, expected 3"):
        g.nodes["i"].data["bad"] = sp.eye(2, 6, format="csr")
    with pytest.raises(ValidationError, match="expected a 2-D SciPy sparse"):
        g.nodes["i"].data["vec"] = sp.coo_array(([1.0], ([2],)), shape=(3,))
    from graphshard.store import as_store

    store = as_store(g)
    rows = store.node_features("i", "bow", [2, 0, 2])
    assert np.array_equal(rows.to_dense(), mat[[2, 0, 2]].toarray())
    assert store.edge_features("r", "e", [1]).to_dense().tolist() == [[0.0, 1.0]]
    assert "SparseRows(rows=3, num_cols=6" in repr(g.nodes["i"].data)


def test_sparse_feature_schema_is_its_dense_row_shape():
    from graphshard.store import as_store

    g = gs.graph(([0, 1], [1, 2]))
    g.ndata["bow"] = sp.eye(3, 7, format="csr", dtype=np.float32)
    assert as_store(g).feature_schema("node") == {"_N/bow": ((7,), "float32")}


def test_graph_csrs_are_compact_where_ids_fit():
    rng = np.random.default_rng(1)
    src, dst = rng.integers(0, 40, 300), rng.integers(0, 30, 300)
    g = gs.heterograph({("a", "r", "b"): (src, dst)}, {"a": 40, "b": 30})
    wide = build_csr(dst, src, 30)
    csr = g.in_csr()
    assert (csr.indptr.dtype, csr.indices.dtype, csr.eids.dtype) == (np.int64, np.int32, np.int32)
    assert wide.indices.dtype == wide.eids.dtype == np.int64
    for a, b in ((csr.indptr, wide.indptr), (csr.indices, wide.indices), (csr.eids, wide.eids)):
        assert np.array_equal(a, b)
    # a column type with 2**31 + 1 nodes keeps int64 indices (eids stay int32)
    big = build_csr(dst, src, 30, compact=True, num_cols=2**31 + 1)
    assert big.indices.dtype == np.int64 and big.eids.dtype == np.int32
    assert build_csr(dst, src, 30, compact=True, num_cols=2**31).indices.dtype == np.int32
    nb = as_store(g).neighbors([3, 5], "r")
    assert nb.indices.dtype == nb.eids.dtype == np.int64  # a store's answers stay int64
