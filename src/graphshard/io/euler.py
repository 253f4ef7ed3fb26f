"""Alibaba Euler graph JSON: Euler 1 block lines (+ meta file) and Euler 2's graph.json.

Euler 1 (seed "data preparation"): each line is one node block ``{"node_id", "node_type",
"node_weight", "neighbor": {etype: {dst: weight}}, "uint64_feature": {slot: [..]},
"float_feature": {slot: [..]}, "binary_feature": {slot: "..."}, "edge": [{"src_id",
"dst_id", "edge_type", "weight", <the three feature maps>}]}``; the meta file gives the
number of types and of feature slots.  Partitioned data is ``name_<idx>`` files holding the
nodes with ``node_id % num_partitions == idx``.  Euler 2 (``tools/test_data``) is one
document ``{"nodes": [{"id", "type", "weight", "features": [{"name", "type":
"sparse"|"dense"|"binary", "value"}]}], "edges": [{"src", "dst", "type", "weight",
"features"}]}``.

Mapping to a :class:`~graphshard.graph.Graph`: node type ``t`` becomes node type ``str(t)``
and its nodes get per-type IDs in ascending ``node_id`` order (the Euler ID is kept as node
feature ``"node_id"``, uint64); edges of Euler type ``e`` from type ``s`` to ``d`` form the
canonical type ``(str(s), str(e), str(d))``, ordered by source then by their order in the
block.  Weights become the feature ``"weight"``; uint64 and binary slots become Ragged
features (``uint64_<slot>``, ``binary_<slot>``; binary as UTF-8 bytes), float slots dense
``(n, d)`` float32 ``float_<slot>`` when every row has the same length, else Ragged.  Files
written by :func:`write_euler` carry a ``"graphshard"`` key in their meta that restores the
original names, dtypes and shapes exactly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .._util.progress import progress
from ..errors import ValidationError
from ..graph import Graph, heterograph
from ..ragged import Ragged
from ..typing import EdgeTypeLike
from ._common import PathLike, fail
from ._euler_meta import META_NAMES, load_meta
from ._euler_parse import (
    _EDGE_COLS,
    KINDS,
    MAX_META_COUNT,
    Side,
    concat_sides,
    infer_slots,
    parse_euler2,
    parse_piece,
    row_to_line,
)
from ._euler_write import write_euler

__all__ = ["read_euler", "write_euler"]



def data_files(path: PathLike | list[PathLike], *, accept: Callable[[Path], bool] | None = None,
               none_found: str = "no Euler data files found") -> list[Path]:
    """The Euler data files ``path`` names: a list of files, one file, or a partition folder's
    files (``accept`` picks them; default: every file but hidden ones and the meta), in
    partition order (``name_<idx>``)."""
    if isinstance(path, (list, tuple)):
        files = [Path(p) for p in path]
    elif Path(path).is_dir():
        pick = accept or (lambda p: p.is_file() and not p.name.startswith(".")
                          and p.name not in META_NAMES)
        files = sorted((p for p in Path(path).iterdir() if pick(p)), key=part_key)
        if not files:
            raise fail(path, none_found)
    else:
        files = [Path(path)]
    for f in files:
        if not f.is_file():
            raise fail(f, "Euler data file does not exist")
    if not files:
        raise fail(str(path), none_found)
    return files


def part_key(p: Path) -> tuple[str, int, str]:
    stem, _, idx = p.stem.rpartition("_")
    return (stem, int(idx), p.name) if idx.isdigit() else (p.stem, -1, p.name)


def _slots(meta: dict | None, first: Path) -> dict[str, int]:
    if meta is None or "node_type_num" not in meta:
        return infer_slots(first)
    return {f"{s}_{k}": int(meta.get(f"{s}_{k}_feature_num", 0))
            for s in ("node", "edge") for k in KINDS}


def _is_euler2(path: Path) -> bool:
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip()
    if not head.startswith(b"{"):
        return False
    first = head.split(b"\n", 1)[0].strip()
    return first == b"{" or first.startswith(b'{"nodes"') or first.startswith(b'{ "nodes"')


def _read_pieces(path: Path, slots: dict[str, int], piece_bytes: int) -> list[tuple[Side, Side]]:
    """Parse ``path`` in pieces of whole lines, reusing one buffer (no copies of pieces)."""
    out = []
    offset, row, kept = 0, 0, 0
    buf = bytearray(piece_bytes)
    with open(path, "rb") as handle:
        while True:
            n = handle.readinto(memoryview(buf)[kept:])
            total = kept + n
            if total == 0:
                break
            if n == 0 or total < len(buf):  # end of file: the rest is the last piece
                end = total
            else:
                end = buf.rfind(b"\n", 0, total) + 1
                if end == 0:  # one line longer than the buffer: grow it
                    buf.extend(bytes(len(buf)))
                    kept = total
                    continue
            piece = memoryview(buf)[:end]
            nodes, edges = parse_piece(piece, path, offset, row, slots)
            piece.release()
            out.append((nodes, edges))
            offset += end
            row += len(nodes)
            buf[:total - end] = buf[end:total]
            kept = total - end
            if n == 0:
                break
    return out


def read_euler(path: PathLike | list[PathLike], meta: PathLike | dict | None = None, *,
               piece_bytes: int = 32 << 20) -> Graph:
    """Read Euler JSON (1.x block lines or a 2.x ``graph.json``) into a :class:`Graph`.

    Args:
        path: A data file, a list of files, or a folder of partition files
            (``name_<idx>``; the meta file in it is skipped).
        meta: The meta file (path or parsed dict).  Default: ``meta.json``/``meta`` next to
            the data; without one, feature slots are inferred from the first 1000 lines.
        piece_bytes: Bytes parsed at once; memory grows with this, not with the file.

    Returns:
        The graph (see the module docstring for the mapping).

    Raises:
        FormatError: malformed JSON, a missing field, a feature slot of the wrong kind, a
            duplicate node, a neighbour ID that is not a node, or a type beyond the meta
            counts; the message names the file, line and field.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "g.json"
        >>> _ = p.write_text('{"node_id":7,"node_type":0,"node_weight":1.0,"edge":[{"src_id":7,'
        ...                  '"dst_id":9,"edge_type":0,"weight":2.0}]}\\n'
        ...                  '{"node_id":9,"node_type":0,"node_weight":1.0,"edge":[]}\\n')
        >>> g = read_euler(p)
        >>> g.edges()[1].tolist(), g.ndata["node_id"].tolist(), g.edata["weight"].tolist()
        ([1], [7, 9], [2.0])
    """
    files = data_files(path)
    meta_d, meta_name = load_meta(meta, files)
    nodes_parts, edge_parts = [], []
    offset = 0
    slots: dict[str, int] | None = None
    for fi, f in enumerate(progress(files, desc="read euler", unit="file")):
        if _is_euler2(f):
            try:
                doc = json.loads(f.read_bytes())
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise fail(f, f"malformed JSON ({exc})", line=getattr(exc, "lineno", None)
                           ) from None
            pieces = [parse_euler2(doc, f)]
        else:
            slots = slots or _slots(meta_d, f)
            pieces = _read_pieces(f, slots, piece_bytes)
        for nodes, edges in pieces:
            nodes.cols["file"] = np.full(len(nodes), fi, np.int64)
            rows = edges.cols["row"]
            edges.cols["row"] = np.where(rows >= 0, rows + offset, -1)
            offset += len(nodes)
            nodes_parts.append(nodes)
            edge_parts.append(edges)
    nodes = concat_sides(nodes_parts, ("node_id", "node_type", "weight", "line", "file"))
    edges = concat_sides(edge_parts, _EDGE_COLS)
    return _assemble(nodes, edges, meta_d, files, meta_name)


def _where(nodes: Side, files: list[Path], row: int) -> tuple[Path, int | None]:
    """File and line of node ``row`` (lines are found by rescanning: error path only)."""
    path, file_row = files[int(nodes.cols["file"][row])], int(nodes.cols["line"][row])
    return path, (row_to_line(path, file_row) if file_row >= 0 else None)


def _check_types(values: np.ndarray, limit: int | None, what: str, nodes: Side,
                 files: list[Path], rows: np.ndarray | None = None) -> None:
    """Types are numbered densely from 0: below the meta's count, or (without one) below
    :data:`MAX_META_COUNT`, since every number up to the largest becomes a type."""
    bound = MAX_META_COUNT if limit is None else limit
    if values.size == 0 or (values.min() >= 0 and values.max() < bound):
        return
    k = int(np.flatnonzero((values < 0) | (values >= bound))[0])
    r = k if rows is None else int(rows[k])
    p, line = _where(nodes, files, r) if r >= 0 else (files[0], None)
    rule = f"the meta's {what}={limit}" if limit is not None else \
        f"{MAX_META_COUNT} (types are numbered from 0; the most graphshard reads)"
    raise fail(p, f"type {values[k]} is not in 0..{bound - 1}: not below {rule}", line=line,
               field=what.replace("_num", ""), value=int(values[k]))


def _assemble(nodes: Side, edges: Side, meta: dict | None, files: list[Path],
              meta_name: str) -> Graph:
    gsm = (meta or {}).get("graphshard") or {}
    nid = nodes.cols["node_id"].astype(np.uint64)
    ntype = nodes.cols["node_type"].astype(np.int64)
    _check_types(ntype, (meta or {}).get("node_type_num"), "node_type_num", nodes, files)
    by_id = np.argsort(nid, kind="stable")
    sorted_ids = nid[by_id]
    dup = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
    if dup.size:
        p, line = _where(nodes, files, int(by_id[dup[0] + 1]))
        raise fail(p, f"node {sorted_ids[dup[0]]} appears twice", line=line, field="node_id",
                   value=int(sorted_ids[dup[0]]))
    num_nt = int((meta or {}).get("node_type_num", int(ntype.max()) + 1 if ntype.size else 0))
    names = gsm.get("node_types") or [str(t) for t in range(num_nt)]
    perm = np.lexsort((nid, ntype))
    counts = np.bincount(ntype, minlength=len(names))
    starts = np.concatenate([[0], np.cumsum(counts)])
    local = np.empty(len(nid), np.int64)
    local[perm] = np.arange(len(nid)) - starts[ntype[perm]]
    # edges: map Euler IDs to rows, check they are nodes
    src_row, dst_row = _edge_rows(edges, nodes, files, nid, by_id, sorted_ids)
    et = edges.cols["etype"].astype(np.int64)
    _check_types(et, (meta or {}).get("edge_type_num"), "edge_type_num", nodes, files, src_row)
    rels = gsm.get("relations") or [str(e) for e in range(int(et.max()) + 1 if et.size else 0)]
    st, dt = ntype[src_row], ntype[dst_row]
    ntn, nrel = max(len(names), 1), max(len(rels), 1)
    gkey = (st * nrel + et) * ntn + dt
    if gsm.get("edge_types"):
        order = [tuple(x) for x in gsm["edge_types"]]
    else:
        order = [(names[k // ntn // nrel], rels[k // ntn % nrel], names[k % ntn])
                 for k in np.unique(gkey).tolist()]
    eperm = np.lexsort((np.arange(len(gkey)), local[src_row], gkey))
    gsorted = gkey[eperm]
    data: dict[EdgeTypeLike, tuple[Any, Any]] = {}
    eidx: dict[tuple, np.ndarray] = {}
    for cet in order:
        try:
            k = (names.index(cet[0]) * nrel + rels.index(cet[1])) * ntn + names.index(cet[2])
        except ValueError:
            raise fail(files[0], f"edge type {cet} names unknown types", field="graphshard"
                       ) from None
        lo, hi = np.searchsorted(gsorted, [k, k + 1])
        eidx[cet] = eperm[lo:hi]
        data[cet] = (local[src_row[eidx[cet]]], local[dst_row[eidx[cet]]])
    missing = set(np.unique(gkey).tolist()) - {
        (names.index(a) * nrel + rels.index(b)) * ntn + names.index(c) for a, b, c in order}
    if missing:
        raise fail(files[0], "edges of types not listed in the meta's graphshard.edge_types",
                   field="graphshard")
    g = heterograph(data, num_nodes_dict=dict(zip(names, counts.tolist(), strict=False)))
    for t, name in enumerate(names):
        rows = perm[starts[t]:starts[t + 1]]
        frame = g.nodes[name].data
        frame["node_id"] = nid[rows]
        _set_features(frame, nodes, rows, gsm.get("node_features", {}).get(name), "node",
                      gsm.get("node_weight", {}).get(name) if gsm else "float32", meta_name,
                      files)
    for cet, rows in eidx.items():
        _set_features(g.edges[cet].data, edges, rows,
                      gsm.get("edge_features", {}).get(":".join(cet)), "edge",
                      gsm.get("edge_weight", {}).get(":".join(cet)) if gsm else "float32",
                      meta_name, files)
    return g


def _edge_rows(edges: Side, nodes: Side, files: list[Path], nid: np.ndarray,
               by_id: np.ndarray, sorted_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows = []
    top = int(sorted_ids[-1]) + 1 if len(sorted_ids) else 0
    lut = None
    if top <= 4 * len(sorted_ids) + 1024:  # dense-ish IDs: a lookup table beats searchsorted
        lut = np.full(top, -1, np.int64)
        lut[sorted_ids.astype(np.int64)] = by_id
    for key in ("src", "dst"):
        ids = edges.cols[key].astype(np.uint64)
        if lut is not None:
            inside = ids < np.uint64(top)
            row = np.where(inside, lut[np.where(inside, ids, 0).astype(np.int64)], -1) \
                if top else np.full(len(ids), -1, np.int64)
            ok = row >= 0
        else:
            pos = np.minimum(np.searchsorted(sorted_ids, ids), max(len(sorted_ids) - 1, 0))
            ok = (sorted_ids[pos] == ids) if len(sorted_ids) else np.zeros(len(ids), bool)
            row = by_id[pos] if len(sorted_ids) else np.zeros(len(ids), np.int64)
        if not ok.all():
            k = int(np.flatnonzero(~ok)[0])
            _raise_edge(edges, nodes, files, k, key, f"{key} ID {ids[k]} is not a node")
        rows.append(row)
    block = edges.cols["row"]
    bad = np.flatnonzero((block >= 0) & (rows[0] != block))
    if bad.size:
        k = int(bad[0])
        _raise_edge(edges, nodes, files, k, "src",
                    f"src_id {edges.cols['src'][k]} differs from the block's node_id "
                    f"{nid[block[k]]}")
    return rows[0], rows[1]


def _raise_edge(edges: Side, nodes: Side, files: list[Path], k: int, key: str, msg: str) -> None:
    row, pos = int(edges.cols["row"][k]), int(edges.cols["pos"][k])
    if row < 0:
        raise fail(files[0], msg, field=f"edges[{pos}].{key}", value=int(edges.cols[key][k]))
    p, line = _where(nodes, files, row)
    field = f"edge[{pos}].{key}_id" if pos >= 0 else "neighbor"
    raise fail(p, msg, line=line, field=field, value=int(edges.cols[key][k]))


def _narrow(values: np.ndarray, dtype: Any, files: list[Path], field: str) -> np.ndarray:
    """``values.astype(dtype)``, refusing a finite float that the narrower float type turns
    into infinity (1e308 in a float32 feature): a FormatError naming the data file."""
    out = values.astype(dtype)
    if out.dtype.kind == "f" and values.dtype.kind == "f" and out.dtype.itemsize < \
            values.dtype.itemsize:
        bad = np.flatnonzero(np.isinf(out) & np.isfinite(values))
        if bad.size:
            more = f" (one of {len(files)} files)" if len(files) > 1 else ""
            raise fail(files[0], f"value {values[bad[0]]!r} does not fit {out.dtype} "
                       f"(largest {np.finfo(out.dtype).max:.3g}){more}", field=field,
                       value=float(values[bad[0]]))
    return out


def _set_features(frame: Any, side: Side, rows: np.ndarray, spec: list | None, what: str,
                  weight_dtype: str | None, meta_name: str, files: list[Path]) -> None:
    with np.errstate(over="ignore"):  # _narrow reports what overflows
        _set_columns(frame, side, rows, spec, what, weight_dtype, meta_name, files)


def _set_columns(frame: Any, side: Side, rows: np.ndarray, spec: list | None, what: str,
                 weight_dtype: str | None, meta_name: str, files: list[Path]) -> None:
    if weight_dtype:
        frame["weight"] = _narrow(side.cols["weight"][rows], weight_dtype, files,
                                  f"{what} weight")
    if spec is not None:
        for f in spec:
            found = side.feats.get((f["kind"], str(f["slot"])))
            rag = found[0].take(rows) if found is not None else \
                Ragged(np.zeros(0, np.uint8), np.zeros(len(rows) + 1, np.int64))
            try:
                frame[f["name"]] = _shape(rag, f, what, meta_name, files)
            except ValidationError as exc:  # e.g. a spec naming a column twice
                raise fail(meta_name, f"{what} feature {f['name']!r}: {exc}",
                           field="graphshard") from exc
        return
    for (kind, key), (rag, valid) in side.feats.items():
        if not valid[rows].any():
            continue
        sub = rag.take(rows)
        name = f"{kind}_{key}" if key.isdigit() else key
        if kind == "float":
            lens = sub.lengths
            sub = Ragged(_narrow(sub.values, np.float32, files, f"{what} feature {name}"),
                         sub.offsets)
            if len(lens) and lens[0] > 0 and (lens == lens[0]).all():
                frame[name] = sub.values.reshape(len(lens), int(lens[0]))
                continue
        frame[name] = sub


def _shape(rag: Ragged, f: dict, what: str, meta_name: str, files: list[Path]) -> Any:
    dtype = np.dtype(f["dtype"])
    values = _narrow(rag.values, dtype, files, f"{what} feature {f['name']}")
    if f.get("ragged"):
        return Ragged(values, rag.offsets)
    shape = tuple(f.get("shape", []))
    width = int(np.prod(shape)) if shape else 1
    if not (rag.lengths == width).all():
        raise fail(meta_name, f"{what} feature {f['name']!r}: the data has rows of a length "
                   f"other than {width} (its shape in the meta's graphshard key)",
                   field=f["name"])
    return values.reshape((len(rag), *shape))
