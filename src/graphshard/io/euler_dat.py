"""Alibaba Euler 1.0's binary graph data (``.dat``), as its ``json2dat`` tool writes it.

Euler 1.x converts its JSON block lines (:mod:`graphshard.io.euler`) to binary with
``python -m euler.tools -c meta -i graph.json -o graph.dat`` and its graph engine loads the
``.dat`` files of a folder (``name_<idx>.dat``, the nodes with ``node_id % num_partitions ==
idx``).  The layout below is read from alibaba/euler 1.x: ``euler/tools/json2dat.py`` (the
writer) and the engine's reader, ``euler/core/graph_builder.cc`` (``ParseBlock``),
``euler/core/compact_node.cc`` and ``euler/core/compact_edge.cc`` (``DeSerialize``).  All
numbers are little-endian, unpadded: ``i32`` int32, ``u64`` uint64, ``f32`` float32.  A file
is a sequence of blocks, one per node (the node and its out-edges)::

    block:       i32 block_bytes          bytes of the block after this field
                 i32 node_info_bytes      bytes of the node record
                 node record
                 i32 edge_num
                 i32 edge_info_bytes x edge_num
                 edge record x edge_num
    node record: u64 node_id, i32 node_type, f32 node_weight
                 i32 G (edge groups: the meta's edge_type_num)
                 i32 group size x G, f32 group weight sum x G
                 u64 neighbour ID x sum(sizes)      (group 0's, then group 1's, ...)
                 f32 neighbour weight x sum(sizes)
                 features
    edge record: u64 src_id, u64 dst_id, i32 edge_type, f32 weight, features
    features:    for uint64, float, binary in turn: i32 S (the meta's slot count),
                 i32 length x S, then the values of slot 0, 1, ... (u64 / f32 / bytes)

``block_bytes == 8 + 4 * edge_num + node_info_bytes + sum(edge_info_bytes)`` (the engine's
checksum).  The graph is the one :func:`~graphshard.io.read_euler` builds from the same
blocks as JSON: edges come from the edge records, or from the neighbour lists for a block
with no edge records; a slot present in a record is a present (valid) value, as every slot
is in JSON that ``json2dat`` accepts; the group weight sums (the engine's sampling index)
are not read.  ``meta.json`` next to the data (as :func:`~graphshard.io.write_euler`
writes it) restores names, dtypes and shapes; Euler's own counts in it are checked against
every record.
"""

from __future__ import annotations

import json
import mmap
from pathlib import Path
from typing import Any

import numpy as np

from .._util.progress import progress
from ..errors import ValidationError
from ..graph import Graph
from ..ragged import Ragged
from ..storage.files import (
    atomic_write,
    claim_out_dir,
    mark_complete,
    write_json_atomic,
)
from ._common import PathLike, fail
from ._euler_dat import (
    KINDS,
    MAX_META_COUNT,
    VALUE_DTYPE,
    block_bytes,
    decode,
    edge_bytes,
    feature_bytes,
    looks_like_block,
    to_sides,
)
from ._euler_meta import load_meta
from ._euler_parse import _EDGE_COLS, Side, concat_sides
from ._euler_write import _clear_previous, _is_ours, check_num_partitions, prepare_write
from .euler import _assemble, data_files, part_key

__all__ = ["is_euler_dat", "read_euler_dat", "write_euler_dat"]


def _is_dat_name(p: Path) -> bool:
    """Euler's engine loads files named ``<stem>.dat`` (one dot) from a folder."""
    return p.is_file() and p.name.count(".") == 1 and p.name.endswith(".dat") and \
        not p.name.startswith(".")


def is_euler_dat(path: PathLike) -> bool:
    """Whether ``path`` holds Euler binary data: a file whose first bytes start a block
    (``block_bytes`` and ``node_info_bytes`` fitting the file and each other), or a folder
    whose first ``*.dat`` file does.  JSON-lines ``.dat`` files are text and never pass.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "g.dat"
        >>> _ = p.write_text('{"node_id": 1}\\n')
        >>> is_euler_dat(p)
        False
    """
    p = Path(path)
    if p.is_dir():
        files = sorted((f for f in p.iterdir() if _is_dat_name(f)), key=part_key)
        return bool(files) and is_euler_dat(files[0])
    try:
        with open(p, "rb") as handle:
            return looks_like_block(handle.read(8), p.stat().st_size)
    except OSError:
        return False


