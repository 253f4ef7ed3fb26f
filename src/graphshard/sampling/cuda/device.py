"""Host <-> device for the cuda backend: graph arrays go to the device once and stay there,
per-call arrays go each call, and results come back into the caller's host arrays.

The backend keeps the signatures of the CPU kernels (host arrays in, host ``out`` arrays
filled), so the Python layer is the same for both.  What it treats as graph structure (the
CSR of an edge type, alias records, ``1 / w``, sorted rows, negative-sampling tables) is
copied on first use and kept in :class:`DeviceCache` for as long as the host array lives:
the store keeps those arrays (the Graph's CSR, ``store.cached`` tables), so each is copied
once per store, and dropping the store or ``store.clear_cache()`` frees the device copy too.
An argument that already lives on the device (a numba device array, or anything with
``__cuda_array_interface__`` such as a CUDA torch tensor) is used as it is, and an ``out``
on the device is filled in place, so a caller can keep a whole pipeline on the GPU.
"""

from __future__ import annotations

import functools
import threading
import types
import weakref
from typing import Any

import numpy as np
from numba import cuda

__all__ = ["THREADS", "DeviceCache", "device_in", "device_out", "device_twin", "is_device",
           "launch", "simulated"]

THREADS = 128  # threads per block: one item (row, walk, draw) per thread


def simulated() -> bool:
    """Whether numba.cuda runs under its simulator (NUMBA_ENABLE_CUDASIM=1 in numba's config
    when numba.cuda was imported; numba-cuda reads numba's own config)."""
    from numba.core import config

    return bool(getattr(config, "ENABLE_CUDASIM", 0))  # set by numba at import, not typed


def device_twin(cpu_kernel: Any, **helpers: Any) -> Any:
    """A CUDA device function compiled from a CPU kernel's own Python source, so both
    backends run one body (the same draws, the same picks).

    ``helpers`` rebinds names the body calls to device functions: the CPU helpers that take
    arrays (e.g. ``alias_draw=device_twin(alias_draw)``).  Helpers of scalars only (the
    keyed draws ``randint``, ``uniform``) stay the CPU's numba functions, which numba-cuda
    compiles for the device and its simulator calls as they are.

    Example:
        >>> from graphshard.sampling.kernels.neighbors import _floyd
        >>> twin = device_twin(_floyd)
        >>> twin.py_func.__code__ is _floyd.py_func.__code__
        True
    """
    py = cpu_kernel.py_func
    scope = {**py.__globals__, **helpers}
    body = types.FunctionType(py.__code__, scope, py.__name__, py.__defaults__, py.__closure__)
    body.__doc__, body.__module__, body.__qualname__ = py.__doc__, py.__module__, py.__qualname__
    return cuda.jit(device=True)(body)


def is_device(a: Any) -> bool:
    """Whether ``a`` already lives on the device (a numba device array or a CUDA tensor)."""
    return hasattr(a, "copy_to_host") or hasattr(a, "__cuda_array_interface__")


def _as_device(a: Any) -> Any:
    return a if hasattr(a, "copy_to_host") else cuda.as_cuda_array(a)


def device_in(a: Any) -> Any:
    """``a`` on the device: itself if it is there, else a fresh copy (per-call arrays)."""
    if is_device(a):
        return _as_device(a)
    return cuda.to_device(np.ascontiguousarray(a))


def device_out(a: Any) -> tuple[Any, Any]:
    """``(device array to fill, host array to copy it back into or None)`` for ``out``."""
    if is_device(a):
        return _as_device(a), None
    return cuda.device_array(a.shape, dtype=a.dtype), a


def launch(kernel: Any, n: int, *args: Any) -> None:
    """Run ``kernel`` over ``n`` items (one thread each); nothing for ``n == 0``."""
    if n > 0:
        kernel[(n + THREADS - 1) // THREADS, THREADS](*args)


class DeviceCache:
    """Device copies of host graph arrays, keyed by the host array's identity and dropped
    when it is garbage-collected (a weak reference's callback).

    Attributes:
        copies: Host-to-device copies made so far (tests check a second call makes none).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrays: dict[int, tuple[weakref.ref, Any]] = {}
        self.copies = 0

    def get(self, a: Any) -> Any:
        """The device copy of host array ``a`` (made on first use), or ``a`` itself if it
        is already on the device.  ``a`` must not change in place afterwards."""
        if is_device(a):
            return _as_device(a)
        key = id(a)
        with self._lock:
            hit = self._arrays.get(key)
            if hit is not None and hit[0]() is a:
                return hit[1]
        dev = cuda.to_device(np.ascontiguousarray(a))
        try:
            ref = weakref.ref(a, functools.partial(self._drop, key))
        except TypeError:  # no weak references (not an ndarray): copy per call
            return dev
        with self._lock:
            self._arrays[key] = (ref, dev)
            self.copies += 1
        return dev

    def _drop(self, key: int, ref: weakref.ref) -> None:
        with self._lock:
            hit = self._arrays.get(key)
            if hit is not None and hit[0] is ref:
                del self._arrays[key]

    def __len__(self) -> int:
        return len(self._arrays)

    def clear(self) -> None:
        """Forget every device copy."""
        with self._lock:
            self._arrays.clear()
