"""Edge-seeded sampling for link prediction: a batch of edges, negatives, and blocks.

:func:`sample_link_batch` takes edge IDs (one edge type of a graph with one node type),
draws ``num_negatives`` uniform negative destinations for each edge's source with the keyed
:func:`~graphshard.sampling.negative_sample`, and samples blocks around the union of all
endpoints with :func:`~graphshard.sampling.sample_blocks`.  The seed edges are excluded from
message passing (``exclude="self"``), and with ``exclude="reverse"`` their reverse edges too
(from :func:`reverse_edge_ids`), so a model never sees the edge it is asked to predict.
Parallel copies of a seed edge are not excluded.

Example:
    >>> import graphshard as gs
    >>> g = gs.graph(([0, 1, 1, 2], [1, 0, 2, 1]))
    >>> rev = reverse_edge_ids(g)
    >>> rev.tolist()
    [1, 0, 3, 2]
    >>> b = sample_link_batch(g, [0], [-1], num_negatives=2, exclude="reverse",
    ...                       reverse_eids=rev, seed=0)
    >>> nodes = b.blocks.output_nodes["_N"]
    >>> nodes[b.src].tolist(), nodes[b.dst].tolist(), b.neg_dst.shape
    ([0], [1], (1, 2))
    >>> b.blocks.blocks[0].eids[("_N", "_E", "_N")].tolist()  # 2 -> 1; not 0 -> 1 nor 1 -> 0
    [3]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._util.arrays import as_ids, check_id_range
from ..errors import ValidationError, check_choice
from ..store import as_store
from ..typing import IdArray
from .blocks import SampledBlocks, sample_blocks
from .pairs import negative_sample
from .validate import resolve_seed

__all__ = ["EXCLUDE", "LinkBatch", "first_unique", "reverse_edge_ids", "sample_link_batch"]

#: Valid ``exclude`` values of :func:`sample_link_batch`.
EXCLUDE = (None, "self", "reverse")


@dataclass(frozen=True)
class LinkBatch:
    """One batch of seed edges with negatives and the blocks around their endpoints.

    Attributes:
        eids: The seed edge IDs (int64, ``(b,)``).
        src: Each seed edge's source as a position in ``blocks.output_nodes`` (``(b,)``).
        dst: Its destination, likewise.
        neg_dst: Negative destinations of each source, positions likewise (``(b, k)``).
        blocks: Blocks whose output nodes are every endpoint and negative, once each.
    """

    eids: IdArray
    src: IdArray
    dst: IdArray
    neg_dst: IdArray
    blocks: SampledBlocks

    def __repr__(self) -> str:
        return (f"LinkBatch(num_edges={len(self.eids)}, num_negatives={self.neg_dst.shape[1]}, "
                f"blocks={self.blocks!r})")


def first_unique(ids: IdArray) -> tuple[IdArray, IdArray]:
    """``(unique, index)``: the distinct IDs in order of first appearance, and each input's
    position among them (``unique[index] == ids``).

    Example:
        >>> u, i = first_unique(np.array([7, 3, 7, 5]))
        >>> u.tolist(), i.tolist()
        ([7, 3, 5], [0, 1, 0, 2])
    """
    uniq, first, inv = np.unique(ids, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    pos = np.empty(len(order), dtype=np.int64)
    pos[order] = np.arange(len(order), dtype=np.int64)
    return uniq[order], pos[inv.reshape(-1)]


def reverse_edge_ids(g: Any, etype: Any = None) -> IdArray:
    """For each edge ``u -> v`` of one edge type, the ID of an edge ``v -> u`` (the smallest
    such ID), or -1 when there is none (int64, ``(E,)``).  Reads every edge's endpoints once
    (one batched ``find_edges`` on a distributed graph)."""
    store = as_store(g)
    et = store.to_canonical_etype(etype)
    if et[0] != et[2]:
        raise ValidationError(f"reverse_edge_ids needs an edge type within one node type, got "
                              f"{et}", field="etype", value=et)
    m = store.num_edges(et)
    src, dst = store.find_edges(np.arange(m, dtype=np.int64), et)
    n = np.int64(max(store.num_nodes(et[0]), 1))
    fwd = src * n + dst
    order = np.argsort(fwd, kind="stable")  # the smallest ID first among equal keys
    sorted_keys = fwd[order]
    want = dst * n + src
    pos = np.minimum(np.searchsorted(sorted_keys, want), max(m - 1, 0))
    hit = sorted_keys[pos] == want if m else np.zeros(0, dtype=bool)
    return np.where(hit, order[pos], -1).astype(np.int64)


def sample_link_batch(g: Any, eids: Any, fanouts: Any, *, num_negatives: int = 1,
                      exclude: str | None = "self", reverse_eids: IdArray | None = None,
                      etype: Any = None, seed: int | None = None, backend: str = "cpu"
                      ) -> LinkBatch:
    """Negatives for a batch of edges and the blocks around all their endpoints.

    Args:
        g: A Graph or GraphStore with one node type.
        eids: Seed edge IDs of ``etype``.
        fanouts: As :func:`~graphshard.sampling.sample_blocks`.
        num_negatives: Uniform negative destinations per seed edge (keyed draws).
        exclude: None (sample every edge), ``"self"`` (never the seed edges) or
            ``"reverse"`` (nor their reverse edges; needs ``reverse_eids``).
        reverse_eids: :func:`reverse_edge_ids` of the graph.
        etype: The edge type (None: the only one).
        seed: Random seed of the negatives and of the neighbour sampling.
        backend: Kernel backend name.

    Returns:
        LinkBatch with local positions of sources, destinations and negatives.

    Raises:
        ValidationError: several node types, an unknown ``exclude``, edge IDs out of range,
            or ``exclude="reverse"`` without ``reverse_eids`` of the right length.
    """
    store = as_store(g)
    if len(store.ntypes) != 1:
        raise ValidationError(f"sample_link_batch needs a graph with one node type, got "
                              f"{store.ntypes}", field="g")
    check_choice(exclude, EXCLUDE, "exclude", where="sample_link_batch")
    et = store.to_canonical_etype(etype)
    ids = as_ids(eids, "eids")
    check_id_range(ids, store.num_edges(et), f"eids of {et}")
    if num_negatives < 0:
        raise ValidationError(f"sample_link_batch: num_negatives must be >= 0, got "
                              f"{num_negatives}", field="num_negatives", value=num_negatives)
    s = resolve_seed(seed)
    src, dst = store.find_edges(ids, et)
    neg = (negative_sample(store, (len(ids), int(num_negatives)), seed=s, backend=backend)
           if num_negatives and len(ids) else np.zeros((len(ids), int(num_negatives)),
                                                       dtype=np.int64))
    excl = None
    if exclude == "self":
        excl = {et: ids}
    elif exclude == "reverse":
        if reverse_eids is None or len(reverse_eids) != store.num_edges(et):
            raise ValidationError("sample_link_batch: exclude='reverse' needs reverse_eids "
                                  "(reverse_edge_ids of the graph)", field="reverse_eids")
        rev = np.asarray(reverse_eids)[ids]
        excl = {et: np.unique(np.concatenate([ids, rev[rev >= 0]]))}
    nodes, local = first_unique(np.concatenate([src, dst, neg.reshape(-1)]))
    blocks = sample_blocks(store, {store.ntypes[0]: nodes}, fanouts, exclude_edges=excl,
                           seed=s, backend=backend)
    b = len(ids)
    return LinkBatch(ids, local[:b], local[b:2 * b], local[2 * b:].reshape(b, -1), blocks)
