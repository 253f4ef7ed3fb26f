"""Tables the samplers derive from a local adjacency and keep in its store's cache.

The store (:class:`~graphshard.store.LocalAdjacency`) serves the adjacency and the edge
weights in CSR order; building sampling structures from them is sampling's job, done here
and cached by the store under a key that names the structure.

Example:
    >>> import numpy as np, graphshard as gs
    >>> from graphshard.store import as_store
    >>> g = gs.graph(([0, 0, 1], [1, 2, 2]))
    >>> g.edata["w"] = np.array([1.0, 0.0, 2.0])
    >>> store = as_store(g)
    >>> rec, nnz = weight_table(store, ("_N", "_E", "_N"), "in", "w")
    >>> rec.shape, weight_table(store, ("_N", "_E", "_N"), "in", "w")[0] is rec
    ((3,), True)
"""

from __future__ import annotations

import numpy as np

from ..store import LocalAdjacency
from ..typing import EdgeType, IdArray
from .backend import get_backend

__all__ = ["weight_table"]


def weight_table(store: LocalAdjacency, etype: EdgeType, edge_dir: str, name: str
                 ) -> tuple[np.ndarray, IdArray]:
    """Per-row alias records of edge feature ``name`` in CSR order, ``(rec, nnz)``, built on
    first use and kept in ``store.cached(("weight-table", etype, edge_dir, name), ...)``.

    ``rec`` holds 8 bytes per edge (int64, shape ``(num_edges,)``); ``nnz`` is empty when
    every weight is positive.  Built by the CPU kernel ``row_alias``
    (:mod:`~graphshard.sampling.kernels.alias`) whatever the sampling backend, as host
    arrays shared by every backend.

    Raises:
        ValidationError: the feature is missing, not one value per edge, negative or not
            finite.
    """

    def build() -> tuple[np.ndarray, IdArray]:
        csr = store.adjacency(etype, edge_dir)
        w = store.edge_weights(etype, name)  # edge-ID order: the kernel reads w[eids[p]]
        rec = np.empty(len(csr.eids), dtype=np.int64)
        return get_backend("cpu").row_alias(csr.indptr, w, csr.eids, rec)

    return store.cached(("weight-table", etype, edge_dir, name), build)
