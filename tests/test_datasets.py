"""Dataset loaders: the gnn-benchmark (Shchur) npz on the real Coauthor CS / Amazon Photo
zips, and malformed files refused with our FormatError naming the file and the key."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

import graphshard as gs
from graphshard.datasets import load_shchur_npz
from graphshard.errors import FormatError

SHCHUR = "gnn-benchmark-shchur"


def test_coauthor_cs_counts_from_its_readme(shared_file):
    g = load_shchur_npz(shared_file(SHCHUR, "coauthor-cs.zip"))
    feat = g.ndata["feat"]
    assert g.num_nodes() == 18333 and g.num_edges() == 163788
    assert isinstance(feat, gs.SparseRows)
    assert feat.shape == (18333, 6805) and feat.nnz == 1092079
    assert feat.dtype == np.float32 and feat.indices.dtype == np.int32
    label = g.ndata["label"]
    assert label.dtype == np.int64 and label.min() == 0 and len(np.unique(label)) == 15
    src, dst = g.edges()  # stored symmetric (README): every edge has its reverse
    fwd = np.sort(src * g.num_nodes() + dst)
    np.testing.assert_array_equal(fwd, np.sort(dst * g.num_nodes() + src))


def test_dense_features_equal_the_sparse_ones(shared_file):
    path = shared_file(SHCHUR, "amazon-photo.zip")
    sparse, dense = load_shchur_npz(path), load_shchur_npz(path, sparse_features=False)
    assert dense.ndata["feat"].shape == (7650, 745) and dense.ndata["feat"].dtype == np.float32
    np.testing.assert_array_equal(dense.ndata["feat"], sparse.ndata["feat"].to_dense())
    np.testing.assert_array_equal(dense.edges()[1], sparse.edges()[1])


def _arrays():
    return dict(adj_data=np.ones(3, np.float32), adj_indices=np.array([1, 2, 0], np.int32),
                adj_indptr=np.array([0, 1, 2, 3], np.int32), adj_shape=np.array([3, 3]),
                attr_data=np.ones(2, np.float32), attr_indices=np.array([0, 4], np.int32),
                attr_indptr=np.array([0, 1, 1, 2], np.int32), attr_shape=np.array([3, 5]),
                labels=np.array([0, 1, 1]))


def test_npz_and_zip_give_the_same_graph(tmp_path):
    np.savez(tmp_path / "g.npz", **_arrays())
    with zipfile.ZipFile(tmp_path / "g.zip", "w") as zf:
        zf.write(tmp_path / "g.npz", "inner/g.npz")
    a, b = load_shchur_npz(tmp_path / "g.npz"), load_shchur_npz(tmp_path / "g.zip")
    assert a.edges()[1].tolist() == b.edges()[1].tolist() == [1, 2, 0]
    assert a.ndata["feat"].equals(b.ndata["feat"])


@pytest.mark.parametrize(("change", "message", "field"), [
    (lambda d: d.pop("labels"), r"cannot read array 'labels'", "labels"),
    (lambda d: d.update(attr_indices=np.array([0, 5], np.int32)),
     r"indices\[1\] = 5 is not a column in \[0, 5\)", "indices"),
    (lambda d: d.update(adj_indptr=np.array([0, 2, 1, 3])), r"indptr decreases", "indptr"),
    (lambda d: d.update(adj_indptr=np.array([0, 3])), r"adj_indptr has 2 entries for 3 rows",
     "adj_indptr"),
    (lambda d: d.update(adj_shape=np.array([3, 4])), r"adjacency is \(3, 4\)", "adj_shape"),
    (lambda d: d.update(labels=np.array([0.5, 1, 1])), r"labels must be 3 integers", "labels"),
    (lambda d: d.update(labels=np.array(["a", "b", "c"], dtype=object)),
     r"cannot read array 'labels'", "labels"),
])
def test_malformed_files_raise_format_errors(tmp_path, change, message, field):
    arrays = _arrays()
    change(arrays)
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(FormatError, match=message) as info:
        load_shchur_npz(tmp_path / "bad.npz")
    assert info.value.field == field and "bad.npz" in str(info.value)


def test_files_that_are_not_npz_or_hold_several(tmp_path):
    (tmp_path / "x.npz").write_bytes(b"not a zip at all")
    with pytest.raises(FormatError, match=r"x.npz: not an .npz file"):
        load_shchur_npz(tmp_path / "x.npz")
    with open(tmp_path / "y.npz", "wb") as handle:
        np.save(handle, np.arange(3))
    with pytest.raises(FormatError, match=r"y.npz: not an .npz file \(one array\)"):
        load_shchur_npz(tmp_path / "y.npz")
    with zipfile.ZipFile(tmp_path / "two.zip", "w") as zf:
        zf.writestr("a.npz", b"")
        zf.writestr("b.npz", b"")
    with pytest.raises(FormatError, match=r"expected one .npz in the zip, found \['a.npz', "):
        load_shchur_npz(tmp_path / "two.zip")
    (tmp_path / "bad.zip").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(FormatError, match=r"bad\.zip: cannot read"):
        load_shchur_npz(tmp_path / "bad.zip")
    with pytest.raises(FileNotFoundError):
        load_shchur_npz(tmp_path / "missing.npz")
