"""Numba kernels of the ``lp`` partitioner: pure functions on one shard's or one edge
chunk's arrays plus per-node arrays (STYLE §8).

- :mod:`~graphshard.pipeline.lp.kernels.sweep`: label-propagation sweeps, favourites, cuts;
- :mod:`~graphshard.pipeline.lp.kernels.levels`: degrees, bucketing, contraction, histograms;
- :mod:`~graphshard.pipeline.lp.kernels.clustering`: alone nodes and two-hop merging;
- :mod:`~graphshard.pipeline.lp.kernels.thin`: thinning a dense level.
"""
