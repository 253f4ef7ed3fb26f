"""OGB node-property datasets from their raw download layout (local folders only).

An OGB ``ogbn-*`` zip unpacks to ``<name>/raw/*.csv.gz`` and ``<name>/split/<scheme>/``
(see snap-stanford/ogb ``ogb/io/README.md``): ``edge.csv.gz`` (one ``src,dst`` row per
edge, no header), ``num-node-list.csv.gz`` (the node count), optional ``node-feat.csv.gz``,
``edge-feat.csv.gz`` and ``node-label.csv.gz`` (one row per node/edge), further per-node
or per-edge files named in OGB's ``master.csv`` (``node_year.csv.gz``, ...) and the split's
``train/valid/test.csv.gz`` (node IDs, one a line).  Edges are kept as stored: for the
datasets OGB marks ``add_inverse_edge`` (products, proteins) add the reverse edges with the
readers' ``add_reverse`` option (CLI: ``--add-reverse``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ..errors import FormatError
from ..graph import Graph, graph
from ..storage.files import check_regular_file
from ._bounds import check_declared

__all__ = ["OGBDataset", "load_ogb"]


@dataclass(frozen=True)
class OGBDataset:
    """What :func:`load_ogb` returns.

    Attributes:
        graph: Homogeneous graph: edges as stored in ``edge.csv.gz``; node data ``feat``
            (float32 ``(N, F)``) and ``label`` (int64 ``(N,)``, or ``(N, T)`` for several
            tasks; NaN labels become -1) where the files exist, one node feature per further
            node file (``year`` from ``node_year.csv.gz``), edge data ``feat`` and one per
            further edge file; ``train_mask``/``val_mask``/``test_mask`` from the split.
        name: The dataset folder's name.
        split: The split scheme read (``"time"``), or None when there is none.
    """

    graph: Graph = field(repr=False)
    name: str
    split: str | None


def _read_csv(path: Path, *, what: str) -> np.ndarray:
    """A headerless numeric CSV (``.gz`` or plain) as a 2-D float64 or int64 array."""
    try:
        check_regular_file(path, field=what)  # a FIFO would block, a device never ends
    except FileNotFoundError:
        raise FormatError(f"{path}: missing ({what})", path=str(path), field=what) from None
    try:
        table = pacsv.read_csv(path, read_options=pacsv.ReadOptions(
            autogenerate_column_names=True))
    except FileNotFoundError:
        raise FormatError(f"{path}: missing ({what})", path=str(path), field=what) from None
    except (pa.ArrowException, OSError, EOFError, ValueError) as exc:
        raise FormatError(f"{path}: unreadable {what} ({exc})".replace("\n", " "),
                          path=str(path), field=what) from None
    cols = []
    for k, col in enumerate(table.columns):
        if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)
                or pa.types.is_null(col.type)):
            raise FormatError(f"{path}: column {k} holds {col.type}, expected numbers ({what})",
                              path=str(path), field=what)
        cols.append(col.to_numpy(zero_copy_only=False))
    if not cols:
        return np.zeros((0, 0))
    return np.column_stack(cols)


def _ids(path: Path, n: int, what: str) -> np.ndarray:
    arr = _read_csv(path, what=what)
    if arr.ndim != 2 or arr.shape[1] != 1 or arr.dtype.kind not in "iu":
        raise FormatError(f"{path}: expected one integer node ID a line ({what})",
                          path=str(path), field=what)
    ids = arr[:, 0].astype(np.int64)
    bad = np.flatnonzero((ids < 0) | (ids >= n))
    if bad.size:
        raise FormatError(f"{path}:{bad[0] + 1}: node ID {ids[bad[0]]} is not in [0, {n})",
                          path=str(path), line=int(bad[0]) + 1, field=what)
    return ids


def _dataset_folder(path: Path) -> Path:
    """The folder holding ``raw/`` (``path`` itself, or its parent for ``.../raw``)."""
    if (path / "raw").is_dir():
        return path
    if path.name == "raw" and (path / "edge.csv.gz").exists():
        return path.parent
    raise FormatError(f"{path}: not an OGB dataset folder (expected raw/edge.csv.gz inside)",
                      path=str(path))


def _rows(arr: np.ndarray, count: int, path: Path, what: str) -> np.ndarray:
    if len(arr) != count:
        raise FormatError(f"{path}: {len(arr)} rows, expected {count} ({what})", path=str(path),
                          field=what)
    return arr


def load_ogb(path: str | os.PathLike[str], *, split: str | None = None) -> OGBDataset:
    """Read an OGB node-property dataset (``ogbn-arxiv``, ``-products``, ...) from its raw
    folder, as the ``ogbn-*`` zip unpacks.  Nothing is downloaded.

    Args:
        path: The dataset folder (holding ``raw/`` and ``split/``) or its ``raw/`` folder.
        split: The split scheme folder under ``split/``; default: the only one there.

    Returns:
        OGBDataset.

    Raises:
        FormatError: a missing or malformed file (naming it and the row), a heterogeneous
            (``raw/relations``) or binary (``raw/data.npz``) layout, which this reader does
            not take, or several split schemes and no ``split``.

    Example:
        >>> import gzip, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp()) / "ogbn-tiny"
        >>> (d / "raw").mkdir(parents=True); (d / "split" / "random").mkdir(parents=True)
        >>> def put(name, text): _ = gzip.open(d / name, "wt").write(text)
        >>> put("raw/edge.csv.gz", "0,1\\n1,2\\n"); put("raw/num-node-list.csv.gz", "3\\n")
        >>> put("raw/node-label.csv.gz", "0\\n1\\n0\\n")
        >>> for part, ids in (("train", "0\\n"), ("valid", "1\\n"), ("test", "2\\n")):
        ...     put(f"split/random/{part}.csv.gz", ids)
        >>> ds = load_ogb(d)
        >>> ds.graph.num_edges(), ds.graph.ndata["label"].tolist(), ds.split
        (2, [0, 1, 0], 'random')
        >>> ds.graph.ndata["val_mask"].tolist()
        [False, True, False]
    """
    folder = _dataset_folder(Path(path))
    raw = folder / "raw"
    if (raw / "relations").is_dir() or (raw / "data.npz").exists():
        raise FormatError(f"{raw}: a heterogeneous (relations/) or binary (data.npz) OGB layout;"
                          " this reader takes the homogeneous CSV layout only", path=str(raw))
    edges = _read_csv(raw / "edge.csv.gz", what="edges")
    if edges.ndim != 2 or edges.shape[1] != 2 or edges.dtype.kind not in "iu":
        raise FormatError(f"{raw / 'edge.csv.gz'}: expected rows of two integer node IDs",
                          path=str(raw / "edge.csv.gz"), field="edges")
    counts = _read_csv(raw / "num-node-list.csv.gz", what="node count")
    if counts.shape[0] != 1 or counts.dtype.kind not in "iu":
        raise FormatError(f"{raw / 'num-node-list.csv.gz'}: expected one node count (graphs "
                          f"of graph-property datasets are not read here), found {counts.size}",
                          path=str(raw / "num-node-list.csv.gz"), field="node count")
    n = int(counts[0, 0])
    if n < 0:
        raise FormatError(f"{raw / 'num-node-list.csv.gz'}:1: node count {n} is negative",
                          path=str(raw / "num-node-list.csv.gz"), line=1, field="node count")
    check_declared(raw / "num-node-list.csv.gz", "node count", n, len(edges), what="nodes",
                   per="edges")
    src, dst = edges[:, 0].astype(np.int64), edges[:, 1].astype(np.int64)
    bad = np.flatnonzero((src < 0) | (src >= n) | (dst < 0) | (dst >= n))
    if bad.size:
        raise FormatError(f"{raw / 'edge.csv.gz'}:{bad[0] + 1}: edge {src[bad[0]]} -> "
                          f"{dst[bad[0]]} is outside the {n} nodes", path=str(raw / "edge.csv.gz"),
                          line=int(bad[0]) + 1, field="edges")
    g = graph((src, dst), num_nodes=n)
    _attach(g, raw, n, len(src))
    scheme = _attach_split(g, folder, n, split)
    return OGBDataset(g, folder.name, scheme)


def _attach(g: Graph, raw: Path, n: int, m: int) -> None:
    """Node/edge features, labels and the further per-node/per-edge files."""
    for name, key, count, data in (("node-feat", "feat", n, g.ndata),
                                   ("edge-feat", "feat", m, g.edata)):
        p = raw / f"{name}.csv.gz"
        if p.exists():
            data[key] = _rows(_read_csv(p, what=name), count, p, name).astype(np.float32)
    p = raw / "node-label.csv.gz"
    if p.exists():
        y = _labels(_rows(_read_csv(p, what="labels"), n, p, "labels"), p)
        g.ndata["label"] = y[:, 0] if y.shape[1] == 1 else y
    for p in sorted(raw.glob("*_*.csv.gz")):  # node_year, edge_reltype, ...
        kind, _, name = p.name[:-len(".csv.gz")].partition("_")
        if kind not in ("node", "edge"):
            continue
        arr = _rows(_read_csv(p, what=p.name), n if kind == "node" else m, p, p.name)
        (g.ndata if kind == "node" else g.edata)[name] = arr[:, 0] if arr.shape[1] == 1 else arr


def _labels(y: np.ndarray, path: Path) -> np.ndarray:
    """Labels as int64, NaN as -1; a fraction, an infinity or a value beyond 2^53 (which
    a float64 column cannot hold exactly) is refused naming its line."""
    if y.dtype.kind != "f":
        return y.astype(np.int64)
    known = ~np.isnan(y)
    bad = known & ~((np.abs(y) < 2.0**53) & (y == np.floor(y)))  # inf fails both
    if bad.any():
        row, col = (int(v[0]) for v in np.nonzero(bad))
        raise FormatError(f"{path}:{row + 1}: label {y[row, col]!r} is not an integer class "
                          "(nor nan: no label)", path=str(path), line=row + 1, field="labels",
                          value=float(y[row, col]))
    return np.where(known, y, -1).astype(np.int64)


def _attach_split(g: Graph, folder: Path, n: int, split: str | None) -> str | None:
    schemes = sorted(p.name for p in (folder / "split").glob("*") if p.is_dir())
    if split is None:
        if not schemes:
            return None
        if len(schemes) > 1:
            raise FormatError(f"{folder / 'split'}: several split schemes {schemes}; name one "
                              "(split='time'; CLI: -O split=time)", path=str(folder / "split"),
                              field="split", value=schemes)
        split = schemes[0]
    where = folder / "split" / split
    for part, key in (("train", "train_mask"), ("valid", "val_mask"), ("test", "test_mask")):
        p = where / f"{part}.csv.gz"
        if not p.exists() and (where / f"{part}.csv").exists():
            p = where / f"{part}.csv"
        mask = np.zeros(n, dtype=bool)
        mask[_ids(p, n, f"{part} split")] = True
        g.ndata[key] = mask
    return split
