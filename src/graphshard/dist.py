"""Deprecated alias of :mod:`graphshard.distributed`, kept for one release.

The package was renamed because pytest, linters and packaging tools skip folders named
``dist``: its tests and doctests never ran.  Every name of :mod:`graphshard.distributed`
and of its modules (``graphshard.dist.graph``, ...) is reachable here too, as the same
objects; importing this module warns once.

Example:
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     from graphshard.dist import DistGraph
    ...     from graphshard.dist.graph import DistGraph as FromModule
    >>> import graphshard.distributed
    >>> DistGraph is FromModule is graphshard.distributed.DistGraph
    True
"""

from __future__ import annotations

from ._util.aliases import alias_module

__all__, __path__, __getattr__, __dir__ = alias_module(__name__, "graphshard.distributed")
