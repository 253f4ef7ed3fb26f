"""Planetoid citation graphs (Cora, CiteSeer, PubMed) from their raw ``ind.<name>.*`` files.

The files (Yang et al. 2016, as kimiyoung/planetoid and tkipf/gcn ship them) are Python 2
pickles.  They are never unpickled: :func:`~._pickle.read_pickle` walks their opcodes and
knows only the objects these files hold (NumPy arrays of numbers, SciPy's ``csr_matrix``
state, ``defaultdict(list)``), building each array from the bytes the file holds without
calling any class's pickle hook; anything else is our FormatError naming the file.
"""

from __future__ import annotations

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
from ..storage.files import check_regular_file
from ._bounds import check_declared
from ._pickle import CSRState, read_pickle

__all__ = ["PlanetoidDataset", "load_planetoid"]

_PARTS = ("x", "y", "tx", "ty", "allx", "ally", "graph")


def _unpickle(path: Path) -> Any:
    try:
        check_regular_file(path)
        with open(path, "rb") as handle:
            data = handle.read()
        return read_pickle(data)
    except FileNotFoundError:
        raise FormatError(f"{path}: missing", path=str(path)) from None
    except FormatError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError,
            IndexError, KeyError, OverflowError, MemoryError, OSError, SystemError,
            RuntimeError) as exc:  # RuntimeError: RecursionError too
        raise FormatError(f"{path}: not a Planetoid pickle of arrays ({type(exc).__name__}: "
                          f"{exc})"[:400], path=str(path)) from None


def _matrix(obj: Any, path: Path, what: str) -> SparseRows:
    """A CSR state or a 2-D array as float32 SparseRows."""
    if isinstance(obj, CSRState):
        st = obj.state or {}
        try:
            parts = {k: st[k] for k in ("indptr", "indices", "data")}
            shape = st["_shape"]
            if not all(isinstance(v, np.ndarray) for v in parts.values()) or not (
                    isinstance(shape, tuple) and len(shape) == 2
                    and all(type(v) is int and v >= 0 for v in shape)):
                raise ValueError("'_shape' must be 2 sizes and indptr, indices, data arrays")
            rows = SparseRows(parts["indptr"], parts["indices"],
                              parts["data"].astype(np.float32), shape[1])
            if len(rows) != shape[0]:
                raise ValueError(f"indptr has {len(parts['indptr'])} entries for {shape[0]} "
                                 "rows")
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise FormatError(f"{path}: {what} is not a valid CSR matrix ({exc})",
                              path=str(path), field=what) from None
        check_declared(path, f"{what} _shape", rows.num_cols, len(rows.indices),
                       what="columns", per="values")
        return rows
    if not isinstance(obj, np.ndarray) or obj.ndim != 2:
        raise FormatError(f"{path}: {what} must be a 2-D numeric matrix, found "
                          f"{type(obj).__name__} {getattr(obj, 'shape', '')}", path=str(path),
                          field=what)
    return SparseRows.from_scipy(_scipy_csr(obj.astype(np.float32)))


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
    y, ty, ally = (_labels(_unpickle(file[k]), file[k], k) for k in ("y", "ty", "ally"))
    test = _test_index(file["test.index"])
    num_nodes = _num_nodes(test, len(ally), file["test.index"])
    if len(ty) != len(test) or ty.shape[1] != ally.shape[1] \
            or len(np.unique(test)) != len(test):
        raise FormatError(f"{file['test.index']}: test IDs {int(test.min())}..{int(test.max())}"
                          f" and {len(ty)} test labels do not follow the {len(ally)} rows of "
                          "ally", path=str(file["test.index"]), field="test.index")
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


def _labels(obj: Any, path: Path, what: str) -> np.ndarray:
    if not isinstance(obj, np.ndarray) or obj.ndim != 2:
        raise FormatError(f"{path}: labels must be a 2-D one-hot matrix, found "
                          f"{type(obj).__name__} {getattr(obj, 'shape', '')}", path=str(path),
                          field=what)
    return obj


#: Padding nodes (IDs in the test range that no test line names: CiteSeer has 15 in 1015)
#: may at most equal the test IDs: the test range spans at most 2 x their number.
TEST_SPAN_PER_ID = 2


def _num_nodes(test: np.ndarray, num_ally: int, path: Path) -> int:
    """Nodes implied by the test IDs, which must run from ``num_ally`` (the rows of ally)
    over a range at most :data:`TEST_SPAN_PER_ID` x their number: bounded by the file."""
    lo, hi = int(test.min()), int(test.max()) + 1
    if lo != num_ally:
        raise FormatError(f"{path}: the smallest test ID is {lo}, but the test nodes follow "
                          f"the {num_ally} rows of ally (expected {num_ally})", path=str(path),
                          field="test.index", value=lo)
    limit = TEST_SPAN_PER_ID * len(test)
    if hi - lo > limit:
        raise FormatError(f"{path}: test IDs run from {lo} to {hi - 1}, {hi - lo:,} nodes for "
                          f"{len(test):,} test IDs; at most {TEST_SPAN_PER_ID} x the test IDs "
                          f"= {limit:,} (the gaps become padding nodes)", path=str(path),
                          field="test.index", value=hi - 1)
    return hi


def _test_index(path: Path) -> np.ndarray:
    try:
        check_regular_file(path)
        text = path.read_text(encoding="utf-8").split()
    except FileNotFoundError:
        raise FormatError(f"{path}: missing", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"{path}: cannot read ({exc})", path=str(path)) from None
    bad = next((i for i, tok in enumerate(text) if not re.fullmatch(r"[0-9]{1,18}", tok)),
               None)
    if bad is not None or not text:
        raise FormatError(f"{path}:{(bad or 0) + 1}: expected one node ID a line",
                          path=str(path), line=(bad or 0) + 1, field="test.index")
    return np.array([int(t) for t in text], dtype=np.int64)  # file order: tx/ty rows


def _is_id(x: Any) -> bool:
    return type(x) is int and -1 << 62 < x < 1 << 62


def _edges(path: Path, num_nodes: int) -> Graph:
    adj = _unpickle(path)
    if not isinstance(adj, dict):
        raise FormatError(f"{path}: expected a dict of adjacency lists, found "
                          f"{type(adj).__name__}", path=str(path))
    for k, v in adj.items():  # ints as Python writes them: no float, bool or huge ID
        if not (_is_id(k) and isinstance(v, list) and all(_is_id(x) for x in v)):
            raise FormatError(f"{path}: adjacency lists must map integer node IDs to lists "
                              f"of them; entry {k!r:.40} does not", path=str(path))
    keys = np.fromiter(adj.keys(), dtype=np.int64, count=len(adj))
    lists = [np.array(v, dtype=np.int64) for v in adj.values()]
    src = np.repeat(keys, [len(v) for v in lists])
    dst = np.concatenate(lists) if lists else np.zeros(0, np.int64)
    bad = np.flatnonzero((src < 0) | (src >= num_nodes) | (dst < 0) | (dst >= num_nodes))
    if bad.size:
        raise FormatError(f"{path}: edge {int(src[bad[0]])} -> {int(dst[bad[0]])} leaves the "
                          f"{num_nodes} nodes", path=str(path))
    return graph((src, dst), num_nodes=num_nodes)
