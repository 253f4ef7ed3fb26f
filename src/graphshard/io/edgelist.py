"""Edge lists in CSV/TSV, Parquet, ``.npy`` and ``.npz``, read through pyarrow.

Columns are chosen by name (or by position for headerless text and NumPy input): ``src``,
``dst`` and optionally an edge type, a weight and other edge features; a file with neither
a ``src`` nor a ``dst`` column gives its first two columns (MUSAE's ``id_1,id_2``).  Text
files (``.csv``, ``.tsv``, ``.txt``, SNAP's ``.edgelist``, ``.edges``, ``.el``, compressed or
not) start after their ``#`` comment lines; whether a header follows is read from the first
line (all numbers: no header) unless ``header`` says.  Integer IDs are
used as they are unless ``relabel=True``; string IDs (a text column with no number in it,
a string column, or every ID with ``ids="str"``) are mapped to dense per-type IDs in sorted
order, and the original IDs are kept as node feature ``"node_id"`` (integers as an array,
strings as a Ragged of UTF-8 bytes; decode them with :func:`node_id_strings`).  A token
that is not an integer in an integer column, an ID that does not fit, and an ID space far
larger than the edges are errors naming the row (see :mod:`._edge_ids`).
"""

from __future__ import annotations

import logging
import re
import tokenize
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ..errors import FormatError, ValidationError, check_choice
from ..graph import DEFAULT_ETYPE, DEFAULT_NTYPE, Graph, heterograph
from ..ragged import Ragged
from ..typing import EdgeType, EdgeTypeLike
from ._common import PathLike, column_to_numpy, fail, id_column, ragged_to_strings
from ._edge_ids import (
    ID_MODES,
    NUMBER_TOKEN,
    IdColumn,
    LineOf,
    check_id_space,
    open_text,
    parse_ids,
    text_line,
    unify,
)

__all__ = ["node_id_strings", "read_edgelist"]

log = logging.getLogger(__name__)

_TEXT = {".csv": ",", ".tsv": "\t", ".txt": None, ".edges": None, ".el": None,
         ".edgelist": None}
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
    with open_text(path) as handle:
        for raw in handle:
            line = raw.decode("utf-8", errors="replace")
            if line.strip() and not line.startswith(("#", "%")):
                for d in ("\t", ",", ";", " "):
                    if d in line.strip():
                        return d
                return ","
    return ","


@dataclass
class _Text:
    """How a text edge list was read: rows skipped at the top and whether a header follows."""

    path: Path
    skip: int
    header: bool

    def line_of(self, row: int) -> int:
        """File line of data row ``row`` (reads the file again: for error messages only)."""
        return text_line(self.path, row, self.skip, self.header)


def _skip_comments(path: Path, comment: str | None) -> int:
    """Leading lines starting with ``comment`` (pyarrow has no comment option)."""
    skip = 0
    if comment:
        with open_text(path) as handle:
            for raw in handle:
                if not raw.startswith(comment.encode()):
                    break
                skip += 1
    return skip


def _read_text(path: Path, delim: str, header: bool, skip: int,
               as_string: Sequence[str | int] = ()) -> pa.Table:
    """Read a CSV; ``as_string`` columns (names or positions) are read as plain text."""
    read = pacsv.ReadOptions(autogenerate_column_names=not header, skip_rows=skip)
    parse = pacsv.ParseOptions(delimiter=delim, ignore_empty_lines=True)
    types = {}
    if as_string:
        names = pacsv.open_csv(path, read_options=read, parse_options=parse).schema.names
        for key in as_string:
            if isinstance(key, int) and 0 <= key < len(names):
                types[names[key]] = pa.string()
            elif isinstance(key, str):
                types[key] = pa.string()
    return pacsv.read_csv(path, read_options=read, parse_options=parse,
                          convert_options=pacsv.ConvertOptions(column_types=types))