def _expect(meta: dict | None) -> dict[str, int]:
    """The per-record counts the meta fixes."""
    if not meta or "edge_type_num" not in meta:
        return {}
    out = {"edge_group_num": int(meta["edge_type_num"])}
    for side in ("node", "edge"):
        for kind in KINDS:
            key = f"{side}_{kind}_feature_num"
            if key in meta:
                out[key] = int(meta[key])
    return out


def _read_file(path: Path, expect: dict[str, int]) -> tuple[Side, Side, np.ndarray, np.ndarray]:
    with open(path, "rb") as handle:
        head = handle.read(8)
        size = path.stat().st_size
        if size and not looks_like_block(head, size):
            text = head.lstrip()[:1] in (b"{", b"")
            raise fail(path, "byte 0: not Euler binary data" + (
                " (it holds JSON text: read it with read_euler)" if text else
                f": block_bytes and node_info_bytes {head[:8].hex()} do not fit a "
                f"{size}-byte file"), field="block_bytes")
        if size == 0:
            return to_sides(decode(b"", path, expect))
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            rec = decode(buf, path, expect)
    return to_sides(rec)


def read_euler_dat(path: PathLike | list[PathLike], meta: PathLike | dict | None = None
                   ) -> Graph:
    """Read Euler 1.0 binary ``.dat`` data (see the module docstring) into a :class:`Graph`.

    Args:
        path: A ``.dat`` file, a list of them, or a folder of partition files
            (``name_<idx>.dat``, the files Euler's engine loads: one dot in the name).
        meta: The meta file (path or dict).  Default: ``meta.json``/``meta`` next to the
            data; without one, types and slots are numbered as the data has them.

    Returns:
        The graph :func:`~graphshard.io.read_euler` gives for the same data as JSON.

    Raises:
        FormatError: a truncated or inconsistent block, a count the record cannot hold or
            that differs from the meta, a type out of range, a repeated node, an edge whose
            ``src_id`` is not its block's node or whose ``dst_id`` is no node; the message
            names the file, the byte offset and the field.

    Example:
        >>> import tempfile, graphshard as gs
        >>> d = tempfile.mkdtemp()
        >>> write_euler_dat(gs.graph(([0, 1], [1, 2])), d, num_partitions=2)
        >>> g = read_euler_dat(d)
        >>> g.edges()[0].tolist(), g.edges()[1].tolist(), g.ndata["node_id"].tolist()
        ([0, 1], [1, 2], [0, 1, 2])
    """
    files = data_files(path, accept=_is_dat_name,
                       none_found="no Euler .dat files (name_<idx>.dat) in this folder")
    meta_d, meta_name = load_meta(meta, files)
    expect = _expect(meta_d)
    node_parts, edge_parts, node_at, edge_at = [], [], [], []
    offset = 0
    for fi, f in enumerate(progress(files, desc="read euler dat", unit="file")):
        nodes, edges, n_at, e_at = _read_file(f, expect)
        nodes.cols["file"] = np.full(len(nodes), fi, np.int64)
        edges.cols["file"] = np.full(len(edges), fi, np.int64)
        edges.cols["row"] = edges.cols["row"] + offset
        offset += len(nodes)
        node_parts.append(nodes)
        edge_parts.append(edges)
        node_at.append(n_at)
        edge_at.append(e_at)
    nodes = concat_sides(node_parts, ("node_id", "node_type", "weight", "line", "file"))
    edges = concat_sides(edge_parts, (*_EDGE_COLS, "file"))
    _check(nodes, edges, np.concatenate(node_at), np.concatenate(edge_at), meta_d, files)
    del edges.cols["file"]
    return _assemble(nodes, edges, meta_d, files, meta_name)


