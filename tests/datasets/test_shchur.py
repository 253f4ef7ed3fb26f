"""load_shchur_npz on crafted files (issue 41): declared sizes bounded by what the file
holds, a damaged deflate stream, special files, and seeded mutation fuzzing of a tiny npz
(the real gnn-benchmark zips are tested in tests/test_datasets.py)."""

from __future__ import annotations

import io
import os
import random
import zipfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from fuzzing import INTERESTING, call_releasing_fifos, dataset_graph_problem, mutate_bytes, run_fuzz
from graphshard.datasets import load_shchur_npz
from graphshard.errors import FormatError, ValidationError


def _arrays(n: int = 3) -> dict[str, np.ndarray]:
    return dict(adj_data=np.ones(n, np.float32), adj_indices=np.roll(np.arange(n, dtype=np.int32),
                                                                     -1),
                adj_indptr=np.arange(n + 1, dtype=np.int32), adj_shape=np.array([n, n]),
                attr_data=np.ones(n, np.float32), attr_indices=np.arange(n, dtype=np.int32) % 5,
                attr_indptr=np.arange(n + 1, dtype=np.int32), attr_shape=np.array([n, 5]),
                labels=np.arange(n) % 2)


def _npz(arrays: dict[str, np.ndarray], compressed: bool = False) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def _zip(npz: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("inner/g.npz", npz)
    return buf.getvalue()


def _npy_header(shape: str, descr: str = "<f4") -> bytes:
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".ljust(117)
    return b"\x93NUMPY\x01\x00" + (len(header) + 1).to_bytes(2, "little") + \
        header.encode() + b"\n"


def _with_member(npz: bytes, key: str, data: bytes) -> bytes:
    """The npz with member ``key.npy`` replaced by ``data`` (CRCs stay valid)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(npz)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, data if info.filename == f"{key}.npy"
                         else src.read(info))
    return out.getvalue()


def test_declared_feature_columns_are_bounded(tmp_path):
    """attr_shape [5, 1e8] in a 2.5 KB npz made convert write 1.9 GB."""
    arrays = _arrays(5)
    arrays["attr_shape"] = np.array([5, 10**8])
    (tmp_path / "g.npz").write_bytes(_npz(arrays))
    with pytest.raises(FormatError, match=r"g\.npz: field 'attr_shape': 100,000,000 feature "
                       r"columns declared for 5 values; at most max\(1,048,576, 64 x values\)"
                       r" = 1,048,576") as info:
        load_shchur_npz(tmp_path / "g.npz")
    assert info.value.field == "attr_shape"


@pytest.mark.parametrize("shape", ["(1000000000000,)", "(100000000000000000000,)",
                                   "(4000000000, 4000000000)"])
def test_member_header_larger_than_the_member(tmp_path, shape):
    """An npz member header of shape 1e12 was a raw MemoryError."""
    npz = _with_member(_npz(_arrays()), "adj_data", _npy_header(shape) + bytes(12))
    (tmp_path / "g.npz").write_bytes(npz)
    with pytest.raises(FormatError, match=r"g\.npz: cannot read array 'adj_data' \(ValueError: "
                       r"the header declares shape .* bytes, but the member holds 12 after "
                       r"it\)") as info:
        load_shchur_npz(tmp_path / "g.npz")
    assert info.value.field == "adj_data"


def test_damaged_deflate_stream_in_a_zip(tmp_path):
    """A damaged deflate stream in the .zip was a raw zlib.error."""
    data = bytearray(_zip(_npz(_arrays(100))))
    start = 30 + len("inner/g.npz")  # the local header, then the compressed stream
    data[start:start + 4] = b"\xff" * 4
    (tmp_path / "g.zip").write_bytes(bytes(data))
    with pytest.raises(FormatError, match=r"g\.zip.*(Error -3 while decompressing|invalid)"):
        load_shchur_npz(tmp_path / "g.zip")


def test_special_files_are_refused(tmp_path):
    """A FIFO would block open(); /dev/zero as a zip was read until memory ran out."""
    os.mkfifo(tmp_path / "g.npz")
    with pytest.raises(FormatError, match=r"g\.npz: is a FIFO, not a regular file"):
        call_releasing_fifos(lambda: load_shchur_npz(tmp_path / "g.npz"), [tmp_path / "g.npz"])
    (tmp_path / "z.zip").symlink_to("/dev/zero")
    with pytest.raises(FormatError, match=r"z\.zip: is a character device, not a regular "
                       "file"):
        call_releasing_fifos(lambda: load_shchur_npz(tmp_path / "z.zip"), [])


def test_compressed_and_zipped_npz_still_load(tmp_path):
    (tmp_path / "g.zip").write_bytes(_zip(_npz(_arrays(4), compressed=True)))
    g = load_shchur_npz(tmp_path / "g.zip")
    assert g.edges()[1].tolist() == [1, 2, 3, 0] and g.ndata["label"].tolist() == [0, 1, 0, 1]


def _graph_problem(g) -> str | None:
    problem = dataset_graph_problem(SimpleNamespace(graph=g))
    feat = g.ndata["feat"]
    if problem is None and feat.num_cols > 5 and feat.num_cols > 64 * max(feat.nnz, 1) \
            and feat.num_cols > 1 << 20:
        return "feature columns beyond the bound"
    return problem


def test_fuzz_shchur(tmp_path):
    """Mutants: raw bytes of the npz or of the zip holding it, or one member replaced (CRCs
    valid): its bytes mutated, its header's shape or dtype changed, or an interesting
    value in place of a small array."""
    base = _npz(_arrays())
    keys = sorted(_arrays())

    def case(rng: random.Random, folder: Path) -> Path:
        kind = rng.randrange(5)
        key = rng.choice(keys)
        with zipfile.ZipFile(io.BytesIO(base)) as zf:
            member = zf.read(f"{key}.npy")
        if kind == 0:
            data, name = mutate_bytes(rng, base), "g.npz"
        elif kind == 1:
            data, name = mutate_bytes(rng, _zip(base)), "g.zip"
        elif kind == 2:
            data, name = _with_member(base, key, mutate_bytes(rng, member)), "g.npz"
        elif kind == 3:
            size = rng.choice(["0", "1", "3", "-1", "2**62", "10**12", "(3, 3)", "3, 2**40"])
            descr = rng.choice(["<f4", "<i8", "|O", "<U2", "<c16", "|b1", ">i4", "V8"])
            data = _with_member(base, key, _npy_header(f"({size},)" if "," not in size else
                                                       f"({size})", descr) + member[128:])
            name = "g.npz"
        else:
            token = rng.choice(INTERESTING)
            try:
                value = np.array([float(token)]) if rng.random() < 0.5 else np.array([token])
            except ValueError:
                value = np.array([token])
            arrays = {**_arrays(), key: value}
            data, name = _npz(arrays), "g.npz"
        (folder / name).write_bytes(data)
        return folder / name

    run_fuzz("shchur", case, load_shchur_npz, tmp_path, check=_graph_problem, seed=7)


def test_undirected_adds_each_reverse_once_and_drops_self_loops(tmp_path, shared_file):
    """A directed 3-cycle with a self-loop and a repeated edge becomes the 6 directed edges of
    the undirected triangle; the real Amazon Photo file (not symmetric as stored) becomes
    symmetric, with its 238,162 directed edges (PyG's count), and keeps every node."""
    arrays = _arrays(3)
    arrays.update(adj_data=np.ones(5, np.float32), adj_indptr=np.array([0, 3, 4, 5]),
                  adj_indices=np.array([0, 1, 1, 2, 0]))
    path = tmp_path / "g.npz"
    path.write_bytes(_npz(arrays))
    assert load_shchur_npz(path).num_edges() == 5
    g = load_shchur_npz(path, undirected=True)
    assert sorted(zip(*(a.tolist() for a in g.edges()), strict=True)) == [
        (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
    photo = load_shchur_npz(shared_file("gnn-benchmark-shchur", "amazon-photo.zip"),
                            undirected=True, split_seed=0)
    src, dst = (np.asarray(a) for a in photo.edges())
    n = photo.num_nodes()
    assert n == 7650 and len(src) == 238162
    assert np.array_equal(np.sort(src * n + dst), np.sort(dst * n + src))
    assert int(np.asarray(photo.ndata["train_mask"]).sum()) == 8 * 20


def test_largest_component_keeps_one_connected_component_with_its_rows(tmp_path, shared_file):
    """Two components (0-1-2 and 3-4): the larger stays, renumbered in file order, with its
    feature rows and labels; real Cora keeps the 2,485 nodes Shchur et al. report, all
    connected, and the split is drawn on them."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    arrays = _arrays(5)
    arrays.update(adj_data=np.ones(3, np.float32), adj_indptr=np.array([0, 1, 2, 2, 3, 3]),
                  adj_indices=np.array([1, 2, 4]))
    path = tmp_path / "g.npz"
    path.write_bytes(_npz(arrays))
    whole = load_shchur_npz(path, sparse_features=False)
    g = load_shchur_npz(path, sparse_features=False, largest_component=True)
    assert g.num_nodes() == 3 and [a.tolist() for a in g.edges()] == [[0, 1], [1, 2]]
    np.testing.assert_array_equal(g.ndata["feat"], whole.ndata["feat"][:3])
    assert g.ndata["label"].tolist() == whole.ndata["label"][:3].tolist()
    cora = load_shchur_npz(shared_file("planetoid", "npz_shchur", "cora.npz"), undirected=True,
                           largest_component=True, split_seed=1)
    n = cora.num_nodes()
    src, dst = (np.asarray(a) for a in cora.edges())
    count, _ = connected_components(coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n)))
    assert n == 2485 and count == 1 and cora.ndata["feat"].shape == (2485, 1433)
    assert int(np.asarray(cora.ndata["train_mask"]).sum()) == 7 * 20


@pytest.mark.parametrize("flag", ["undirected", "largest_component", "sparse_features"])
def test_a_flag_that_is_not_a_bool_is_refused_naming_it(tmp_path, flag):
    """``-O largest_component=maybe`` reaches the loader as the string 'maybe', which is
    truthy: it was taken as true.  It is refused, naming the file and the option."""
    path = tmp_path / "g.npz"
    path.write_bytes(_npz(_arrays(3)))
    with pytest.raises(ValidationError, match=rf"g\.npz: {flag} must be true or false, got "
                                              r"'maybe'") as err:
        load_shchur_npz(path, **{flag: "maybe"})
    assert err.value.field == flag


def test_cli_refuses_a_non_bool_reader_flag_and_writes_nothing(tmp_path, capsys):
    from graphshard.cli.root import main

    path = tmp_path / "g.npz"
    path.write_bytes(_npz(_arrays(6)))
    out = tmp_path / "parts"
    code = main(["partition", str(path), "-O", "largest_component=maybe", "--parts", "2",
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code != 0 and f"error: {path}: largest_component must be true or false" in err
    assert not out.exists()
