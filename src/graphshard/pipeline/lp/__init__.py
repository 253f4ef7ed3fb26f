"""``lp``: multilevel label-propagation partitioning of a chunked graph, out of core.

- :mod:`~graphshard.pipeline.lp.driver`: :func:`lp_assign`, the multilevel loop, the
  initial partition of the coarsest graph;
- :mod:`~graphshard.pipeline.lp.params`: :class:`LpParams`, its options and tuned constants;
- :mod:`~graphshard.pipeline.lp.levels`: building level 0 from the edge chunks and the
  coarse levels by contraction;
- :mod:`~graphshard.pipeline.lp.shards`: the sharded CSR levels and their shard tasks;
- :mod:`~graphshard.pipeline.lp.clustering`: two-hop clustering of the nodes left alone;
- :mod:`~graphshard.pipeline.lp.refinement`: label-propagation rounds, refinement,
  rebalancing and the cut of one level;
- :mod:`~graphshard.pipeline.lp.thin`: thinning dense coarse levels;
- :mod:`~graphshard.pipeline.lp.kernels`: the numba kernels.

Example:
    >>> from graphshard.pipeline import lp
    >>> "lp_assign" in lp.__all__
    True
"""

from .driver import lp_assign, warm_up
from .params import LpParams

__all__ = ["LpParams", "lp_assign", "warm_up"]
