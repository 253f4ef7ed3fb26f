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

import warnings
from typing import Any

from . import distributed as _new
from ._util.aliases import alias_package, deprecation

warnings.warn(deprecation("graphshard.dist", "graphshard.distributed"), DeprecationWarning,
              stacklevel=2)

__all__ = list(_new.__all__)
#: a package, so that ``graphshard.dist.<module>`` resolves (through the alias finder)
__path__: list[str] = []
alias_package(__name__, _new.__name__)


def __getattr__(name: str) -> Any:
    return getattr(_new, name)


def __dir__() -> list[str]:
    return sorted(__all__)