def _load_table(path: Path, fmt: str, delimiter: str | None, text: _Text | None,
                id_keys: Sequence[str | int], ids: str) -> pa.Table:
    try:
        if fmt == "parquet":
            return pq.read_table(path)
        if fmt in ("npy", "npz"):
            return _numpy_table(path, fmt)
        text = text or _Text(path, 0, True)
        delim = delimiter or _TEXT.get(_text_suffix(path)) or _sniff_delimiter(path)
        if ids == "str":
            return _read_text(path, delim, text.header, text.skip, id_keys)
        try:
            tab = _read_text(path, delim, text.header, text.skip)
        except pa.ArrowInvalid:  # e.g. a later block of an int64 column holds 'abc'
            return _read_text(path, delim, text.header, text.skip, id_keys)
        keys = [tab.column_names.index(k) if isinstance(k, str) and k in tab.column_names
                else k for k in id_keys]
        if all(isinstance(k, int) and 0 <= k < tab.num_columns and
               (pa.types.is_integer(tab.column(k).type) or pa.types.is_string(tab.column(k).type))
               for k in keys):
            return tab
        return _read_text(path, delim, text.header, text.skip, id_keys)  # keep the tokens
    except FormatError:
        raise
    except (pa.ArrowException, OSError, ValueError, EOFError, KeyError, SyntaxError,
            tokenize.TokenError, zipfile.BadZipFile, zlib.error, UnicodeDecodeError,
            NotImplementedError) as exc:
        raise fail(path, f"unreadable {fmt} edge list ({type(exc).__name__}: {exc})"
                   .replace("\n", " ")) from exc


