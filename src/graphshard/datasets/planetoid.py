"""Planetoid citation graphs (Cora, CiteSeer, PubMed) from their raw ``ind.<name>.*`` files.

The files (Yang et al. 2016, as kimiyoung/planetoid and tkipf/gcn ship them) are Python 2
pickles.  We never unpickle arbitrary objects: :class:`_Restricted` resolves only the
globals these files name (NumPy's array reconstruction, ``ndarray``, ``dtype``, SciPy's
``csr_matrix``, ``defaultdict``/``list``, and ``codecs.encode`` for bytes), rebuilds the
CSR matrix from its arrays without SciPy's class, and refuses any other global with our
FormatError naming the file.
"""

from __future__ import annotations

import collections
import os
import pickle
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FormatError, ValidationError
from ..graph import Graph, graph
from ..sparse import SparseRows

__all__ = ["PlanetoidDataset", "load_planetoid"]

_PARTS = ("x", "y", "tx", "ty", "allx", "ally", "graph")


class _CSRState:
    """Stands in for ``scipy.sparse.csr_matrix`` while unpickling: keeps its state dict."""

    def __init__(self, *args: Any) -> None:
        self.state: dict[str, Any] = {}

    def __setstate__(self, state: Any) -> None:
        self.state = state if isinstance(state, dict) else {}


def _reconstruct() -> Any:
    """NumPy's ``_reconstruct`` (module ``numpy.core`` or ``numpy._core`` by version)."""
    return np.ndarray.__reduce__(np.zeros(1))[0]


_ALLOWED: dict[tuple[str, str], Any] = {
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct(),
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct(),  # written by NumPy 2
    ("_codecs", "encode"): __import__("codecs").encode,  # bytes, as Python 3 writes them
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("scipy.sparse.csr", "csr_matrix"): _CSRState,
    ("collections", "defaultdict"): collections.defaultdict,
    ("__builtin__", "list"): list,
    ("builtins", "list"): list,
}


class _Restricted(pickle.Unpickler):
    """An unpickler that resolves only :data:`_ALLOWED` globals (no code runs)."""

    def find_class(self, module: str, name: str) -> Any:
        found = _ALLOWED.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"global {module}.{name} is not a Planetoid array")
        return found


def _unpickle(path: Path) -> Any:
    try:
        with open(path, "rb") as handle:
            obj = _Restricted(handle, encoding="latin1").load()
    except FileNotFoundError:
        raise FormatError(f"{path}: missing", path=str(path)) from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError,
            IndexError, KeyError, OverflowError, MemoryError, OSError) as exc:
        raise FormatError(f"{path}: not a Planetoid pickle of arrays ({type(exc).__name__}: "
                          f"{exc})"[:400], path=str(path)) from None
    if isinstance(obj, np.ndarray) and obj.dtype.kind == "O":
        raise FormatError(f"{path}: object array, expected numbers", path=str(path))
    return obj


def _matrix(obj: Any, path: Path, what: str) -> SparseRows:
    """A CSR state or a 2-D array as float32 SparseRows."""
    if isinstance(obj, _CSRState):
        st = obj.state
        try:
            shape = tuple(int(v) for v in st["_shape"])
            return SparseRows(np.asarray(st["indptr"]), np.asarray(st["indices"]),
                              np.asarray(st["data"], dtype=np.float32), shape[1])
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise FormatError(f"{path}: {what} is not a valid CSR matrix ({exc})",
                              path=str(path), field=what) from None
    arr = np.asarray(obj)
    if arr.ndim != 2 or arr.dtype.kind not in "iufb":
        raise FormatError(f"{path}: {what} must be a 2-D numeric matrix, found "
                          f"{type(obj).__name__} {getattr(arr, 'shape', '')}", path=str(path),
                          field=what)
    return SparseRows.from_scipy(_scipy_csr(arr.astype(np.float32)))


def _scipy_csr(arr: np.ndarray) -> Any:
    import scipy.sparse as sp

    return sp.csr_matrix(arr)


