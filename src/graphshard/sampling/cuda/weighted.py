"""CUDA device functions for weighted sampling without replacement: the CPU kernel's three
paths for a row that yields fewer edges than its positive weights, replayed draw for draw.

* rejection (rows with ``4 deg > 6 k`` and at most 64 picks): alias draws, one 64-bit hash
  each, repeats rejected, as :func:`graphshard.sampling.kernels.weighted._reject_repeats`;
  if the rejections drag on, exponential keys finish the row;
* dense rows up to ``DENSE_MAX`` edges: float32 keys from a 32-bit hash, the ``d - c``
  largest struck out (:func:`~graphshard.sampling.kernels.keys_dense.dense_pick`);
* other rows: float64 exponential keys, the smallest by the CPU's quickselect (rows up to
  256 edges) or in ascending order (longer rows; the CPU sorts, here a selection scan).

The floating-point chains (the logarithms' polynomials and Newton steps) go through
non-fusing operations (libdevice's ``*_rn``; numba-cuda's compiler would otherwise
contract ``a * b + c`` into one rounding), and bit casts through libdevice; under the
simulator the same functions are NumPy's IEEE scalar operations.  So keys, and the picks,
equal the CPU's bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..kernels import keys_dense as kd
from ..kernels import rng
from ..kernels.alias import _TMASK
from ..kernels.rng import draw
from .device import simulated

__all__ = ["partial_row"]

_LO32 = np.uint64((1 << 32) - 1)
_S32 = np.uint64(32)
_M32 = np.uint64(0xFFFFFFFF)
_RANK = kd._RANK_MAX + 16  # int64 scratch of the quickselect (keys plus its 16 ranks)
_DENSE = kd.DENSE_MAX
_STEP_KEYS = 1 << 41  # draw numbers of the keys path and of the rejection fallback
_STEP_FALLBACK = 1 << 40
# float64 constants, computed as numba folds the CPU's expressions (IEEE either way)
_Y0 = 1.0 / rng._RA + 1.0 / rng._RB
_Y1 = 1.0 / (rng._RA * rng._RB)
_C = (1.0 / 17.0, 1.0 / 15.0, 1.0 / 13.0, 1.0 / 11.0, 1.0 / 9.0, 1.0 / 7.0, 1.0 / 5.0,
      1.0 / 3.0)
_C17, _C15, _C13, _C11, _C9, _C7, _C5, _C3 = _C
# float32 constants of neg_log32
_FY0, _FY1 = np.float32(kd._F_Y0), np.float32(kd._F_Y1)
_F1, _F2, _FLN2 = np.float32(1.0), np.float32(2.0), np.float32(kd._F_LN2)
_FC9, _FC7, _FC5, _FC3 = (np.float32(kd._F_C9), np.float32(kd._F_C7), np.float32(kd._F_C5),
                          np.float32(kd._F_C3))
_FINV24 = np.float32(kd._F_INV24)

if simulated():  # NumPy scalars: IEEE operations, one rounding each, as on the GPU
    def _dadd(a, b):
        return np.float64(a) + np.float64(b)

    def _dmul(a, b):
        return np.float64(a) * np.float64(b)

    def _fadd(a, b):
        return np.float32(a) + np.float32(b)

    def _fsub(a, b):
        return np.float32(a) - np.float32(b)

    def _fmul(a, b):
        return np.float32(a) * np.float32(b)

    def _bits64(x):
        return np.float64(x).view(np.int64)

    def _from_bits64(b):
        return np.int64(b).view(np.float64)

    def _bits32(x):
        return np.float32(x).view(np.int32)

    def _from_bits32(b):
        return np.int32(b).view(np.float32)
else:
    from numba.cuda import libdevice

    _dadd, _dmul = libdevice.dadd_rn, libdevice.dmul_rn
    _fadd, _fsub, _fmul = libdevice.fadd_rn, libdevice.fsub_rn, libdevice.fmul_rn
    _bits64, _from_bits64 = libdevice.double_as_longlong, libdevice.longlong_as_double
    _bits32, _from_bits32 = libdevice.float_as_int, libdevice.int_as_float


@cuda.jit(device=True)
def _neg_log(u):
    """:func:`graphshard.sampling.kernels.rng.neg_log`, operation for operation."""
    b = _bits64(u)
    e = (b >> 52) - 1023
    m = _from_bits64((b & rng._MANT) | rng._ONE_BITS)
    if m > rng._SQRT2:
        m = _dmul(m, 0.5)
        e = e + 1
    x = _dadd(m, 1.0)
    y = _dadd(_Y0, -_dmul(x, _Y1))
    for _ in range(4):
        y = _dadd(y, _dmul(y, _dadd(1.0, -_dmul(x, y))))
    s = _dmul(_dadd(m, -1.0), y)
    z = _dmul(s, s)
    p = _C17
    p = _dadd(_dmul(p, z), _C15)
    p = _dadd(_dmul(p, z), _C13)
    p = _dadd(_dmul(p, z), _C11)
    p = _dadd(_dmul(p, z), _C9)
    p = _dadd(_dmul(p, z), _C7)
    p = _dadd(_dmul(p, z), _C5)
    p = _dadd(_dmul(p, z), _C3)
    p = _dadd(_dmul(p, z), 1.0)
    return -_dadd(_dmul(np.float64(e), rng._LN2), _dmul(_dmul(2.0, s), p))


@cuda.jit(device=True)
def _key64(st, step, w):
    """``exponential(st, step) * w`` (:func:`.rng.exponential`; ``w`` is ``1 / weight``)."""
    u = _dmul(_dadd(np.float64(draw(st, step) >> rng._S11), 0.5), rng._INV53)
    return _dmul(_neg_log(u), np.float64(w))


@cuda.jit(device=True)
def _odd24(st, step):
    """``keys_dense._odd24`` in 64-bit registers masked to 32 bits."""
    lo = st & _M32
    hi = st >> _S32
    x = (lo + np.uint64(kd._G32) * ((np.uint64(step) + np.uint64(1)) & _M32)) & _M32
    x = x ^ (x >> np.uint64(16))
    x = ((x * np.uint64(kd._H1)) & _M32) ^ hi
    x = x ^ (x >> np.uint64(15))
    x = (x * np.uint64(kd._H2)) & _M32
    x = x ^ (x >> np.uint64(15))
    return np.int64(((x >> np.uint64(9)) << np.uint64(1)) | np.uint64(1))


@cuda.jit(device=True)
def _neg_log32(u):
    """:func:`~graphshard.sampling.kernels.keys_dense.neg_log32`, operation for operation."""
    b = np.int64(_bits32(u))
    mb = (b & kd._MANT) | kd._ONE_BITS
    big = 1 if mb > kd._SQRT2_BITS else 0
    m = _from_bits32(np.int32(mb - (big << 23)))
    e = np.float32(((b >> 23) - 127) + big)
    x = _fadd(m, _F1)
    y = _fsub(_FY0, _fmul(x, _FY1))
    for _ in range(3):
        y = _fadd(y, _fmul(y, _fsub(_F1, _fmul(x, y))))
    s = _fmul(_fsub(m, _F1), y)
    z = _fmul(s, s)
    p = _FC9
    p = _fadd(_fmul(p, z), _FC7)
    p = _fadd(_fmul(p, z), _FC5)
    p = _fadd(_fmul(p, z), _FC3)
    p = _fadd(_fmul(p, z), _F1)
    return -_fadd(_fmul(e, _FLN2), _fmul(_fmul(_F2, s), p))


@cuda.jit(device=True)
def _dense_pick(invw, start, d, pos, o, c, st):
    """``dense_pick``: the ``c`` smallest float32 keys of a row of ``d <= 64``, row order."""
    packed = cuda.local.array(_DENSE, dtype=np.int64)
    for p in range(d):
        u = _fmul(np.float32(_odd24(st, p)), _FINV24)
        key = _fmul(_neg_log32(u), np.float32(invw[start + p]))
        packed[p] = (np.int64(_bits32(key)) << kd._PBITS) | p
    for _ in range(d - c):
        m = np.int64(-1)
        for p in range(d):
            if packed[p] > m:
                m = packed[p]
        packed[m & kd._PMASK] = -1
    t = 0
    for p in range(d):
        keep = packed[p] >= 0
        packed[t] = p
        if keep:
            t += 1
    for j in range(c):
        pos[o + j] = packed[j]


@cuda.jit(device=True)
def _smallest_first(a, n, need):
    """``keys_dense._smallest_first``, the same quickselect (so the same output order)."""
    lo = 0
    hi = n
    while hi - lo > 16:
        x = a[lo]
        y = a[(lo + hi) >> 1]
        z = a[hi - 1]
        piv = max(min(x, y), min(max(x, y), z))
        store = lo
        for i in range(lo, hi):
            v = a[i]
            a[i] = a[store]
            a[store] = v
            if v < piv:
                store += 1
        if store == need:
            return
        if store < need:
            lo = store
        else:
            hi = store
    for i in range(lo, hi):
        v = a[i]
        r = lo
        for j in range(lo, hi):
            if a[j] < v:
                r += 1
        a[n + r - lo] = v
    for i in range(lo, hi):
        a[i] = a[n + i - lo]


@cuda.jit(device=True)
def _excluded(pos, o, t, p):
    for j in range(o, o + t):  # noqa: SIM110 (no generators in a CUDA kernel)
        if pos[j] == p:
            return True
    return False


@cuda.jit(device=True)
def _keys_select(invw, start, d, pos, o, t, c, st, step0):
    """``keys_select``: fill ``pos[o+t:o+c]`` with the row positions of the smallest keys
    among those not in ``pos[o:o+t]``; rows over 256 edges in ascending key order (ties by
    position, as the CPU's stable sort), recomputing the keys on every scan."""
    need = c - t
    if d <= kd._RANK_MAX:
        a = cuda.local.array(_RANK, dtype=np.int64)
        for p in range(d):
            key = np.inf if _excluded(pos, o, t, p) else _key64(st, step0 + p, invw[start + p])
            a[p] = (_bits64(key) & ~np.int64(255)) | p
        _smallest_first(a, d, need)
        for j in range(need):
            pos[o + t + j] = a[j] & 255
        return
    last_k = -np.inf
    last_p = -1
    for j in range(need):
        best_k = np.inf
        best_p = -1
        for p in range(d):
            k = np.inf if _excluded(pos, o, t, p) else _key64(st, step0 + p, invw[start + p])
            after = k > last_k or (k == last_k and p > last_p)
            if after and (best_p < 0 or k < best_k):
                best_k = k
                best_p = p
        pos[o + t + j] = best_p
        last_k = best_k
        last_p = best_p


@cuda.jit(device=True)
def _alias_pick(rec, s0, d, h):
    """``weighted._alias_pick``: row position of one alias draw from 64 random bits."""
    j = np.int64(((h >> _S32) * np.uint64(d)) >> _S32)
    v = rec[s0 + j]
    return j if np.int64(h & _LO32) < (v & _TMASK) else v >> 33


@cuda.jit(device=True)
def _reject_repeats(rec, start, d, o, c, st, pos):
    """``weighted._reject_repeats``: picks as row positions into ``pos[o:o+t]``; ``t``."""
    t = 0
    mask = np.uint64(0)
    for a in range(4 * c + 16):
        if a >= c and t == c:
            break
        x = _alias_pick(rec, start, d, draw(st, a))
        bit = np.uint64(1) << np.uint64(x & 63)
        new = (mask & bit) == 0
        if d > 64 and not new:  # the mask holds positions mod 64: scan to be sure
            new = not _excluded(pos, o, t, x)
        mask |= bit
        pos[o + t] = x
        if new:
            t += 1
    return t


@cuda.jit(device=True)
def partial_row(rec, invw, start, d, o, c, st, pos):
    """Row positions of ``c`` edges of the row at ``start`` (``d`` edges, more than ``c``
    positive weights), without replacement, into ``pos[o:o+c]``, as the CPU kernel."""
    if (4 * d <= 6 * c) or c > 64:  # weighted._by_keys
        if d <= _DENSE:
            _dense_pick(invw, start, d, pos, o, c, st)
        else:
            _keys_select(invw, start, d, pos, o, 0, c, st, _STEP_KEYS)
        return
    t = _reject_repeats(rec, start, d, o, c, st, pos)
    if t < c:
        _keys_select(invw, start, d, pos, o, t, c, st, _STEP_FALLBACK)
