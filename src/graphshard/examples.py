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

from ._util.aliases import alias_module

__all__, __path__, __getattr__, __dir__ = alias_module(__name__, "graphshard.train")
