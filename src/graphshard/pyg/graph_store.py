"""PyG ``GraphStore`` over a graphshard store: edge types, sizes, and edge indices on request.

PyG's loaders read the edge types and their ``(num_src_nodes, num_dst_nodes)`` sizes from
the graph store; the sampling itself is :class:`~graphshard.pyg.sampler.NeighborSampler`'s,
on graphshard's kernels.  The whole edge index of a type is given when asked for (a
``LinkLoader`` without ``edge_label_index`` asks for it): from the in-memory CSR of a local
graph, or gathered from the graph servers of a DistGraph (``2 x E`` int64 in memory).

Example:
    >>> import graphshard as gs
    >>> g = gs.heterograph({("u", "buys", "i"): ([0, 1, 1], [0, 0, 1])})
    >>> store = GraphStore(g)
    >>> [(a.edge_type, a.size) for a in store.get_all_edge_attrs()]
    [(('u', 'buys', 'i'), (2, 2))]
    >>> store[("u", "buys", "i"), "coo"][1].tolist()
    [0, 0, 1]
    >>> metadata(g)
    (['i', 'u'], [('u', 'buys', 'i')])
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch_geometric.data import EdgeAttr
from torch_geometric.data import GraphStore as _PygGraphStore
from torch_geometric.data.graph_store import EdgeLayout

from ..errors import ValidationError
from ..store import LocalAdjacency, as_store
from ..typing import EdgeType
from .feature_store import FeatureStore
from .naming import is_homogeneous

__all__ = ["GraphStore", "metadata", "remote_backend"]

log = logging.getLogger(__name__)

_CHUNK = 1 << 22  # edges per find_edges request when gathering a DistGraph's edge index


class GraphStore(_PygGraphStore):
    """The structure of a Graph or GraphStore (a DistGraph) as a PyG ``GraphStore``.

    Args:
        store: A :class:`~graphshard.graph.Graph` or any GraphStore.

    Every edge type is listed in COO layout in per-type edge-ID order (so PyG's ``e_id`` is
    graphshard's edge ID); CSR and CSC are given too when asked for.  Read-only.
    """

    def __init__(self, store: Any) -> None:
        super().__init__()
        self.store = as_store(store)
        self._warned = False

    def get_all_edge_attrs(self) -> list[EdgeAttr]:
        """One COO attribute per canonical edge type, with its ``(num_src, num_dst)`` size;
        the edge type is None for a homogeneous graph (:func:`~graphshard.pyg.naming.
        is_homogeneous`), as PyG's homogeneous stores have it."""
        s = self.store
        homogeneous = is_homogeneous(s)
        return [EdgeAttr(None if homogeneous else et, EdgeLayout.COO,
                         size=(s.num_nodes(et[0]), s.num_nodes(et[2])))
                for et in s.canonical_etypes]

    def _canonical(self, edge_type: Any) -> EdgeType:
        """The canonical edge type of a PyG edge type (None: the homogeneous graph's)."""
        if edge_type is None:
            ets = self.store.canonical_etypes
            if len(ets) != 1:
                raise ValidationError(f"edge type None needs a graph with one edge type; edge "
                                      f"types are {ets}", field="edge_type")
            return ets[0]
        return self.store.to_canonical_etype(tuple(edge_type) if isinstance(edge_type, list)
                                             else edge_type)

    def _get_edge_index(self, edge_attr: EdgeAttr) -> tuple[torch.Tensor, torch.Tensor]:
        et = self._canonical(edge_attr.edge_type)
        if not isinstance(self.store, LocalAdjacency) and not self._warned:
            self._warned = True  # once per store: PyG asks for every edge type in turn
            log.warning("PyG asked for the whole edge index of %s: it is gathered from the "
                        "graph servers into this process (PyG's own sampler samples "
                        "locally); graphshard.pyg.NeighborSampler samples on the servers "
                        "instead", ":".join(et))
        layout = EdgeLayout(edge_attr.layout)
        if layout == EdgeLayout.COO:
            src, dst = self._coo(et)
            return torch.from_numpy(src), torch.from_numpy(dst)
        # CSC is (row, colptr) grouped by destination; CSR is (rowptr, col) by source
        edge_dir = "in" if layout == EdgeLayout.CSC else "out"
        if isinstance(self.store, LocalAdjacency):
            csr = self.store.adjacency(et, edge_dir)
        else:
            n = self.store.num_nodes(et[2] if edge_dir == "in" else et[0])
            csr = self.store.neighbors(np.arange(n, dtype=np.int64), et, edge_dir=edge_dir)
        ptr = torch.from_numpy(np.asarray(csr.indptr, dtype=np.int64))
        idx = torch.from_numpy(np.asarray(csr.indices, dtype=np.int64))
        return (idx, ptr) if layout == EdgeLayout.CSC else (ptr, idx)

    def _coo(self, et: EdgeType) -> tuple[np.ndarray, np.ndarray]:
        """``(src, dst)`` of every edge of ``et`` in edge-ID order (new int64 arrays)."""
        m = self.store.num_edges(et)
        src = np.empty(m, dtype=np.int64)
        dst = np.empty(m, dtype=np.int64)
        for lo in range(0, m, _CHUNK):
            hi = min(m, lo + _CHUNK)
            src[lo:hi], dst[lo:hi] = self.store.find_edges(np.arange(lo, hi, dtype=np.int64), et)
        return src, dst

    def _put_edge_index(self, edge_index: Any, edge_attr: EdgeAttr) -> bool:
        raise ValidationError("graphshard's PyG GraphStore is read-only: build the Graph (or "
                              "partition it) with its edges instead", field="put_edge_index")

    def _remove_edge_index(self, edge_attr: EdgeAttr) -> bool:
        raise ValidationError("graphshard's PyG GraphStore is read-only",
                              field="remove_edge_index")

    def __repr__(self) -> str:
        return f"GraphStore({self.store!r})"


def metadata(store: Any) -> tuple[list[str], list[EdgeType]]:
    """``(node types, canonical edge types)`` as PyG's ``to_hetero`` takes them (node types
    sorted, edge types in the store's order)."""
    s = as_store(store)
    return sorted(s.ntypes), list(s.canonical_etypes)


def remote_backend(store: Any, *, node_attrs: Sequence[str] | dict[str, str] | None = None,
                   sparse_layout: str = "dense") -> tuple[FeatureStore, GraphStore]:
    """``(FeatureStore, GraphStore)`` over one store: the ``data`` argument of PyG's
    ``NodeLoader`` and ``LinkLoader`` (see :class:`FeatureStore` for the options)."""
    s = as_store(store)
    return (FeatureStore(s, node_attrs=node_attrs, sparse_layout=sparse_layout),
            GraphStore(s))
