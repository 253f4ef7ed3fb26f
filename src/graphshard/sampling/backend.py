"""Kernel backends by name: ``cpu`` (numba) and ``cuda`` (numba-cuda, beside it).

A backend is an object with the kernel functions as attributes (same names and signatures as
the CPU kernels in :mod:`~graphshard.sampling.kernels`).  ``cuda`` is built on first use
(:mod:`~graphshard.sampling.cuda`); without numba-cuda or a GPU asking for it raises a
ValidationError that says what is missing.  The Python layer asks
:func:`get_backend` for one by the ``backend=`` keyword of each sampling call and never imports
a kernel module directly.

Example:
    >>> get_backend("cpu").name, available_backends()
    ('cpu', ['cpu', 'cuda'])
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ..errors import ValidationError

__all__ = ["available_backends", "get_backend", "register_backend"]

_BACKENDS: dict[str, Any] = {}


def _cpu() -> Any:
    # numba's idle OpenMP threads spin briefly: `import graphshard` chose so (_util/openmp.py)
    from .kernels import block, gather, pairs, weighted
    from .kernels import neighbors as nbr
    from .kernels import walks as walk

    names = {m: [n for n in m.__all__] for m in (nbr, weighted, walk, pairs, block, gather)}
    return SimpleNamespace(name="cpu", **{n: getattr(m, n) for m, ns in names.items() for n in ns})


def _cuda() -> Any:
    # numba.cuda is imported here, on first use, never by `import graphshard`
    from .cuda import make_backend

    return make_backend()


_FACTORIES = {"cpu": _cpu, "cuda": _cuda}


def register_backend(name: str, factory: Any) -> None:
    """Register a backend ``factory()`` -> kernel namespace under ``name`` (e.g. ``"cuda"``)."""
    _FACTORIES[name] = factory
    _BACKENDS.pop(name, None)


def available_backends() -> list[str]:
    """Names accepted by ``backend=``."""
    return sorted(_FACTORIES)


def get_backend(name: str = "cpu") -> Any:
    """The kernel namespace registered as ``name`` (built on first use).

    Raises:
        ValidationError: no backend has that name.
    """
    if name not in _BACKENDS:
        if name not in _FACTORIES:
            raise ValidationError(f"unknown sampling backend {name!r}; available: "
                                  f"{available_backends()}", field="backend", value=name)
        _BACKENDS[name] = _FACTORIES[name]()
    return _BACKENDS[name]
