"""A client-side cache of the feature rows of the most-sampled remote nodes.

In a power-law graph, a node turns up as a sampled in-neighbour about in proportion to its
out-degree, so a few hub nodes make up most of a mini-batch's input nodes (figures:
benchmarks/TUNING.md).  :func:`build_feature_cache` copies the rows of the top nodes owned by
*remote* servers into the trainer once (partitions read in-process need no cache);
:func:`graphshard.distributed.sample_blocks` and :class:`~graphshard.distributed.BlockLoader` then
fetch only the other rows.  Features served by the graph servers are read-only, so the cache never
goes stale; a DistTensor is not cached.

Example:
    >>> import graphshard as gs
    >>> dg = gs.distributed.DistGraph("parts/shop.json")  # doctest: +SKIP
    >>> dg.cache_node_features("feat", fraction=0.1)  # doctest: +SKIP
    FeatureCache(ntype='item', name='feat', rows=5000, MB=2.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ValidationError
from ..typing import IdArray

if TYPE_CHECKING:
    from .graph import DistGraph

__all__ = ["FeatureCache", "build_feature_cache"]

_CHUNK = 1 << 16


@dataclass(frozen=True)
class FeatureCache:
    """Rows of one node feature for a set of nodes, held by the trainer.

    Attributes:
        ntype: The node type.
        name: The feature name.
        slots: int32, one entry per node of ``ntype``: the node's row in ``rows``, or -1.
        rows: The cached feature rows.
    """

    ntype: str
    name: str
    slots: np.ndarray = field(repr=False)
    rows: np.ndarray = field(repr=False)

    def split(self, ids: IdArray) -> tuple[IdArray, IdArray]:
        """``(positions of ids that are cached, their rows in rows)``."""
        slot = self.slots[ids]
        hit = np.flatnonzero(slot >= 0)
        return hit, slot[hit].astype(np.int64)

    def __repr__(self) -> str:
        return (f"FeatureCache(ntype={self.ntype!r}, name={self.name!r}, rows={len(self.rows)},"
                f" MB={self.rows.nbytes / 1e6:.1f})")


def build_feature_cache(g: DistGraph, ntype: str, name: str, *, fraction: float
                        ) -> FeatureCache:
    """Cache feature ``name`` of the ``fraction`` of ``ntype`` nodes with the highest
    out-degree (over the edge types leaving ``ntype``), among those owned by remote servers.

    Raises:
        ValidationError: ``fraction`` outside ``[0, 1]``, or the feature is Ragged or
            sparse.
    """
    if not 0.0 <= float(fraction) <= 1.0:
        raise ValidationError(f"fraction must be in [0, 1], got {fraction!r}",
                              field="fraction", value=fraction)
    shape, dtype, layout = g._feature_info("node", f"{ntype}/{name}")
    if layout != "dense":
        raise ValidationError(f"node feature {ntype}/{name} is {layout}: only fixed-size rows "
                              "are cached", field="name", value=name)
    n = g.num_nodes(ntype)
    ids = np.arange(n, dtype=np.int64)
    degree = np.zeros(n, dtype=np.int64)
    for et in g.canonical_etypes:
        if et[0] == ntype:
            for lo in range(0, n, 1 << 20):
                degree[lo:lo + (1 << 20)] += g.degrees(ids[lo:lo + (1 << 20)], et,
                                                       edge_dir="out")
    remote = ~np.isin(g.owners(ids, ntype), list(g.router.local))
    cand = ids[remote]
    keep = round(float(fraction) * n)
    chosen = np.sort(cand[np.argsort(-degree[cand], kind="stable")[:keep]])
    rows = np.empty((len(chosen), *shape), dtype=dtype)
    for lo in range(0, len(chosen), _CHUNK):
        rows[lo:lo + _CHUNK] = g.node_features(ntype, name, chosen[lo:lo + _CHUNK])
    slots = np.full(n, -1, dtype=np.int32)
    slots[chosen] = np.arange(len(chosen), dtype=np.int32)
    return FeatureCache(ntype, name, slots, rows)