@dataclass(frozen=True)
class PlanetoidDataset:
    """What :func:`load_planetoid` returns.

    Attributes:
        graph: Homogeneous graph: edges as the adjacency lists hold them (both directions
            of each citation; duplicates and self loops as stored), node data ``feat``
            (float32 SparseRows ``(N, F)``, or dense; absent with ``features=False``), ``label``
            (int64 ``(N,)``, -1 for the padding nodes CiteSeer's test range needs) and the
            Planetoid split as ``train_mask`` / ``val_mask`` / ``test_mask``.
        name: ``"cora"``, ``"citeseer"`` or ``"pubmed"``.
        num_classes: Columns of the one-hot labels.
    """

    graph: Graph = field(repr=False)
    name: str
    num_classes: int


def _locate(path: Path, name: str | None) -> tuple[Path, str]:
    """The folder and dataset name from a folder (+ name), a prefix ``ind.cora`` or a file."""
    m = re.fullmatch(r"ind\.([A-Za-z0-9_-]+)(\..*)?", path.name)
    if m and not path.is_dir():
        return path.parent, m.group(1)
    if not path.is_dir():
        raise FormatError(f"{path}: not a folder of Planetoid ind.<name>.* files, nor one of "
                          "them", path=str(path))
    names = sorted({p.name.split(".")[1] for p in path.glob("ind.*.graph")})
    if name is None:
        if len(names) != 1:
            raise ValidationError(f"{path}: holds the Planetoid datasets {names}; name one "
                                  "(name='cora'; CLI: -O name=cora)", path=str(path),
                                  field="name", value=names)
        name = names[0]
    return path, name


def load_planetoid(path: str | os.PathLike[str], *, name: str | None = None,
                   features: bool = True, sparse_features: bool = True) -> PlanetoidDataset:
    """Read a Planetoid dataset from its raw ``ind.<name>.*`` files (local files only).

    The split is Planetoid's, as GCN and PyG use it: ``train`` the first ``len(y)`` nodes,
    ``val`` the next 500, ``test`` the nodes of ``ind.<name>.test.index``.  Row ``i`` of
    ``tx``/``ty`` belongs to the node on line ``i`` of the test index; CiteSeer's
    test index skips some IDs, which become nodes without features or edges (label -1), as
    GCN's loader pads them.

    Args:
        path: The folder holding ``ind.<name>.*``, the prefix ``folder/ind.cora`` or any one
            of the files (``ind.cora.graph``).
        name: The dataset in a folder that holds several.
        features: Read ``x``/``tx``/``allx`` (False: structure, labels and split only, for
            a copy without ``allx`` such as the PubMed one we test with).
        sparse_features: Keep ``feat`` as SparseRows (True) or a dense float32 array
            (the chunked format stores dense columns only).

    Returns:
        PlanetoidDataset.

    Raises:
        FormatError: a missing or malformed file (or one naming a global other than the
            arrays these files hold), naming it.
        ValidationError: a folder with several datasets and no ``name``.

    Example:
        >>> import collections, pickle, tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> eye = np.eye(2, dtype=np.float32)
        >>> parts = {"x": eye[:1], "y": eye[:1], "allx": eye, "ally": eye, "tx": eye[::-1],
        ...          "ty": eye[::-1], "graph": collections.defaultdict(list, {0: [1], 3: [2]})}
        >>> for part, obj in parts.items():
        ...     _ = (d / f"ind.tiny.{part}").write_bytes(pickle.dumps(obj, protocol=2))
        >>> _ = (d / "ind.tiny.test.index").write_text("3\\n2\\n")
        >>> g = load_planetoid(d).graph
        >>> g.num_nodes(), g.ndata["label"].tolist(), g.ndata["test_mask"].tolist()
        (4, [0, 1, 0, 1], [False, False, True, True])
        >>> g.ndata["feat"].to_dense()[3].tolist()  # tx row 0 is the node on line 1: 3
        [0.0, 1.0]
    """
    folder, name = _locate(Path(path), name)
    file = {part: folder / f"ind.{name}.{part}" for part in (*_PARTS, "test.index")}
    y, ty, ally = (np.asarray(_unpickle(file[k])) for k in ("y", "ty", "ally"))
    for k, arr in (("y", y), ("ty", ty), ("ally", ally)):
        if arr.ndim != 2 or arr.dtype.kind not in "iufb":
            raise FormatError(f"{file[k]}: labels must be a 2-D one-hot matrix, found shape "
                              f"{arr.shape}", path=str(file[k]), field=k)
    test = _test_index(file["test.index"])
    lo, hi = int(test.min()), int(test.max()) + 1
    num_nodes = max(len(ally) + hi - lo, hi)
    if lo != len(ally) or len(ty) != len(test) or ty.shape[1] != ally.shape[1] \
            or len(np.unique(test)) != len(test):
        raise FormatError(f"{file['test.index']}: test IDs {lo}..{hi - 1} and {len(ty)} test "
                          f"labels do not follow the {len(ally)} rows of ally", path=str(
                              file["test.index"]), field="test.index")
    label = np.full(num_nodes, -1, dtype=np.int64)
    has = ally.any(axis=1)
    label[:len(ally)] = np.where(has, ally.argmax(axis=1), -1)
    label[test] = np.where(ty.any(axis=1), ty.argmax(axis=1), -1)
    g = _edges(file["graph"], num_nodes)
    if features:
        allx, tx = _matrix(_unpickle(file["allx"]), file["allx"], "allx"), \
            _matrix(_unpickle(file["tx"]), file["tx"], "tx")
        if len(allx) != len(ally) or len(tx) != len(test) or allx.num_cols != tx.num_cols:
            raise FormatError(f"{file['tx']}: allx {allx.shape} and tx {tx.shape} do not "
                              f"match ally ({len(ally)} rows) and the test index "
                              f"({len(test)} IDs)", path=str(file["tx"]), field="tx")
        rows = np.full(num_nodes, -1, dtype=np.int64)  # feature row of each node, -1: none
        rows[:len(allx)] = np.arange(len(allx))
        rows[test] = len(allx) + np.arange(len(tx))
        both = SparseRows.concat([allx, tx, SparseRows(np.zeros(2, np.int64),
                                                       np.zeros(0, np.int64),
                                                       np.zeros(0, np.float32),
                                                       allx.num_cols)])
        feat = both.take(np.where(rows < 0, len(allx) + len(tx), rows))
        g.ndata["feat"] = feat if sparse_features else feat.to_dense(np.float32)
    g.ndata["label"] = label
    masks = {k: np.zeros(num_nodes, dtype=bool) for k in ("train_mask", "val_mask",
                                                          "test_mask")}
    masks["train_mask"][:len(y)] = True
    masks["val_mask"][len(y):len(y) + 500] = True
    masks["test_mask"][test] = True
    for k, m in masks.items():
        g.ndata[k] = m
    return PlanetoidDataset(g, name, int(ally.shape[1]))