def _check(nodes: Side, edges: Side, node_at: np.ndarray, edge_at: np.ndarray,
           meta: dict | None, files: list[Path]) -> None:
    """What :func:`~graphshard.io.euler._assemble` would refuse, named by file and offset."""
    def bad(where: np.ndarray, side: Side, at: np.ndarray, msg: Any, field: Any,
            value: Any) -> None:
        """Raise for the first row in ``where``; ``msg``, ``field`` and ``value`` are
        functions of that row (``field`` may be a plain name)."""
        k = int(np.flatnonzero(where)[0])
        raise fail(files[int(side.cols["file"][k])], f"byte {int(at[k])}: {msg(k)}",
                   field=field if isinstance(field, str) else field(k), value=value(k))

    for side, at, col, key, what in ((nodes, node_at, "node_type", "node_type_num", "node"),
                                     (edges, edge_at, "etype", "edge_type_num", "edge")):
        limit = int((meta or {}).get(key, MAX_META_COUNT))
        types = side.cols[col]
        out = (types < 0) | (types >= limit)
        if out.any():
            bad(out, side, at, lambda k, t=types, n=limit, w=what:
                f"{w} type {t[k]} is not in 0..{n - 1}", col, lambda k, t=types: int(t[k]))
    nid = nodes.cols["node_id"]
    order = np.argsort(nid, kind="stable")
    repeat = np.zeros(len(nid), bool)
    repeat[order[1:]] = nid[order[1:]] == nid[order[:-1]]
    if repeat.any():
        bad(repeat, nodes, node_at, lambda k: f"node {nid[k]} appears twice", "node_id",
            lambda k: int(nid[k]))
    rows, pos = edges.cols["row"], edges.cols["pos"]
    wrong_src = edges.cols["src"] != nid[rows] if len(rows) else np.zeros(0, bool)
    if wrong_src.any():
        bad(wrong_src, edges, edge_at, lambda k: f"src_id {edges.cols['src'][k]} differs "
            f"from the block's node_id {nid[rows[k]]}", lambda k: f"edge[{pos[k]}].src_id",
            lambda k: int(edges.cols["src"][k]))
    sorted_ids = nid[order]
    dst = edges.cols["dst"]
    found = np.searchsorted(sorted_ids, dst)
    known = (found < len(sorted_ids)) & (sorted_ids[np.minimum(found, len(nid) - 1)] == dst) \
        if len(nid) else np.zeros(len(dst), bool)
    if not known.all():
        bad(~known, edges, edge_at, lambda k: f"dst_id {dst[k]} is not a node",
            lambda k: f"edge[{pos[k]}].dst_id" if pos[k] >= 0 else "neighbor_id",
            lambda k: int(dst[k]))


# ----- writer ---------------------------------------------------------------------------------
def _column(col: Any, spec: dict, owner: str) -> tuple[list[int], np.ndarray]:
    """(offsets, values in the slot kind's dtype) of a feature, refusing values that the
    kind's dtype would change (Euler's float slots are float32)."""
    if isinstance(col, Ragged):
        offsets, values = col.offsets, col.values
    else:
        width = int(np.prod(col.shape[1:], dtype=np.int64))
        offsets = np.arange(len(col) + 1, dtype=np.int64) * width
        values = col.reshape(-1)
    out = values.astype(VALUE_DTYPE[spec["kind"]])
    if spec["kind"] == "float":
        _exact(values, out, f"{owner}: feature {spec['name']!r}", spec["name"])
    return offsets.tolist(), out


def _exact(values: np.ndarray, stored: np.ndarray, what: str, name: str) -> None:
    with np.errstate(over="ignore", invalid="ignore"):
        back = stored.astype(values.dtype)
    bad = np.flatnonzero(back != values)
    if bad.size:
        first = values[bad[0]].item()
        raise ValidationError(f"{what} value {first!r} (flat position {bad[0]}) is not a "
                              "float32, which Euler's binary format stores: cast the column "
                              "to float32 first", field=name, value=first)


def _weights(frame: Any, dtype: str | None, n: int, what: str) -> list[float]:
    if not dtype:
        return [1.0] * n
    w = frame["weight"]
    stored = w.astype(np.float32)
    _exact(w, stored, f"{what}: weight", "weight")
    return stored.astype(np.float64).tolist()


def _columns(frame: Any, specs: list[dict], counts: dict[str, int], owner: str
             ) -> list[list[tuple[list[int], np.ndarray] | None]]:
    slots: list[list[tuple[list[int], np.ndarray] | None]] = [[None] * counts[k]
                                                              for k in KINDS]
    for spec in specs:
        slots[KINDS.index(spec["kind"])][spec["slot"]] = _column(frame[spec["name"]], spec,
                                                                  owner)
    return slots


