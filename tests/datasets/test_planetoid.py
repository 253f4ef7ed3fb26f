"""load_planetoid: the real Cora/CiteSeer/PubMed raw files (counts from
../shared/data/planetoid/README.md, and equal to PyG's reader), the restricted unpickler
refusing any other global, and seeded mutation fuzzing of a tiny dataset."""

from __future__ import annotations

import collections
import pickle
import random
from pathlib import Path

import numpy as np
import pytest

from fuzzing import call_releasing_fifos, dataset_graph_problem, mutate_bytes, mutate_text, run_fuzz
from graphshard.datasets import load_planetoid
from graphshard.errors import FormatError, ValidationError
from graphshard.io import apply_edge_policy
from waiting import run_while_busy


@pytest.mark.parametrize("name, nodes, pairs, feats, classes, train", [
    ("cora", 2708, 5278, 1433, 7, 140), ("citeseer", 3327, 4552, 3703, 6, 120)])
def test_counts_from_the_readme(shared_file, name, nodes, pairs, feats, classes, train):
    ds = load_planetoid(shared_file("planetoid", f"ind.{name}.graph"))
    g = ds.graph
    assert (ds.name, ds.num_classes, g.num_nodes()) == (name, classes, nodes)
    assert g.ndata["feat"].shape == (nodes, feats)
    assert [int(g.ndata[k].sum()) for k in ("train_mask", "val_mask", "test_mask")] == \
        [train, 500, 1000]
    h, _ = apply_edge_policy(g, self_loops="drop", duplicates="drop")
    s, d = h.edges()
    assert h.num_edges() == 2 * pairs  # both directions of every undirected pair
    assert np.array_equal(np.sort(s * nodes + d), np.sort(d * nodes + s))
    labelled = g.ndata["label"] >= 0
    assert labelled.sum() == nodes - (15 if name == "citeseer" else 0)  # CiteSeer's padding


def test_same_as_pyg(shared_data):
    """Features, labels and split equal PyG's reader (which unpickles the files as they are);
    edges equal after PyG's coalescing (no duplicates, no self loops)."""
    pytest.importorskip("torch_geometric")
    from torch_geometric.io import read_planetoid_data

    folder = shared_data / "planetoid"
    if not (folder / "ind.citeseer.graph").exists():
        pytest.skip("planetoid files absent")
    data = read_planetoid_data(str(folder), "citeseer")
    g = load_planetoid(folder, name="citeseer").graph
    np.testing.assert_array_equal(g.ndata["feat"].to_dense(), data.x.numpy())
    np.testing.assert_array_equal(np.maximum(g.ndata["label"], 0), data.y.numpy())
    for k in ("train_mask", "val_mask", "test_mask"):
        np.testing.assert_array_equal(g.ndata[k], getattr(data, k).numpy())
    h, _ = apply_edge_policy(g, self_loops="drop", duplicates="drop")
    n = g.num_nodes()
    ours = np.sort(h.edges()[0] * n + h.edges()[1])
    theirs = np.sort(data.edge_index[0].numpy() * n + data.edge_index[1].numpy())
    np.testing.assert_array_equal(ours, theirs)


def test_pubmed_without_allx(shared_file):
    x = shared_file("planetoid", "ind.pubmed.x")
    with pytest.raises(FormatError, match=r"ind\.pubmed\.allx: missing"):
        load_planetoid(x)
    g = load_planetoid(x, features=False).graph
    assert g.num_nodes() == 19717 and "feat" not in g.ndata
    assert int(g.ndata["label"].max()) == 2 and int(g.ndata["test_mask"].sum()) == 1000


