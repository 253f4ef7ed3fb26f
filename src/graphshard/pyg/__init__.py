"""PyG remote backend: PyG's own loaders and models over a graphshard Graph or DistGraph.

PyTorch Geometric defines a remote-backend interface (``torch_geometric.data.FeatureStore``,
``torch_geometric.data.GraphStore`` and a ``torch_geometric.sampler.BaseSampler``) that its
``NodeLoader`` and ``LinkLoader`` drive.  This package implements it over graphshard's store
protocol, so the same loader code trains on a local :class:`~graphshard.graph.Graph` or on
a :class:`~graphshard.distributed.DistGraph` served from partitions, with graphshard's sampling
kernels (on the graph servers for a DistGraph) instead of pyg-lib:

- :class:`FeatureStore`: node and edge features by type and index (dense, ragged as torch
  nested tensors, sparse as torch sparse tensors);
- :class:`GraphStore`: edge types and sizes, and the whole edge index on request;
- :class:`NeighborSampler`: ``sample_from_nodes`` / ``sample_from_edges`` (with PyG's
  ``NegativeSampling``, binary and triplet), seeded so a seed gives the same batch on a
  local graph and on any number of servers.

Needs torch and torch_geometric (``pip install 'graphshard[pyg]'``); names load lazily, so
``import graphshard`` imports neither.  Unstable API (issue 26).

Example:
    >>> import torch, graphshard as gs
    >>> from graphshard.pyg import remote_backend, NeighborSampler
    >>> from torch_geometric.loader import NodeLoader
    >>> g = gs.datasets.sbm(100, 400, num_blocks=2, num_features=4, seed=0)
    >>> data = remote_backend(g, node_attrs={"x": "feat", "y": "label"})
    >>> loader = NodeLoader(data, node_sampler=NeighborSampler(g, [5, 5], seed=0),
    ...                     input_nodes=torch.arange(100), batch_size=32)
    >>> batch = next(iter(loader))
    >>> batch.x.shape[1], batch.batch_size, bool((batch.n_id[:32] == torch.arange(32)).all())
    (4, 32, True)
"""

from __future__ import annotations

from .._util.lazy import lazy_exports

_LAZY = {
    "FeatureStore": ".feature_store",
    "GraphStore": ".graph_store",
    "NeighborSampler": ".sampler",
    "PrefetchLoader": ".loader",
    "remote_backend": ".graph_store",
    "metadata": ".graph_store",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