def _blocks(g: Graph, gids: dict[str, np.ndarray], rels: list[str], plan: tuple,
            num_partitions: int) -> list[list[bytes]]:
    """Every node's block, by partition, in the order :func:`write_euler` writes lines."""
    nspecs, nweights, ncounts, especs, eweights, ecounts = plan
    out_edges: dict[str, list[list[tuple[int, int, float, bytes]]]] = {
        t: [[] for _ in range(g.num_nodes(t))] for t in g.ntypes}
    for et in g.canonical_etypes:
        key = ":".join(et)
        src, dst = g.edges(etype=et)
        cols = _columns(g.edges[et].data, especs[key], ecounts, f"edge type {key!r}")
        w = _weights(g.edges[et].data, eweights[key], len(src), f"edge type {key!r}")
        sg, dg, r = gids[et[0]][src].tolist(), gids[et[2]][dst].tolist(), rels.index(et[1])
        for i, s in enumerate(src.tolist()):
            record = edge_bytes(sg[i], dg[i], r, w[i], feature_bytes(cols, i))
            out_edges[et[0]][s].append((r, dg[i], w[i], record))
    parts: list[list[bytes]] = [[] for _ in range(num_partitions)]
    for ti, nt in enumerate(progress(g.ntypes, desc="write euler dat", unit="ntype")):
        cols = _columns(g.nodes[nt].data, nspecs[nt], ncounts, f"node type {nt!r}")
        w = _weights(g.nodes[nt].data, nweights[nt], g.num_nodes(nt), f"node type {nt!r}")
        for i, gid in enumerate(gids[nt].tolist()):
            groups: list[dict[int, float]] = [{} for _ in rels]
            for r, d, wt, _ in out_edges[nt][i]:
                groups[r][d] = wt  # json2dat reads a {dst: weight} map: one entry per dst
            block = block_bytes(gid, ti, w[i], groups, feature_bytes(cols, i),
                                [e[3] for e in out_edges[nt][i]])
            if len(block) > 2**31 - 1:
                raise ValidationError(f"node {gid} of type {nt!r}: its block has {len(block)} "
                                      "bytes, more than Euler's int32 block size holds",
                                      field="block_bytes", value=len(block))
            parts[gid % num_partitions].append(block)
    return parts


def write_euler_dat(g: Graph, out_dir: PathLike, num_partitions: int = 1, *,
                    name: str = "graph") -> None:
    """Write ``g`` as Euler 1.0 binary data: ``out_dir/<name>_<idx>.dat`` holding the nodes
    with ``node_id % num_partitions == idx``, and ``meta.json`` (written last).

    The graph maps to blocks as :func:`~graphshard.io.write_euler` maps it to JSON lines
    (node IDs, weights, uint64/float/binary slots, the ``"graphshard"`` meta key that
    restores names, dtypes and shapes), and each block holds the bytes ``json2dat`` makes
    of that line.  Binary slots take any bytes (uint8 Ragged), not only UTF-8 text.

    ``out_dir`` is new, empty, or a folder written by this writer or ``write_euler`` (its
    files are replaced, meta first); anything else is refused.

    Raises:
        ValidationError: what :func:`~graphshard.io.write_euler` refuses, and float values
            (features or weights) that are not float32 (Euler stores float32): nothing is
            written then.
        ConfigError: ``out_dir`` is a file, or a folder holding something else.

    Example:
        >>> import tempfile, graphshard as gs
        >>> d = tempfile.mkdtemp()
        >>> write_euler_dat(gs.graph(([0, 1], [1, 2])), d, num_partitions=2)
        >>> sorted(p.name for p in Path(d).iterdir())
        ['graph_0.dat', 'graph_1.dat', 'meta.json']
    """
    check_num_partitions(num_partitions)
    out, gids, rels, (nspecs, nweights, ncounts), (especs, eweights, ecounts) = \
        prepare_write(g, out_dir, name)
    parts = _blocks(g, gids, rels, (nspecs, nweights, ncounts, especs, eweights, ecounts),
                    num_partitions)
    meta: dict[str, Any] = {"node_type_num": len(g.ntypes), "edge_type_num": len(rels)}
    for side, counts in (("node", ncounts), ("edge", ecounts)):
        for kind in KINDS:
            meta[f"{side}_{kind}_feature_num"] = counts[kind]
    meta["graphshard"] = {
        "format_version": 1, "euler_version": 1, "euler_encoding": "dat",
        "node_types": list(g.ntypes), "relations": rels,
        "edge_types": [list(et) for et in g.canonical_etypes],
        "node_weight": nweights, "edge_weight": eweights,
        "node_features": nspecs, "edge_features": especs,
    }
    json.dumps(meta)  # fails here, before any file, if something is not JSON
    claim_out_dir(out, _is_ours, "Euler graph written by graphshard")
    _clear_previous(out)
    for idx, blocks in enumerate(parts):
        with atomic_write(out / f"{name}_{idx}.dat", "wb") as handle:
            for block in blocks:
                handle.write(block)
    write_json_atomic(out / "meta.json", meta)
    mark_complete(out)

