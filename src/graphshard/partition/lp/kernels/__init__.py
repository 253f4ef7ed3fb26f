"""Numba kernels of the ``lp`` partitioner: pure functions on one shard's or one edge
chunk's arrays plus per-node arrays (STYLE §8).

- :mod:`~graphshard.partition.lp.kernels.sweep`: label-propagation sweeps, favourites, cuts;
- :mod:`~graphshard.partition.lp.kernels.levels`: degrees, bucketing, contraction, histograms;
- :mod:`~graphshard.partition.lp.kernels.clustering`: alone nodes and two-hop merging;
- :mod:`~graphshard.partition.lp.kernels.thin`: thinning a dense level.
"""
