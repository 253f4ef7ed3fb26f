"""A software prefetch for numba kernels: ``prefetch(arr, i)`` asks the CPU to bring the
cache line of ``arr[i]`` in, without waiting for it and without faulting (no bounds check is
needed: a prefetch of a bad address is dropped).

Kernels that chase pointers for many independent items prefetch ahead of use, so dozens of
cache misses are in flight at once instead of one at a time: the samplers and walks issue the
prefetches of a whole chunk of items in one pass and read the lines in the next; the
label-propagation sweeps and contraction of :mod:`graphshard.pipeline` prefetch a row or a
few dozen entries ahead.

Example:
    >>> import numpy as np
    >>> from numba import njit
    >>> @njit
    ... def touch(a):
    ...     prefetch(a, 3)
    ...     return a[3]
    >>> int(touch(np.arange(5)))
    3
"""

from __future__ import annotations

from typing import Any

import llvmlite.binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["prefetch"]

# LLVM >= 15 has opaque pointers: the intrinsic is overloaded on "p0" instead of "p0i8".
_NAME = "llvm.prefetch.p0" if llvm.llvm_version_info >= (15,) else "llvm.prefetch.p0i8"
_I32 = ir.IntType(32)


@intrinsic
def prefetch(typingctx: Any, arr: Any, idx: Any) -> Any:
    """Prefetch the line of ``arr[idx]`` for reading into all cache levels (1-D arrays)."""
    if not isinstance(arr, types.Array) or not isinstance(idx, types.Integer):
        return None
    sig = types.void(arr, idx)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        index = context.cast(builder, args[1], idxty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [index], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i8p, _I32, _I32, _I32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _NAME)
        # read (0), high temporal locality (3), data cache (1)
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(_I32, 0), ir.Constant(_I32, 3),
                          ir.Constant(_I32, 1)])
        return context.get_dummy_value()

    return sig, codegen