def _tiny(folder: Path) -> Path:
    eye = np.eye(3, dtype=np.float32)
    parts = {"x": eye[:1], "y": eye[:1], "allx": eye[:2], "ally": eye[:2], "tx": eye[1:],
             "ty": eye[1:], "graph": collections.defaultdict(list, {0: [1, 2], 1: [0], 3: [2]})}
    folder.mkdir(parents=True, exist_ok=True)
    for part, obj in parts.items():
        (folder / f"ind.tiny.{part}").write_bytes(pickle.dumps(obj, protocol=2))
    (folder / "ind.tiny.test.index").write_text("3\n2\n")
    return folder


def test_only_array_globals_are_unpickled(tmp_path):
    folder = _tiny(tmp_path / "d")

    class Evil:
        def __reduce__(self):
            import os
            return (os.system, ("touch " + str(tmp_path / "pwned"),))

    (folder / "ind.tiny.y").write_bytes(pickle.dumps(Evil(), protocol=2))
    with pytest.raises(FormatError, match=r"ind\.tiny\.y: not a Planetoid pickle of arrays "
                       r"\(UnpicklingError: global posix\.system is not"):
        load_planetoid(folder)
    assert not (tmp_path / "pwned").exists()


def test_folder_with_several_datasets_needs_a_name(tmp_path):
    _tiny(tmp_path)
    for part in ("graph",):
        (tmp_path / f"ind.other.{part}").write_bytes(b"")
    with pytest.raises(ValidationError, match=r"holds the Planetoid datasets \['other', "
                       r"'tiny'\]; name one \(name='cora'; CLI: -O name=cora\)"):
        load_planetoid(tmp_path)
    assert load_planetoid(tmp_path, name="tiny").graph.num_nodes() == 4


def test_fuzz_planetoid(tmp_path):
    names = ["x", "y", "tx", "ty", "allx", "ally", "graph", "test.index"]

    def case(rng: random.Random, folder: Path) -> Path:
        _tiny(folder)
        name = rng.choice(names)
        path = folder / f"ind.tiny.{name}"
        data = path.read_bytes()
        path.write_bytes(mutate_text(rng, data.decode()) if name == "test.index"
                         else mutate_bytes(rng, data))
        return folder

    run_fuzz("planetoid", case, load_planetoid, tmp_path, check=dataset_graph_problem, seed=5)


# ----- crafted pickles (issue 41 item 1): no NumPy pickle hook runs -------------------------
def _g(module: str, name: str) -> bytes:  # GLOBAL
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _s(data: bytes) -> bytes:  # SHORT_BINSTRING
    return b"U" + bytes([len(data)]) + data


def _k(n: int) -> bytes:  # BININT1 / BININT
    return b"K" + bytes([n]) if 0 <= n < 256 else b"J" + n.to_bytes(4, "little", signed=True)


_RECONSTRUCT = _g("numpy.core.multiarray", "_reconstruct") + _g("numpy", "ndarray")
# an object dtype's flags (0x3f) less NPY_LIST_PICKLE (0x02): NumPy keeps NPY_ITEM_REFCOUNT
_DTYPE_STATE = b"(" + _k(3) + _s(b"|") + b"NNN" + _k(-1) + _k(-1) + _k(0x3d) + b"tb"
CRAFTED = {
    # NPY_LIST_PICKLE cleared in an object dtype's state: raw bytes become PyObject pointers
    # (0x4141...), which NumPy DECREFs when the array is freed: rc 139 (after a clean
    # FormatError) before the fix
    "object_array": ("y", b"\x80\x02" + _RECONSTRUCT + _k(0) + b"\x85" + _s(b"b") + b"\x87R("
                     + _k(1) + _k(2) + _k(1) + b"\x86" + _g("numpy", "dtype") + _s(b"O8")
                     + _k(0) + _k(1) + b"\x87R" + _DTYPE_STATE + b"\x89" + _s(b"A" * 16)
                     + b"tb."),
    # list(numpy.ndarray(10**7)): 53 bytes that allocate ~400 MB of NumPy scalars
    "huge_list": ("y", b"\x80\x02" + _g("builtins", "list") + _g("numpy", "ndarray")
                  + _k(10**7) + b"\x85R\x85R."),
    # _reconstruct(ndarray, (2, 3), 'f4') and no BUILD: uninitialised heap memory as features
    "uninitialised": ("allx", b"\x80\x02" + _RECONSTRUCT + _k(2) + _k(3) + b"\x86"
                      + _s(b"f4") + b"\x87R."),
}

