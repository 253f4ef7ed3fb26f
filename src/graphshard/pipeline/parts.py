"""Dispatch step 5: build and write one part from the routed pieces (one task per part)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import FormatError
from ..partition.files import write_part
from ..partition.local_graphs import LocalGraph, assemble_local_graph, one_hop_local_graph
from ..ragged import Ragged
from ..storage import fsys
from ..storage.files import gather_npy, load_npy
from ..storage.pieces import finish_piece, finished_summary
from ..storage.tensorfile import release_pages
from ..typing import IdArray

if TYPE_CHECKING:
    from .plan import Plan

__all__ = ["build_part"]


def _edges_of_part(plan: Plan, q: int, edge_ranges: np.ndarray, prefix: np.ndarray
                   ) -> tuple[IdArray, IdArray, IdArray, IdArray, np.ndarray]:
    """All edges owned by part ``q`` in new edge-ID order: (eid, src, dst, orig eid, type)."""
    eids = np.concatenate([np.arange(edge_ranges[e, q, 0], edge_ranges[e, q, 1], dtype=np.int64)
                           for e in range(len(plan.edge_chunks))] or [np.zeros(0, np.int64)])
    return (eids, *_inner_edges(plan, q, edge_ranges, prefix))


def _inner_edges(plan: Plan, q: int, edge_ranges: np.ndarray, prefix: np.ndarray
                 ) -> tuple[IdArray, IdArray, IdArray, np.ndarray]:
    """Part ``q``'s edges in new edge-ID order: (src, dst, orig eid, type), read from the
    routed pieces into fresh arrays (int64, ``type`` int32) the caller may change in place.

    Raises:
        FormatError: a piece does not hold the edge count the routing step returned.
    """
    sizes = edge_ranges[:, q, 1] - edge_ranges[:, q, 0]
    total = int(sizes.sum())
    src, dst, orig = (np.empty(total, dtype=np.int64) for _ in range(3))
    types = np.empty(total, dtype=np.int32)
    etype_offsets = np.concatenate([[0], np.cumsum([sum(r for _, r in c)
                                                    for c in plan.edge_chunks])])
    at = 0
    for e, chunks in enumerate(plan.edge_chunks):
        types[at:at + sizes[e]] = e
        for c, (offset, _) in enumerate(chunks):
            piece, lo, hi, path = plan.edge_part(e, c, q)
            if hi - lo != prefix[e, c + 1, q] - prefix[e, c, q]:
                raise FormatError(f"{path}: holds {hi - lo} edges of part {q}, the routing "
                                  f"step counted {prefix[e, c + 1, q] - prefix[e, c, q]}",
                                  path=str(path), field="counts")
            src[at:at + hi - lo] = piece["src"][lo:hi]
            dst[at:at + hi - lo] = piece["dst"][lo:hi]
            np.add(piece["pos"][lo:hi], etype_offsets[e] + offset, out=orig[at:at + hi - lo])
            at += hi - lo
    return src, dst, orig, types


def _features(plan: Plan, kind: str, p: int) -> dict[str, Any]:
    feats = plan.node_feats if kind == "node" else plan.edge_feats
    names = plan.ntypes if kind == "node" else plan.etypes
    out: dict[str, Any] = {}
    for i, type_name in enumerate(names):
        for f, (name, chunks) in enumerate(feats.get(type_name, [])):
            pieces: list[Ragged | np.ndarray] = []
            for c in range(len(chunks)):
                tensors, meta = plan.feat_part(kind, i, f, c, p)
                if meta.get("ragged") == "True":
                    pieces.append(Ragged(tensors[f"{p}/values"], tensors[f"{p}/offsets"]))
                else:
                    pieces.append(tensors[f"{p}"])
            out[f"{type_name}/{name}"] = _concat(pieces)
    return out


def _concat(pieces: list[Any]) -> Any:
    if pieces and isinstance(pieces[0], Ragged):
        lengths = np.concatenate([r.lengths for r in pieces])
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return Ragged(np.concatenate([r.values for r in pieces]), offsets)
    return np.concatenate(pieces)


def build_part(plan: Plan, p: int, node_ranges: np.ndarray, edge_ranges: np.ndarray,
               prefix: np.ndarray, save_orig_ids: bool) -> dict[str, Any]:
    """Write part ``p``'s files (skipped when a verified earlier run already did).

    With a remote output (a URI), the part is built in this task's node-local scratch,
    uploaded by this task (each file's size checked), and its done-marker written to the
    remote work folder last; the routed pieces it copied are dropped when it ends."""
    remote = fsys.is_remote(plan.out)
    out = Path(plan.out) if not remote else plan.store.path(f"out/part{p}/x").parents[1]
    rel_names = ["graph", "node_feats", "edge_feats"] + (["orig_ids"] if save_orig_ids else [])
    files = [out / f"part{p}" / f"{n}.safetensors" for n in rel_names]
    key = json.dumps([p, node_ranges.tolist(), edge_ranges.tolist(), plan.num_hops,
                      save_orig_ids, plan.trainers])
    done = _finished_remote_part(plan, p, key) if remote else finished_summary(files, key)
    if done is not None:
        return cast(dict[str, Any], done)
    try:
        summary = _build_part(plan, p, out, node_ranges, edge_ranges, prefix, save_orig_ids)
    finally:
        plan.release_pieces()
    if not remote:
        return cast(dict[str, Any], finish_piece(
            files, key, summary, {out / path: rec["sha256"]
                                  for path, rec in summary["files"].items()}))
    dest = fsys.open_location(plan.out)
    for path in summary["files"]:
        dest.child(path).upload(out / path)
        (out / path).unlink()
    plan.store.write_marker(f"parts/part{p}", {"key": key, "summary": summary})
    return summary


def _finished_remote_part(plan: Plan, p: int, key: str) -> Any | None:
    """The summary of part ``p`` from an earlier run of a remote output, when its marker
    has ``key`` and every file it records is there with its size (else None)."""
    info = plan.store.read_marker(f"parts/part{p}")
    if info is None or info.get("key") != key:
        return None
    dest = fsys.open_location(plan.out)
    for path, rec in info["summary"]["files"].items():
        if dest.child(path).size() != rec["bytes"]:
            return None
    return info["summary"]


def _build_part(plan: Plan, p: int, out: Path, node_ranges: np.ndarray,
                edge_ranges: np.ndarray, prefix: np.ndarray, save_orig_ids: bool
                ) -> dict[str, Any]:
    """Build part ``p`` and write its files under ``out``; its summary."""
    part_bounds = np.concatenate([[0], node_ranges[-1, :, 1]])
    src, dst, orig, etypes = _inner_edges(plan, p, edge_ranges, prefix)
    lo, hi = int(part_bounds[p]), int(part_bounds[p + 1])
    first_edge = int(edge_ranges[0, p, 0]) if len(src) else \
        int(edge_ranges[:, p, 0].min(initial=0))
    fast = (one_hop_local_graph(p, lo, hi, int(part_bounds[-1]), first_edge, src, dst)
            if plan.num_hops == 1 else None)
    if fast is not None:
        local, cut = fast
    else:
        local, cut = _local_graph(plan, p, (lo, hi), first_edge, src, dst, part_bounds,
                                  edge_ranges, prefix)
    new2orig = load_npy(plan.new2orig_file(), mmap_mode="r")
    flat_ends = node_ranges.transpose(1, 0, 2).reshape(-1, 2)[:, 1]
    num_types = node_ranges.shape[0]
    node_type = (np.searchsorted(flat_ends, local.nodes, side="right") % num_types
                 if num_types > 1 else np.zeros(len(local.nodes), dtype=np.int32))
    halo_edges = local.edges[local.num_inner_edges:]
    edge_orig, edge_type = orig, etypes
    if len(halo_edges):
        _, _, _, h_orig, h_types = _halo_edge_data(plan, halo_edges, edge_ranges, prefix)
        edge_orig = np.concatenate([orig, h_orig])
        edge_type = np.concatenate([etypes, h_types])
    node_feats = _features(plan, "node", p)
    if plan.trainers > 1:
        node_feats.update(_trainer_ids(plan, p, node_ranges, new2orig))
    orig_ids = (_orig_ids(plan, p, node_ranges, new2orig, orig, etypes) if save_orig_ids
                else None)
    release_pages([new2orig])  # the owned ranges read above are not needed again
    # the part's nodes (HALO nodes too) are spread over the whole map: read in blocks,
    # not through the map, whose pages would all count in this task's resident set
    node_orig = gather_npy(plan.new2orig_file(), local.nodes)
    rel, records = write_part(
        out, p, local, node_part=np.searchsorted(part_bounds[1:], local.nodes, side="right"),
        node_orig=node_orig, node_type=node_type.astype(np.int32, copy=False),
        edge_orig=edge_orig, edge_type=edge_type.astype(np.int32, copy=False),
        node_feats=node_feats,
        edge_feats=_features(plan, "edge", p), orig_ids=orig_ids)
    return {"rel": rel, "files": records, "halo": local.num_halo_nodes,
            "halo1": local.halo_per_hop[0] if local.halo_per_hop else 0, "cut": cut}


def _local_graph(plan: Plan, p: int, node_range: tuple[int, int], first_edge: int,
                 src: IdArray, dst: IdArray, part_bounds: np.ndarray, edge_ranges: np.ndarray,
                 prefix: np.ndarray) -> tuple[LocalGraph, int]:
    """The local graph through :func:`assemble_local_graph` (any number of hops)."""
    fetch = None
    if plan.num_hops > 1:
        def fetch(nodes: IdArray) -> tuple[IdArray, IdArray, IdArray]:
            owners = np.searchsorted(part_bounds[1:], nodes, side="right")
            got: tuple[list[IdArray], list[IdArray], list[IdArray]] = [], [], []
            for q in np.unique(owners):
                q_eids, q_src, q_dst, _, _ = _edges_of_part(plan, int(q), edge_ranges, prefix)
                sel = np.isin(q_dst, nodes[owners == q])
                for acc, arr in zip(got, (q_eids, q_src, q_dst), strict=True):
                    acc.append(arr[sel])
            return tuple(np.concatenate(a) if a else np.zeros(0, np.int64)  # type: ignore
                         for a in got)
    lo, hi = node_range
    local = assemble_local_graph(p, node_range, first_edge, src, dst, plan.num_hops, fetch)
    return local, int(np.count_nonzero((src < lo) | (src >= hi)))


def _halo_edge_data(plan: Plan, halo_edges: IdArray, edge_ranges: np.ndarray,
                    prefix: np.ndarray) -> tuple[IdArray, IdArray, IdArray, IdArray, IdArray]:
    """Original IDs and types of halo edges (global new IDs, sorted), from their owners."""
    bounds = np.concatenate([[0], edge_ranges[-1, :, 1]])
    owners = np.searchsorted(bounds[1:], halo_edges, side="right")
    acc: list[list[np.ndarray]] = [[], [], [], [], []]
    for q in np.unique(owners):
        data = _edges_of_part(plan, int(q), edge_ranges, prefix)
        want = halo_edges[owners == q]
        pos = np.searchsorted(data[0], want)
        for a, arr in zip(acc, data, strict=True):
            a.append(arr[pos])
    return tuple(np.concatenate(a) for a in acc)  # type: ignore[return-value]


def _trainer_ids(plan: Plan, p: int, node_ranges: np.ndarray, new2orig: np.ndarray
                 ) -> dict[str, IdArray]:
    """``"<ntype>/trainer_id"``: the trainer part of the part's inner nodes, in new-ID order
    (the feature :func:`~graphshard.partition_graph` writes with trainers per machine)."""
    out: dict[str, IdArray] = {}
    offsets = np.concatenate([[0], np.cumsum(plan.num_nodes)])
    for t, ntype in enumerate(plan.ntypes):
        lo, hi = node_ranges[t, p]
        trainer = load_npy(plan.trainer_file(t), mmap_mode="r")
        out[f"{ntype}/trainer_id"] = np.asarray(
            trainer[np.asarray(new2orig[lo:hi]) - offsets[t]], dtype=np.int64)
    return out


def _orig_ids(plan: Plan, p: int, node_ranges: np.ndarray, new2orig: np.ndarray,
              edge_orig: IdArray, edge_types: IdArray) -> dict[str, IdArray]:
    """Original per-type IDs of the part's inner nodes and edges, in new-ID order."""
    out: dict[str, IdArray] = {}
    offsets = np.concatenate([[0], np.cumsum(plan.num_nodes)])
    for t, ntype in enumerate(plan.ntypes):
        lo, hi = node_ranges[t, p]
        out[f"node/{ntype}"] = np.asarray(new2orig[lo:hi]) - offsets[t]
    eoffsets = np.concatenate([[0], np.cumsum([sum(r for _, r in c)
                                               for c in plan.edge_chunks])])
    for e, etype in enumerate(plan.etypes):  # one edge type: the array itself, no copies
        mine = edge_orig if len(plan.etypes) == 1 else edge_orig[edge_types == e]
        out[f"edge/{etype}"] = mine - eoffsets[e] if eoffsets[e] else mine
    return out
