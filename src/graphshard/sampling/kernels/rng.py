"""Keyed random numbers for the kernels: every draw is a hash of (seed, item key, step).

A draw never depends on how many draws came before it on the same thread, so a kernel gives
the same result on 1 or 32 threads, and a graph server that runs the kernel on its partition
reproduces the draws of a local run for the same seed nodes.  The mixer is the SplitMix64
finaliser; ``item_state`` is computed once per item (seed node, walk) and ``draw`` once per
random number.

``exponential`` turns a draw into an Exp(1) variate with a branch-free logarithm (exponent
from the float's bits, ``atanh`` series of the mantissa: relative error below 1e-15, against
1e-16 for libm's ``log``), so a loop of them vectorises.

Example:
    >>> s = item_state(7, 1, 42)
    >>> draw(s, 0) == draw(item_state(7, 1, 42), 0), 0.0 <= uniform(s, 3) < 1.0
    (True, True)
    >>> bool(exponential(s, 5) > 0.0)
    True
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import viewer  # scalar bitcast (numba >= 0.68 is pinned)

from ..._util.jit import kernel
from ..._util.keyed import GOLDEN as _GOLDEN
from ..._util.keyed import M2 as _M2
from ..._util.keyed import mix

__all__ = ["draw", "exponential", "item_state", "mix", "neg_log", "randint", "uniform"]

_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0
_MANT = np.int64((1 << 52) - 1)
_ONE_BITS = np.int64(0x3FF << 52)
_S52 = np.int64(52)
_SQRT2 = 1.4142135623730951
_LN2 = 0.6931471805599453
_RA = 1.7071067811865475  # range of m + 1
_RB = 2.4142135623730951


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
def randint(state: np.uint64, step: int, n: int) -> np.int64 | int:
    """An integer in ``[0, n)`` (``n >= 1``)."""
    r = np.int64(uniform(state, step) * n)
    return r if r < n else n - 1


@kernel
def neg_log(u: float) -> float:
    """``-log(u)`` for ``0 < u < 1`` (normal floats), branch-free: ``u = 2**e * m`` with
    ``m`` in ``[sqrt(1/2), sqrt(2))`` from the bits, and ``log(m) = 2 atanh(s)``,
    ``s = (m - 1) / (m + 1)``, summed to ``s**17`` (``|s| < 0.172``: the next term is below
    1e-15 of the sum).  The reciprocal is Newton's, as a division would not vectorise."""
    # numba's stubs type an intrinsic as called with its typing context first
    b: np.int64 = viewer(u, np.int64)  # type: ignore[call-arg]
    e = (b >> _S52) - 1023
    m = viewer((b & _MANT) | _ONE_BITS, np.float64)  # in [1, 2)
    big = m > _SQRT2
    m = m * 0.5 if big else m
    e = e + 1 if big else e
    x = m + 1.0  # in [1.707, 2.415): 1/x by its secant (3% off) and 4 Newton steps
    y = 1.0 / _RA + 1.0 / _RB - x * (1.0 / (_RA * _RB))
    for _ in range(4):
        y = y + y * (1.0 - x * y)
    s = (m - 1.0) * y  # no division: numba's zero check would stop the vectorisation
    z = s * s
    p = 1.0 / 17.0
    p = p * z + 1.0 / 15.0
    p = p * z + 1.0 / 13.0
    p = p * z + 1.0 / 11.0
    p = p * z + 1.0 / 9.0
    p = p * z + 1.0 / 7.0
    p = p * z + 1.0 / 5.0
    p = p * z + 1.0 / 3.0
    p = p * z + 1.0
    return -(e * _LN2 + 2.0 * s * p)


@kernel
def exponential(state: np.uint64, step: int) -> float:
    """An Exp(1) variate ``-log(u)`` from draw ``step``, ``u = (bits53 + 1/2) / 2**53``
    (never 0 or 1, so the variate is finite and positive)."""
    u = (np.float64(draw(state, step) >> _S11) + 0.5) * _INV53
    return neg_log(u)
