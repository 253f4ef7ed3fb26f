"""Exponential keys for weighted sampling without replacement (Efraimidis-Spirakis).

Where a row yields most of its edges (``k < deg <= 1.5 k``), the fill kernel of
:mod:`.weighted` draws a key ``E / w`` per edge (``E`` ~ Exp(1)) and keeps the
``c`` smallest: the order of the keys is the order of successive sampling (draw
proportionally to weight, remove, repeat).  Rows up to ``DENSE_MAX`` long take
:func:`dense_pick`; longer rows, and rows whose rejection sampling gives up, take the
float64 keys of :func:`keys_select` (a 64-bit hash and a float64 logarithm per edge, 4
lanes to a vector at best).  In :func:`dense_pick` the key loop is all 32-bit, so LLVM
runs it 8 lanes wide (AVX2 ``vpmulld``, float32 arithmetic):

* random bits: one 32-bit hash per edge of the row's 64-bit state (:func:`.rng.item_state`,
  keyed by seed, salt and node ID) and ``step``, the edge's row position (see
  :func:`_odd24`): draws stay keyed by (seed, node, step), so results do not depend on
  threads or machines;
* ``E = -log(u)``, ``u = (2 b + 1) / 2**24`` for 23 of the bits ``b`` (never 0 or 1), by a
  float32 version of :func:`.rng.neg_log` (relative error under 3e-7);
* the key ``E * (1 / w)`` in float32 (``1 / w`` is stored in float32 by
  :func:`.weighted.row_inv_weights`); the ``d - c`` largest keys are struck out.

Precision: Exp(1) is drawn on a grid of 2**23 points (its tail past 16.6 is cut, a
probability of 6e-8) and keys carry float32's 2**-24 rounding, so two keys of a row tie
(then the lower position counts as the smaller) with probability about
``d**2 * 2**-24`` (2e-5 for 20 edges).  The selection law is that of successive
sampling up to effects of that size, far below what the chi-square tests can detect
and of the order of the float32 rounding of the weights themselves.

Example:
    >>> import numpy as np
    >>> invw = np.array([1.0, 0.5, np.inf, 0.25], np.float32); pos = np.full(3, -1)
    >>> keys = np.empty(SCRATCH, np.float32); packed = np.empty(SCRATCH, np.int64)
    >>> dense_pick(invw, 0, 4, pos, 0, 3, np.uint64(9), keys, packed)
    >>> pos.tolist()  # the zero weight (1 / w = inf) is never picked
    [0, 1, 3]
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.cpython.unsafe.numbers import viewer  # scalar bitcast (numba >= 0.68 is pinned)
from numba.extending import intrinsic

from ..._util.jit import kernel
from .rng import exponential

__all__ = ["DENSE_MAX", "SCRATCH", "at_least", "dense_pick", "keys32", "keys_select", "neg_log32"]

DENSE_MAX = 64  # rows up to this long take this path (positions packed in 6 bits)
_RANK_MAX = 256  # float64 keys over rows up to this long quickselect packed keys, longer sort
_PBITS = 6
_PMASK = (1 << _PBITS) - 1
_LANES = 8
SCRATCH = DENSE_MAX + _LANES  # scratch entries the caller provides (float32 and int64)

_G32 = 0x9E3779B9
_H1 = 0x21F0AAAD  # a 32-bit mixer with low bias (xorshift-multiply, 2 rounds)
_H2 = 0x735A2D97
_MANT = (1 << 23) - 1
_ONE_BITS = 127 << 23
_SQRT2_BITS = 0x3FB504F3  # float32 bits of sqrt(2)
_F_INV24 = 1.0 / 16777216.0
_F_ONE = 1.0
_F_TWO = 2.0
_F_LN2 = 0.6931471805599453
_F_RA = 1.7071067811865475  # range of m + 1, for the secant of 1 / (m + 1)
_F_RB = 2.4142135623730951
_F_Y0 = 1.0 / _F_RA + 1.0 / _F_RB
_F_Y1 = 1.0 / (_F_RA * _F_RB)
_F_C3 = 1.0 / 3.0
_F_C5 = 1.0 / 5.0
_F_C7 = 1.0 / 7.0
_F_C9 = 1.0 / 9.0
_I32 = ir.IntType(32)


def _c(v: int) -> ir.Constant:
    return ir.Constant(_I32, v)


# numba widens integer arithmetic to 64 bits, which halves the vector lanes (AVX2 has no
# 64-bit multiply); these intrinsics keep the bit work in 32-bit IR


@intrinsic
def _odd24(typingctx, state, step):  # pragma: no cover - compiled
    """``2 * (h >> 9) + 1`` (int32, odd, below 2**24) for the 32-bit hash ``h`` of the row
    ``state`` (uint64) and the low 32 bits of ``step``: the low half of the state plus
    ``G * (step + 1)``, two xorshift-multiply rounds, the high half xored in between (two
    rows share a key stream only if their whole 64-bit states match)."""

    def codegen(context, builder, signature, args):
        lo = builder.trunc(args[0], _I32)
        hi = builder.trunc(builder.lshr(args[0], ir.Constant(args[0].type, 32)), _I32)
        x = builder.add(lo, builder.mul(_c(_G32), builder.add(builder.trunc(args[1], _I32),
                                                               _c(1))))
        x = builder.xor(x, builder.lshr(x, _c(16)))
        x = builder.xor(builder.mul(x, _c(_H1)), hi)
        x = builder.xor(x, builder.lshr(x, _c(15)))
        x = builder.mul(x, _c(_H2))
        x = builder.xor(x, builder.lshr(x, _c(15)))
        return builder.or_(builder.shl(builder.lshr(x, _c(9)), _c(1)), _c(1))

    return types.int32(state, step), codegen


def _split(builder, u):  # pragma: no cover - compiled
    """IR: bits of ``u``, the mantissa bits scaled into [sqrt(1/2), sqrt(2)), and 0 or 1."""
    b = builder.bitcast(u, _I32)
    mb = builder.or_(builder.and_(b, _c(_MANT)), _c(_ONE_BITS))
    big = builder.zext(builder.icmp_unsigned(">", mb, _c(_SQRT2_BITS)), _I32)
    return b, builder.sub(mb, builder.shl(big, _c(23))), big


@intrinsic
def _mantissa(typingctx, u):  # pragma: no cover - compiled
    """``m`` of ``u = 2**e * m`` (float32), ``m`` in ``[sqrt(1/2), sqrt(2))``."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(_split(builder, args[0])[1], ir.FloatType())

    return types.float32(u), codegen


