"""Deprecated alias of :mod:`graphshard.distributed`, kept for one release.

The package was renamed because pytest, linters and packaging tools skip folders named
``dist``: its tests and doctests never ran. Every public name of
:mod:`graphshard.distributed` is reachable here too; importing this module warns once.
Submodules (``graphshard.dist.graph``) are not aliased: import them from
``graphshard.distributed``.

Example:
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     from graphshard.dist import DistGraph
    >>> import graphshard.distributed
    >>> DistGraph is graphshard.distributed.DistGraph
    True
"""

from __future__ import annotations

import warnings
from typing import Any

from . import distributed as _distributed

warnings.warn("graphshard.dist is renamed graphshard.distributed; the old name goes in the "
              "next release", DeprecationWarning, stacklevel=2)

__all__ = list(_distributed.__all__)


def __getattr__(name: str) -> Any:
    if name in _distributed.__all__:
        return getattr(_distributed, name)
    raise AttributeError(f"module 'graphshard.dist' has no attribute {name!r} "
                         "(it is graphshard.distributed now)")


def __dir__() -> list[str]:
    return sorted(__all__)
