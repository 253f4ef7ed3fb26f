"""Numba kernels of sampling: pure functions on raw CSR arrays (STYLE §8), one module per
concern.  The Python layer reaches them through :mod:`~graphshard.sampling.backend`
(``get_backend("cpu")``), never by importing a kernel module.

- :mod:`~graphshard.sampling.kernels.rng`: keyed random numbers (also used by other packages'
  kernels, e.g. :mod:`graphshard.train.kernels`);
- :mod:`~graphshard.sampling.kernels.neighbors`: uniform one-hop neighbour sampling;
- :mod:`~graphshard.sampling.kernels.weighted`: weighted neighbour sampling;
- :mod:`~graphshard.sampling.kernels.alias`: per-row alias tables (building and drawing);
- :mod:`~graphshard.sampling.kernels.keys_dense`: exponential keys for dense weighted rows;
- :mod:`~graphshard.sampling.kernels.walks`: random, metapath and node2vec walks;
- :mod:`~graphshard.sampling.kernels.pairs`: skip-gram pairs and negative draws;
- :mod:`~graphshard.sampling.kernels.block`: compacting node IDs to a block's local IDs.
"""
