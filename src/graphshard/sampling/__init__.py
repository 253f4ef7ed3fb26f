"""Sampling: neighbours, multi-hop blocks, edge batches with negatives, random and metapath
walks, training pairs.

Kernels are numba functions on raw CSR arrays behind a backend registry
(:mod:`~graphshard.sampling.backend`); the functions here validate input, pick the kernels and
build frozen result dataclasses.  Every random draw is keyed by (seed, node or walk ID, step),
so a seed reproduces its result on any thread count, and on a partitioned graph.

Example:
    >>> import graphshard as gs
    >>> g = gs.graph(([0, 1, 2], [1, 2, 0]))
    >>> gs.sampling.random_walk(g, [0], 4, seed=0).traces.tolist()
    [[0, 1, 2, 0]]
"""

from .backend import available_backends, get_backend, register_backend
from .blocks import EID, ETYPE, NID, NTYPE, Block, SampledBlocks, sample_blocks, to_block
from .convert import to_torch
from .fanouts import Fanouts
from .link import LinkBatch, reverse_edge_ids, sample_link_batch
from .loader import MiniBatch, NeighborLoader
from .neighbors import SampledEdges, degrees, find_edges, in_subgraph, sample_neighbors
from .pairs import Pairs, in_batch_negatives, negative_sample, skip_gram_pairs
from .subgraph import SampledSubgraph, sample_subgraph
from .walks import WalkResult, node2vec_walk, parse_metapath, random_walk

__all__ = [
    "EID",
    "ETYPE",
    "NID",
    "NTYPE",
    "Block",
    "Fanouts",
    "LinkBatch",
    "MiniBatch",
    "NeighborLoader",
    "Pairs",
    "SampledBlocks",
    "SampledEdges",
    "SampledSubgraph",
    "WalkResult",
    "available_backends",
    "degrees",
    "find_edges",
    "get_backend",
    "in_batch_negatives",
    "in_subgraph",
    "negative_sample",
    "node2vec_walk",
    "parse_metapath",
    "random_walk",
    "register_backend",
    "reverse_edge_ids",
    "sample_blocks",
    "sample_link_batch",
    "sample_neighbors",
    "sample_subgraph",
    "skip_gram_pairs",
    "to_block",
    "to_torch",
]
