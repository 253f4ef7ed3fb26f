"""graphshard: partition, convert and serve graphs for distributed GNN training.

Example:
    >>> import graphshard as gs
    >>> g = gs.graph(([0, 1, 2], [1, 2, 0]))
    >>> g.num_edges()
    3
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import (
    ConfigError,
    FormatError,
    GraphshardError,
    MissingDependencyError,
    PartitionNotFoundError,
    ValidationError,
)
from .graph import CSR, Graph, graph, heterograph
from .ids import IDConverter, RangePartitionBook
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


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'graphshard' has no attribute {name!r}")
    module = importlib.import_module(target, __name__)
    value = module if name == target[1:] else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
