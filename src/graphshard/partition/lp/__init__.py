"""``lp``: multilevel label-propagation partitioning of a chunked graph, out of core.

- :mod:`~graphshard.partition.lp.driver`: :func:`lp_assign`, the multilevel loop, the
  initial partition of the coarsest graph;
- :mod:`~graphshard.partition.lp.params`: :class:`LpParams`, its options and tuned constants;
- :mod:`~graphshard.partition.lp.levels`: building level 0 from the edge chunks and the
  coarse levels by contraction;
- :mod:`~graphshard.partition.lp.shards`: the sharded CSR levels and their shard tasks;
- :mod:`~graphshard.partition.lp.clustering`: two-hop clustering of the nodes left alone;
- :mod:`~graphshard.partition.lp.refinement`: label-propagation rounds, refinement,
  rebalancing and the cut of one level;
- :mod:`~graphshard.partition.lp.thin`: thinning dense coarse levels;
- :mod:`~graphshard.partition.lp.kernels`: the numba kernels.

Example:
    >>> from graphshard.partition import lp
    >>> "lp_assign" in lp.__all__
    True
"""

from .driver import lp_assign, warm_up
from .params import LpParams

__all__ = ["LpParams", "lp_assign", "warm_up"]
