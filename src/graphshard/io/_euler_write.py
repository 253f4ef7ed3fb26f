"""Writer half of :mod:`graphshard.io.euler`: Euler 1 block lines, partitioned by node ID."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np

from .._util.progress import progress
from ..errors import ValidationError
from ..graph import Graph
from ..ragged import Ragged
from ..sparse import SparseRows
from ..storage.files import (
    atomic_write,
    check_out_dir,
    check_path_name,
    claim_out_dir,
    json_object_with,
    mark_complete,
    write_json_atomic,
)
from ._common import PathLike

#: Meta file names :func:`~graphshard.io.read_euler` looks for next to the data.
META_NAMES = ("meta.json", "meta", "meta.txt")


def _is_ours(folder: Path) -> bool:
    """Euler files written by :func:`write_euler` (Euler's meta keys and ours)."""
    return json_object_with(folder / "meta.json", "graphshard", "node_type_num")


def check_euler_out(out_dir: PathLike) -> Path:
    """Refuse an ``out_dir`` that :func:`write_euler` must not write into (before any work)."""
    return check_out_dir(out_dir, _is_ours, "Euler graph written by graphshard")


def _clear_previous(out: Path) -> None:
    """Remove a previous output of ours: meta first, then every data file that
    ``read_euler(out)`` would read with the new ones (``name_<idx>.json`` of any name
    and count), so no old partition is read with the new ones."""
    (out / "meta.json").unlink(missing_ok=True)
    for f in out.iterdir():
        if f.is_file() and not f.is_symlink() and not f.name.startswith(".") \
                and f.name not in META_NAMES:
            f.unlink()


def _kind(owner: str, name: str, col: Any) -> dict:
    """How a column is stored: Euler slot kind, dtype, trailing shape, ragged or not."""
    if isinstance(col, SparseRows):
        raise ValidationError(f"{owner}: feature {name!r} is sparse (SparseRows); Euler has no "
                              "slot for column/value pairs: store it dense or as two Ragged "
                              "features", field=name)
    if isinstance(col, Ragged):
        k = col.values.dtype.kind
        kind = "binary" if col.values.dtype == np.uint8 else \
            "uint64" if k in "biu" else "float" if k == "f" else None
        spec = {"name": name, "kind": kind, "dtype": col.values.dtype.str, "ragged": True}
        vals = col.values
    else:
        k = col.dtype.kind
        kind = "uint64" if k in "biu" else "float" if k == "f" else None
        spec = {"name": name, "kind": kind, "dtype": col.dtype.str, "shape": list(col.shape[1:])}
        vals = col
    if kind is None:
        raise ValidationError(f"{owner}: feature {name!r} has dtype {vals.dtype}; Euler stores "
                              "only integers, floats and bytes", field=name)
    if kind == "uint64" and vals.size and k == "i" and vals.min() < 0:
        raise ValidationError(f"{owner}: feature {name!r} has negative values; Euler's uint64 "
                              "slots cannot hold them (store it as float)", field=name)
    if kind == "float" and vals.size and not np.isfinite(vals).all():
        raise ValidationError(f"{owner}: feature {name!r} has NaN or infinite values, which "
                              "JSON cannot hold", field=name)
    return spec


def _rows(col: Any, spec: dict, owner: str) -> list:
    """Per-row Python values of a column, as they go into the JSON."""
    if spec["kind"] == "binary":
        blob = col.values.tobytes()
        out = []
        for i, (a, b) in enumerate(itertools.pairwise(col.offsets.tolist())):
            try:
                out.append(blob[a:b].decode("utf-8"))
            except UnicodeDecodeError:
                raise ValidationError(f"{owner}: binary feature {spec['name']!r} row {i} is not "
                                      "UTF-8 text, which Euler JSON needs", field=spec["name"]
                                      ) from None
        return out
    if isinstance(col, Ragged):
        vals = col.values.astype(np.uint64 if spec["kind"] == "uint64" else np.float64)
        return [v.tolist() for v in np.split(vals, col.offsets[1:-1])] if len(col) else []
    flat = col.reshape(len(col), int(np.prod(col.shape[1:], dtype=np.int64)))
    return flat.astype(np.uint64 if spec["kind"] == "uint64" else np.float64).tolist()


def _is_weight(col: Any) -> bool:
    return isinstance(col, np.ndarray) and col.ndim == 1 and col.dtype.kind in "iuf" and \
        (col.size == 0 or bool(np.isfinite(col).all()))


def _plan(frames: dict[str, Any], skip: set[str], owner: str
          ) -> tuple[dict[str, list[dict]], dict[str, str | None], dict[str, int]]:
    specs: dict[str, list[dict]] = {}
    weights: dict[str, str | None] = {}
    slots: dict[tuple[str, str], int] = {}
    counts = {"uint64": 0, "float": 0, "binary": 0}
    for t, frame in frames.items():
        weights[t] = frame["weight"].dtype.str if "weight" in frame and \
            _is_weight(frame["weight"]) else None
        specs[t] = []
        for name, col in frame.items():
            if name in skip or (name == "weight" and weights[t]):
                continue
            spec = _kind(f"{owner} {t!r}", name, col)
            key = (spec["kind"], name)
            if key not in slots:
                slots[key] = counts[spec["kind"]]
                counts[spec["kind"]] += 1
            spec["slot"] = slots[key]
            specs[t].append(spec)
    return specs, weights, counts


def _global_ids(g: Graph) -> dict[str, np.ndarray]:
    offsets = g.node_type_offsets()
    out = {}
    for i, nt in enumerate(g.ntypes):
        col = g.nodes[nt].data.get("node_id") if "node_id" in g.nodes[nt].data else None
        if isinstance(col, np.ndarray) and col.ndim == 1 and col.dtype.kind in "iu":
            if col.size and col.dtype.kind == "i" and col.min() < 0:
                raise ValidationError(f"node type {nt!r}: node_id has negative IDs",
                                      field="node_id")
            out[nt] = col.astype(np.uint64)
        else:
            out[nt] = np.arange(offsets[i], offsets[i + 1], dtype=np.uint64)
    every = np.concatenate(list(out.values())) if out else np.zeros(0, np.uint64)
    if len(np.unique(every)) != len(every):
        raise ValidationError("node_id features repeat an ID across nodes; Euler needs unique "
                              "node IDs", field="node_id")
    return out


def _feature_maps(cols: list[tuple[dict, list]], i: int) -> dict[str, dict[str, Any]]:
    maps: dict[str, dict[str, Any]] = {"uint64_feature": {}, "float_feature": {},
                                       "binary_feature": {}}
    for spec, rows in cols:
        maps[f"{spec['kind']}_feature"][str(spec["slot"])] = rows[i]
    return maps


#: Euler 2's feature types (``tools/test_data/graph.json``) for our slot kinds.
_E2_TYPE = {"uint64": "sparse", "float": "dense", "binary": "binary"}


def _edge_columns(g: Graph, et: tuple[str, str, str], gids: dict[str, np.ndarray],
                  specs: list[dict], weighted: str | None) -> tuple[list, list, list, list]:
    """Euler source and destination IDs, weights and feature rows of one edge type."""
    key = ":".join(et)
    frame = g.edges[et].data
    cols = [(s, _rows(frame[s["name"]], s, f"edge type {key!r}")) for s in specs]
    src, dst = g.edges(etype=et)
    w = frame["weight"].astype(np.float64).tolist() if weighted else [1.0] * len(src)
    return gids[et[0]][src].tolist(), gids[et[2]][dst].tolist(), w, cols


def _euler1_files(g: Graph, gids: dict[str, np.ndarray], rels: list[str], plan: tuple,
                  num_partitions: int, name: str) -> dict[str, str]:
    """``name_<idx>.json``: one block line per node, node_id % num_partitions == idx."""
    nspecs, nweights, especs, eweights = plan
    # per node type: the out-edge dicts of each node, in canonical-type then edge-ID order
    blocks: dict[str, list[list[dict]]] = {t: [[] for _ in range(g.num_nodes(t))]
                                           for t in g.ntypes}
    for et in g.canonical_etypes:
        key = ":".join(et)
        sg, dg, w, cols = _edge_columns(g, et, gids, especs[key], eweights[key])
        src = g.edges(etype=et)[0]
        r = rels.index(et[1])
        for i, (s, d) in enumerate(zip(sg, dg, strict=False)):
            blocks[et[0]][int(src[i])].append(
                {"src_id": s, "dst_id": d, "edge_type": r, "weight": w[i],
                 **_feature_maps(cols, i)})
    lines: list[list[str]] = [[] for _ in range(num_partitions)]
    for ti, nt in enumerate(progress(g.ntypes, desc="write euler", unit="ntype")):
        frame = g.nodes[nt].data
        cols = [(s, _rows(frame[s["name"]], s, f"node type {nt!r}")) for s in nspecs[nt]]
        node_w = frame["weight"].astype(np.float64).tolist() if nweights[nt] else None
        for i, gid in enumerate(gids[nt].tolist()):
            edges = blocks[nt][i]
            nbr: dict[str, dict[str, float]] = {str(r): {} for r in range(len(rels))}
            for e in edges:
                nbr[str(e["edge_type"])][str(e["dst_id"])] = e["weight"]
            block = {"node_id": gid, "node_type": ti, "node_weight": node_w[i] if node_w else 1.0,
                     "neighbor": nbr, **_feature_maps(cols, i), "edge": edges}
            lines[gid % num_partitions].append(json.dumps(block, separators=(",", ":")))
    return {f"{name}_{idx}.json": "\n".join(part) + ("\n" if part else "")
            for idx, part in enumerate(lines)}


def _euler2_features(cols: list[tuple[dict, list]], i: int) -> list[dict[str, Any]]:
    return [{"name": spec["name"], "type": _E2_TYPE[spec["kind"]], "value": rows[i]}
            for spec, rows in cols]


def _euler2_file(g: Graph, gids: dict[str, np.ndarray], rels: list[str], plan: tuple,
                 name: str) -> dict[str, str]:
    """``name.json``: Euler 2's one ``{"nodes": [...], "edges": [...]}`` document, with
    named features (``sparse`` uint64, ``dense`` float, ``binary`` text)."""
    nspecs, nweights, especs, eweights = plan
    nodes: list[dict[str, Any]] = []
    for ti, nt in enumerate(progress(g.ntypes, desc="write euler", unit="ntype")):
        frame = g.nodes[nt].data
        cols = [(s, _rows(frame[s["name"]], s, f"node type {nt!r}")) for s in nspecs[nt]]
        w = frame["weight"].astype(np.float64).tolist() if nweights[nt] else None
        nodes.extend({"id": gid, "type": ti, "weight": w[i] if w else 1.0,
                      "features": _euler2_features(cols, i)}
                     for i, gid in enumerate(gids[nt].tolist()))
    edges: list[dict[str, Any]] = []
    for et in g.canonical_etypes:
        key = ":".join(et)
        sg, dg, w, cols = _edge_columns(g, et, gids, especs[key], eweights[key])
        r = rels.index(et[1])
        edges.extend({"src": s, "dst": d, "type": r, "weight": w[i],
                      "features": _euler2_features(cols, i)}
                     for i, (s, d) in enumerate(zip(sg, dg, strict=False)))
    return {f"{name}.json": json.dumps({"nodes": nodes, "edges": edges},
                                       separators=(",", ":")) + "\n"}


def check_num_partitions(num_partitions: object) -> None:
    """A ValidationError unless ``num_partitions`` is an integer >= 1 (not a bool)."""
    if not isinstance(num_partitions, int) or isinstance(num_partitions, bool) or \
            num_partitions < 1:
        raise ValidationError(f"num_partitions must be an integer >= 1, got {num_partitions!r}",
                              field="num_partitions", value=num_partitions)


def prepare_write(g: Graph, out_dir: PathLike, name: str) -> tuple[Any, ...]:
    """What both Euler writers (JSON and ``.dat``) start from: the checked output folder,
    every node's global Euler ID, the relation names, and the feature plans of the nodes
    and edges (``(specs, weights, counts)`` each)."""
    check_path_name(name, field="name")
    out = check_euler_out(out_dir)
    nodes = _plan({t: g.nodes[t].data for t in g.ntypes}, {"node_id"}, "node type")
    edges = _plan({":".join(et): g.edges[et].data for et in g.canonical_etypes}, set(),
                  "edge type")
    return out, _global_ids(g), list(dict.fromkeys(g.etypes)), nodes, edges


def write_euler(g: Graph, out_dir: PathLike, num_partitions: int = 1, *,
                name: str = "graph", version: int = 1) -> None:
    """Write ``g`` as Euler JSON plus ``meta.json``: Euler 1 block lines partitioned by
    node ID (``version=1``) or Euler 2's one ``graph.json`` document (``version=2``).

    Euler 1: files are ``out_dir/<name>_<idx>.json``, holding the nodes with
    ``node_id % num_partitions == idx``.  Euler 2: one file ``out_dir/<name>.json``
    ``{"nodes": [{"id", "type", "weight", "features": [{"name", "type", "value"}]}],
    "edges": [{"src", "dst", "type", "weight", "features"}]}`` (Euler 2 partitions when
    it converts that file to its binary format, so ``num_partitions`` must be 1); Euler
    2's own index meta file is not written.  ``meta.json`` is written last.  Euler node
    IDs are the ``"node_id"`` feature when present (unique non-negative integers), else
    homogeneous IDs.  A 1-D numeric ``"weight"`` feature becomes the node/edge weight;
    integer features go to uint64 slots (Euler 2: ``sparse``), float features to float
    slots (``dense``), uint8 Ragged features to binary slots (UTF-8 text).  The meta's
    ``"graphshard"`` key records names, dtypes and shapes so that
    :func:`~graphshard.io.read_euler` restores the graph exactly (edges of each type come
    back sorted by source, stably).

    ``out_dir`` is new, empty, or a folder written by ``write_euler`` before, whose files
    are replaced (all of them: its meta first, so a failed write never leaves files that
    look complete); anything else is refused.

    Raises:
        ValidationError: a feature Euler cannot hold (negative integers in a uint64 slot,
            NaN, non-UTF-8 binary rows, other dtypes), repeated node IDs, a ``name`` that
            cannot be a file name, an ``out_dir`` named like a file (``x.json``), a
            ``version`` other than 1 or 2, or ``num_partitions > 1`` with version 2.
            Nothing is written then.
        ConfigError: ``out_dir`` is a file, or a folder holding something else.

    Example:
        >>> import tempfile, graphshard as gs
        >>> from graphshard.io import read_euler
        >>> d = tempfile.mkdtemp()
        >>> write_euler(gs.graph(([0, 1, 2], [1, 2, 0])), d, num_partitions=2)
        >>> sorted(p.name for p in Path(d).iterdir())
        ['graph_0.json', 'graph_1.json', 'meta.json']
        >>> write_euler(gs.graph(([0, 1, 2], [1, 2, 0])), d, version=2)
        >>> sorted(p.name for p in Path(d).iterdir()), read_euler(d).num_edges()
        (['graph.json', 'meta.json'], 3)
    """
    check_num_partitions(num_partitions)
    if version not in (1, 2):
        raise ValidationError(f"version must be 1 or 2 (Euler 1 block lines or Euler 2's "
                              f"graph.json), got {version!r}", field="version", value=version)
    if version == 2 and num_partitions != 1:
        raise ValidationError(f"Euler 2 data is one graph.json (Euler partitions it when it "
                              f"converts it); num_partitions must be 1, got {num_partitions}",
                              field="num_partitions", value=num_partitions)
    out, gids, rels, (nspecs, nweights, ncounts), (especs, eweights, ecounts) = \
        prepare_write(g, out_dir, name)
    plan = (nspecs, nweights, especs, eweights)
    meta: dict[str, Any] = {"node_type_num": len(g.ntypes), "edge_type_num": len(rels)}
    if version == 2:  # Euler 2 names its features: the name is the slot
        for spec in [s for specs in (*nspecs.values(), *especs.values()) for s in specs]:
            spec["slot"] = spec["name"]
        files = _euler2_file(g, gids, rels, plan, name)
    else:
        for side, counts in (("node", ncounts), ("edge", ecounts)):
            for kind in ("uint64", "float", "binary"):
                meta[f"{side}_{kind}_feature_num"] = counts[kind]
        files = _euler1_files(g, gids, rels, plan, num_partitions, name)
    meta["graphshard"] = {
        "format_version": 1, "euler_version": version, "node_types": list(g.ntypes),
        "relations": rels, "edge_types": [list(et) for et in g.canonical_etypes],
        "node_weight": nweights, "edge_weight": eweights,
        "node_features": nspecs, "edge_features": especs,
    }
    claim_out_dir(out, _is_ours, "Euler graph written by graphshard")
    _clear_previous(out)
    for file_name, text in files.items():
        with atomic_write(out / file_name, "w") as handle:
            handle.write(text)
    write_json_atomic(out / "meta.json", meta)
    mark_complete(out)
