"""Built-in partition methods (``random``, ``hash``, ``metis``) and :func:`run_method`.

The registry itself (:data:`METHODS`, :func:`register_method`) lives in
:mod:`~graphshard.partition.registry`; importing this module registers every method
(``backends`` and ``portfolio`` add ``kaminpar``, ``mtkahypar``, ``quality``, ``auto``).
A method takes the undirected :class:`~graphshard.partition.adjacency.Adjacency` of the
graph, the number of parts and :class:`MethodOptions`, and returns the part of every node
(int64, homogeneous original order).  The CLI's ``--method`` choices and the docs are read
from :data:`METHODS`.
"""

from __future__ import annotations

import numpy as np

from ..errors import ValidationError
from ..typing import IdArray
from .adjacency import Adjacency
from .alone import run_alone
from .balance import enforce_balance
from .metis_lib import metis_kway
from .registry import METHODS, Method, MethodOptions, PartitionFn, lookup, register_method

__all__ = ["METHODS", "Method", "MethodOptions", "PartitionFn", "register_method", "run_method"]


def run_method(adj: Adjacency, num_parts: int, method: str, options: MethodOptions) -> IdArray:
    """Run ``method`` and check its output (length, range, dtype).

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> adj = symmetric_adjacency(np.array([0, 1, 2]), np.array([1, 2, 3]), 4)
        >>> run_method(adj, 2, "hash", MethodOptions()).tolist()
        [0, 1, 0, 1]
    """
    entry = lookup(METHODS, method, what="partition method", field="part_method")
    if options.objtype not in ("cut", "vol"):
        raise ValidationError(f"objtype must be 'cut' or 'vol', got {options.objtype!r}",
                              field="objtype", value=options.objtype)
    if not 0 <= options.imbalance < 1:
        raise ValidationError(f"imbalance must be in [0, 1), got {options.imbalance}",
                              field="imbalance", value=options.imbalance)
    if num_parts == 1:
        return np.zeros(adj.num_nodes, dtype=np.int64)
    parts = _check_parts(entry.fn(adj, num_parts, options), method, adj.num_nodes, num_parts)
    if entry.uses_structure and (adj.vertex_weights is None
                                           or adj.vertex_weights.shape[1] == 1):
        # METIS k-way can end above its bound at large k (benchmarks/TUNING.md)
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


@register_method("random", "balanced random assignment (a seeded permutation, dealt out)",
                 uses_structure=False)
def _random(adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
    rng = np.random.default_rng(options.seed)
    parts = np.empty(adj.num_nodes, dtype=np.int64)
    parts[rng.permutation(adj.num_nodes)] = np.arange(adj.num_nodes) % num_parts
    return parts


@register_method("hash", "part = homogeneous node ID % num_parts (the graph's dense IDs, "
                 "not a file's own IDs)", uses_structure=False)
def _hash(adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
    """Euler's modulo rule applied to the graph's homogeneous IDs: per-type IDs offset by
    the node types before them, in declared order.  Those are the dense IDs a reader gave
    the nodes, not the IDs of the input file (Euler's ``node_id``, an edge list's labels):
    for Euler's own split, pass ``assignment=g.ndata["node_id"] % num_parts``.

    Example:
        >>> import graphshard as gs
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> g = gs.heterograph({("u", "buys", "i"): ([0, 1], [2, 0])}, {"u": 2, "i": 3})
        >>> s, d, _ = g.homogeneous_edges()
        >>> _hash(symmetric_adjacency(s, d, g.num_nodes()), 2, MethodOptions()).tolist()
        [0, 1, 0, 1, 0]
    """
    return np.arange(adj.num_nodes, dtype=np.int64) % num_parts


@register_method("metis", "METIS 5 (recursive bisection up to 8 parts, else k-way); "
                 "multi-constraint balance, cut or volume objective", multi_constraint=True)
def _metis(adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
    # Recursive bisection for k <= 8, as pymetis does by default: a much lower cut than
    # k-way's on R-MAT, about the same on a random geometric graph (benchmarks/TUNING.md).
    # DGL always runs k-way.  "vol" needs k-way.
    # run_alone: METIS draws from libc's rand(), which Ray's threads share when Ray runs here
    recursive = num_parts <= 8 and options.objtype == "cut"
    return run_alone(metis_kway, adj, num_parts, imbalance=options.imbalance,
                     objtype=options.objtype, seed=options.seed, recursive=recursive)
# registers kaminpar, mtkahypar, quality and auto
from . import backends, portfolio  # noqa: E402,F401
