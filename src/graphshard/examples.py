"""Deprecated alias of :mod:`graphshard.train`, kept for one release.

The trainers were under ``graphshard.examples``, but users call them as product API
(``graphshard train``); the package is named for that now.  Every name of
:mod:`graphshard.train` and of its modules (``graphshard.examples.sage``, ...) is reachable
here too, as the same objects; importing this module warns once.

Example:
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     from graphshard.examples.walk_options import WalkOptions
    >>> import graphshard.train.walk_options
    >>> WalkOptions is graphshard.train.walk_options.WalkOptions
    True
"""

from __future__ import annotations

import warnings
from typing import Any

from . import train as _new
from ._util.aliases import alias_package, deprecation

warnings.warn(deprecation("graphshard.examples", "graphshard.train"), DeprecationWarning,
              stacklevel=2)

__all__ = list(_new.__all__)
#: a package, so that ``graphshard.examples.<module>`` resolves (through the alias finder)
__path__: list[str] = []
alias_package(__name__, _new.__name__)


def __getattr__(name: str) -> Any:
    return getattr(_new, name)


def __dir__() -> list[str]:
    return sorted(__all__)