@intrinsic
def _exponent(typingctx, u):  # pragma: no cover - compiled
    """``e`` of ``u = 2**e * m`` (float32, as :func:`_mantissa`), for ``u > 0``."""

    def codegen(context, builder, signature, args):
        b, _, big = _split(builder, args[0])
        e = builder.add(builder.sub(builder.lshr(b, _c(23)), _c(127)), big)
        return builder.sitofp(e, ir.FloatType())

    return types.float32(u), codegen


@kernel(inline=True)
def neg_log32(u: np.float32) -> np.float32:
    """``-log(u)`` in float32 for ``0 < u < 1`` (normal floats), branch-free as
    :func:`.rng.neg_log`: ``u = 2**e * m``, ``m`` in ``[sqrt(1/2), sqrt(2))``,
    ``log(m) = 2 atanh(s)`` with ``s = (m - 1) / (m + 1)`` summed to ``s**9`` (the next
    term is under 1e-8 of the sum), the reciprocal by 3 Newton steps."""
    # numba's stubs type an intrinsic as called with its typing context first
    m: np.float32 = _mantissa(u)  # type: ignore[call-arg]
    x = m + np.float32(_F_ONE)
    y = np.float32(_F_Y0) - x * np.float32(_F_Y1)
    y = y + y * (np.float32(_F_ONE) - x * y)
    y = y + y * (np.float32(_F_ONE) - x * y)
    y = y + y * (np.float32(_F_ONE) - x * y)
    s = (m - np.float32(_F_ONE)) * y
    z = s * s
    p = np.float32(_F_C9)
    p = p * z + np.float32(_F_C7)
    p = p * z + np.float32(_F_C5)
    p = p * z + np.float32(_F_C3)
    p = p * z + np.float32(_F_ONE)
    return -(_exponent(u) * np.float32(_F_LN2) + np.float32(_F_TWO) * s * p)


@kernel(inline=True)
def keys32(invw, start, d, st, keys):
    """Exponential keys ``E / w`` of the row at ``start`` (``d`` edges, ``1 / w`` in
    ``invw``, float32) into ``keys[:d]`` (float32; ``keys`` needs room for ``d`` rounded
    up to a multiple of 8).

    The loop runs over that padded length, reading the next row's ``1 / w`` (unless the
    row ends the array), so the vector loop takes every element and no scalar remainder
    runs; keys past ``d`` are garbage."""
    dpad = (d + _LANES - 1) // _LANES * _LANES
    n = dpad if start + dpad <= invw.shape[0] else d
    for p in range(n):  # branch-free and free of clamps: LLVM vectorises it
        u = np.float32(_odd24(st, p)) * np.float32(_F_INV24)  # odd / 2**24
        keys[p] = neg_log32(u) * np.float32(invw[np.uint64(start + p)])  # unsigned: no wrap