_RUN_CRAFTED = """
import resource, sys
from graphshard.datasets import load_planetoid
from graphshard.errors import FormatError
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    load_planetoid(sys.argv[1])
    print("ACCEPTED")
except FormatError as exc:
    print("FormatError:", exc)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print("GROWN_KB", grown)
"""


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_crafted_pickle_is_a_clean_error(tmp_path, name):
    """Each crafted file is refused with a FormatError naming it, the process exits normally
    (no segfault: rc 0, not 139), and nothing large is allocated on the way."""
    import os
    import sys

    part, data = CRAFTED[name]
    folder = _tiny(tmp_path / "d")
    (folder / f"ind.tiny.{part}").write_bytes(data)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = run_while_busy([sys.executable, "-c", _RUN_CRAFTED, str(folder)],
                          f"loading the crafted {part}", env=env)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    out = proc.stdout
    assert f"FormatError: {folder / f'ind.tiny.{part}'}: not a Planetoid pickle" in out, out
    grown_kb = int(out.rsplit("GROWN_KB", 1)[1])
    assert grown_kb < 50_000, f"{name}: grew {grown_kb} KB"


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickles_python3_writes_load(tmp_path, protocol):
    """Arrays (dense, Fortran-ordered, big-endian), a SciPy CSR matrix and a plain dict of
    lists, pickled by this Python at each protocol, load as the parser builds them."""
    import scipy.sparse as sp

    folder = _tiny(tmp_path / "d")
    eye = np.eye(3, dtype=np.float32)
    parts = {"allx": sp.csr_matrix(eye[:2]), "tx": np.asfortranarray(eye[1:]),
             "ally": eye[:2].astype(">i4"), "graph": {0: [1, 2], 1: [0], 3: [2]}}
    for part, obj in parts.items():
        (folder / f"ind.tiny.{part}").write_bytes(pickle.dumps(obj, protocol=protocol))
    g = load_planetoid(folder).graph
    assert g.ndata["feat"].to_dense().tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0]]
    assert g.ndata["label"].tolist() == [0, 1, 2, 1] and g.num_edges() == 4


@pytest.mark.parametrize("part, text, message", [
    ("test.index", "2\n300000000\n", r"ind\.tiny\.test\.index: test IDs run from 2 to "
     r"300000000, 299,999,999 nodes for 2 test IDs; at most 2 x the test IDs = 4"),
    ("test.index", "2\n²\n", r"ind\.tiny\.test\.index:2: expected one node ID a line"),
    ("test.index", "2\n" + "9" * 30 + "\n", r"ind\.tiny\.test\.index:2: expected one node ID"),
])
def test_test_index_is_bounded(tmp_path, part, text, message):
    """A declared test ID is bounded by the test IDs the file holds (issue 41 item 2: a
    22-byte test.index used to ask for a 300M-node graph), and odd digits are refused."""
    folder = _tiny(tmp_path / "d")
    (folder / f"ind.tiny.{part}").write_text(text, encoding="utf-8")
    with pytest.raises(FormatError, match=message):
        load_planetoid(folder)


def test_csr_columns_are_bounded(tmp_path):
    import scipy.sparse as sp

    folder = _tiny(tmp_path / "d")
    big = sp.csr_matrix((np.ones(1, np.float32), [0], [0, 1, 1]), shape=(2, 10**9))
    (folder / "ind.tiny.allx").write_bytes(pickle.dumps(big, protocol=2))
    with pytest.raises(FormatError, match=r"ind\.tiny\.allx: field 'allx _shape': "
                       r"1,000,000,000 columns declared for 1 values; at most max\(1,048,576, "
                       r"64 x values\) = 1,048,576"):
        load_planetoid(folder, sparse_features=False)


