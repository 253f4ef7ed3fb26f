"""Partitioning: assignment methods, reshuffling, HALO construction, the on-disk format.

Example:
    >>> import graphshard as gs
    >>> "metis" in gs.partition.METHODS
    True
"""

from .build import DEFAULT_METHOD, PartitionResult, build_partitions, partition_graph
from .config import PartitionConfig, read_config
from .files import (
    Partition,
    load_partition,
    load_partition_book,
    load_partition_data,
    load_partition_feats,
)
from .methods import METHODS, MethodOptions, register_method, run_method
from .report import PartitionReport, edge_cut, undirected_edge_cut

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "MethodOptions",
    "Partition",
    "PartitionConfig",
    "PartitionReport",
    "PartitionResult",
    "build_partitions",
    "edge_cut",
    "load_partition",
    "load_partition_book",
    "load_partition_data",
    "load_partition_feats",
    "partition_graph",
    "read_config",
    "register_method",
    "run_method",
    "undirected_edge_cut",
]
