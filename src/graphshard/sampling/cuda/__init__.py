"""The ``cuda`` sampling backend: numba-cuda kernels with the CPU kernels' names, signatures
and keyed draws, so a seeded sample is the same on the CPU and the GPU.

Nothing here is imported until ``get_backend("cuda")`` asks for it (``import graphshard``
never imports ``numba.cuda``).  :func:`make_backend` checks what the backend needs and says
what is missing: the ``numba-cuda`` package, or a CUDA device; without a GPU the same
kernels run on the CPU under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1`` in the
environment when numba is imported: slow, for tests and dry runs).

The draws share their math with the CPU by construction: the kernels call the CPU's
``item_state`` / ``draw`` / ``uniform`` / ``randint`` (:mod:`..kernels.rng`), which
numba-cuda compiles for the device from the same source.  Tables (alias records, ``1 / w``,
sorted rows, negative-sampling tables) are built by the CPU kernels on the host, once per
store, and copied to the device once (:mod:`.device`).
"""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace
from typing import Any

from ...errors import ValidationError

__all__ = ["make_backend"]

_SIM_HINT = ("without a GPU, run the same kernels on the CPU under numba-cuda's simulator: "
             "start Python with NUMBA_ENABLE_CUDASIM=1 in the environment (numba reads it "
             "at import; slow: tests and dry runs only)")


def _numba_cuda() -> Any:
    """``numba.cuda`` from the numba-cuda package, or a ValidationError naming what is
    missing (numba's own deprecated built-in target does not count)."""
    if importlib.util.find_spec("numba_cuda") is None:
        raise ValidationError(
            "backend='cuda' needs the numba-cuda package (it provides numba.cuda), which is "
            "not installed: pip install 'numba-cuda[cu12]' (or [cu13], matching the CUDA "
            f"driver); {_SIM_HINT}", field="backend", value="cuda")
    try:
        from numba import cuda
    except ImportError as exc:
        raise ValidationError(f"backend='cuda': importing numba.cuda failed ({exc}); "
                              f"{_SIM_HINT}", field="backend", value="cuda") from exc
    if getattr(cuda, "implementation", None) != "NVIDIA":
        raise ValidationError(
            "backend='cuda': numba.cuda is numba's deprecated built-in target, not "
            "numba-cuda's (was numba.cuda imported before numba-cuda was installed?); "
            "restart Python", field="backend", value="cuda")
    return cuda


def make_backend() -> SimpleNamespace:
    """The kernel namespace of the ``cuda`` backend.

    Raises:
        ValidationError: numba-cuda is not installed, or it finds no CUDA device and the
            simulator is off (the message says how to turn it on).
    """
    cuda = _numba_cuda()
    from .device import simulated

    sim = simulated()
    if not sim and not cuda.is_available():
        reason = " ".join(str(cuda.cuda_error() or "").split())
        raise ValidationError(
            "backend='cuda': numba-cuda is installed but finds no CUDA device"
            + (f" ({reason})" if reason else "") + f"; {_SIM_HINT}",
            field="backend", value="cuda")
    from ..kernels import alias, pairs, walks
    from .block import make_block
    from .device import DeviceCache
    from .gather import make_gather
    from .neighbors import make_neighbors
    from .pairs import make_pairs
    from .walks import make_walks

    cache = DeviceCache()
    kernels: dict[str, Any] = {}
    for make in (make_neighbors, make_walks, make_pairs, make_gather):
        kernels.update(make(cache))
    kernels.update(make_block())
    # tables built on the host by the CPU kernels (once per store), and a scalar helper
    kernels.update(row_alias=alias.row_alias, row_inv_weights=alias.row_inv_weights,
                   alias_draw=alias.alias_draw, sort_rows=walks.sort_rows,
                   alias_table=pairs.alias_table)
    return SimpleNamespace(name="cuda", simulator=sim, device_cache=cache, **kernels)
