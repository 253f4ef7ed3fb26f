"""SparseRows: invariants against SciPy, conversions, and errors naming the bad field."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.sparse import SparseRows, as_sparse_rows


@st.composite
def sparse_matrices(draw):
    """A random CSR matrix (duplicates and unsorted columns allowed), int32 or int64
    indices, a float or int dtype, and rows to take (repeats allowed)."""
    n = draw(st.integers(0, 8))
    cols = draw(st.integers(1, 6))
    lengths = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    nnz = sum(lengths)
    indices = draw(st.lists(st.integers(0, cols - 1), min_size=nnz, max_size=nnz))
    values = draw(st.lists(st.integers(-5, 5), min_size=nnz, max_size=nnz))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int64]))
    itype = draw(st.sampled_from([np.int32, np.int64]))
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    mat = sp.csr_matrix((np.array(values, dtype), np.array(indices, itype), indptr),
                        shape=(n, cols))
    rows = draw(st.lists(st.integers(0, n - 1), max_size=10)) if n else []
    return mat, np.array(rows, dtype=np.int64)


@given(sparse_matrices())
@settings(max_examples=150, deadline=None)
def test_take_and_to_dense_agree_with_scipy(case):
    mat, rows = case
    x = SparseRows.from_scipy(mat)
    assert x.shape == mat.shape and x.nnz == mat.nnz and len(x) == mat.shape[0]
    assert x.indices.dtype == mat.indices.dtype and x.dtype == mat.dtype
    assert np.array_equal(x.to_dense(), mat.toarray())
    taken = x.take(rows)
    assert np.array_equal(taken.to_dense(), mat[rows].toarray())
    assert taken.equals(SparseRows.from_scipy(mat[rows]))
    assert np.array_equal(x.to_scipy().toarray(), mat.toarray())
    assert x.nbytes == x.indptr.nbytes + x.indices.nbytes + x.values.nbytes


@given(sparse_matrices())
@settings(max_examples=100, deadline=None)
def test_canonical_sorts_and_sums_like_scipy(case):
    mat, _ = case
    x = SparseRows.from_scipy(mat).canonical()
    want = mat.copy()
    want.sum_duplicates()
    want.sort_indices()
    assert np.array_equal(x.indptr, want.indptr)
    assert np.array_equal(x.indices, want.indices) and np.array_equal(x.values, want.data)
    assert x.indices.dtype == mat.indices.dtype and x.canonical() is x


@given(st.lists(sparse_matrices(), min_size=1, max_size=3))
@settings(max_examples=50, deadline=None)
def test_concat_is_vstack(cases):
    mats = [sp.csr_matrix(m[:, :1]) for m, _ in cases]
    for m in mats:
        m.indices = m.indices.astype(np.int64)
        m.data = m.data.astype(np.float64)
    joined = SparseRows.concat([SparseRows.from_scipy(m) for m in mats])
    assert np.array_equal(joined.to_dense(), sp.vstack(mats).toarray())


def test_arrays_are_kept_without_a_copy():
    indptr = np.array([0, 1, 2], np.int64)
    indices = np.array([1, 0], np.int32)
    values = np.array([1.5, 2.5], np.float16)
    x = SparseRows(indptr, indices, values, 2)
    assert x.indptr is indptr and x.indices is indices and x.values is values
    assert SparseRows([0, 1], np.array([0], np.uint8), [1], 1).indices.dtype == np.int64


@pytest.mark.parametrize("args, field, message", [
    (([1, 2], [0, 1], [1, 1], 2), "indptr", "must start at 0"),
    (([0, 2], [0], [1], 2), "indptr", "end at len(indices)=1"),
    (([0, 2, 1, 2], [0, 1], [1, 1], 2), "indptr", "decreases at position 2"),
    (([0, 2], [0, 1], [1], 2), "values", "2 indices but 1 values"),
    (([0, 2], [0, -1], [1, 1], 2), "indices", "indices[1] = -1 is not a column in [0, 2)"),
    (([0, 2], [0, 7], [1, 1], 3), "indices", "indices[1] = 7"),
    (([0, 1], [0], [1], -1), "num_cols", "num_cols must be an integer >= 0"),
    (([0, 1], [0], [1], 1.5), "num_cols", "num_cols must be an integer"),
    (([], [], [], 1), "indptr", "got none"),
    (([[0, 1]], [0], [1], 1), "indptr", "1-D integer array"),
    (([0.0, 1.0], [0], [1], 1), "indptr", "1-D integer array"),
    (([0, 1], [0], ["a"], 1), "values", "1-D array of numbers"),
])
def test_invalid_arrays_raise_naming_the_field(args, field, message):
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace(
            "(", r"\(").replace(")", r"\)")) as info:
        SparseRows(*args)
    assert info.value.field == field


def test_take_refuses_rows_out_of_range():
    x = SparseRows([0, 1, 1], [0], [1.0], 1)
    with pytest.raises(ValidationError, match=r"rows\[1\] = 2 is not a row in \[0, 2\)"):
        x.take([0, 2])
    with pytest.raises(ValidationError, match=r"rows\[0\] = -1"):
        x.take([-1])
    with pytest.raises(ValidationError, match="must be integers"):
        x.take([0.5])
    assert len(x.take([])) == 0 and x.take([]).num_cols == 1


def test_as_sparse_rows_and_errors():
    assert as_sparse_rows(np.zeros((2, 2))) is None
    with pytest.raises(ValidationError, match="SciPy sparse"):
        SparseRows.from_scipy(np.zeros((2, 2)))
    with pytest.raises(ValidationError, match="num_cols"):
        SparseRows.concat([SparseRows([0], [], [], 1), SparseRows([0], [], [], 2)])
    assert gs.SparseRows is SparseRows
    assert "SparseRows(rows=0, num_cols=1, nnz=0" in repr(SparseRows([0], [], [], 1))


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_coo", "dense"])
def test_to_torch_layouts(layout):
    torch = pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
    mat = sp.random(5, 7, density=0.3, format="csr", random_state=1, dtype=np.float32)
    x = SparseRows.from_scipy(mat)
    x.values.setflags(write=False)  # as a memory map is: copied, not shared
    t = x.to_torch(layout)
    want = {"sparse_csr": torch.sparse_csr, "sparse_coo": torch.sparse_coo,
            "dense": torch.strided}[layout]
    assert t.layout == want and tuple(t.shape) == (5, 7)
    assert np.array_equal(t.to_dense().numpy(), mat.toarray())
    with pytest.raises(ValidationError, match="layout must be one of"):
        x.to_torch("csc")
