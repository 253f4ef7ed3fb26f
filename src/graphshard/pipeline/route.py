"""Steps 1-4 of dispatch: count the parts of each block of node IDs, write the node ID maps,
route every edge chunk to the part of its destination (in new IDs), and split every
feature chunk by owning part.  Each task holds one block or one chunk and leaves a
resumable piece in the work folder (:mod:`graphshard.storage.pieces`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np

from .._util.arrays import group_order
from ..errors import FormatError
from ..io.chunked import ChunkedMeta, read_data_chunk, read_edge_chunk
from ..partition.build_kernels import new_ids_of_block, route_edges
from ..ragged import Ragged
from ..storage.files import (
    atomic_path,
    load_npy,
)
from ..storage.tensorfile import save_tensors
from .plan import Plan, node_block_rel

__all__ = ["EDGE_PIECE_LAYOUT", "run_feature_steps", "run_id_steps"]


# ----- step 1 and 2: node IDs ---------------------------------------------------------------
def _block_counts(plan: Plan, t: int, b: int) -> list[int]:
    parts = _assignment_block(plan, t, b)
    return np.bincount(parts, minlength=plan.num_parts).tolist()


def _assignment_block(plan: Plan, t: int, b: int) -> np.ndarray:
    lo = b * plan.node_block
    hi = min(lo + plan.node_block, plan.num_nodes[t])
    parts = np.asarray(load_npy(plan.assignment_file(t), mmap_mode="r")[lo:hi], dtype=np.int64)
    bad = np.flatnonzero((parts < 0) | (parts >= plan.num_parts))
    if bad.size:
        raise FormatError(f"assignment of node type {plan.ntypes[t]!r}: node {lo + bad[0]} has "
                          f"part {parts[bad[0]]}, outside [0, {plan.num_parts})",
                          field=plan.ntypes[t], value=int(parts[bad[0]]))
    return parts


def _write_node_maps(plan: Plan, t: int, b: int, starts: list[int], type_offset: int) -> None:
    """New IDs of one block: part p's nodes get ``starts[p]``, ``starts[p] + 1``, ...

    A local work folder's maps are written in place (every block task maps the same
    files); a remote one gets the block as its own piece, which the tasks that read the
    maps join on their node (:func:`joined_node_maps`)."""
    parts = _assignment_block(plan, t, b)
    lo = b * plan.node_block
    new_ids = new_ids_of_block(parts, np.asarray(starts, dtype=np.int64))
    if plan.store.remote:
        rel = node_block_rel(t, b)
        with atomic_path(plan.store.path(rel), durable=False) as tmp, open(tmp, "wb") as out:
            np.save(out, new_ids, allow_pickle=False)
        plan.store.finish([rel], f"node-block:{t}:{b}", None)
        return
    orig2new = load_npy(plan.node_map_file(t), mmap_mode="r+")
    orig2new[lo:lo + len(parts)] = new_ids
    orig2new.flush()
    new2orig = load_npy(plan.new2orig_file(), mmap_mode="r+")
    new2orig[new_ids] = type_offset + lo + np.arange(len(parts), dtype=np.int64)
    new2orig.flush()


# ----- step 3: edges --------------------------------------------------------------------------
#: Layout of the edge pieces, part of their resume keys (pieces of another layout are redone):
#: ``counts`` (int64, edges per part), then ``src``, ``dst`` (new IDs, int32 when every new
#: node ID fits) and ``pos`` (position in the chunk) grouped by owning part, part 0 first.
EDGE_PIECE_LAYOUT = 2


def _split_edge_chunk(plan: Plan, e: int, c: int, part_bounds: list[int]) -> list[int]:
    rels, store = plan.edge_rels(e, c), plan.store
    key = f"edges-v{EDGE_PIECE_LAYOUT}:{plan.etypes[e]}:{c}:{plan.num_parts}:{part_bounds[-1]}"
    done = store.finished(rels, key)
    if done is not None:
        return cast(list[int], done)
    meta = plan.meta()
    offset, _ = plan.edge_chunks[e][c]
    chunk = read_edge_chunk(meta, plan.etypes[e], c, offset)  # IDs checked against the maps
    st, _, dt = plan.etypes[e].split(":")
    counts, src, dst, pos = route_edges(
        chunk.src, chunk.dst, load_npy(plan.node_map_file(plan.ntypes.index(st)), mmap_mode="r"),
        load_npy(plan.node_map_file(plan.ntypes.index(dt)), mmap_mode="r"),
        np.asarray(part_bounds[1:], dtype=np.int64),
        np.int32 if part_bounds[-1] <= 1 << 31 else np.int64)
    if not store.remote:
        digest = save_tensors(store.path(rels[0]), {"counts": counts, "src": src, "dst": dst,
                                                    "pos": pos},
                              reuse=plan.scratch, durable=False)  # checksummed for reuse
        return cast(list[int], store.finish(rels, key, counts.tolist(), {rels[0]: digest}))
    cut = np.concatenate([[0], np.cumsum(counts)])
    digests = {rel: save_tensors(store.path(rel), {
        "counts": counts, "src": src[cut[q]:cut[q + 1]], "dst": dst[cut[q]:cut[q + 1]],
        "pos": pos[cut[q]:cut[q + 1]]}, durable=False) for q, rel in enumerate(rels)}
    return cast(list[int], store.finish(rels, key, counts.tolist(), digests))


def _edge_piece_owners(plan: Plan, e: int, c: int) -> np.ndarray:
    """Owning part of every edge of one routed chunk, in chunk order (int64)."""
    tensors, _, _, _ = plan.edge_part(e, c, 0)
    counts = np.asarray(tensors["counts"])
    owner = np.empty(int(counts.sum()), dtype=np.int64)
    if not plan.store.remote:  # one file holds every part, grouped by part
        owner[np.asarray(tensors["pos"])] = np.repeat(np.arange(len(counts)), counts)
        return owner
    for q in range(plan.num_parts):  # a file per part
        tensors, lo, hi, _ = plan.edge_part(e, c, q)
        owner[np.asarray(tensors["pos"][lo:hi])] = q
    return owner


# ----- step 4: features -----------------------------------------------------------------------
def _owners_of_rows(plan: Plan, kind: str, i: int, lo: int, hi: int) -> np.ndarray:
    if kind == "node":
        return np.asarray(load_npy(plan.assignment_file(i), mmap_mode="r")[lo:hi],
                          dtype=np.int64)
    pieces = []
    for c, (offset, rows) in enumerate(plan.edge_chunks[i]):
        if offset < hi and offset + rows > lo:
            owner = _edge_piece_owners(plan, i, c)
            pieces.append(owner[max(lo - offset, 0):min(hi, offset + rows) - offset])
    return np.concatenate(pieces).astype(np.int64) if pieces else np.zeros(0, np.int64)


def _split_feature_chunk(plan: Plan, kind: str, i: int, f: int, c: int) -> int:
    feats = plan.node_feats if kind == "node" else plan.edge_feats
    type_name = (plan.ntypes if kind == "node" else plan.etypes)[i]
    name, chunks = feats[type_name][f]
    rels, store = plan.feat_rels(kind, i, f, c), plan.store
    key = f"feat:{kind}:{type_name}:{name}:{c}:{plan.num_parts}"
    if store.finished(rels, key) is not None:
        return 0
    offset, rows = chunks[c]
    data = read_data_chunk(plan.meta(), kind, type_name, name, c, offset).data
    if len(data) != rows:
        raise FormatError(f"feature {name!r} of {type_name!r}: chunk {c} has {len(data)} rows, "
                          f"the count pass saw {rows}", field=name)
    owner = _owners_of_rows(plan, kind, i, offset, offset + rows)
    order = group_order(owner, plan.num_parts)
    cut = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=plan.num_parts))])
    tensors: dict[str, np.ndarray] = {}
    for p in range(plan.num_parts):
        rows_p = order[cut[p]:cut[p + 1]]
        if isinstance(data, Ragged):
            taken = data.take(rows_p)
            tensors[f"{p}/values"], tensors[f"{p}/offsets"] = taken.values, taken.offsets
        else:
            tensors[f"{p}"] = np.ascontiguousarray(data[rows_p])
    ragged = {"ragged": str(isinstance(data, Ragged))}
    if not store.remote:
        digest = save_tensors(store.path(rels[0]), tensors, ragged, reuse=plan.scratch,
                              durable=False)  # checksummed for reuse
        store.finish(rels, key, 0, {rels[0]: digest})
        return 0
    digests = {rel: save_tensors(store.path(rel), {n: t for n, t in tensors.items()
                                                   if n.split("/")[0] == str(p)},
                                 ragged, durable=False) for p, rel in enumerate(rels)}
    store.finish(rels, key, 0, digests)
    if kind == "edge":  # the routed edge pieces this task read
        for c2, (offset2, rows2) in enumerate(plan.edge_chunks[i]):
            if offset2 < offset + rows and offset2 + rows2 > offset:
                for rel in plan.edge_rels(i, c2):
                    store.release(rel)
    return 0


def _empty_map(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.lib.format.open_memmap(path, mode="w+", dtype=np.int64, shape=(size,)).flush()


def run_id_steps(plan: Plan, executor, meta: ChunkedMeta, budget: int | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k, T, E = plan.num_parts, len(plan.ntypes), len(plan.etypes)
    blocks = [list(range(-(-n // plan.node_block))) for n in plan.num_nodes]
    tasks = [(plan, t, b) for t in range(T) for b in blocks[t]]
    counts = [_block_counts(*task) for task in tasks]  # a bincount per block: no task needed
    per_block = {(t, b): np.asarray(c, dtype=np.int64) for (_, t, b), c in zip(tasks, counts,
                                                                                strict=True)}
    sizes = np.zeros((T, k), dtype=np.int64)
    for (t, _), c in per_block.items():
        sizes[t] += c
    ends = np.cumsum(sizes.T.reshape(-1)).reshape(k, T)
    node_ranges = np.stack([ends - sizes.T, ends], axis=-1).transpose(1, 0, 2).copy()
    if not plan.store.remote:  # every block task writes its rows of these files
        for t in range(T):
            _empty_map(plan.node_map_file(t), plan.num_nodes[t])
        _empty_map(plan.new2orig_file(), int(sizes.sum()))
    type_offsets = np.concatenate([[0], np.cumsum(plan.num_nodes)])
    map_tasks = []
    for t in range(T):
        start = node_ranges[t, :, 0].copy()
        for b in blocks[t]:
            map_tasks.append((plan, t, b, start.tolist(), int(type_offsets[t])))
            start += per_block[(t, b)]
    executor.map(_write_node_maps, map_tasks, desc="mapping node IDs", memory=budget)
    bounds = [0, *node_ranges[-1, :, 1].tolist()] if T else [0] * (k + 1)
    edge_tasks = [(plan, e, c, bounds) for e in range(E) for c in range(len(plan.edge_chunks[e]))]
    edge_counts = executor.map(_split_edge_chunk, edge_tasks, desc="routing edges", memory=budget)
    prefix = np.zeros((E, max((len(c) for c in plan.edge_chunks), default=0) + 1, k),
                      dtype=np.int64)
    for task, cnt in zip(edge_tasks, edge_counts, strict=True):
        prefix[task[1], task[2] + 1] = cnt
    prefix = np.cumsum(prefix, axis=1)
    esizes = np.stack([prefix[e, len(plan.edge_chunks[e])] for e in range(E)]) if E else \
        np.zeros((0, k), dtype=np.int64)
    eends = np.cumsum(esizes.T.reshape(-1)).reshape(k, E) if E else np.zeros((k, 0), np.int64)
    edge_ranges = (np.stack([eends - esizes.T, eends], axis=-1).transpose(1, 0, 2).copy()
                   if E else np.zeros((0, k, 2), dtype=np.int64))
    return node_ranges, edge_ranges, prefix


def run_feature_steps(plan: Plan, executor, budget: int | None) -> None:
    tasks: list[tuple[Any, ...]] = []
    for kind, feats, names in (("node", plan.node_feats, plan.ntypes),
                               ("edge", plan.edge_feats, plan.etypes)):
        for i, type_name in enumerate(names):
            for f, (_, chunks) in enumerate(feats.get(type_name, [])):
                tasks.extend((plan, kind, i, f, c) for c in range(len(chunks)))
    if tasks:
        executor.map(_split_feature_chunk, tasks, desc="routing features", memory=budget)
