"""Input checks shared by the sampling functions: seeds per node type, fanouts, random seed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._util.arrays import as_ids, check_id_range
from ..errors import ValidationError
from ..graph import CSR
from ..store import GraphStore
from ..typing import EdgeType, IdArray
from .fanouts import Fanouts, fanout_int, resolve_layer

__all__ = ["checked_csr", "etype_salt", "layer_fanouts", "one_fanout", "resolve_seed",
           "seeds_by_type"]

_MAX_SEED = 2**63 - 1


def resolve_seed(seed: int | None) -> int:
    """``seed`` as a non-negative int; ``None`` draws a fresh one from the OS entropy."""
    if seed is None:
        return int(np.random.default_rng().integers(0, _MAX_SEED))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValidationError(f"seed must be a non-negative int or None, got {seed!r}",
                              field="seed", value=seed)
    return int(seed) & _MAX_SEED


def seeds_by_type(store: GraphStore, seeds: Any, what: str = "seeds") -> dict[str, IdArray]:
    """``{ntype: int64 IDs}`` from a dict or, with one node type, a plain array; range-checked."""
    if not isinstance(seeds, Mapping):
        if len(store.ntypes) != 1:
            raise ValidationError(f"{what}: the graph has node types {store.ntypes}; pass a "
                                  "dict {ntype: IDs}", field=what)
        seeds = {store.ntypes[0]: seeds}
    out: dict[str, IdArray] = {}
    for ntype, ids in seeds.items():
        if ntype not in store.ntypes:
            raise ValidationError(f"{what}: unknown node type {ntype!r}; node types are "
                                  f"{store.ntypes}", field=what, value=ntype)
        arr = as_ids(ids, f"{what}[{ntype!r}]")
        check_id_range(arr, store.num_nodes(ntype), f"{what} of node type {ntype!r}")
        out[ntype] = arr
    return out


def one_fanout(store: GraphStore, fanout: Any, where: str = "fanout") -> dict[EdgeType, int]:
    """``{etype: k}`` for every edge type from an int or a per-type dict (missing types: 0)."""
    if isinstance(fanout, Mapping):
        return resolve_layer(store, {k: fanout_int(v, f"{where}[{k!r}]")
                                     for k, v in fanout.items()})
    return resolve_layer(store, fanout_int(fanout, where))


def layer_fanouts(store: GraphStore, fanouts: Any) -> list[dict[EdgeType, int]]:
    """Per-layer fanouts, input layer first, for ``store``: :meth:`Fanouts.of` (a list of
    ints or per-type dicts, ``{etype: [k per layer]}``, or a :class:`Fanouts`), then
    :meth:`Fanouts.resolve`."""
    return Fanouts.of(fanouts).resolve(store)


def etype_salt(store: GraphStore, etype: EdgeType, edge_dir: str, hop: int = 0) -> int:
    """Stream number of (etype, direction, hop): keeps their draws independent."""
    return (hop * 4096 + store.canonical_etypes.index(etype)) * 2 + (edge_dir == "out")


def checked_csr(csr: Any, num_rows: int, what: str) -> CSR:
    """A store's sub-CSR as contiguous int64 arrays, its shape checked (kernels do not
    bounds-check): ``num_rows + 1`` offsets from 0 to ``len(indices) == len(eids)``."""
    indptr, indices, eids = (np.ascontiguousarray(a, dtype=np.int64)
                             for a in (csr.indptr, csr.indices, csr.eids))
    if (indptr.ndim != 1 or len(indptr) != num_rows + 1 or indptr[0] != 0
            or indptr[-1] != len(indices) or len(indices) != len(eids)
            or (num_rows and np.any(np.diff(indptr) < 0))):
        raise ValidationError(f"{what}: the store returned a malformed CSR for {num_rows} rows "
                              f"(indptr length {len(indptr)}, {len(indices)} indices, "
                              f"{len(eids)} eids)", field=what)
    return CSR(indptr, indices, eids)
