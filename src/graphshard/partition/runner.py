"""Running a registered partition method on an adjacency: checks of the options and of the
method's output, and the balance repair every structure-aware method gets.

It imports the registry alone (never the methods' modules), so that a method's own code
(``lp`` partitions its coarsest graph with ``metis``) can call it without an import circle;
the methods are registered by importing :mod:`graphshard.partition` (its ``methods``).
"""

from __future__ import annotations

import numpy as np

from ..errors import ValidationError
from ..typing import IdArray
from .adjacency import Adjacency
from .balance import enforce_balance
from .registry import METHODS, MethodOptions, lookup

__all__ = ["run_method"]


def run_method(adj: Adjacency, num_parts: int, method: str, options: MethodOptions) -> IdArray:
    """Run ``method`` and check its output (length, range, dtype).

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> adj = symmetric_adjacency(np.array([0, 1, 2]), np.array([1, 2, 3]), 4)
        >>> run_method(adj, 2, "hash", MethodOptions()).tolist()
        [0, 1, 0, 1]
    """
    entry = lookup(METHODS, method, what="partition method", field="part_method")
    entry.check_objective(options.objtype)
    if not 0 <= options.imbalance < 1:
        raise ValidationError(f"imbalance must be in [0, 1), got {options.imbalance}",
                              field="imbalance", value=options.imbalance)
    budget = options.time_budget
    if budget is not None and not (isinstance(budget, (int, float)) and budget > 0):
        raise ValidationError(f"time_budget must be a number > 0 (a multiple of METIS k-way's "
                              f"CPU time), got {budget!r}", field="time_budget", value=budget)
    if num_parts == 1:
        return np.zeros(adj.num_nodes, dtype=np.int64)
    parts = _check_parts(entry.partition(adj, num_parts, options), method, adj.num_nodes,
                         num_parts)
    if entry.uses_structure:
        # METIS k-way can end above its bound at large k, and multi-constraint METIS
        # 6-9% over on one constraint at 3% (benchmarks/TUNING.md): repair every column
        parts = enforce_balance(adj, parts, num_parts, options.imbalance, seed=options.seed)
    return parts


def _check_parts(result: object, method: str, num_nodes: int, num_parts: int) -> IdArray:
    """A method's result as int64, or a ValidationError naming the method and what is off."""
    parts = np.asarray(result, dtype=np.int64)
    if parts.shape != (num_nodes,):
        raise ValidationError(f"partition method {method!r} returned parts of shape "
                              f"{parts.shape}; expected ({num_nodes},), one per node",
                              field="part_method", value=method)
    bad = np.flatnonzero((parts < 0) | (parts >= num_parts))
    if bad.size:
        raise ValidationError(f"partition method {method!r} put node {bad[0]} in part "
                              f"{parts[bad[0]]}; expected parts in [0, {num_parts})",
                              field="part_method", value=method)
    return parts
