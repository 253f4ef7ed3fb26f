"""Helpers shared by the training examples: opening a store, derived seeds, ID arguments."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .._util.arrays import as_ids
from ..errors import ValidationError
from ..ragged import Ragged
from ..sparse import SparseRows
from ..store import GraphStore, as_store
from ..typing import IdArray

_CHUNK = 1 << 16


@contextmanager
def open_store(store_or_config: Any) -> Iterator[GraphStore]:
    """A store for a Graph or GraphStore, or a DistGraph (closed on exit) for the path of a
    partition config JSON."""
    if isinstance(store_or_config, (str, os.PathLike)):
        from ..distributed import DistGraph

        path = Path(store_or_config)
        if path.suffix != ".json":
            raise ValidationError(f"{path}: expected a partition config (.json), a Graph or a "
                                  "GraphStore", field="store", value=str(path))
        dg = DistGraph(path)
        try:
            yield dg
        finally:
            dg.close()
    else:
        yield as_store(store_or_config)


def subseed(seed: int, *parts: int) -> int:
    """A seed for one (epoch, batch, ...) derived from ``seed``; the same on every machine."""
    return int(np.random.SeedSequence([int(seed), *map(int, parts)]).generate_state(1)[0])


def the_ntype(store: GraphStore, what: str) -> str:
    """The only node type, or a ValidationError saying ``what`` needs one."""
    if len(store.ntypes) != 1:
        raise ValidationError(f"{what} needs a graph with one node type, got {store.ntypes}",
                              field="store")
    return store.ntypes[0]


def read_rows(store: GraphStore, ntype: str, name: str, ids: IdArray) -> np.ndarray:
    """Feature ``name`` at ``ids``, read in chunks (bounded requests to graph servers)."""
    parts = [_dense_rows(store, ntype, name, ids[i:i + _CHUNK])
             for i in range(0, len(ids), _CHUNK)]
    return np.concatenate(parts) if parts else _dense_rows(store, ntype, name, ids)


def _dense_rows(store: GraphStore, ntype: str, name: str, ids: IdArray) -> np.ndarray:
    rows = store.node_features(ntype, name, ids)
    if isinstance(rows, SparseRows):  # stored sparse, trained dense: a batch at a time
        return rows.to_dense()
    if isinstance(rows, Ragged):
        raise ValidationError(f"node feature {name!r} of {ntype!r} has rows of varying length; "
                              "the training examples need a fixed-width feature", field=name)
    return rows


def node_ids(store: GraphStore, ntype: str, spec: Any, what: str) -> IdArray:
    """Node IDs from a feature name (a boolean mask or 0/1 column), a boolean mask over all
    nodes, or an ID array; None gives no IDs."""
    n = store.num_nodes(ntype)
    if spec is None:
        return np.zeros(0, dtype=np.int64)
    if isinstance(spec, str):
        col = read_rows(store, ntype, spec, np.arange(n, dtype=np.int64))
        return np.flatnonzero(col.reshape(n, -1)[:, 0] != 0).astype(np.int64)
    arr = np.asarray(spec)
    if arr.dtype == np.bool_:
        if arr.shape != (n,):
            raise ValidationError(f"{what}: a boolean mask needs one entry per node ({n}), got "
                                  f"shape {arr.shape}", field=what)
        return np.flatnonzero(arr).astype(np.int64)
    ids = as_ids(arr, what)
    bad = np.flatnonzero((ids < 0) | (ids >= n))
    if bad.size:
        raise ValidationError(f"{what}: ID {int(ids[bad[0]])} at index {int(bad[0])} is out of "
                              f"range for {n} nodes", field=what, value=int(ids[bad[0]]))
    return ids
