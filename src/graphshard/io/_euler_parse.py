"""Parsing Euler JSON into flat arrays: Euler 1 block lines (fast, via pyarrow.json) and
Euler 2's single ``{"nodes": [...], "edges": [...]}`` document.

The Euler 1 fast path reads a file in pieces of whole lines and hands each piece to
``pyarrow.json`` with an explicit schema (feature slots from the meta file), so parsing runs
in Arrow's C++ reader; only blocks without an ``edge`` list but with a ``neighbor`` map go
through ``json.loads``.  If Arrow rejects a piece, :func:`diagnose` re-reads it line by line
to name the line and field at fault.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from ..ragged import Ragged
from ._common import concat_ragged, fail, list_to_ragged, scan_lines, strings_to_ragged

KINDS = ("uint64", "float", "binary")
#: The most types or feature slots of one kind a meta may declare.  Euler numbers them densely
#: from 0 and the reader builds a column for each in every parsed piece, so a count must be
#: bounded before any work (a tiny meta with a huge count ran for minutes; what the bound
#: costs: benchmarks/TUNING.md).
MAX_META_COUNT = 4096
_ARROW = {"uint64": pa.list_(pa.uint64()), "float": pa.list_(pa.float64()),
          "binary": pa.string()}
_EMPTY_NEIGHBOR = re.compile(rb'"neighbor"\s*:\s*\{(\s*"[^"]*"\s*:\s*\{\s*\}\s*,?)*\s*\}')


@dataclass
class Side:
    """Flat columns of nodes or edges: ids/types/weights plus features keyed (kind, slot)."""

    cols: dict[str, np.ndarray] = field(default_factory=dict)
    feats: dict[tuple[str, str], tuple[Ragged, np.ndarray]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(next(iter(self.cols.values()))) if self.cols else 0


def concat_sides(parts: list[Side], names: tuple[str, ...]) -> Side:
    """Concatenate parsed pieces; a feature missing from a piece gets empty, invalid rows."""
    out = Side()
    for name in names:
        out.cols[name] = np.concatenate([p.cols[name] for p in parts]) if parts else \
            np.zeros(0, np.int64)
    keys = list(dict.fromkeys(k for p in parts for k in p.feats))
    for key in keys:
        rags, valid = [], []
        for p in parts:
            if key in p.feats:
                rags.append(p.feats[key][0])
                valid.append(p.feats[key][1])
            else:
                n = len(p)
                rags.append(Ragged(np.zeros(0, np.uint8), np.zeros(n + 1, np.int64)))
                valid.append(np.zeros(n, bool))
        dtype = next(r.values.dtype for p in parts if key in p.feats for r in [p.feats[key][0]])
        out.feats[key] = (concat_ragged(rags, dtype), np.concatenate(valid))
    return out


# ----- Euler 1: JSON block lines -----------------------------------------------------------
def schema(slots: dict[str, int]) -> pa.Schema:
    """Arrow schema of a block, with ``slots[f"{side}_{kind}"]`` slots per feature kind."""
    def feats(side: str) -> list[tuple[str, pa.DataType]]:
        return [(f"{k}_feature", pa.struct([(str(i), _ARROW[k])
                                            for i in range(slots[f"{side}_{k}"])]))
                for k in KINDS if slots[f"{side}_{k}"] > 0]
    edge = pa.struct([("src_id", pa.uint64()), ("dst_id", pa.uint64()),
                      ("edge_type", pa.int64()), ("weight", pa.float64()), *feats("edge")])
    return pa.schema([("node_id", pa.uint64()), ("node_type", pa.int64()),
                      ("node_weight", pa.float64()), *feats("node"), ("edge", pa.list_(edge))])


def _features(arr: pa.StructArray | pa.Table, slots: dict[str, int], side: str
              ) -> dict[tuple[str, str], tuple[Ragged, np.ndarray]]:
    out = {}
    for kind in KINDS:
        if slots[f"{side}_{kind}"] == 0:
            continue
        col = arr.column(f"{kind}_feature") if isinstance(arr, pa.Table) else \
            arr.field(f"{kind}_feature")
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        # one flatten for all slots (children with the struct's nulls merged in): a
        # struct_field call per slot costs O(slots) each, O(slots**2) in all
        for i, sub in enumerate(col.flatten()):
            valid = sub.is_valid().to_numpy(zero_copy_only=False)
            rag = strings_to_ragged(sub) if kind == "binary" else \
                list_to_ragged(sub, np.uint64 if kind == "uint64" else np.float64)
            out[(kind, str(i))] = (rag, valid)
    return out


def line_at_offset(path: Path, offset: int) -> int:
    """1-based line number of byte ``offset`` of ``path`` (error path: rescans the file)."""
    count, done = 1, 0
    with open(path, "rb") as handle:
        while done < offset:
            block = handle.read(min(1 << 24, offset - done))
            if not block:
                break
            count += block.count(b"\n")
            done += len(block)
    return count


def row_to_line(path: Path, row: int) -> int:
    """1-based line number of the ``row``-th (0-based) non-blank line of ``path``."""
    seen = -1
    with open(path, "rb") as handle:
        for lineno, text in enumerate(handle, 1):
            if text.strip():
                seen += 1
                if seen == row:
                    return lineno
    return seen + 1


def _nonnull(col: Any, what: str, path: Path, lines: Callable[[], np.ndarray],
             rows: np.ndarray | None = None, pos: np.ndarray | None = None) -> np.ndarray:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if col.null_count:
        k = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
        line = int(lines()[rows[k] if rows is not None else k])
        fld = what if pos is None else f"edge[{pos[k]}].{what}"
        raise fail(path, "missing or null value", line=line, field=fld)
    return col.to_numpy(zero_copy_only=False)


def _read_json(buf: Any, slots: dict[str, int], block_size: int) -> pa.Table:
    return pj.read_json(pa.BufferReader(buf),
                        read_options=pj.ReadOptions(block_size=block_size),
                        parse_options=pj.ParseOptions(explicit_schema=schema(slots),
                                                      unexpected_field_behavior="ignore"))


def parse_piece(buf: Any, path: Path, offset: int, row0: int, slots: dict[str, int]
                ) -> tuple[Side, Side]:
    """Parse one piece of whole lines (bytes or a memoryview, starting at byte ``offset`` of
    ``path`` with non-blank line number ``row0``) into (nodes, edges) columns.

    Line numbers are found only when something is wrong (or for blocks without an edge
    list); node column ``"line"`` holds the row number in the file, see :func:`row_to_line`.
    """
    def lines() -> np.ndarray:  # line number of each row, computed on demand
        return scan_lines(buf)[0] + line_at_offset(path, offset) - 1

    try:
        try:
            tab = _read_json(buf, slots, 1 << 20)
        except pa.ArrowInvalid:  # maybe a line longer than a block: retry in one block
            tab = _read_json(buf, slots, len(buf) + 1)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        diagnose(bytes(buf), path, line_at_offset(path, offset), slots)
        raise fail(path, f"unreadable Euler JSON ({exc})".replace("\n", " ")) from exc
    nodes = Side()
    nodes.cols["node_id"] = _nonnull(tab.column("node_id"), "node_id", path, lines)
    nodes.cols["node_type"] = _nonnull(tab.column("node_type"), "node_type", path, lines)
    nodes.cols["weight"] = pc.fill_null(tab.column("node_weight"), 1.0).to_numpy()
    nodes.cols["line"] = np.arange(row0, row0 + tab.num_rows, dtype=np.int64)
    nodes.feats = _features(tab, slots, "node")
    edge_col = tab.column("edge").combine_chunks()
    counts = pc.fill_null(pc.list_value_length(edge_col), 0).to_numpy(zero_copy_only=False)
    flat = edge_col.flatten()
    rows = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    starts = np.concatenate([[0], np.cumsum(counts)])
    pos = np.arange(len(flat), dtype=np.int64) - np.repeat(starts[:-1], counts)
    edges = Side()
    if pa.types.is_null(flat.type) or len(flat) == 0:
        edges = _empty_side("edge")
    else:
        for name, key in (("src", "src_id"), ("dst", "dst_id"), ("etype", "edge_type")):
            edges.cols[name] = _nonnull(flat.field(key), key, path, lines, rows, pos)
        edges.cols["weight"] = pc.fill_null(flat.field("weight"), 1.0).to_numpy()
        edges.cols["row"], edges.cols["pos"] = rows, pos
        edges.feats = _features(flat, slots, "edge")
    extra = _neighbor_edges(buf, np.flatnonzero(counts == 0), nodes, path, lines)
    edges = concat_sides([edges, extra], _EDGE_COLS) if extra is not None else edges
    return nodes, edges


_EDGE_COLS = ("src", "dst", "etype", "weight", "row", "pos")


def _empty_side(kind: str) -> Side:
    s = Side()
    names = _EDGE_COLS if kind == "edge" else ("node_id", "node_type", "weight", "line")
    for n in names:
        s.cols[n] = np.zeros(0, np.float64 if n == "weight" else np.int64)
    return s


def _neighbor_edges(buf: Any, rows: np.ndarray, nodes: Side, path: Path,
                    lines: Callable[[], np.ndarray]) -> Side | None:
    """Edges of blocks that have a ``neighbor`` map but no ``edge`` list."""
    if rows.size == 0:
        return None
    numbers, _, line_starts, line_ends = scan_lines(buf)
    src, dst, et, w, rr = [], [], [], [], []
    for r in rows.tolist():
        k = int(numbers[r]) - 1
        text = bytes(buf[line_starts[k]:line_ends[k]])
        if b'"neighbor"' not in text or _EMPTY_NEIGHBOR.search(text):
            continue
        try:
            nbr = json.loads(text).get("neighbor") or {}
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise fail(path, f"malformed JSON ({exc})", line=int(lines()[r])) from None
        if not isinstance(nbr, dict) or not all(isinstance(v, dict) for v in nbr.values()):
            raise fail(path, "expected {edge_type: {neighbor_id: weight}}",
                       line=int(lines()[r]), field="neighbor")
        for t, targets in nbr.items():
            for d, weight in targets.items():
                try:
                    src.append(int(nodes.cols["node_id"][r]))
                    dst.append(int(d))
                    et.append(int(t))
                    w.append(float(weight))
                    rr.append(r)
                except (TypeError, ValueError) as exc:
                    raise fail(path, f"bad neighbor entry {d!r}: {weight!r}",
                               line=int(lines()[r]), field=f"neighbor[{t!r}]") from exc
    if not src:
        return None
    s = Side()
    s.cols.update(src=np.array(src, np.uint64), dst=np.array(dst, np.uint64),
                  etype=np.array(et, np.int64), weight=np.array(w, np.float64),
                  row=np.array(rr, np.int64), pos=np.full(len(src), -1, np.int64))
    return s


# ----- slow path: name the line and field ------------------------------------------------------
def _check_feats(obj: dict, slots: dict[str, int], side: str, where: str) -> str | None:
    for kind in KINDS:
        d = obj.get(f"{kind}_feature", {})
        key = f"{where}{kind}_feature"
        if not isinstance(d, dict):
            return f"{key}: expected an object {{slot: value}}"
        for k, v in d.items():
            if not (k.isascii() and k.isdigit()):
                return f"{key}: slot {k!r} is not a number"
            if kind == "binary":
                if not isinstance(v, str):
                    return f'{key}["{k}"]: expected a string (binary slot), got {v!r:.40}'
            elif not isinstance(v, list) or not all(
                    (isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2 ** 64)
                    if kind == "uint64" else isinstance(x, (int, float)) for x in v):
                return f'{key}["{k}"]: expected a list of {kind} values, got {v!r:.40}'
    return None


def _check_block(obj: Any, slots: dict[str, int]) -> str | None:
    if not isinstance(obj, dict):
        return "block: expected a JSON object"
    for key, ok in (("node_id", lambda v: isinstance(v, int) and 0 <= v < 2 ** 64),
                    ("node_type", lambda v: isinstance(v, int) and v >= 0),
                    ("node_weight", lambda v: v is None or isinstance(v, (int, float)))):
        if key not in obj and key != "node_weight":
            return f"{key}: missing"
        if not ok(obj.get(key)):
            return f"{key}: bad value {obj.get(key)!r:.40}"
    bad = _check_feats(obj, slots, "node", "")
    if bad:
        return bad
    nbr = obj.get("neighbor", {})
    if not isinstance(nbr, dict) or not all(isinstance(v, dict) for v in nbr.values()):
        return "neighbor: expected {edge_type: {neighbor_id: weight}}"
    edges = obj.get("edge", [])
    if not isinstance(edges, list):
        return "edge: expected a list"
    for i, e in enumerate(edges):
        if not isinstance(e, dict):
            return f"edge[{i}]: expected an object"
        for key in ("src_id", "dst_id", "edge_type"):
            v = e.get(key)
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 2 ** 64:
                return f"edge[{i}].{key}: bad or missing value {v!r:.40}"
        if not isinstance(e.get("weight", 1.0), (int, float)):
            return f"edge[{i}].weight: expected a number"
        bad = _check_feats(e, slots, "edge", f"edge[{i}].")
        if bad:
            return bad
    return None


def diagnose(buf: bytes, path: Path, first_line: int, slots: dict[str, int]) -> None:
    """Raise a FormatError naming the first bad line and field of ``buf`` (if one is found)."""
    for i, raw in enumerate(buf.split(b"\n")):
        if not raw.strip():
            continue
        line = first_line + i
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise fail(path, f"malformed JSON ({exc})", line=line) from None
        problem = _check_block(obj, slots)
        if problem:
            fld, _, msg = problem.partition(": ")
            raise fail(path, msg, line=line, field=fld)


def infer_slots(path: Path, max_lines: int = 1000) -> dict[str, int]:
    """Slot counts from the first lines of ``path`` (used when there is no meta file)."""
    slots = {f"{s}_{k}": 0 for s in ("node", "edge") for k in KINDS}
    with open(path, "rb") as handle:
        for i, raw in enumerate(handle):
            if i >= max_lines:
                break
            try:
                obj = json.loads(raw) if raw.strip() else {}
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise fail(path, f"malformed JSON ({exc})", line=i + 1) from None
            if not isinstance(obj, dict):
                raise fail(path, "expected a JSON object", line=i + 1)
            edge = obj.get("edge")
            edges = edge if isinstance(edge, list) else []
            for side, objs in (("node", [obj]), ("edge", edges)):
                for o in objs:
                    for k in KINDS:
                        d = o.get(f"{k}_feature") if isinstance(o, dict) else None
                        for key in d if isinstance(d, dict) else ():
                            if not (key.isascii() and key.isdigit()):
                                continue
                            if int(key) >= MAX_META_COUNT:
                                raise fail(path, f"slot {key[:40]} is not below "
                                           f"{MAX_META_COUNT} (slots are numbered from 0; the "
                                           "most graphshard reads)", line=i + 1,
                                           field=f"{k}_feature")
                            slots[f"{side}_{k}"] = max(slots[f"{side}_{k}"], int(key) + 1)
    return slots


# ----- Euler 2: one JSON document ------------------------------------------------------------
_E2_KIND = {"sparse": "uint64", "dense": "float", "binary": "binary"}


def _e2_side(items: Any, path: Path, key: str, cols: tuple[str, ...]) -> Side:
    if not isinstance(items, list):
        raise fail(path, "expected a list", field=key)
    side = Side()
    vals: dict[str, list] = {c: [] for c in cols}
    rows: dict[tuple[str, str], list] = {}
    for i, obj in enumerate(items):
        try:
            for c in cols:
                v = obj.get(c, 1.0) if c == "weight" else obj[c]
                if c != "weight" and (isinstance(v, bool) or not isinstance(v, int)
                                      or not 0 <= v < 2 ** (63 if c == "type" else 64)):
                    raise TypeError(c)
                vals[c].append(float(v) if c == "weight" else v)
            for f in obj.get("features", []):
                kind = _E2_KIND[f["type"]]
                value = f["value"]
                if kind == "binary" and not isinstance(value, str):
                    raise TypeError(f"features[{f['name']!r}]")
                if kind != "binary" and not isinstance(value, list):
                    raise TypeError(f"features[{f['name']!r}]")
                rows.setdefault((kind, str(f["name"])), [None] * len(items))[i] = value
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise fail(path, f"bad or missing value ({exc!r})", field=f"{key}[{i}]") from None
    for c in cols:
        side.cols[c] = np.array(vals[c], np.float64 if c == "weight" else np.uint64)
    for (kind, name), rr in rows.items():
        valid = np.array([r is not None for r in rr], bool)
        filled = [("" if kind == "binary" else []) if r is None else r for r in rr]
        dtype = {"uint64": np.uint64, "float": np.float64}.get(kind)
        try:
            rag = Ragged.from_rows(filled, dtype=dtype) if kind != "binary" or filled else \
                Ragged(np.zeros(0, np.uint8), np.zeros(1, np.int64))
        except (TypeError, ValueError, OverflowError) as exc:
            raise fail(path, f"feature {name!r} holds a value that is not {kind}",
                       field=f"{key}[].features[{name!r}]") from exc
        side.feats[(kind, name)] = (rag, valid)
    return side


def parse_euler2(doc: Any, path: Path) -> tuple[Side, Side]:
    """Flatten an Euler 2 ``{"nodes": [...], "edges": [...]}`` document."""
    if not isinstance(doc, dict) or "nodes" not in doc:
        raise fail(path, "expected an object with 'nodes' and 'edges' lists", field="nodes")
    nodes = _e2_side(doc["nodes"], path, "nodes", ("id", "type", "weight"))
    nodes.cols = {"node_id": nodes.cols["id"], "node_type": nodes.cols["type"].astype(np.int64),
                  "weight": nodes.cols["weight"], "line": np.full(len(nodes), -1, np.int64)}
    edges = _e2_side(doc.get("edges", []), path, "edges", ("src", "dst", "type", "weight"))
    m = len(edges)
    edges.cols = {"src": edges.cols["src"], "dst": edges.cols["dst"],
                  "etype": edges.cols["type"].astype(np.int64), "weight": edges.cols["weight"],
                  "row": np.full(m, -1, np.int64), "pos": np.arange(m, dtype=np.int64)}
    return nodes, edges
