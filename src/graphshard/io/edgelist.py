"""Edge lists in CSV/TSV, Parquet, ``.npy`` and ``.npz``, read through pyarrow.

Columns are chosen by name (or by position for headerless text and NumPy input): ``src``,
``dst`` and optionally an edge type, a weight and other edge features.  Integer IDs are
used as they are unless ``relabel=True``; any other IDs (strings, floats) are mapped to
dense per-type IDs in sorted order, and the original IDs are kept as node feature
``"node_id"`` (integers as an array, strings as a Ragged of UTF-8 bytes; decode them with
:func:`node_id_strings`).
"""

from __future__ import annotations

import tokenize
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ..errors import ValidationError
from ..graph import DEFAULT_ETYPE, DEFAULT_NTYPE, Graph, heterograph
from ..ragged import Ragged
from ._common import PathLike, column_to_numpy, fail, id_column, ragged_to_strings

__all__ = ["node_id_strings", "read_edgelist"]

_TEXT = {".csv": ",", ".tsv": "\t", ".txt": None, ".edges": None, ".el": None}
FORMATS = ("csv", "parquet", "npy", "npz")


def _format(path: Path, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in FORMATS:
            raise ValidationError(f"fmt {fmt!r} is not one of {list(FORMATS)}", field="fmt")
        return fmt
    suffixes = [s.lower() for s in path.suffixes if s.lower() not in (".gz", ".bz2")]
    suffix = suffixes[-1] if suffixes else ""
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix in (".npy", ".npz"):
        return suffix[1:]
    return "csv"


def _sniff_delimiter(path: Path) -> str:
    import gzip
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.strip() and not line.startswith(("#", "%")):
                for d in ("\t", ",", ";", " "):
                    if d in line.strip():
                        return d
                return ","
    return ","


def _load_table(path: Path, fmt: str, delimiter: str | None, header: bool,
                comment: str | None) -> pa.Table:
    try:
        if fmt == "parquet":
            return pq.read_table(path)
        if fmt in ("npy", "npz"):
            return _numpy_table(path, fmt)
        delim = delimiter or _TEXT.get(path.suffix.lower()) or _sniff_delimiter(path)
        if comment:
            # pyarrow has no comment option: skip leading comment lines only
            skip = 0
            with open(path, "rb") as handle:
                for raw in handle:
                    if not raw.startswith(comment.encode()):
                        break
                    skip += 1
        else:
            skip = 0
        read = pacsv.ReadOptions(autogenerate_column_names=not header, skip_rows=skip)
        parse = pacsv.ParseOptions(delimiter=delim)
        if delim == " ":
            parse = pacsv.ParseOptions(delimiter=" ", ignore_empty_lines=True)
        return pacsv.read_csv(path, read_options=read, parse_options=parse)
    except (pa.ArrowException, OSError, ValueError, EOFError, KeyError, SyntaxError,
            tokenize.TokenError) as exc:
        raise fail(path, f"unreadable {fmt} edge list ({exc})".replace("\n", " ")) from exc


def _numpy_table(path: Path, fmt: str) -> pa.Table:
    if fmt == "npz":
        with np.load(path, allow_pickle=False) as z:
            return pa.table({k: z[k] for k in z.files if z[k].ndim == 1})
    arr = np.load(path, mmap_mode="r", allow_pickle=False)
    if arr.ndim != 2:
        raise ValueError(f"expected a 2-D array (rows = edges), got shape {arr.shape}")
    return pa.table({f"f{k}": np.ascontiguousarray(arr[:, k]) for k in range(arr.shape[1])})


def _column(tab: pa.Table, key: str | int, path: Path, what: str) -> pa.ChunkedArray:
    names = tab.column_names
    if isinstance(key, int):
        if not 0 <= key < len(names):
            raise fail(path, f"column {key} does not exist; the file has {len(names)} columns",
                       field=what, value=key)
        return tab.column(key)
    if key not in names:
        raise fail(path, f"no column {key!r}; columns are {names}", field=what, value=key)
    return tab.column(key)


def _no_nulls(col: pa.ChunkedArray, path: Path, what: str, header: bool) -> None:
    if col.null_count:
        row = int(np.flatnonzero(column_to_numpy(col.is_null()))[0])
        raise fail(path, f"missing value in row {row + 1}", line=row + 1 + int(header),
                   field=what)


def read_edgelist(path: PathLike, *, src: str | int = "src", dst: str | int = "dst",
                  etype: str | int | None = None, weight: str | int | None = None,
                  features: Sequence[str | int] = (), fmt: str | None = None,
                  delimiter: str | None = None, header: bool = True,
                  comment: str | None = "#", relabel: bool = False,
                  num_nodes: int | dict[str, int] | None = None) -> Graph:
    """Read an edge list (CSV/TSV/Parquet/NPY/NPZ) into a :class:`Graph`.

    Args:
        path: The file; the format follows the suffix unless ``fmt`` is given.
        src: Source column: a name, or a position (headerless text or ``.npy``: 0).
        dst: Destination column.
        etype: Edge type column.  A value ``"a:rel:b"`` is a canonical type between node
            types ``a`` and ``b``; any other value ``rel`` is ``("_N", rel, "_N")``.
        weight: Weight column, stored as edge feature ``"weight"``.
        features: Other columns, each stored as an edge feature of its name.
        fmt: ``"csv"``, ``"parquet"``, ``"npy"`` or ``"npz"``; default from the suffix.
        delimiter: CSV delimiter; default from the suffix (``.tsv``: tab) or sniffed.
        header: Whether text files have a header row; without one, columns are 0, 1, ...
        comment: Leading lines starting with this are skipped (text files).
        relabel: Map integer IDs to dense IDs too (strings are always mapped).
        num_nodes: Node count (or per-type counts) for unrelabelled integer IDs.

    Returns:
        The graph; after mapping, node feature ``"node_id"`` holds the original IDs.

    Raises:
        FormatError: an unreadable file, a missing column or a missing value (naming file,
            row and column).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "e.csv"
        >>> _ = p.write_text("src,dst,w\\nalice,bob,0.5\\nbob,carol,1.5\\n")
        >>> g = read_edgelist(p, weight="w")
        >>> g.edges()[1].tolist(), node_id_strings(g.ndata["node_id"])
        ([1, 2], ['alice', 'bob', 'carol'])
    """
    path = Path(path)
    if not path.is_file():
        raise fail(path, "edge list file does not exist")
    fmt = _format(path, fmt)
    if fmt == "npy" or not header:
        src = 0 if src == "src" else src
        dst = 1 if dst == "dst" else dst
    tab = _load_table(path, fmt, delimiter, header and fmt == "csv", comment)
    wanted = {"src": src, "dst": dst}
    if etype is not None:
        wanted["etype"] = etype
    if weight is not None:
        wanted["weight"] = weight
    wanted.update({str(k): k for k in features})
    found = {name: _column(tab, key, path, name) for name, key in wanted.items()}
    for name, col in found.items():
        _no_nulls(col, path, name, header and fmt == "csv")
    cols = {"src": found.pop("src"), "dst": found.pop("dst")}
    types = None
    if etype is not None:
        types = pc.cast(found.pop("etype"), pa.string()).combine_chunks().dictionary_encode()
    feats: dict[str, Any] = {k: column_to_numpy(c) for k, c in found.items()}
    try:
        return _build(path, cols, types, feats, relabel, num_nodes)
    except pa.ArrowException as exc:  # e.g. IDs that are not UTF-8 text
        raise fail(path, f"bad node IDs ({exc})", field="src/dst") from exc


def _build(path: Path, cols: dict[str, pa.ChunkedArray], types: pa.DictionaryArray | None,
           feats: dict[str, Any], relabel: bool, num_nodes: int | dict[str, int] | None
           ) -> Graph:
    ints = all(pa.types.is_integer(cols[k].type) for k in ("src", "dst")) and not relabel
    s = d = np.zeros(0, np.int64)
    if ints:
        s, d = (column_to_numpy(cols[k]).astype(np.int64, copy=False) for k in ("src", "dst"))
        bounds = [pc.min_max(cols[k]).as_py() for k in ("src", "dst")]  # one pass each
        lo = min((b["min"] for b in bounds if b["min"] is not None), default=0)
        hi = max((b["max"] for b in bounds if b["max"] is not None), default=-1)
        if lo < 0:
            raise fail(path, "negative node ID; pass relabel=True to map IDs", field="src/dst")
        if types is None and not isinstance(num_nodes, dict):  # fast path: one pass each
            top = int(hi) + 1
            n = top if num_nodes is None else int(num_nodes)
            if top > n:
                raise fail(path, f"node ID {top - 1} >= num_nodes={n}", field="src/dst")
            g = Graph({DEFAULT_ETYPE: (s, d)}, {DEFAULT_NTYPE: n})
            for name, col in feats.items():
                g.edata[name] = col
            return g
    if types is None:
        groups = {(DEFAULT_NTYPE, "_E", DEFAULT_NTYPE): None}
        codes = None
    else:
        names = types.dictionary.to_pylist()
        codes = types.indices.to_numpy(zero_copy_only=False)
        groups = {}
        for i, name in enumerate(names):
            parts = name.split(":")
            et = tuple(parts) if len(parts) == 3 else (DEFAULT_NTYPE, name, DEFAULT_NTYPE)
            groups[et] = i
    ntypes = list(dict.fromkeys(t for et in groups for t in (et[0], et[2])))
    sel = {et: (None if i is None else np.flatnonzero(codes == i)) for et, i in groups.items()}
    arrs = {} if ints else {k: cols[k].combine_chunks() for k in ("src", "dst")}
    if not ints and arrs["src"].type != arrs["dst"].type:
        arrs = {k: a.cast(pa.large_string()) for k, a in arrs.items()}

    def pick(k: str, rows: np.ndarray | None) -> pa.Array:
        return arrs[k] if rows is None else arrs[k].take(pa.array(rows))

    uniq: dict[str, pa.Array] = {}
    if not ints:  # dense IDs per node type, in sorted order of the original IDs (in C++)
        for nt in ntypes:
            parts = [pick("src", sel[et]) for et in groups if et[0] == nt] + \
                    [pick("dst", sel[et]) for et in groups if et[2] == nt]
            u = pc.unique(pa.chunked_array(parts).combine_chunks())
            uniq[nt] = u.take(pc.sort_indices(u))
    data = {}
    for et, rows in sel.items():
        if ints:
            data[et] = (s if rows is None else s[rows], d if rows is None else d[rows])
        else:
            data[et] = tuple(column_to_numpy(pc.index_in(pick(k, rows), value_set=uniq[t]))
                             for k, t in (("src", et[0]), ("dst", et[2])))
    nn = None
    if not ints:
        nn = {nt: len(u) for nt, u in uniq.items()}
    elif num_nodes is not None:
        nn = num_nodes if isinstance(num_nodes, dict) else {DEFAULT_NTYPE: int(num_nodes)}
    g = heterograph(data, num_nodes_dict=nn)
    for nt, u in uniq.items():
        g.nodes[nt].data["node_id"] = id_column(u)
    for name, col in feats.items():
        for et, rows in sel.items():
            g.edges[et].data[name] = col if rows is None else col[rows]
    return g


def node_id_strings(col: np.ndarray | Ragged) -> list:
    """Original node IDs from a ``"node_id"`` feature: strings for Ragged, else integers.

    Example:
        >>> from graphshard import Ragged
        >>> node_id_strings(Ragged.from_rows(["a", "bc"]))
        ['a', 'bc']
    """
    if isinstance(col, Ragged):
        return ragged_to_strings(col)
    return np.asarray(col).tolist()

