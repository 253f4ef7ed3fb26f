"""Keyed 64-bit hashing for numba kernels: a draw is a hash of (seed, item, step).

Results then do not depend on the order or the thread that computes them (STYLE §8).  The
one home of the SplitMix64 constants and finaliser: the samplers' per-item streams
(``sampling.kernels.rng``), the partitioners' ``keyed_hash``, the block relabelling's
multiplicative hash and the PyG sampler's batch seeds all take them from here.
"""

from __future__ import annotations

import numpy as np

from .jit import kernel

__all__ = ["GOLDEN", "M1", "M2", "keyed_hash", "mix"]

#: SplitMix64's multipliers and its golden-ratio increment
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@kernel
def mix(x):  # pragma: no cover - compiled
    """SplitMix64 finaliser (a bijection on uint64)."""
    x = x ^ (x >> np.uint64(30))
    x = x * M1
    x = x ^ (x >> np.uint64(27))
    x = x * M2
    return x ^ (x >> np.uint64(31))


@kernel
def keyed_hash(seed, a, b):  # pragma: no cover - compiled
    """A 64-bit hash of ``(seed, a, b)`` (splitmix64 finaliser), as uint64.

    Example:
        >>> int(keyed_hash(0, 1, 2)) == int(keyed_hash(0, 1, 2)) != int(keyed_hash(0, 2, 1))
        True
    """
    h = mix(np.uint64(seed) * GOLDEN + np.uint64(a))
    return mix(h ^ (np.uint64(b) * GOLDEN + np.uint64(0x632BE59BD9B4E019)))


