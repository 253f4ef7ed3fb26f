"""Hand freed heap memory back to the operating system (glibc's ``malloc_trim``).

glibc keeps freed blocks below its mmap threshold (which rises up to 32 MiB as large
arrays are freed) in the heap for reuse, so a long-running driver that allocates many
mid-sized arrays keeps their pages resident after it has freed them.  ``malloc_trim(0)``
returns every free page of every arena to the kernel.  Elsewhere (macOS, musl) it does
nothing.

Example:
    >>> trim_heap() in (True, False)
    True
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable

__all__ = ["keep_heap", "trim_heap"]


@functools.cache
def _libc_function(name: str, *argtypes: type) -> Callable[..., int] | None:
    """The C library's function ``name`` taking ``argtypes`` and returning an int, or None
    where the library or the function is missing (macOS, musl)."""
    try:  # pragma: no cover - depends on the C library
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = getattr(libc, name)
    except (OSError, AttributeError):  # pragma: no cover
        return None
    fn.argtypes = list(argtypes)
    fn.restype = ctypes.c_int
    return fn


#: glibc ``mallopt`` parameters
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4


def keep_heap() -> bool:
    """Make this process's C heap keep the memory it frees for its next allocations:
    every block comes from the heap (no ``mmap`` per large array) and the heap is never
    trimmed.  A worker that runs task after task of similar sizes then reuses pages
    already mapped instead of faulting fresh ones in on every array (slow on a VM:
    benchmarks/TUNING.md); its resident memory stays at its high-water mark between
    tasks.  Whether the C library took the settings (False where it has no
    ``mallopt``).

    Example:
        >>> keep_heap() in (True, False)  # doctest: +SKIP
        True
    """
    fn = _libc_function("mallopt", ctypes.c_int, ctypes.c_int)
    if fn is None:
        return False
    return bool(fn(_M_MMAP_MAX, 0)) and bool(fn(_M_TRIM_THRESHOLD, 2**31 - 1))


def trim_heap() -> bool:
    """Return the free pages of the C heap to the OS; whether any were released (always
    False where the C library has no ``malloc_trim``).  Costs about a millisecond."""
    fn = _libc_function("malloc_trim", ctypes.c_size_t)
    return bool(fn(0)) if fn is not None else False
