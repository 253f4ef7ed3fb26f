"""Built-in partition methods (``random``, ``hash``, ``metis``) and :func:`run_method`.

The registry itself (:data:`METHODS`, :func:`register_method`) lives in
:mod:`~graphshard.partition.registry`; importing this module registers every method
(``backends`` and ``portfolio`` add ``kaminpar``, ``mtkahypar``, ``quality``, ``auto``).
A method takes the undirected :class:`~graphshard.partition.adjacency.Adjacency` of the
graph, the number of parts and :class:`MethodOptions`, and returns the part of every node
(int64, homogeneous original order).  The CLI's ``--method`` choices and the docs are read
from :data:`METHODS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ValidationError
from ..graph import Graph
from ..io.chunked import ChunkedMeta, iter_node_data_chunks
from ..runtime.alone import run_alone
from ..typing import IdArray
from .adjacency import Adjacency
from .metis_lib import metis_kway
from .registry import (
    METHODS,
    Method,
    MethodOptions,
    PartitionFn,
    register_method,
    register_stream,
)
from .runner import run_method

__all__ = ["METHODS", "RANDOM_BLOCK", "Method", "MethodOptions", "PartitionFn",
           "balanced_random_parts", "original_node_ids", "register_method", "run_method"]


#: Nodes per block of :func:`balanced_random_parts` (its draws are made a block at a time,
#: so an out-of-core caller holds one block of the permutation, never all of it).
RANDOM_BLOCK = 1 << 20


def balanced_random_parts(type_counts: Sequence[int], num_parts: int, seed: int) -> IdArray:
    """Balanced random parts of every node, in homogeneous order: each node type's IDs are
    cut into blocks of :data:`RANDOM_BLOCK`, each block is dealt round-robin
    (``id % num_parts``) and shuffled with a generator keyed by ``(seed, type, block)``.
    Every node type is balanced to within one node per block; ``partition_graph`` and the
    out-of-core ``assign`` both call this, so the same seed gives the same parts in both.

    Args:
        type_counts: Nodes of each node type, in declared order.
        num_parts: Number of parts (>= 1).
        seed: Seed of the draws.

    Returns:
        int64 array of ``sum(type_counts)`` parts (a new array).

    Example:
        >>> parts = balanced_random_parts([4, 6], 2, seed=0)
        >>> np.bincount(parts[:4]).tolist(), np.bincount(parts[4:]).tolist()
        ([2, 2], [3, 3])
    """
    parts = np.empty(int(sum(type_counts)), dtype=np.int64)
    offset = 0
    for t, n in enumerate(type_counts):
        for b, lo in enumerate(range(0, int(n), RANDOM_BLOCK)):
            hi = min(lo + RANDOM_BLOCK, int(n))
            rng = np.random.default_rng([seed, t, b])
            parts[offset + lo:offset + hi] = rng.permutation(np.arange(lo, hi) % num_parts)
        offset += int(n)
    return parts


@register_method("random", "balanced random assignment (per node type, dealt round-robin "
                 "and shuffled, the same draws as the out-of-core assign)", uses_structure=False,
                 objectives=())
def _random(adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
    counts = options.type_counts or (adj.num_nodes,)
    if sum(counts) != adj.num_nodes:
        raise ValidationError(f"random: type_counts {list(counts)} sum to {sum(counts)}, but "
                              f"the graph has {adj.num_nodes} nodes", field="type_counts")
    return balanced_random_parts(counts, num_parts, options.seed)


@register_method("hash", "part = original node ID % num_parts (the graph's integer node_id "
                 "feature, e.g. Euler's; else the homogeneous ID)", uses_structure=False,
                 objectives=())
def _hash(adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
    """Euler's modulo rule: ``node_id % num_parts`` on the nodes' original IDs
    (``options.node_ids``, which :func:`original_node_ids` reads from the graph's
    ``"node_id"`` feature), else on the homogeneous IDs (per-type IDs offset by the node
    types before them, in declared order).  Euler IDs ``[2, 4, 6, 1, 3, 5]`` in 2 parts
    give ``[0, 0, 0, 1, 1, 1]``, the split of Euler's ``xxx_<idx>`` files.

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> adj = symmetric_adjacency(np.array([0, 2]), np.array([1, 3]), 6)
        >>> _hash(adj, 2, MethodOptions()).tolist()
        [0, 1, 0, 1, 0, 1]
        >>> ids = np.array([2, 4, 6, 1, 3, 5], dtype=np.uint64)
        >>> _hash(adj, 2, MethodOptions(node_ids=ids)).tolist()
        [0, 0, 0, 1, 1, 1]
    """
    ids = options.node_ids
    if ids is None:
        return np.arange(adj.num_nodes, dtype=np.int64) % num_parts
    ids = np.asarray(ids)
    if ids.shape != (adj.num_nodes,) or ids.dtype.kind not in "iu":
        raise ValidationError(f"hash: node_ids must be {adj.num_nodes} integers (one per "
                              f"node), got {ids.dtype} of shape {ids.shape}", field="node_ids")
    if ids.dtype.kind == "i" and ids.size and ids.min() < 0:
        raise ValidationError(f"hash: node_ids has a negative ID {ids.min()}", field="node_ids")
    # uint64 keeps IDs above 2**63 exact; the remainder fits int64
    return (ids.astype(np.uint64) % np.uint64(num_parts)).astype(np.int64)


# ----- the streaming forms: a chunked graph's files, read in bounded memory -----------------
def split_by_type(meta: ChunkedMeta, parts: IdArray) -> dict[str, IdArray]:
    """Homogeneous-order parts as ``{ntype: parts}`` (views), node types in declared order."""
    counts = list(meta.num_nodes.values())
    return dict(zip(meta.num_nodes, np.split(parts, np.cumsum(counts)[:-1]), strict=True))


@register_stream("random")
def _random_stream(meta: ChunkedMeta, num_parts: int, options: MethodOptions,
                   **_: object) -> dict[str, IdArray]:
    """``random`` from the node counts alone: the draws of the in-memory form."""
    return split_by_type(meta, balanced_random_parts(list(meta.num_nodes.values()),
                                                      num_parts, options.seed))


@register_stream("hash")
def _hash_stream(meta: ChunkedMeta, num_parts: int, options: MethodOptions,
                 **_: object) -> dict[str, IdArray]:
    """``hash`` read chunk by chunk: ``node_id % num_parts`` when every node type has a
    non-negative integer ``node_id`` feature (what :func:`original_node_ids` takes in
    memory), else the homogeneous ID."""
    by_node_id = _node_id_parts(meta, num_parts)
    if by_node_id is not None:
        return by_node_id
    total = sum(meta.num_nodes.values())
    return split_by_type(meta, np.arange(total, dtype=np.int64) % num_parts)


def _node_id_parts(meta: ChunkedMeta, num_parts: int) -> dict[str, IdArray] | None:
    """``node_id % num_parts`` per node type, read chunk by chunk; None when a type has no
    ``node_id`` feature or one that is not non-negative integers."""
    if not all("node_id" in meta.node_data.get(t, {}) for t in meta.num_nodes):
        return None
    out = {}
    for ntype, n in meta.num_nodes.items():
        parts = np.empty(n, dtype=np.int64)
        for chunk in iter_node_data_chunks(meta, ntype, "node_id"):
            col = chunk.data
            if not isinstance(col, np.ndarray) or col.ndim != 1 or col.dtype.kind not in "iu" \
                    or (col.dtype.kind == "i" and col.size and col.min() < 0):
                return None
            parts[chunk.offset:chunk.offset + len(col)] = \
                col.astype(np.uint64) % np.uint64(num_parts)
        out[ntype] = parts
    return out


@register_stream("lp", "multilevel size-constrained label propagation over the edge chunks, "
                 "out of core (nodes and in-edges balanced)")
def _lp_stream(meta: ChunkedMeta, num_parts: int, options: MethodOptions,
               **run: Any) -> dict[str, IdArray]:
    from .lp import lp_assign  # numba kernels: loaded on first use

    return lp_assign(meta, num_parts, imbalance=options.imbalance, seed=options.seed,
                     **{k: v for k, v in run.items() if v is not None})


def original_node_ids(g: Graph) -> np.ndarray | None:
    """The nodes' original IDs in homogeneous order: the ``"node_id"`` feature of every
    node type (readers of Euler, PGL and integer edge lists keep the file's IDs there) when
    each is a 1-D non-negative integer array; else None (string IDs, no such feature).

    Example:
        >>> import graphshard as gs
        >>> g = gs.heterograph({("u", "buys", "i"): ([0, 1], [2, 0])}, {"u": 2, "i": 3})
        >>> original_node_ids(g) is None
        True
        >>> g.nodes["u"].data["node_id"] = np.array([7, 9])
        >>> g.nodes["i"].data["node_id"] = np.array([4, 6, 8])
        >>> original_node_ids(g).tolist()
        [7, 9, 4, 6, 8]
    """
    cols = []
    for nt in g.ntypes:
        frame = g.nodes[nt].data
        col = frame.get("node_id")
        if not isinstance(col, np.ndarray) or col.ndim != 1 or col.dtype.kind not in "iu" \
                or (col.dtype.kind == "i" and col.size and col.min() < 0):
            return None
        cols.append(col.astype(np.uint64))
    return np.concatenate(cols) if cols else np.zeros(0, np.uint64)


@register_method("metis", "METIS 5 (recursive bisection up to 8 parts, else k-way); "
                 "multi-constraint balance, cut or volume objective", multi_constraint=True,
                 objectives=("cut", "vol"))
def _metis(adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
    # Recursive bisection for k <= 8, as pymetis does by default: a much lower cut than
    # k-way's on R-MAT, about the same on a random geometric graph (benchmarks/TUNING.md).
    # DGL always runs k-way.  "vol" needs k-way.
    # run_alone: METIS draws from libc's rand(), which Ray's threads share when Ray runs here
    recursive = num_parts <= 8 and options.objtype == "cut"
    return run_alone(metis_kway, adj, num_parts, imbalance=options.imbalance,
                     objtype=options.objtype, seed=options.seed, recursive=recursive)
# registers kaminpar, mtkahypar, quality and auto
from . import backends, portfolio  # noqa: E402,F401