@kernel(inline=True)
def dense_pick(invw, start, d, pos, o, c, st, keys, packed):
    """Successive weighted sampling of ``c`` of the ``d <= DENSE_MAX`` row positions of the
    row at ``start`` into ``pos[o:o+c]``, in row order; ``c`` must not exceed the row's
    positive weights.  ``keys`` (float32) and ``packed`` (int64) are scratch of
    ``SCRATCH`` entries.  Cost ``O(d (d - c))``: meant for ``d - c`` small.

    Each key's bits (a positive float32 orders as its int32 bits) are packed above its
    position, so packed keys are distinct; the ``d - c`` largest are struck out by
    repeated maxima (a vectorised reduction each) and the rest compacted in place."""
    keys32(invw, start, d, st, keys)
    for p in range(d):
        packed[p] = (np.int64(viewer(keys[p], np.int32)) << _PBITS) | p
    for _ in range(d - c):
        m = np.int64(-1)
        for p in range(d):
            v = packed[p]
            m = v if v > m else m
        packed[m & _PMASK] = -1
    t = 0
    for p in range(d):  # in-place compaction (t <= p): a struck-out entry is overwritten
        keep = np.int64(packed[p] >= 0)
        packed[t] = p
        t += keep
    for j in range(c):
        pos[o + j] = packed[j]


@kernel
def _smallest_first(a, n, need):
    """Reorder ``a[:n]`` (distinct int64) so that ``a[:need]`` holds its ``need`` smallest, in
    no particular order: quickselect with median-of-3 pivots and a branch-free partition,
    finished by ranks below 16 entries.  Expected O(n)."""
    lo = 0
    hi = n
    while hi - lo > 16:
        x, y, z = a[lo], a[(lo + hi) >> 1], a[hi - 1]
        piv = max(min(x, y), min(max(x, y), z))  # median: above the least of the three
        store = lo
        for i in range(lo, hi):
            v = a[i]
            a[i] = a[store]
            a[store] = v
            store += np.int64(v < piv)
        if store == need:
            return
        if store < need:
            lo = store
        else:
            hi = store
    for i in range(lo, hi):  # ranks within [lo, hi), into the scratch past n
        v = a[i]
        r = lo
        for j in range(lo, hi):
            r += np.int64(a[j] < v)
        a[n + r - lo] = v
    for i in range(lo, hi):
        a[i] = a[n + i - lo]


@kernel
def keys_select(invw, start, d, pos, o, t, c, st, step0, keyv):
    """Fill ``pos[o+t:o+c]`` with the row positions of the smallest exponential keys
    ``E / w`` (``E`` ~ Exp(1), ``1 / w`` from ``invw``) among the positive-weight positions
    not in ``pos[o:o+t]`` (Efraimidis-Spirakis): successive weighted sampling without
    replacement.

    Rows up to ``_RANK_MAX`` long pack each key's bits with its position in the low 8 bits
    (keys of positive floats order as integers; the key moves by under 2**-44 of itself)
    and select with :func:`_smallest_first`; longer rows sort the float keys.  ``keyv``
    (float64) has room for ``d + 16`` entries.
    """
    for p in range(d):  # branch-free: vectorises, logarithm included
        keyv[p] = exponential(st, step0 + p) * invw[np.uint64(start + p)]  # unsigned: no wrap
    for j in range(o, o + t):
        keyv[pos[j]] = np.inf
    need = c - t
    if d <= _RANK_MAX:
        a = keyv.view(np.int64)
        for p in range(d):
            a[p] = (a[p] & ~np.int64(255)) | p
        _smallest_first(a, d, need)
        for j in range(need):
            pos[o + t + j] = a[j] & 255
    else:
        order = np.argsort(keyv[:d], kind="mergesort")
        for j in range(need):
            pos[o + t + j] = order[j]


@kernel
def at_least(a, n):
    """``a``, or a new float64 scratch array of at least ``n`` (and twice ``a``'s) entries."""
    if a.shape[0] >= n:
        return a
    return np.empty(max(n, 2 * a.shape[0]), dtype=np.float64)
