"""Checks of a chunked graph's ``metadata.json`` (:mod:`graphshard.io.chunked`).

The key structure and counts of the metadata, its file specs, and, before anything is
allocated, whether the declared counts fit the files that hold them and this machine's
memory.  Each failure is a :class:`~graphshard.errors.FormatError` naming the file and key.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._chunked_read import FORMATS, FileSpec, row_capacity
from ._common import check_fits_memory, fail

if TYPE_CHECKING:
    from .chunked import ChunkedMeta


def declared_counts(meta: dict, path: Path, names: list[str], per_chunk: str, per_type: str
            ) -> tuple[list[int], list[list[int] | None]]:
    if per_chunk in meta:
        rows = meta[per_chunk]
        if not isinstance(rows, list) or len(rows) != len(names):
            raise fail(path, f"expected a list of {len(names)} count lists, one per type",
                       field=per_chunk)
        for i, row in enumerate(rows):
            if not isinstance(row, list) or not all(_is_count(c) for c in row):
                raise fail(path, f"entry {i} ({names[i]!r}) must be a list of counts >= 0",
                           field=per_chunk, value=row)
        totals = [sum(r) for r in rows]
        if per_type in meta and meta[per_type] != totals:
            raise fail(path, f"totals {meta[per_type]!r} disagree with {per_chunk!r}, which "
                       f"sums to {totals}", field=per_type, value=meta[per_type])
        return totals, [list(r) for r in rows]
    if per_type in meta:
        tot = meta[per_type]
        if (not isinstance(tot, list) or len(tot) != len(names)
                or not all(_is_count(c) for c in tot)):
            raise fail(path, f"expected {len(names)} counts >= 0", field=per_type, value=tot)
        return list(tot), [None] * len(names)
    raise fail(path, f"missing key {per_chunk!r} (or {per_type!r})", field=per_chunk)


def _is_count(c: Any) -> bool:
    return isinstance(c, int) and not isinstance(c, bool) and c >= 0


def count_field(meta: dict, what: str) -> str:
    per_chunk = f"num_{what}_per_chunk"
    return per_chunk if per_chunk in meta else f"num_{what}_per_type"


def file_spec(obj: Any, base: Path, path: Path, field: str) -> FileSpec:
    if not isinstance(obj, dict) or not isinstance(obj.get("format"), dict):
        raise fail(path, "expected {'format': {'name': ...}, 'data': [...]}", field=field)
    name = obj["format"].get("name")
    if name not in FORMATS:
        raise fail(path, f"format {name!r} is not one of {list(FORMATS)}",
                   field=f"{field}.format.name", value=name)
    data = obj.get("data")
    if not isinstance(data, list) or not all(isinstance(p, str) for p in data):
        raise fail(path, "expected a list of file paths", field=f"{field}.data")
    delim = obj["format"].get("delimiter", ",")
    if not isinstance(delim, str) or len(delim) != 1:
        raise fail(path, f"delimiter must be one character, got {delim!r}",
                   field=f"{field}.format.delimiter")
    return FileSpec(name, delim, tuple(base / p for p in data), field, path)


def data_specs(raw: Any, known: set[str], base: Path, path: Path, key: str
                ) -> dict[str, dict[str, FileSpec]]:
    if not isinstance(raw, dict):
        raise fail(path, "expected an object {type: {feature: spec}}", field=key)
    out: dict[str, dict[str, FileSpec]] = {}
    for t, feats in raw.items():
        if t not in known:
            raise fail(path, f"unknown type {t!r}; declared types are {sorted(known)}",
                       field=key, value=t)
        if not isinstance(feats, dict):
            raise fail(path, "expected {feature: spec}", field=f"{key}[{t!r}]")
        out[t] = {n: file_spec(s, base, path, f"{key}[{t!r}][{n!r}]") for n, s in feats.items()}
    return out


def check_declared_sizes(meta: ChunkedMeta) -> None:
    """Before any allocation: each count must fit the files that hold those rows (their
    size, or a Parquet footer: :func:`row_capacity`), and the graph this machine's RAM."""
    for et, spec in meta.edges.items():
        caps = [row_capacity(spec, i, edges=True) for i in range(len(spec.files))]
        chunks, name = meta.edge_chunks[et], ":".join(et)
        for i, (n, cap) in enumerate(zip(chunks or [], caps, strict=False)):
            if n > cap:
                raise fail(meta.path, f"num_edges_per_chunk[{name!r}][{i}] declares {n:,} edges "
                           f"but {spec.files[i].name} can hold at most {cap:,}",
                           field="num_edges_per_chunk", value=n)
        if meta.num_edges[et] > sum(caps):
            raise fail(meta.path, f"{meta.num_edges[et]:,} edges of {name!r} declared but its "
                       f"files can hold at most {sum(caps):,}", field="num_edges_per_type",
                       value=meta.num_edges[et])
    tables: list[tuple[str, Mapping[Any, dict[str, FileSpec]], Mapping[Any, int],
                       Mapping[Any, list[int] | None]]] = [
        ("node", meta.node_data, meta.num_nodes, meta.node_chunks),
        ("edge", meta.edge_data, meta.num_edges, meta.edge_chunks)]
    for kind, table, counts, per_chunk in tables:
        for t, feats in table.items():
            for fname, spec in feats.items():
                cap = sum(row_capacity(spec, i, edges=False) for i in range(len(spec.files)))
                if counts[t] > cap:
                    raise fail(meta.path, f"{counts[t]:,} {kind}s of type {t!r} declared but "
                               f"the files of feature {fname!r} can hold at most {cap:,} rows",
                               field=f"num_{kind}s_per_"
                               + ("chunk" if per_chunk[t] is not None else "type"),
                               value=counts[t])
    nodes, edges = sum(meta.num_nodes.values()), sum(meta.num_edges.values())
    check_fits_memory(nodes * 8 + edges * 16, path=meta.path, field="num_edges_per_type",
                      what=f"the graph ({nodes:,} nodes, {edges:,} edges)")
