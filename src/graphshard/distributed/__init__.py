"""Distributed graphs on Ray: graph servers, DistGraph, DistTensor, DistEmbedding, sampling.

Importing this package does not import Ray; Ray is imported when servers start or a
DistGraph connects.  Unstable API: the server protocol may change between releases.

Example:
    >>> import graphshard as gs
    >>> sorted(gs.distributed.OPTIMIZERS)
    ['adagrad', 'sgd']
"""

from ..errors import ServerError, ServerTimeoutError
from ._server import GraphServer
from ._tensors import OPTIMIZERS
from .cache import FeatureCache
from .embedding import DistEmbedding, SparseAdagrad, SparseAdam, SparseSGD
from .graph import DistGraph
from .loader import BlockLoader
from .policy import PartitionPolicy
from .sampling import DistBatch, sample_blocks, sample_neighbors
from .serve import ServeHandle, ServerPlace, find_servers, serve, server_names, shutdown
from .tensor import DistTensor
from .whole import assemble_graph

__all__ = [
    "OPTIMIZERS",
    "BlockLoader",
    "DistBatch",
    "DistEmbedding",
    "DistGraph",
    "DistTensor",
    "FeatureCache",
    "GraphServer",
    "PartitionPolicy",
    "ServeHandle",
    "ServerError",
    "ServerPlace",
    "ServerTimeoutError",
    "SparseAdagrad",
    "SparseAdam",
    "SparseSGD",
    "assemble_graph",
    "find_servers",
    "sample_blocks",
    "sample_neighbors",
    "serve",
    "server_names",
    "shutdown",
]
