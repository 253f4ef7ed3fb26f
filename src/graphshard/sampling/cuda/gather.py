"""CUDA kernels for degrees and feature-row gathers (one thread per output element), the
tables on the device (copied once, see :mod:`.device`)."""

from __future__ import annotations

from typing import Any

from numba import cuda

from .device import DeviceCache, device_in, device_out, launch

__all__ = ["make_gather"]


@cuda.jit
def _degrees(indptr, rows, out):
    i = cuda.grid(1)
    if i < rows.shape[0]:
        out[i] = indptr[rows[i] + 1] - indptr[rows[i]]


@cuda.jit
def _gather(table, ids, out):
    e = cuda.grid(1)
    cols = out.shape[1]
    if e < ids.shape[0] * cols:
        i = e // cols
        j = e - i * cols
        out[i, j] = table[ids[i], j]


def make_gather(cache: DeviceCache) -> dict[str, Any]:
    """``row_degrees`` and ``gather_rows`` with the CPU signatures."""

    def row_degrees(indptr: Any, rows: Any, out: Any) -> None:
        d_out, host = device_out(out)
        launch(_degrees, len(rows), cache.get(indptr), device_in(rows), d_out)
        if host is not None and len(rows):
            d_out.copy_to_host(host)

    def gather_rows(table: Any, ids: Any, out: Any) -> None:
        d_out, host = device_out(out)
        launch(_gather, out.shape[0] * out.shape[1], cache.get(table), device_in(ids), d_out)
        if host is not None and out.size:
            d_out.copy_to_host(host)

    return {"row_degrees": row_degrees, "gather_rows": gather_rows}
