"""The gnn-benchmark ``.npz`` files (Shchur et al. 2018) as a homogeneous Graph.

The ``.npz`` (a zip of ``.npy`` members) is read member by member here rather than by
``np.load``: each member's header is checked against the bytes the member declares
before anything is allocated, only the members we use are read, and any damage (a bad
header, a corrupt deflate stream, a CRC mismatch) is our FormatError naming the file and
the array.
"""

from __future__ import annotations

import math
import os
import tokenize
import zipfile
import zlib
from pathlib import Path
from typing import IO

import numpy as np

from ..errors import FormatError, ValidationError, check_bool
from ..graph import Graph, graph
from ..sparse import SparseRows
from ..storage.files import check_regular_file
from ._bounds import check_declared
from .splits import shchur_split

__all__ = ["load_shchur_npz"]

_SHCHUR_KEYS = ("adj_data", "adj_indices", "adj_indptr", "adj_shape", "attr_data",
                "attr_indices", "attr_indptr", "attr_shape", "labels")
#: What reading a member may raise for a damaged file.
_DAMAGE = (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error, OverflowError,
           SyntaxError, MemoryError, TypeError, KeyError, tokenize.TokenError)


def load_shchur_npz(path: str | os.PathLike[str], *, sparse_features: bool = True,
                    split_seed: int | None = None, undirected: bool = False,
                    largest_component: bool = False) -> Graph:
    """A gnn-benchmark ``.npz`` (Shchur et al. 2018) as a homogeneous Graph.

    The file holds a CSR adjacency (``adj_*``: entry ``[u, v]`` is the edge u -> v; its
    values are not kept), CSR bag-of-words features (``attr_*``) and ``labels``; other
    arrays (names, which may need pickle) are not read.  ``path`` is the ``.npz`` or a
    ``.zip`` holding exactly one ``.npz`` (as the tf_geometric mirror ships them).  Edges
    are as stored (the Amazon graphs are not symmetric) unless ``undirected``.  The files
    carry no split;
    ``split_seed`` adds Shchur et al.'s (:func:`~graphshard.datasets.shchur_split`: 20
    training and 30 validation nodes per class, the rest test) as node masks.

    Args:
        path: Local ``.npz`` or ``.zip`` file.
        sparse_features: Keep node feature ``feat`` as a :class:`~graphshard.sparse.SparseRows`
            (float32 values, int32 columns as stored); False: a dense float32 array.
        split_seed: Seed of Shchur et al.'s split, added as ``train_mask``, ``val_mask``
            and ``test_mask``; None (default): no masks.
        undirected: Every edge in both directions, once, without self-loops: Shchur et
            al.'s standardisation of the graph.
        largest_component: Keep only the largest (weakly) connected component, renumbered
            in the file's order, as Shchur et al. also do (Cora keeps 2,485 of 2,708
            nodes, CiteSeer 2,110 of 3,312); the split is then drawn on those nodes.

    Returns:
        A Graph with node data ``feat`` and ``label`` (int64), and the masks with
        ``split_seed``.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        FormatError: naming the file and the key: not a regular file, not a zip/npz, a zip
            with no or several ``.npz``, a missing or damaged array, a header declaring more
            than its member holds, more feature columns than the values can use (at most
            max(2^20, 64 x values)), or arrays that do not form the CSR they claim.
        ValidationError: with ``split_seed``, a class of fewer than 50 nodes (named).

    Example:
        >>> import tempfile
        >>> p = tempfile.mkdtemp() + "/tiny.npz"
        >>> np.savez(p, adj_data=np.ones(2), adj_indices=[1, 0], adj_indptr=[0, 1, 2],
        ...          adj_shape=[2, 2], attr_data=np.ones(1, np.float32), attr_indices=[3],
        ...          attr_indptr=[0, 0, 1], attr_shape=[2, 5], labels=[0, 1])
        >>> g = load_shchur_npz(p)
        >>> g.edges()[1].tolist(), g.ndata["feat"], g.ndata["label"].tolist()
        ([1, 0], SparseRows(rows=2, num_cols=5, nnz=1, dtype=float32), [0, 1])
    """
    for flag, value in (("sparse_features", sparse_features), ("undirected", undirected),
                        ("largest_component", largest_component)):
        check_bool(value, flag, where=str(path))
    if split_seed is not None:
        g = load_shchur_npz(path, sparse_features=sparse_features, undirected=undirected,
                            largest_component=largest_component)
        try:
            split = shchur_split(np.asarray(g.ndata["label"]), seed=split_seed)
        except ValidationError as exc:
            raise ValidationError(f"{path}: {exc}", path=str(path), field=exc.field,
                                  value=exc.value) from exc
        for name, mask in split.as_ndata().items():
            g.ndata[name] = mask
        return g
    path = Path(path)
    check_regular_file(path)  # a FIFO would block, /dev/zero never ends
    try:
        if path.suffix.lower() == ".zip":  # an .npz is a zip too: tell them by name
            with zipfile.ZipFile(path) as zf:
                names = [n for n in zf.namelist() if n.endswith(".npz")]
                if len(names) != 1:
                    raise FormatError(f"{path}: expected one .npz in the zip, found {names}",
                                      path=str(path))
                with zf.open(names[0]) as handle:
                    return _shchur_graph(f"{path}:{names[0]}", handle, sparse_features,
                                         undirected, largest_component)
        with open(path, "rb") as handle:
            return _shchur_graph(str(path), handle, sparse_features, undirected,
                                 largest_component)
    except (OSError, zipfile.BadZipFile, EOFError, zlib.error) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise FormatError(f"{path}: cannot read ({exc})", path=str(path)) from exc


