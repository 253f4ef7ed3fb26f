"""The one decorator of every numba kernel: ``numba.njit(cache=True, nogil=True)``,
registered under the canonical module name.

pytest's ``--import-mode=importlib`` also imports ``src/graphshard/...`` as
``src.graphshard...``; numba's on-disk cache (shared by both copies, keyed by file) would
then record that name and fail to load in a process where ``src`` is not importable.
Pinning ``__module__`` to ``graphshard...`` keeps one valid cache for every importer.

Example:
    >>> from graphshard._util.keyed import mix
    >>> mix.__module__, callable(kernel(parallel=True))
    ('graphshard._util.keyed', True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numba import njit

__all__ = ["kernel"]


def kernel(fn: Callable[..., Any] | None = None, *, parallel: bool = False,
           inline: bool = False) -> Any:
    """``@kernel``, ``@kernel(parallel=True)`` or ``@kernel(inline=True)``: a cached,
    GIL-free numba function; ``inline`` ones are inlined by numba into the kernels that
    call them (a per-row helper taking arrays: a compiled call costs tens of ns)."""

    def wrap(f: Callable[..., Any]) -> Any:
        mod = f.__module__
        if "graphshard." in mod and not mod.startswith("graphshard."):
            f.__module__ = mod[mod.index("graphshard."):]
        return njit(cache=True, nogil=True, parallel=parallel,
                    inline="always" if inline else "never")(f)

    return wrap if fn is None else wrap(fn)
