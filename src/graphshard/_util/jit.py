"""The one decorator of every numba kernel: ``numba.njit(cache=True, nogil=True)``,
registered under the canonical module name.

pytest's ``--import-mode=importlib`` also imports ``src/graphshard/...`` as
``src.graphshard...``; numba's on-disk cache (shared by both copies, keyed by file) would
then record that name and fail to load in a process where ``src`` is not importable.
Pinning ``__module__`` to ``graphshard...`` keeps one valid cache for every importer.

numba writes a cache entry without a lock (read the index, take the next free data file
number, write the index, then the data) and loads one without checking what it holds.  Two
processes compiling two signatures of one kernel at once (``pytest -n 2`` on a fresh
clone, Ray workers on a cold cache) can both take the same number: the index then sends
one signature to machine code compiled for the other, which numba runs, checking only the
item size (code for contiguous arrays reads a strided view's wrong elements, silently).
:class:`_CheckedCache` takes such an entry for a miss: the kernel compiles, and its save
writes that entry right.

Example:
    >>> from graphshard._util.keyed import mix
    >>> mix.__module__, callable(kernel(parallel=True))
    ('graphshard._util.keyed', True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numba import njit
from numba.core import sigutils
from numba.core.caching import FunctionCache

__all__ = ["kernel"]


class _CheckedCache(FunctionCache):
    """numba's on-disk cache of one kernel, but an entry compiled for other argument types
    than those asked for (left by two processes saving at once: module docstring) is a
    miss."""

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        cres = super().load_overload(sig, target_context)
        if cres is not None and tuple(cres.signature.args) != \
                tuple(sigutils.normalize_signature(sig)[0]):
            return None
        return cres


def kernel(fn: Callable[..., Any] | None = None, *, parallel: bool = False,
           inline: bool = False) -> Any:
    """``@kernel``, ``@kernel(parallel=True)`` or ``@kernel(inline=True)``: a cached,
    GIL-free numba function; ``inline`` ones are inlined by numba into the kernels that
    call them (a per-row helper taking arrays: a compiled call costs tens of ns)."""

    def wrap(f: Callable[..., Any]) -> Any:
        mod = f.__module__
        if "graphshard." in mod and not mod.startswith("graphshard."):
            f.__module__ = mod[mod.index("graphshard."):]
        dispatcher: Any = njit(nogil=True, parallel=parallel,
                               inline="always" if inline else "never")(f)
        if hasattr(dispatcher, "py_func"):  # not so under NUMBA_DISABLE_JIT=1: ``f`` itself
            dispatcher._cache = _CheckedCache(dispatcher.py_func)  # as cache=True would
        return dispatcher

    return wrap if fn is None else wrap(fn)