def _numpy_table(path: Path, fmt: str) -> pa.Table:
    if fmt == "npz":
        z = np.load(path, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise fail(path, "not an .npz archive: expected a zip of 1-D columns, found "
                       "a single array (use fmt='npy')", field="fmt", value=fmt)
        with z:
            arrays = {k: np.asarray(z[k]) for k in z.files}
        return pa.table({k: _numpy_column(a, k, path) for k, a in arrays.items()
                         if a.ndim == 1})
    arr = np.load(path, mmap_mode="r", allow_pickle=False)
    if not isinstance(arr, np.ndarray) or arr.ndim != 2:
        raise fail(path, f"expected a 2-D array (rows = edges), found shape "
                   f"{getattr(arr, 'shape', None)}")
    return pa.table({f"f{k}": _numpy_column(np.ascontiguousarray(arr[:, k]), f"column {k}",
                                            path) for k in range(arr.shape[1])})


def _numpy_column(a: np.ndarray, name: str, path: Path) -> pa.Array:
    if a.dtype.kind not in "iufUSb":
        raise fail(path, f"array {name!r}: expected integers, floats or strings, found dtype "
                   f"{a.dtype}", field=name)
    return pa.array(a)


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


def _no_nulls(col: pa.ChunkedArray, path: Path, what: str, line_of: LineOf) -> None:
    if col.null_count:
        row = int(np.flatnonzero(column_to_numpy(col.is_null()))[0])
        raise fail(path, f"missing value in row {row + 1}", line=line_of(row), field=what)


def read_edgelist(path: PathLike, *, src: str | int = "src", dst: str | int = "dst",
                  etype: str | int | None = None, weight: str | int | None = None,
                  features: Sequence[str | int] = (), fmt: str | None = None,
                  delimiter: str | None = None, header: bool | None = None,
                  comment: str | None = "#", relabel: bool = False,
                  num_nodes: int | dict[str, int] | None = None, ids: str = "auto",
                  sparse_ids: str = "warn") -> Graph:
    """Read an edge list (CSV/TSV/Parquet/NPY/NPZ) into a :class:`Graph`.

    Args:
        path: The file; the format follows the suffix unless ``fmt`` is given.
        src: Source column: a name, or a position (headerless text or ``.npy``: 0).  With
            the defaults, a file with neither a ``src`` nor a ``dst`` column takes its
            first two columns.
        dst: Destination column.
        etype: Edge type column.  A value ``"a:rel:b"`` is a canonical type between node
            types ``a`` and ``b``; any other value ``rel`` is ``("_N", rel, "_N")``.
        weight: Weight column, stored as edge feature ``"weight"``.
        features: Other columns, each stored as an edge feature of its name.
        fmt: ``"csv"``, ``"parquet"``, ``"npy"`` or ``"npz"``; default from the suffix.
        delimiter: CSV delimiter; default from the suffix (``.csv``: comma, ``.tsv``: tab)
            or sniffed from the first data line (tab, comma, semicolon, space).
        header: Whether text files have a header row; without one, columns are 0, 1, ...
            None (default): a first line (after comments) of numbers only is data, any
            other first line is a header.
        comment: Leading lines starting with this are skipped (text files).
        relabel: Map integer IDs to dense IDs too (strings are always mapped).  Without
            it, a file whose IDs leave more than a tenth of ``0..max`` unused logs a
            warning naming how many nodes would be isolated.
        num_nodes: Node count (or per-type counts) for unrelabelled integer IDs.  Without
            it, the count is the largest ID + 1, and an ID space of more than
            ``max(2**20, 64 x edges)`` nodes is refused (pass ``relabel=True``, or the count).
        ids: ``"auto"``: integer columns give integer IDs, and a text column in which no
            token is a number gives string IDs (logged at INFO); a column mixing the two
            is an error naming its first bad row.  ``"int"``: integers only.  ``"str"``:
            every ID is read as a string (and mapped).  Typed files keep their types:
            floats must be exact integers, and uint64 IDs >= 2**63 need ``relabel=True``.
        sparse_ids: What an unrelabelled integer ID space (no ``num_nodes``) in which
            most IDs (more than half of ``0..max``) appear in no edge does: ``"warn"``
            (default; logged, as any share above a tenth) or ``"refuse"``, a
            ValidationError naming the share (``graphshard partition`` refuses: partitioned
            as they are, those IDs are isolated nodes that fill the parts).

    Returns:
        The graph; after mapping, node feature ``"node_id"`` holds the original IDs.
        Edges are as listed: reverse edges, self loops and duplicates are handled by
        :func:`~graphshard.io.apply_edge_policy` (``read_graph``'s ``add_reverse``,
        ``self_loops`` and ``duplicates`` options).

    Raises:
        FormatError: an unreadable file, a missing column or value, an ID that is not an
            integer in an integer column or does not fit in 64 bits, or an ID space far
            larger than the edges (naming file, line or row, and column).
        ValidationError: a bad ``fmt``, ``ids`` or ``sparse_ids`` choice, or (``sparse_ids=
            "refuse"``) an ID space most of which appears in no edge.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "e.csv"
        >>> _ = p.write_text("src,dst,w\\nalice,bob,0.5\\nbob,carol,1.5\\n")
        >>> g = read_edgelist(p, weight="w")
        >>> g.edges()[1].tolist(), node_id_strings(g.ndata["node_id"])
        ([1, 2], ['alice', 'bob', 'carol'])
        >>> q = p.with_name("snap.edgelist")  # SNAP: comments, tabs, no header
        >>> _ = q.write_text("# Nodes: 3 Edges: 2\\n0\\t1\\n1\\t2\\n")
        >>> read_edgelist(q).edges()[1].tolist()
        [1, 2]
    """
    path = Path(path)
    if not path.is_file():
        raise fail(path, "edge list file does not exist")
    if ids not in ID_MODES:
        raise ValidationError(f"ids {ids!r} is not one of {list(ID_MODES)}", field="ids",
                              value=ids)
    check_choice(sparse_ids, ("warn", "refuse"), "sparse_ids", where=str(path))
    fmt = _format(path, fmt)
    text = None
    if fmt == "csv":
        skip = _skip_comments(path, comment)
        delimiter = delimiter or _TEXT.get(_text_suffix(path)) or _sniff_delimiter(path)
        first = _first_line(path, skip, delimiter)
        if header is None:
            header = not all(re.fullmatch(NUMBER_TOKEN, tok) for tok in first) or not first
            log.info("%s: %s", path, "first line is a header" if header else
                     "no header (the first line is numbers)")
        if header:
            src, dst = _default_columns(first, src, dst, path)
        text = _Text(path, skip, header)
    if fmt == "npy" or header is False:
        src = 0 if src == "src" else src
        dst = 1 if dst == "dst" else dst
    tab = _load_table(path, fmt, delimiter, text, (src, dst), ids)
    if fmt in ("parquet", "npz"):
        src, dst = _default_columns(tab.column_names, src, dst, path)
    line_of: LineOf = text.line_of if text is not None else (lambda row: None)
    wanted = {"src": src, "dst": dst}
    if etype is not None:
        wanted["etype"] = etype
    if weight is not None:
        wanted["weight"] = weight
    wanted.update({str(k): k for k in features})
    found = {name: _column(tab, key, path, name) for name, key in wanted.items()}
    for name, col in found.items():
        _no_nulls(col, path, name, line_of)
    cols = {k: parse_ids(found.pop(k), path=path, field=k, line_of=line_of,
                         text=text is not None, mode=ids, relabel=relabel)
            for k in ("src", "dst")}
    types = None
    if etype is not None:
        try:
            types = pc.cast(found.pop("etype"), pa.string()).combine_chunks()
        except pa.ArrowException as exc:
            raise fail(path, f"edge types are not text ({exc})", field="etype") from exc
        types = types.dictionary_encode()
    for k, c in found.items():
        if not (pa.types.is_integer(c.type) or pa.types.is_floating(c.type) or
                pa.types.is_boolean(c.type)):
            raise fail(path, f"column holds {c.type}, expected numbers for an edge feature",
                       field=k, value=str(c.type))
    feats: dict[str, Any] = {k: column_to_numpy(c) for k, c in found.items()}
    try:
        return _build(path, cols, types, feats, relabel, num_nodes, line_of,
                      refuse_sparse=sparse_ids == "refuse")
    except pa.ArrowException as exc:  # e.g. IDs that are not UTF-8 text
        raise fail(path, f"bad node IDs ({exc})", field="src/dst") from exc


def _text_suffix(path: Path) -> str:
    """The suffix that names a text file's kind, looking through ``.gz``/``.bz2``."""
    suffixes = [s.lower() for s in path.suffixes if s.lower() not in (".gz", ".bz2")]
    return suffixes[-1] if suffixes else ""


def _first_line(path: Path, skip: int, delimiter: str) -> list[str]:
    """The fields of the first non-blank line after ``skip`` lines (empty if none)."""
    with open_text(path) as handle:
        for number, raw in enumerate(handle):
            line = raw.decode("utf-8", errors="replace").strip()
            if number >= skip and line:
                return [f.strip() for f in line.split(delimiter)]
    return []


def _default_columns(names: Sequence[str], src: str | int, dst: str | int, path: Path
                     ) -> tuple[str | int, str | int]:
    """``src``/``dst`` as given, or the first two columns when both are left at their
    defaults and the file has neither a ``src`` nor a ``dst`` column (``id_1,id_2``)."""
    if (src, dst) != ("src", "dst") or "src" in names or "dst" in names or len(names) < 2:
        return src, dst
    log.info("%s: no 'src'/'dst' columns: columns %r and %r are the source and the "
             "destination", path, names[0], names[1])
    return 0, 1


def _int_bounds(path: Path, cols: dict[str, IdColumn], line_of: LineOf) -> int:
    """Largest ID + 1 over both integer columns; refuses negative IDs naming the row."""
    top = 0
    for k in ("src", "dst"):
        v = cols[k].values
        if len(v):
            lo = int(v.argmin())
            if v[lo] < 0:
                raise fail(path, f"row {lo + 1}: negative node ID {int(v[lo])}; pass "
                           "relabel=True (CLI: --relabel) to map the IDs to 0..n-1",
                           line=line_of(lo), field=k,
                           value=int(v[lo]))
            top = max(top, int(v.max()) + 1)
    return top


def _check_space(path: Path, cols: dict[str, IdColumn], top: int, num_edges: int,
                 line_of: LineOf, ntype: str | None = None) -> None:
    for k in ("src", "dst"):
        v = cols[k].values
        if len(v) and int(v.max()) + 1 == top:
            return check_id_space(path, k, top, num_edges, int(v.argmax()), line_of, ntype)
    check_id_space(path, "src/dst", top, num_edges, None, line_of, ntype)


#: Warn when more than this share of an unrelabelled ID space (and at least
#: :data:`_ISOLATED_MIN` nodes) appears in no edge.
_ISOLATED_SHARE = 0.1
_ISOLATED_MIN = 10
#: ``sparse_ids="refuse"`` refuses an ID space more than this share of which is in no edge.
_REFUSED_SHARE = 0.5


def _warn_isolated(path: Path, s: np.ndarray, d: np.ndarray, top: int, refuse: bool) -> None:
    """Log a warning when IDs ``0..top-1`` leave many nodes without an edge (a sparse ID
    space read without ``relabel``: SNAP's CA-CondMat gives 85k isolated of 108k); with
    ``refuse``, raise when they are most of the nodes."""
    used = np.zeros(top, dtype=bool)
    used[s] = True
    used[d] = True
    isolated = top - int(np.count_nonzero(used))
    if refuse and isolated >= _ISOLATED_MIN and isolated > _REFUSED_SHARE * top:
        raise ValidationError(
            f"{path}: node IDs run to {top - 1}, but {isolated} of the {top} nodes "
            f"({100 * isolated / top:.0f}%) appear in no edge: partitioned as they are, those "
            "IDs are isolated nodes that fill the parts (balancing nodes alone can then put "
            "every edge in one part, for an edge cut of 0); relabel=True (CLI: --relabel) "
            "maps the IDs that appear to 0..n-1 (originals kept as node feature 'node_id'), "
            "relabel=False (CLI: --no-relabel) keeps the IDs as they are", path=str(path),
            field="relabel", value=isolated / top)
    if isolated >= _ISOLATED_MIN and isolated > _ISOLATED_SHARE * top:
        log.warning("%s: node IDs run to %d, but %d of the %d nodes (%.0f%%) appear in no "
                    "edge and would be isolated; relabel=True (CLI: --relabel) maps the IDs "
                    "that appear to 0..n-1 (originals kept as node feature 'node_id')",
                    path, top - 1, isolated, top, 100 * isolated / top)


def _build(path: Path, cols: dict[str, IdColumn], types: pa.DictionaryArray | None,
           feats: dict[str, Any], relabel: bool, num_nodes: int | dict[str, int] | None,
           line_of: LineOf, *, refuse_sparse: bool = False) -> Graph:
    ints = all(cols[k].kind == "int" for k in ("src", "dst")) and not relabel
    s = d = np.zeros(0, np.int64)
    if ints:
        s, d = cols["src"].values, cols["dst"].values
        top = _int_bounds(path, cols, line_of)
        if types is None and not isinstance(num_nodes, dict):  # fast path: one pass each
            if num_nodes is None:
                _check_space(path, cols, top, len(s), line_of)
                _warn_isolated(path, s, d, top, refuse_sparse)
            n = top if num_nodes is None else int(num_nodes)
            if top > n:
                raise fail(path, f"node ID {top - 1} >= num_nodes={n}", field="src/dst")
            g = Graph({DEFAULT_ETYPE: (s, d)}, {DEFAULT_NTYPE: n})
            for name, col in feats.items():
                g.edata[name] = col
            return g
    groups: dict[EdgeType, int | None]
    if types is None:
        groups = {(DEFAULT_NTYPE, "_E", DEFAULT_NTYPE): None}
        codes = None
    else:
        names = types.dictionary.to_pylist()
        codes = types.indices.to_numpy(zero_copy_only=False)
        groups = {}
        for i, name in enumerate(names):
            parts = name.split(":")
            et = (parts[0], parts[1], parts[2]) if len(parts) == 3 else \
                (DEFAULT_NTYPE, name, DEFAULT_NTYPE)
            groups[et] = i
    ntypes = list(dict.fromkeys(t for et in groups for t in (et[0], et[2])))
    sel = {et: (None if i is None else np.flatnonzero(codes == i)) for et, i in groups.items()}
    arrs = {} if ints else dict(zip(("src", "dst"), unify([cols["src"], cols["dst"]], path,
                                                           "src/dst"), strict=True))

    def pick(k: str, rows: np.ndarray | None) -> pa.Array:
        return arrs[k] if rows is None else arrs[k].take(pa.array(rows))

    uniq: dict[str, pa.Array] = {}
    if not ints:  # dense IDs per node type, in sorted order of the original IDs (in C++)
        for nt in ntypes:
            parts = [pick("src", sel[et]) for et in groups if et[0] == nt] + \
                    [pick("dst", sel[et]) for et in groups if et[2] == nt]
            u = pc.unique(pa.chunked_array(parts).combine_chunks())
            uniq[nt] = u.take(pc.sort_indices(u))
    data: dict[EdgeTypeLike, tuple[Any, ...]] = {}
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
    if ints:  # types whose count comes from the largest ID: bound it by the edges
        for nt in ntypes:
            if nn is None or nt not in nn:
                ends = [e[k] for et, e in data.items() for k in (0, 1) if et[2 * k] == nt]
                top = max((int(e.max()) + 1 for e in ends if len(e)), default=0)
                check_id_space(path, "src/dst", top, len(s), None, line_of, nt)
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

