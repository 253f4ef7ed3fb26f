"""PaddlePaddle PGL / Graph4Rec tab-separated graphs.

Edge files, one set per edge type (Graph4Rec's ``etype2files: "u2buy2i:a.txt,..."``), hold
``src \\t dst [\\t weight]`` lines.  The edge type name ``u2buy2i`` means source type ``u``
and destination type ``i``; the relation keeps the whole name (``("u", "u2buy2i", "i")``),
so PGL metapaths such as ``"u2buy2i-i2buy2u"`` work unchanged.  Node files
(``ntype2files: "u:nodes.txt,..."``) hold ``type \\t id [\\t feature ...]`` lines, where a
feature is ``name v1 v2 ...`` (PGL's GPU engine) or ``name slot:value,slot:value``
(Graph4Rec's slot features).  Node IDs are global in PGL; here each node type gets dense IDs
in sorted order of its original IDs, which are kept as node feature ``"node_id"``.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..errors import ValidationError
from ..graph import DEFAULT_NTYPE, Graph, heterograph
from ..ragged import Ragged
from ..storage.files import check_path_name
from ..typing import EdgeType
from ._common import PathLike, column_to_numpy, fail, id_column
from ._edge_ids import INT_TOKEN, NUMBER_TOKEN, IdColumn, parse_ids, text_line, unify

__all__ = ["parse_pgl_etype", "read_pgl"]

FileMap = str | Mapping[str, PathLike | Sequence[PathLike]]


def parse_pgl_etype(name: str) -> EdgeType:
    """Canonical type of a PGL edge type name: ``"u2buy2i"`` -> ``("u", "u2buy2i", "i")``.

    The relation keeps PGL's whole name, so PGL's metapath strings (``"u2buy2i-i2buy2u"``,
    ``"u2i-i2u"``) name the edge types as they are.  ``"u2i"`` and ``"u2buy2i"`` give the node
    types around the ``2``s; names without one are relations of the default node type.

    Example:
        >>> parse_pgl_etype("u2click2i"), parse_pgl_etype("u2i"), parse_pgl_etype("cites")
        (('u', 'u2click2i', 'i'), ('u', 'u2i', 'i'), ('_N', 'cites', '_N'))
    """
    parts = name.split("2")
    if len(parts) in (2, 3) and all(parts):
        return parts[0], name, parts[-1]
    return DEFAULT_NTYPE, name, DEFAULT_NTYPE


def _inverse_etype(et: EdgeType) -> EdgeType:
    """The reversed type that PGL's ``symmetry: True`` adds, named as PGL names it.

    ``"u2buy2i"`` -> ``"i2buy2u"``, ``"u2i"`` -> ``"i2u"``; a name that reads the same both
    ways (``"u2u"``, ``"u2f2u"``) or has no ``2`` is its own inverse (the reversed edges join
    the type).

    Example:
        >>> _inverse_etype(("u", "u2buy2i", "i")), _inverse_etype(("u", "u2i", "i"))
        (('i', 'i2buy2u', 'u'), ('i', 'i2u', 'u'))
    """
    s, name, d = et
    parts = name.split("2")
    if len(parts) in (2, 3) and all(parts):
        return d, "2".join(parts[::-1]), s
    return d, name, s


def _file_map(spec: FileMap | PathLike | Sequence[PathLike], what: str) -> dict[str, list[Path]]:
    if isinstance(spec, str) and ":" in spec and not Path(spec).exists():
        pairs = [item.split(":", 1) for item in spec.split(",") if item.strip()]
        if not all(len(p) == 2 for p in pairs):
            raise fail(None, f"{what}: expected 'type:path,type:path', got {spec!r}", field=what)
        listed: dict[str, list[PathLike]] = {}
        for k, v in pairs:
            listed.setdefault(k.strip(), []).append(v.strip())
        spec = listed
    mapping = spec if isinstance(spec, Mapping) else {"*": spec}
    out: dict[str, list[Path]] = {}
    for key, given in mapping.items():
        paths = [given] if isinstance(given, (str, os.PathLike)) else list(given)
        files: list[Path] = []
        for p in map(Path, paths):
            if p.is_dir():
                files += sorted(f for f in p.iterdir() if f.is_file() and
                                not f.name.startswith("."))
            elif p.is_file():
                files.append(p)
            else:
                raise fail(p, "file does not exist", field=f"{what}[{key!r}]")
        out[key] = files
    return out


def _read_edges(file: Path) -> tuple[IdColumn, IdColumn, np.ndarray | None]:
    """One edge file: both ID columns parsed (integers, or strings when a whole column is
    non-numeric) and the weights (float32) if there is a third column."""
    if file.stat().st_size == 0:
        empty = IdColumn("int", np.zeros(0, np.int64))
        return empty, empty, None
    read = pacsv.ReadOptions(autogenerate_column_names=True)
    parse = pacsv.ParseOptions(delimiter="\t")
    try:  # IDs as text: parse_ids judges every token (and keeps uint64 exact)
        tab = pacsv.read_csv(file, read_options=read, parse_options=parse,
                             convert_options=pacsv.ConvertOptions(
                                 column_types={"f0": pa.string(), "f1": pa.string()}))
    except pa.ArrowException as exc:
        raise fail(file, f"unreadable edge file ({exc})".replace("\n", " ")) from exc
    if tab.num_columns not in (2, 3):
        raise fail(file, f"expected 'src\\tdst[\\tweight]', found {tab.num_columns} columns",
                   line=1)
    cols = [tab.column(k).combine_chunks() for k in range(tab.num_columns)]
    line_of = functools.partial(text_line, file)
    for k, (c, name) in enumerate(zip(cols, ("src", "dst", "weight"), strict=False)):
        if c.null_count:
            row = int(np.flatnonzero(column_to_numpy(c.is_null()))[0])
            raise fail(file, "missing value", line=line_of(row), field=name)
        if k == 2 and not (pa.types.is_floating(c.type) or pa.types.is_integer(c.type)):
            raise fail(file, f"weight column holds {c.type}, expected numbers", field="weight")
    ends = tuple(parse_ids(c, path=file, field=name, line_of=line_of, text=True, mode="auto",
                           relabel=True, has_ids_option=False)
                 for c, name in zip(cols, ("src", "dst"), strict=False))
    weight = column_to_numpy(cols[2]).astype(np.float32) if len(cols) == 3 else None
    return ends[0], ends[1], weight


def _parse_feature(field: str, feats: dict[str, dict[int, list[str]]], row: int, file: Path,
                   line: int) -> None:
    name, _, payload = field.strip().partition(" ")
    if not name:
        return
    items = payload.split(",") if ":" in payload else [payload]
    for item in items:
        key, sep, vals = item.partition(":") if ":" in payload else ("", "", item)
        fname = f"{name}_{key.strip()}" if sep else name
        if sep and not key.strip():
            raise fail(file, f"slot feature {item!r} has no slot name", line=line, field=name)
        try:  # feature names become keys and file names
            check_path_name(fname, field="feature name")
        except ValidationError as exc:
            raise fail(file, str(exc), line=line, field=fname, value=fname) from exc
        feats.setdefault(fname, {}).setdefault(row, []).extend(vals.split())


def _values(flat: list[str], lengths: np.ndarray, name: str,
            where: Callable[[int], tuple[Path, int]]) -> np.ndarray | None:
    """Feature tokens as int64 (uint64 when some are >= 2**63), float32, or None for text
    (no token a number); a feature mixing numbers and text, or integers beyond 64 bits, is a
    FormatError naming the node's line."""
    if not flat:
        return np.zeros(0, np.int64)
    tokens = pa.array(flat, pa.string())
    is_int = pc.match_substring_regex(tokens, INT_TOKEN)
    numeric = pc.match_substring_regex(tokens, NUMBER_TOKEN)
    if not pc.any(numeric).as_py():
        return None
    row_of = np.repeat(np.arange(len(lengths)), lengths)
    if not pc.all(numeric).as_py():
        k = int(np.flatnonzero(~column_to_numpy(numeric))[0])
        file, line = where(int(row_of[k]))
        raise fail(file, f"feature value {flat[k]!r} is not a number, but the feature holds "
                   "numbers", line=line, field=name, value=flat[k])
    if not pc.all(is_int).as_py():
        return column_to_numpy(pc.cast(tokens, pa.float64())).astype(np.float32)
    for dtype in (pa.int64(), pa.uint64()):
        try:
            return column_to_numpy(pc.cast(pc.utf8_trim_whitespace(tokens), dtype))
        except pa.ArrowInvalid:
            continue
    bad = [k for k, t in enumerate(flat) if not 0 <= int(t) < (1 << 64)]
    k = bad[0] if bad else 0
    file, line = where(int(row_of[k]))
    raise fail(file, f"feature value {flat[k]} does not fit in 64 bits"
               + (" (and others are negative)" if not bad else ""), line=line, field=name,
               value=flat[k])