@pytest.mark.parametrize("obj", [{0: [1.5]}, {0: [True]}, {"0": [1]}, {0: (1,)}, [1, 2]])
def test_adjacency_must_be_integer_lists(tmp_path, obj):
    folder = _tiny(tmp_path / "d")
    (folder / "ind.tiny.graph").write_bytes(pickle.dumps(obj, protocol=2))
    with pytest.raises(FormatError, match=r"ind\.tiny\.graph: "):
        load_planetoid(folder)


def test_fifo_is_refused_without_opening(tmp_path):
    """A FIFO in place of a Planetoid file is refused before open() (which would block)."""
    import os

    for part in ("y", "test.index"):
        folder = _tiny(tmp_path / part)
        (folder / f"ind.tiny.{part}").unlink()
        os.mkfifo(folder / f"ind.tiny.{part}")
        with pytest.raises(FormatError, match=rf"ind\.tiny\.{part}: (cannot read \()?is a "
                           "FIFO, not a regular file"):
            call_releasing_fifos(lambda f=folder: load_planetoid(f),
                                 [folder / f"ind.tiny.{part}"])


def _opcode_mutant(rng: random.Random, data: bytes) -> bytes:
    """One opcode of a pickle rewritten: an integer argument (a size, a memo key, a shape
    entry) replaced by an interesting value, a string argument (a dtype name, a global)
    replaced, or a crafted fragment of :data:`CRAFTED` spliced in before it."""
    import pickletools

    ops = list(pickletools.genops(data))
    k = rng.randrange(len(ops) - 1)
    op, arg, pos = ops[k]
    end = ops[k + 1][2]
    choice = rng.randrange(3)
    if choice == 0 and isinstance(arg, int) and not isinstance(arg, bool):
        value = rng.choice([-1, 0, 1, 3, 255, 2**31 - 1, 2**31, 2**40, 10**7, 10**12])
        new = b"\x8a" + bytes([9]) + value.to_bytes(9, "little", signed=True)  # LONG1
        if op.name in ("BINPUT", "LONG_BINPUT", "BINGET", "LONG_BINGET", "PUT", "GET"):
            new = (b"r" if "PUT" in op.name else b"j") + (value % 2**32).to_bytes(4, "little")
    elif choice == 1 and isinstance(arg, str):
        text = rng.choice(["O8", "f4", "i8", "<U2", "V8", "b", "latin1", "utf-8", "",
                           "numpy\nndarray", "builtins\nlist", "numpy\ndtype", "os\nsystem",
                           "scipy.sparse.csr\ncsr_matrix", "A" * 64])
        if op.name == "GLOBAL":
            new = b"c" + text.encode() + (b"" if "\n" in text else b"\nx") + b"\n"
        else:
            new = b"U" + bytes([len(text)]) + text.encode()
    else:
        fragment = rng.choice(list(CRAFTED.values()))[1]
        return data[:pos] + fragment[2:-1] + data[pos:]  # without PROTO and STOP
    return data[:pos] + new + data[end:]


def test_fuzz_planetoid_opcodes(tmp_path):
    """The pickle reader fuzzed at the opcode level: mutants that still tokenise, so they
    reach the stack machine and the array builder rather than stopping at a bad byte."""

    def case(rng: random.Random, folder: Path) -> Path:
        _tiny(folder)
        name = rng.choice(["y", "ty", "ally", "allx", "tx", "graph"])
        path = folder / f"ind.tiny.{name}"
        data = path.read_bytes()
        for _ in range(rng.randint(1, 2)):
            data = _opcode_mutant(rng, data)
        path.write_bytes(data)
        return folder

    run_fuzz("planetoid-opcodes", case, load_planetoid, tmp_path, check=dataset_graph_problem,
             seed=13)
