"""How graphshard's types appear to PyG: a homogeneous graph (node type ``"_N"``, edge type
``("_N", "_E", "_N")``) has no types in PyG (``None``), so PyG's loaders give ``Data``; any
graph with named types, even a single ``("paper", "cites", "paper")``, is typed and gives
``HeteroData``, as PyG does for its own stores.

Example:
    >>> import graphshard as gs
    >>> is_homogeneous(gs.graph(([0], [1])))
    True
    >>> is_homogeneous(gs.heterograph({("paper", "cites", "paper"): ([0], [1])}))
    False
"""

from __future__ import annotations

from typing import Any

from ..graph import DEFAULT_ETYPE, DEFAULT_NTYPE
from ..store import as_store

__all__ = ["is_homogeneous"]


def is_homogeneous(store: Any) -> bool:
    """Whether ``store`` is homogeneous by graphshard's naming (one node type ``"_N"`` and
    one edge type ``("_N", "_E", "_N")``): PyG then sees no types."""
    s = as_store(store)
    return list(s.ntypes) == [DEFAULT_NTYPE] and \
        [tuple(et) for et in s.canonical_etypes] == [DEFAULT_ETYPE]