def _shchur_graph(where: str, handle: IO[bytes], sparse_features: bool,
                  undirected: bool, largest_component: bool) -> Graph:
    head = handle.read(6)
    if head == b"\x93NUMPY":
        raise FormatError(f"{where}: not an .npz file (one array)", path=where)
    handle.seek(0)
    try:
        npz = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise FormatError(f"{where}: not an .npz file ({exc})", path=where) from exc
    with npz:
        arrays = {key: _member(where, npz, key) for key in _SHCHUR_KEYS}
    try:
        adj = _csr(arrays, "adj", where)
        feat = _csr(arrays, "attr", where)
        labels = arrays["labels"]
        n = len(adj)
        if adj.num_cols != n or len(feat) != n:
            raise ValidationError(f"adjacency is {adj.shape} and features have {len(feat)} "
                                  f"rows; expected {n} x {n} and {n}", field="adj_shape")
        if labels.shape != (n,) or labels.dtype.kind not in "iu":
            raise ValidationError(f"labels must be {n} integers, got dtype {labels.dtype} "
                                  f"shape {labels.shape}", field="labels")
        src, dst = adj.row_ids(), adj.indices.astype(np.int64)
        if undirected:  # both directions, each pair once, no self-loops (vectorised)
            keep = src != dst
            keys = np.unique(np.concatenate([src[keep] * n + dst[keep],
                                             dst[keep] * n + src[keep]]))
            src, dst = keys // n, keys % n
        if largest_component:
            keep = _largest_component(src, dst, n)
            new = np.full(n, -1, dtype=np.int64)
            new[keep] = np.arange(len(keep))
            inside = new[src] >= 0  # an edge's ends share a component
            src, dst, n = new[src[inside]], new[dst[inside]], len(keep)
            feat, labels = feat.take(keep), labels[keep]
        g = graph((src, dst), num_nodes=n)
        g.ndata["feat"] = feat if sparse_features else feat.to_dense(np.float32)
        g.ndata["label"] = labels.astype(np.int64)
    except ValidationError as exc:
        raise FormatError(f"{where}: {exc}", path=where, field=exc.field) from exc
    return g


def _largest_component(src: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray:
    """Nodes of the largest weakly connected component, in increasing order (of several
    as large, the one holding the lowest node)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    adj = coo_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n))
    _, component = connected_components(adj, directed=True, connection="weak")
    return np.flatnonzero(component == np.argmax(np.bincount(component)))


def _member(where: str, npz: zipfile.ZipFile, key: str) -> np.ndarray:
    """Array ``key`` of the npz: its header checked against the member's declared size
    before anything is allocated, then exactly the declared bytes read."""
    try:
        info = npz.getinfo(f"{key}.npy")
        with npz.open(info) as f:
            version = np.lib.format.read_magic(f)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(f)
            if dtype.hasobject:
                raise ValueError("an object array (pickled), not numbers")
            need = math.prod(shape) * dtype.itemsize
            held = info.file_size - f.tell()
            if need > held:
                raise ValueError(f"the header declares shape {shape} of {dtype}, {need:,} "
                                 f"bytes, but the member holds {held:,} after it")
            raw = f.read(need)
            if len(raw) != need:
                raise EOFError(f"{len(raw):,} of {need:,} bytes")
        return np.frombuffer(bytearray(raw), dtype=dtype).reshape(
            shape, order="F" if fortran else "C")
    except _DAMAGE as exc:
        why = "missing" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise FormatError(f"{where}: cannot read array {key!r} ({why})"[:500], path=where,
                          field=key) from exc


def _csr(arrays: dict[str, np.ndarray], prefix: str, where: str) -> SparseRows:
    """``<prefix>_data/_indices/_indptr/_shape`` as SparseRows (validated)."""
    shape = arrays[f"{prefix}_shape"]
    if shape.shape != (2,) or shape.dtype.kind not in "iu":
        raise ValidationError(f"{prefix}_shape must be 2 integers, got {shape!r}"[:120],
                              field=f"{prefix}_shape")
    indptr = arrays[f"{prefix}_indptr"]
    if np.ndim(indptr) != 1 or len(indptr) != int(shape[0]) + 1:
        raise ValidationError(f"{prefix}_indptr has {np.size(indptr)} entries for "
                              f"{int(shape[0])} rows", field=f"{prefix}_indptr")
    for part in ("indptr", "indices"):
        if arrays[f"{prefix}_{part}"].dtype.kind not in "iu":
            raise ValidationError(f"{prefix}_{part} must hold integers, got "
                                  f"{arrays[f'{prefix}_{part}'].dtype}", field=f"{prefix}_{part}")
    values = arrays[f"{prefix}_data"]
    if values.dtype.kind not in "biuf":
        raise ValidationError(f"{prefix}_data must hold numbers, got {values.dtype}",
                              field=f"{prefix}_data")
    if prefix == "attr":
        big = np.flatnonzero(~(np.abs(values) <= np.finfo(np.float32).max))  # nan, inf too
        if big.size:
            raise ValidationError(f"attr_data[{big[0]}] = {values[big[0]]} is not a finite "
                                  "float32 feature value", field="attr_data")
        values = values.astype(np.float32)
        check_declared(where, "attr_shape", int(shape[1]), int(np.size(values)),
                       what="feature columns", per="values")
    return SparseRows(indptr, arrays[f"{prefix}_indices"], values, int(shape[1]))
