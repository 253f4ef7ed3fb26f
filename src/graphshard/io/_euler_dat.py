"""Byte layout of Euler 1.0's binary graph data (``.dat``): decoding and encoding blocks.

The layout is the one ``euler/tools/json2dat.py`` writes and ``euler/core/graph_builder.cc``
(``ParseBlock``), ``compact_node.cc`` and ``compact_edge.cc`` (``DeSerialize``) read in
alibaba/euler 1.x; :mod:`graphshard.io.euler_dat` documents it field by field.  Every
number is little-endian with no padding: ``i32`` int32, ``u64`` uint64, ``f32`` float32.

Decoding never trusts a count: each one is checked against the bytes left in the record
that holds it before anything is allocated, so a file never makes the reader allocate
more than its own size, and every error names the file, the byte offset and the field.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FormatError
from ..ragged import Ragged
from ._common import fail
from ._euler_parse import _EDGE_COLS, KINDS, MAX_META_COUNT, Side, concat_sides

I32 = struct.Struct("<i")
U64 = struct.Struct("<Q")
F32 = struct.Struct("<f")
#: node_id u64, node_type i32, node_weight f32 (then the edge group count, i32)
NODE_HEAD = struct.Struct("<Qif")
#: src_id u64, dst_id u64, edge_type i32, weight f32
EDGE_HEAD = struct.Struct("<QQif")
#: dtype of the values of each feature kind
VALUE_DTYPE: dict[str, np.dtype] = {"uint64": np.dtype("<u8"), "float": np.dtype("<f4"),
                                    "binary": np.dtype("u1")}
#: the smallest node record: its head, the group count and three empty feature kinds
MIN_NODE_INFO = NODE_HEAD.size + 4 * I32.size
#: the smallest edge record
MIN_EDGE_INFO = EDGE_HEAD.size + 3 * I32.size


def looks_like_block(head: bytes, size: int) -> bool:
    """Whether the first bytes of a file of ``size`` bytes start an Euler binary block:
    ``block_bytes`` and ``node_info_bytes`` consistent with each other and the file.  A text
    file never passes (it would need NUL bytes in the two counts)."""
    if len(head) < 8:
        return False
    block, node_info = struct.unpack_from("<ii", head)
    return 4 + block <= size and MIN_NODE_INFO <= node_info <= block - 8


@dataclass
class Records:
    """What one file holds, as flat lists (one entry per node or edge record)."""

    node_id: list[int] = field(default_factory=list)
    node_type: list[int] = field(default_factory=list)
    node_weight: list[float] = field(default_factory=list)
    node_at: list[int] = field(default_factory=list)  # byte offset of each block
    node_feats: list[list[tuple[np.ndarray, np.ndarray]]] = field(default_factory=list)
    edge_cols: dict[str, list[Any]] = field(default_factory=lambda: {
        k: [] for k in ("src", "dst", "etype", "weight", "row", "pos", "at")})
    edge_feats: list[list[tuple[np.ndarray, np.ndarray]]] = field(default_factory=list)
    nbr: dict[str, list[np.ndarray]] = field(default_factory=lambda: {
        k: [] for k in ("src", "dst", "etype", "weight", "row", "at")})

    def add_neighbors(self, block: tuple[np.ndarray, ...]) -> None:
        """The neighbour lists of a block without edge records, as its edges."""
        for key, value in zip(("src", "dst", "etype", "weight", "row", "at"), block,
                              strict=True):
            self.nbr[key].append(value)


class _Cursor:
    """Reads fields of ``buf`` from ``pos`` up to ``end`` (the end of the current record)."""

    def __init__(self, buf: Any, path: Path, expect: dict[str, int]) -> None:
        self.buf, self.path, self.expect = buf, path, expect
        self.pos, self.end, self.size = 0, len(buf), len(buf)
        self.block, self.block_at, self.record = 0, 0, "block"

    def fail(self, msg: str, field: str, value: Any = None, at: int | None = None
             ) -> FormatError:
        return fail(self.path, f"byte {self.pos if at is None else at} (block {self.block} "
                    f"at byte {self.block_at}): {msg}", field=field, value=value)

    def _need(self, n: int, what: str) -> None:
        if n > self.end - self.pos:
            raise self.fail(f"truncated: {what} needs {n} bytes, the {self.record} has "
                            f"{self.end - self.pos} left", what)

    def scalar(self, st: struct.Struct, what: str) -> Any:
        self._need(st.size, what)
        value = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return value if len(value) > 1 else value[0]

    def count(self, what: str, limit: int) -> int:
        at = self.pos
        n = int(self.scalar(I32, what))
        if not 0 <= n <= limit:
            raise self.fail(f"{what}={n} is not in 0..{limit}", what, n, at)
        want = self.expect.get(what)
        if want is not None and n != want:
            raise self.fail(f"{what}={n}, but the meta says {want}", what, n, at)
        return n

    def array(self, dtype: np.dtype, n: int, what: str) -> np.ndarray:
        self._need(n * dtype.itemsize, what)
        out = np.frombuffer(self.buf[self.pos:self.pos + n * dtype.itemsize], dtype)
        self.pos += n * dtype.itemsize
        return out

    def sizes(self, n: int, what: str) -> np.ndarray:
        at = self.pos
        out = self.array(np.dtype("<i4"), n, what)
        if (out < 0).any():
            k = int(np.flatnonzero(out < 0)[0])
            raise self.fail(f"{what}[{k}]={out[k]} is negative", what, int(out[k]), at + 4 * k)
        return out.astype(np.int64)

    def features(self, side: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """Three (slot lengths, values) pairs: uint64, float, binary."""
        out = []
        for kind in KINDS:
            num = self.count(f"{side}_{kind}_feature_num", min(MAX_META_COUNT,
                                                              (self.end - self.pos) // 4))
            lengths = self.sizes(num, f"{side} {kind} feature lengths")
            out.append((lengths, self.array(VALUE_DTYPE[kind], int(lengths.sum()),
                                            f"{side} {kind} feature values")))
        return out

    def close_record(self, end: int, what: str, declared: int) -> None:
        if self.pos != end:
            raise self.fail(f"{what}={declared}, but the record's fields end after "
                            f"{declared - (end - self.pos)} bytes", what, declared)


def decode(buf: Any, path: Path, expect: dict[str, int]) -> Records:
    """Every block of ``buf`` (a file's bytes or memory map); ``expect`` holds the counts the
    meta fixes (``edge_group_num``, ``node_uint64_feature_num``, ...)."""
    cur, rec = _Cursor(buf, path, expect), Records()
    while cur.pos < cur.size:
        cur.block_at, cur.end, cur.record = cur.pos, cur.size, "file"
        block = cur.count("block_bytes", cur.size - cur.pos - 4)
        block_end = cur.end = cur.pos + block
        cur.record = "block"
        info = cur.count("node_info_bytes", block - 8)
        node_end = cur.end = cur.pos + info
        cur.record = "node record"
        neighbors = _node(cur, rec, len(rec.node_id))
        cur.close_record(node_end, "node_info_bytes", info)
        cur.end, cur.record = block_end, "block"
        num_edges = cur.count("edge_num", (block_end - cur.pos - 4) // 4)
        sizes = cur.sizes(num_edges, "edge_info_bytes")
        if int(sizes.sum()) != block_end - cur.pos:
            raise cur.fail(f"block_bytes={block} does not match its records (8 + 4 * "
                           f"{num_edges} + {info} + {int(sizes.sum())} edge bytes)",
                           "block_bytes", block, cur.block_at)
        for k, size in enumerate(sizes.tolist()):
            cur.end, cur.record = cur.pos + size, "edge record"
            _edge(cur, rec, k)
            cur.close_record(cur.end, f"edge_info_bytes[{k}]", size)
        if num_edges == 0 and neighbors is not None:  # as read_euler does for JSON
            rec.add_neighbors(neighbors)
        cur.block += 1
    return rec


def _node(cur: _Cursor, rec: Records, row: int) -> tuple[np.ndarray, ...] | None:
    """Read a node record; return its neighbour lists as edge columns (None if empty)."""
    nid, ntype, weight = cur.scalar(NODE_HEAD, "node_id, node_type, node_weight")
    groups = cur.count("edge_group_num", (cur.end - cur.pos - 4) // 8)
    sizes = cur.sizes(groups, "edge_group_size")
    cur.array(np.dtype("<f4"), groups, "edge_group_weight")  # the engine's sampling sums
    total = int(sizes.sum())
    ids = cur.array(np.dtype("<u8"), total, "neighbor_id")
    weights = cur.array(np.dtype("<f4"), total, "neighbor_weight")
    rec.node_id.append(nid)
    rec.node_type.append(ntype)
    rec.node_weight.append(weight)
    rec.node_at.append(cur.block_at)
    rec.node_feats.append(cur.features("node"))
    if not total:
        return None
    return (np.full(total, nid, np.uint64), ids, np.repeat(np.arange(groups), sizes),
            weights, np.full(total, row, np.int64), np.full(total, cur.block_at, np.int64))


def _edge(cur: _Cursor, rec: Records, k: int) -> None:
    at = cur.pos
    src, dst, etype, weight = cur.scalar(EDGE_HEAD, "src_id, dst_id, edge_type, weight")
    cols = rec.edge_cols
    for key, value in (("src", src), ("dst", dst), ("etype", etype), ("weight", weight),
                       ("row", len(rec.node_id) - 1), ("pos", k), ("at", at)):
        cols[key].append(value)
    rec.edge_feats.append(cur.features("edge"))


def slot_features(records: list[list[tuple[np.ndarray, np.ndarray]]]
                  ) -> dict[tuple[str, str], tuple[Ragged, np.ndarray]]:
    """Per (kind, slot): a Ragged of every record's values and whether the record has the
    slot (records written with fewer slots than others lack the rest)."""
    out: dict[tuple[str, str], tuple[Ragged, np.ndarray]] = {}
    n = len(records)
    for k, kind in enumerate(KINDS):
        lens = [r[k][0] for r in records]
        num = np.fromiter((len(x) for x in lens), np.int64, n)
        top = int(num.max()) if n else 0
        if top == 0:
            continue
        table = np.zeros((n, top), np.int64)
        table[np.arange(top) < num[:, None]] = np.concatenate(lens)
        values = np.concatenate([r[k][1] for r in records])
        totals = table.sum(axis=1)
        record_start = np.concatenate([[0], np.cumsum(totals)[:-1]])
        starts = record_start[:, None] + np.cumsum(table, axis=1) - table
        for slot in range(top):
            length = table[:, slot]
            offsets = np.zeros(n + 1, np.int64)
            np.cumsum(length, out=offsets[1:])
            inside = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1], length)
            rag = Ragged(values[np.repeat(starts[:, slot], length) + inside], offsets)
            out[(kind, str(slot))] = (rag, num > slot)
    return out


def to_sides(rec: Records) -> tuple[Side, Side, np.ndarray, np.ndarray]:
    """(nodes, edges) as :func:`~graphshard.io.euler.read_euler` builds them, and the byte
    offset of each node's block and of each edge's record."""
    nodes = Side()
    nodes.cols = {"node_id": np.array(rec.node_id, np.uint64),
                  "node_type": np.array(rec.node_type, np.int64),
                  "weight": np.array(rec.node_weight, np.float32).astype(np.float64),
                  "line": np.full(len(rec.node_id), -1, np.int64)}
    nodes.feats = slot_features(rec.node_feats)
    c = rec.edge_cols
    edges = Side()
    edges.cols = {"src": np.array(c["src"], np.uint64), "dst": np.array(c["dst"], np.uint64),
                  "etype": np.array(c["etype"], np.int64),
                  "weight": np.array(c["weight"], np.float32).astype(np.float64),
                  "row": np.array(c["row"], np.int64), "pos": np.array(c["pos"], np.int64)}
    edges.feats = slot_features(rec.edge_feats)
    at = np.array(c["at"], np.int64)
    if rec.nbr["src"]:
        nb = {k: np.concatenate(v) for k, v in rec.nbr.items()}
        extra = Side()
        extra.cols = {"src": nb["src"], "dst": nb["dst"], "etype": nb["etype"].astype(np.int64),
                      "weight": nb["weight"].astype(np.float64), "row": nb["row"],
                      "pos": np.full(len(nb["src"]), -1, np.int64)}
        edges = concat_sides([edges, extra], _EDGE_COLS)
        at = np.concatenate([at, nb["at"]])
    return nodes, edges, np.array(rec.node_at, np.int64), at


# ----- encoding -------------------------------------------------------------------------------
def feature_bytes(columns: list[list[tuple[list[int], np.ndarray] | None]], i: int) -> bytes:
    """Row ``i``'s three feature sections; ``columns[k]`` holds kind ``k``'s slots in order,
    each (offsets, values in the kind's dtype) or None (an empty slot)."""
    out = []
    for slots in columns:
        lengths, values = [], []
        for col in slots:
            if col is None:
                lengths.append(0)
                continue
            a, b = col[0][i], col[0][i + 1]
            lengths.append(b - a)
            values.append(col[1][a:b].tobytes())
        out += [I32.pack(len(slots)), struct.pack(f"<{len(lengths)}i", *lengths), *values]
    return b"".join(out)


def edge_bytes(src: int, dst: int, etype: int, weight: float, feats: bytes) -> bytes:
    return EDGE_HEAD.pack(src, dst, etype, weight) + feats


def block_bytes(nid: int, ntype: int, weight: float, groups: list[dict[int, float]],
                feats: bytes, edges: list[bytes]) -> bytes:
    """One block: the node record (neighbour groups as json2dat builds them from the JSON
    ``neighbor`` map: sizes, weight sums, all IDs, then all weights), then the edges."""
    ids = [d for g in groups for d in g]
    weights = [w for g in groups for w in g.values()]
    info = b"".join([
        NODE_HEAD.pack(nid, ntype, weight), I32.pack(len(groups)),
        struct.pack(f"<{len(groups)}i", *(len(g) for g in groups)),
        struct.pack(f"<{len(groups)}f", *(sum(g.values()) for g in groups)),
        struct.pack(f"<{len(ids)}Q", *ids), struct.pack(f"<{len(weights)}f", *weights),
        feats])
    rest = b"".join([I32.pack(len(info)), info, I32.pack(len(edges)),
                     struct.pack(f"<{len(edges)}i", *(len(e) for e in edges)), *edges])
    return I32.pack(len(rest)) + rest
