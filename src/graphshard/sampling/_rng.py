"""Keyed random numbers for the kernels: every draw is a hash of (seed, item key, step).

A draw never depends on how many draws came before it on the same thread, so a kernel gives
the same result on 1 or 32 threads, and a graph server that runs the kernel on its partition
reproduces the draws of a local run for the same seed nodes.  The mixer is the SplitMix64
finaliser; ``item_state`` is computed once per item (seed node, walk) and ``draw`` once per
random number.

Example:
    >>> s = item_state(7, 1, 42)
    >>> draw(s, 0) == draw(item_state(7, 1, 42), 0), 0.0 <= uniform(s, 3) < 1.0
    (True, True)
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from .._keyed import mix

__all__ = ["draw", "item_state", "mix", "randint", "uniform"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0


@kernel
def item_state(seed: int, salt: int, key: int) -> np.uint64:
    """State of one item: ``seed`` of the call, ``salt`` (etype, hop, purpose), ``key`` (ID)."""
    h = mix(np.uint64(seed) + _GOLDEN * np.uint64(salt + 1))
    return mix(h ^ (np.uint64(key) * _GOLDEN + _M2))


@kernel
def draw(state: np.uint64, step: int) -> np.uint64:
    """64 random bits for draw number ``step`` of an item."""
    return mix(state + _GOLDEN * np.uint64(step + 1))


@kernel
def uniform(state: np.uint64, step: int) -> float:
    """A float in ``[0, 1)`` with 53 random bits."""
    return np.float64(draw(state, step) >> _S11) * _INV53


@kernel
def randint(state: np.uint64, step: int, n: int) -> int:
    """An integer in ``[0, n)`` (``n >= 1``)."""
    r = np.int64(uniform(state, step) * n)
    return r if r < n else n - 1
