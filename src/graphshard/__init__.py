"""graphshard: partition, convert and serve graphs for distributed GNN training.

Example:
    >>> import graphshard as gs
    >>> g = gs.graph(([0, 1, 2], [1, 2, 0]))
    >>> g.num_edges()
    3
"""

from __future__ import annotations

from ._util import openmp as _openmp  # noqa: F401  (OpenMP spin count before torch loads)
from ._util.lazy import lazy_exports
from .errors import (
    ConfigError,
    FormatError,
    GraphshardError,
    MissingDependencyError,
    PartitionNotFoundError,
    ValidationError,
)
from .graph import CSR, Graph, graph, heterograph
from .ids import IDConverter
from .partition_book import RangePartitionBook
from .ragged import Ragged
from .sparse import SparseRows

__version__ = "0.1.0"

# Subpackages and functions loaded on first use, so that `import graphshard` stays light
# (ray, torch and dgl are imported only by the modules that need them).
_LAZY = {
    "io": ".io",
    "partition": ".partition",
    "sampling": ".sampling",
    "distributed": ".distributed",
    "dist": ".dist",
    "pipeline": ".pipeline",
    "datasets": ".datasets",
    "train": ".train",
    "examples": ".examples",
    "partition_graph": ".partition",
    "load_partition": ".partition",
    "load_partition_book": ".partition",
    "load_partition_feats": ".partition",
    "PartitionReport": ".partition",
}

__all__ = [
    "CSR",
    "ConfigError",
    "FormatError",
    "Graph",
    "GraphshardError",
    "IDConverter",
    "MissingDependencyError",
    "PartitionNotFoundError",
    "PartitionReport",
    "Ragged",
    "RangePartitionBook",
    "SparseRows",
    "ValidationError",
    "datasets",
    "distributed",
    "graph",
    "heterograph",
    "io",
    "load_partition",
    "load_partition_book",
    "load_partition_feats",
    "partition",
    "partition_graph",
    "pipeline",
    "sampling",
    "train",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