def _column(rows: dict[int, list[str]], n: int, name: str,
            where: Callable[[int], tuple[Path, int]]) -> Any:
    flat = [v for r in range(n) for v in rows.get(r, [])]
    lengths = np.array([len(rows.get(r, [])) for r in range(n)], np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    values = _values(flat, lengths, name, where)
    if values is None:  # text: one UTF-8 string per node, values joined by spaces
        texts = [" ".join(rows.get(r, [])) for r in range(n)]
        if not texts:
            return Ragged(np.zeros(0, np.uint8), offsets)
        return Ragged.from_rows([t.encode() for t in texts])  # bytes: str lengths are not UTF-8
    if n and lengths[0] > 0 and (lengths == lengths[0]).all():
        return values.reshape(n, int(lengths[0]))
    return Ragged(values, offsets)


def _line_in(extra: list[tuple[Path, int, list[str]]], start: int, row: int) -> int:
    """The line of ``row`` of the run of ``extra`` (file, line, fields) starting at ``start``."""
    return extra[start + row][1]


def _read_nodes(files: dict[str, list[Path]], ntypes: set[str]
                ) -> dict[str, tuple[pa.Array, dict[str, Any]]]:
    """Per node type: sorted unique IDs (integers, or strings) and their features."""
    raw: dict[str, tuple[list[str], list[tuple[Path, int, list[str]]]]] = {}
    for key, paths in files.items():
        for file in paths:
            with open(file, "rb") as handle:
                for lineno, blob in enumerate(handle, 1):
                    try:
                        text = blob.decode("utf-8")
                    except UnicodeDecodeError as exc:
                        raise fail(file, f"line is not UTF-8 text ({exc})", line=lineno) from exc
                    if not text.strip():
                        continue
                    fields = text.rstrip("\r\n").split("\t")
                    if len(fields) < 2 or not fields[1].strip():
                        raise fail(file, "expected 'type\\tid[\\tfeatures]'", line=lineno,
                                   field="id")
                    t = fields[0].strip()
                    if (key != "*" and t != key) or (key == "*" and ntypes and t not in ntypes):
                        continue
                    ids, extra = raw.setdefault(t, ([], []))
                    ids.append(fields[1].strip())
                    extra.append((file, lineno, fields[2:]))
    out = {}
    for t, (ids, extra) in raw.items():
        srcs = [e[0] for e in extra]
        cuts = [0] + [k for k in range(1, len(srcs)) if srcs[k] is not srcs[k - 1]] + \
            [len(srcs)]
        cols = [parse_ids(pa.array(ids[a:b], pa.string()), path=srcs[a], field="id",
                          text=True, mode="auto", relabel=True, has_ids_option=False,
                          line_of=functools.partial(_line_in, extra, a))
                for a, b in itertools.pairwise(cuts)]
        arr = pa.chunked_array(unify(cols, srcs[0], "id")).combine_chunks()
        uniq, first = np.unique(arr.to_numpy(zero_copy_only=False), return_index=True)
        feats: dict[str, dict[int, list]] = {}
        for row, k in enumerate(first.tolist()):
            file, lineno, fields = extra[k]
            for f in fields:
                _parse_feature(f, feats, row, file, lineno)

        def where(row: int, first: np.ndarray = first, extra: list = extra) -> tuple[Path, int]:
            return extra[int(first[row])][0], extra[int(first[row])][1]

        out[t] = (pa.array(uniq, arr.type),
                  {n: _column(r, len(uniq), n, where) for n, r in feats.items()})
    return out


def read_pgl(edge_files: FileMap, node_files: FileMap | PathLike | None = None,
             symmetry: bool = False) -> Graph:
    """Read a PGL / Graph4Rec graph.

    Args:
        edge_files: ``{etype_name: path(s)}`` or Graph4Rec's ``"u2buy2i:a.txt,u2click2i:b.txt"``;
            a folder stands for all files in it.
        node_files: ``{ntype: path(s)}``, ``"u:nodes.txt,i:nodes.txt"``, or path(s) holding
            all types.  Without node files, each type's nodes are the IDs its edges use.
        symmetry: Also add every edge reversed, as Graph4Rec's ``symmetry: True``: the
            edges of ``u2buy2i`` reversed are type ``("i", "i2buy2u", "u")`` (PGL's inverse
            name); for a name that is its own inverse (``u2u``) they join the same type.

    Returns:
        The graph with node feature ``"node_id"`` (original IDs), edge feature ``"weight"``
        when edge files have a third column, and node slot features.

    Raises:
        FormatError: a missing file, a malformed line, or an edge whose endpoint is not a
            node of its type in the node files (naming file, line and field).

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "e.txt").write_text("10\\t7\\n11\\t7\\n")
        >>> g = read_pgl({"u2buy2i": d / "e.txt"}, symmetry=True)
        >>> g.canonical_etypes, g.nodes["u"].data["node_id"].tolist()
        ([('u', 'u2buy2i', 'i'), ('i', 'i2buy2u', 'u')], [10, 11])
    """
    emap = _file_map(edge_files, "edge_files")
    raw: dict[EdgeType, list[tuple[Path, Any, Any, np.ndarray | None]]] = {}
    for name, paths in emap.items():
        et = parse_pgl_etype(name)
        raw.setdefault(et, []).extend((f, *_read_edges(f)) for f in paths)
    ntypes = list(dict.fromkeys(t for et in raw for t in (et[0], et[2])))
    nodes = _read_nodes(_file_map(node_files, "node_files"), set(ntypes)) \
        if node_files is not None else {}
    uniq: dict[str, pa.Array] = {}
    for t in ntypes:
        if t in nodes:
            uniq[t] = nodes[t][0]
            continue
        ends = [end for et, parts in raw.items() for p in parts
                for end, tt in ((p[1], et[0]), (p[2], et[2])) if tt == t]
        files = [p[0] for et, parts in raw.items() for p in parts for tt in (et[0], et[2])
                 if tt == t]
        ids = pc.unique(pa.chunked_array(unify(ends, files[0], "src/dst")).combine_chunks())
        uniq[t] = ids.take(pc.sort_indices(ids))
    for et, parts in raw.items():  # an edge file's IDs take its node types' ID type
        for k, part in enumerate(parts):
            file, s, d, w = part
            parts[k] = (file, _as_arrow(s, uniq[et[0]].type), _as_arrow(d, uniq[et[2]].type), w)
    data: dict[EdgeType, list] = {}
    weights: dict[EdgeType, list] = {}
    for et, parts in raw.items():
        for file, s, d, w in parts:
            ends = [_map(file, s, uniq, et[0], "src"), _map(file, d, uniq, et[2], "dst")]
            fw = w if w is not None else np.ones(len(ends[0]), np.float32)
            for e, (a, b) in ((et, ends), (_inverse_etype(et), ends[::-1])):
                if e != et and not symmetry:
                    continue
                data.setdefault(e, [[], []])
                data[e][0].append(a)
                data[e][1].append(b)
                weights.setdefault(e, []).append((fw, w is not None))
    g = heterograph({e: (np.concatenate(s), np.concatenate(d)) for e, (s, d) in data.items()},
                    num_nodes_dict={t: len(u) for t, u in uniq.items()})
    for e, ws in weights.items():
        if any(has for _, has in ws):
            g.edges[e].data["weight"] = np.concatenate([w for w, _ in ws])
    for t, u in uniq.items():
        g.nodes[t].data["node_id"] = id_column(u)
        for name, col in (nodes[t][1].items() if t in nodes else ()):
            g.nodes[t].data[name] = col
    return g


def _as_arrow(col: IdColumn, like: pa.DataType) -> pa.Array:
    """Edge-file IDs as Arrow, as text when the node type's IDs are text."""
    if col.kind == "str" or not (pa.types.is_string(like) or pa.types.is_large_string(like)):
        return pa.array(col.values) if col.kind != "str" else col.values
    return pa.array(col.values).cast(like)


def _map(file: Path, ids: pa.Array, uniqs: dict[str, pa.Array], ntype: str, what: str
         ) -> np.ndarray:
    uniq = uniqs[ntype]
    try:
        ids = ids.cast(uniq.type) if ids.type != uniq.type else ids
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise fail(file, f"{what} IDs are {ids.type} but node IDs are {uniq.type}",
                   field=what) from exc
    pos = pc.index_in(ids, value_set=uniq)
    if pos.null_count:
        row = int(np.flatnonzero(column_to_numpy(pos.is_null()))[0])
        raise fail(file, f"{what} ID {ids[row].as_py()!r} is not a node of type {ntype!r}",
                   line=row + 1, field=what, value=ids[row].as_py())
    return column_to_numpy(pos).astype(np.int64)