def _test_index(path: Path) -> np.ndarray:
    try:
        text = path.read_text(encoding="utf-8").split()
    except FileNotFoundError:
        raise FormatError(f"{path}: missing", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"{path}: cannot read ({exc})", path=str(path)) from None
    bad = next((i for i, tok in enumerate(text) if not tok.isdigit()), None)
    if bad is not None or not text:
        raise FormatError(f"{path}:{(bad or 0) + 1}: expected one node ID a line",
                          path=str(path), line=(bad or 0) + 1, field="test.index")
    return np.array([int(t) for t in text], dtype=np.int64)  # file order: tx/ty rows


def _edges(path: Path, num_nodes: int) -> Graph:
    adj = _unpickle(path)
    if not isinstance(adj, dict):
        raise FormatError(f"{path}: expected a dict of adjacency lists, found "
                          f"{type(adj).__name__}", path=str(path))
    try:
        keys = np.fromiter(adj.keys(), dtype=np.int64, count=len(adj))
        lists = [np.asarray(v, dtype=np.int64).reshape(-1) for v in adj.values()]
    except (TypeError, ValueError, OverflowError) as exc:
        raise FormatError(f"{path}: adjacency lists must hold integer node IDs ({exc})",
                          path=str(path)) from None
    src = np.repeat(keys, [len(v) for v in lists])
    dst = np.concatenate(lists) if lists else np.zeros(0, np.int64)
    bad = np.flatnonzero((src < 0) | (src >= num_nodes) | (dst < 0) | (dst >= num_nodes))
    if bad.size:
        raise FormatError(f"{path}: edge {int(src[bad[0]])} -> {int(dst[bad[0]])} leaves the "
                          f"{num_nodes} nodes", path=str(path))
    return graph((src, dst), num_nodes=num_nodes)
