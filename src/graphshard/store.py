"""The graph-store protocol that samplers talk to, and its in-memory implementation.

A store answers batched questions only: the neighbourhoods of an ID array for one edge type,
degrees, feature rows by IDs.  :class:`CSRStore` answers them from per-type CSR arrays (from a
:class:`~graphshard.graph.Graph`, or raw and possibly memory-mapped arrays of a loaded
partition) and also offers the whole local adjacency, which the samplers use as a fast path.
A distributed graph implements :class:`GraphStore` only; the sampled result is the same
because every random draw is keyed by node ID, not by row position.

Example:
    >>> import graphshard as gs
    >>> store = as_store(gs.graph(([0, 0, 1], [1, 2, 2])))
    >>> nb = store.neighbors([2], "_E", edge_dir="in")
    >>> nb.indptr.tolist(), nb.indices.tolist(), store.degrees([2, 0], "_E").tolist()
    ([0, 2], [0, 1], [2, 0])
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ._util.arrays import as_ids, check_id_range
from .errors import ValidationError, check_choice
from .graph import CSR, Graph
from .ragged import Ragged
from .sparse import SparseRows
from .types import TypedGraph
from .typing import EdgeType, EdgeTypeLike, IdArray

__all__ = ["EDGE_DIRS", "CSRStore", "FeatureSchema", "GraphStore", "Hop", "HopSampler",
           "LocalAdjacency", "Rows", "as_store", "check_weights", "feature_key"]

#: Feature rows a store returns: an array, a Ragged or a SparseRows (new in each case).
Rows = np.ndarray | Ragged | SparseRows

#: Valid ``edge_dir`` values: ``"in"`` follows in-edges (CSC), ``"out"`` out-edges (CSR).
EDGE_DIRS = ("in", "out")


@runtime_checkable
class GraphStore(Protocol):
    """What a sampler needs from a graph: types, sizes and batched lookups (arrays in, out)."""

    @property
    def ntypes(self) -> list[str]: ...
    @property
    def canonical_etypes(self) -> list[EdgeType]: ...
    def num_nodes(self, ntype: str | None = None) -> int: ...
    def num_edges(self, etype: EdgeTypeLike | None = None) -> int: ...
    def to_canonical_etype(self, etype: EdgeTypeLike | None) -> EdgeType: ...

    def neighbors(self, ids: Any, etype: EdgeTypeLike, *, edge_dir: str = "in") -> CSR:
        """Sub-CSR of ``ids``: row i holds the in- (or out-) edges of ``ids[i]``."""
        ...

    def degrees(self, ids: Any, etype: EdgeTypeLike, *, edge_dir: str = "in") -> IdArray: ...
    # rows of a feature: an array, a Ragged for a variable-length one, a SparseRows for a
    # sparse one (as DistGraph)
    def edge_features(self, etype: EdgeTypeLike, name: str, eids: Any) -> Rows: ...
    def node_features(self, ntype: str, name: str, ids: Any) -> Rows: ...
    def find_edges(self, eids: Any, etype: EdgeTypeLike) -> tuple[IdArray, IdArray]: ...


#: One hop of in-edge sampling: ``{etype: (destination keys, fanout, salt)}``.
Hop = Mapping[EdgeType, tuple[IdArray, int, int]]


@runtime_checkable
class HopSampler(Protocol):
    """Optional: a store that samples a whole hop itself (a distributed graph runs the
    kernels next to its partitions, one request per server per hop).

    ``sample_hop`` returns ``{etype: (neighbours, eids, counts)}`` exactly as
    :func:`graphshard.sampling.neighbors.sample_etype` would for each edge type.
    """

    def sample_hop(self, hop: Hop, *, replace: bool, prob: str | None,
                   exclude: Mapping[EdgeType, IdArray], seed: int, backend: str = "cpu"
                   ) -> dict[EdgeType, tuple[IdArray, IdArray, IdArray]]: ...


#: ``{"<type>/<name>": (row shape, dtype name)}``; the row shape is None for a Ragged feature
#: and ``(num_cols,)`` for a SparseRows one (the row shape of its dense form).
Schema = dict[str, tuple[tuple[int, ...] | None, str]]


@runtime_checkable
class FeatureSchema(Protocol):
    """Optional: a store that lists its features, so clients (the PyG backend) can offer
    them without reading any row.  ``kind`` is ``"node"`` or ``"edge"``; keys are
    :func:`feature_key` strings."""

    def feature_schema(self, kind: str) -> Schema: ...


def feature_key(type_: str | EdgeType, name: str) -> str:
    """The key of a feature in a schema and in partition files: ``"<ntype>/<name>"`` or
    ``"<src:rel:dst>/<name>"``.

    Example:
        >>> feature_key(("u", "buys", "i"), "w"), feature_key("u", "feat")
        ('u:buys:i/w', 'u/feat')
    """
    return (type_ if isinstance(type_, str) else ":".join(type_)) + "/" + name


@runtime_checkable
class LocalAdjacency(Protocol):
    """Optional fast path: the whole adjacency in memory, its edge weights in edge-ID order
    (``CSR.eids`` maps a CSR position to its weight), and a cache for structures the
    samplers derive from them (such as weight alias tables)."""

    def adjacency(self, etype: EdgeType, edge_dir: str) -> CSR: ...
    def edge_weights(self, etype: EdgeType, name: str) -> np.ndarray: ...
    def cached(self, key: Any, build: Callable[[], Any]) -> Any: ...


class CSRStore(TypedGraph):
    """A :class:`GraphStore` over per-type CSR arrays, built on first use and cached.

    Args:
        graph: The graph whose ``in_csr``/``out_csr``, sizes and features are served.

    Use :func:`as_store` to get the cached store of a Graph.  What the samplers derive from
    it (weight alias tables, sorted rows) is built on first use through :meth:`cached` and
    kept; call :meth:`clear_cache` after changing a feature in place.
    """

    def __init__(self, graph: Graph) -> None:
        self._g = graph
        self._types = graph.types  # ntypes, canonical_etypes, etypes (TypedGraph)
        self._extra: dict[Any, Any] = {}
        self._lock = threading.RLock()

    # ----- schema ---------------------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        """The wrapped graph."""
        return self._g

    def num_nodes(self, ntype: str | None = None) -> int:
        """Nodes of ``ntype`` (all types when None)."""
        return self._g.num_nodes(ntype)

    def num_edges(self, etype: EdgeTypeLike | None = None) -> int:
        """Edges of ``etype`` (all types when None)."""
        return self._g.num_edges(etype)

    def to_canonical_etype(self, etype: EdgeTypeLike | None) -> EdgeType:
        """Resolve an edge type name; raises ValidationError listing the valid ones."""
        return self._g.to_canonical_etype(etype)

    # ----- adjacency ------------------------------------------------------------------------
    def adjacency(self, etype: EdgeType, edge_dir: str) -> CSR:
        """Whole CSR of ``etype``: grouped by destination for ``"in"``, by source for ``"out"``."""
        check_edge_dir(edge_dir)
        return self._g.in_csr(etype) if edge_dir == "in" else self._g.out_csr(etype)

    def edge_weights(self, etype: EdgeType, name: str) -> np.ndarray:
        """Edge feature ``name`` in edge-ID order, checked for sampling: the column itself
        when it is 1-D float32 or float64 (no copy: at 20M edges a float64 copy in CSR
        order was 160 MB), else a float64 copy (see :func:`edge_weights`).

        Raises:
            ValidationError: the feature is missing, not one value per edge, negative or not
                finite.
        """
        return edge_weights(self._g.edge_frame(etype), etype, name)

    def cached(self, key: Any, build: Callable[[], Any]) -> Any:
        """A derived structure (weight alias tables, sorted rows, degree tables) built once
        per store: ``build()`` runs on the first call for ``key``, under the store's lock."""
        with self._lock:
            if key not in self._extra:
                self._extra[key] = build()
            return self._extra[key]

    def feature_schema(self, kind: str) -> Schema:
        """Every node (``kind="node"``) or edge feature of the graph: ``{key: (row shape,
        dtype)}`` keyed by :func:`feature_key`, the row shape None for a Ragged column and
        ``(num_cols,)`` for a SparseRows one."""
        if kind not in ("node", "edge"):
            raise ValidationError(f"kind must be 'node' or 'edge', got {kind!r}", field="kind",
                                  value=kind)
        types: list[Any] = self.ntypes if kind == "node" else self.canonical_etypes
        out: Schema = {}
        for t in types:
            frame = self._g.node_frame(t) if kind == "node" else self._g.edge_frame(t)
            for name in frame:
                col = frame[name]
                shape = None if isinstance(col, Ragged) else tuple(int(d) for d in col.shape[1:])
                out[feature_key(t, name)] = (shape, str(col.values.dtype if shape is None
                                                         else col.dtype))
        return out

    def clear_cache(self) -> None:
        """Forget the derived structures of :meth:`cached` (weight tables included)."""
        with self._lock:
            self._extra.clear()

    # ----- batched lookups -----------------------------------------------------------------
    def neighbors(self, ids: Any, etype: EdgeTypeLike, *, edge_dir: str = "in") -> CSR:
        """Sub-CSR of ``ids`` (new arrays): row i lists the edges of ``ids[i]`` in CSR order.

        Raises:
            ValidationError: an ID is out of range, or the edge type or direction is unknown.
        """
        et = self.to_canonical_etype(etype)
        csr = self.adjacency(et, edge_dir)
        rows = self._rows(ids, et, edge_dir)
        starts = csr.indptr[rows]
        lengths = csr.indptr[rows + 1] - starts
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        pos = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1], dtype=np.int64)
        return CSR(indptr, csr.indices[pos].astype(np.int64, copy=False),
                   csr.eids[pos].astype(np.int64, copy=False))

    def degrees(self, ids: Any, etype: EdgeTypeLike, *, edge_dir: str = "in") -> IdArray:
        """In- (or out-) degrees of ``ids`` for one edge type (int64, new array)."""
        et = self.to_canonical_etype(etype)
        indptr = self.adjacency(et, edge_dir).indptr
        rows = self._rows(ids, et, edge_dir)
        return indptr[rows + 1] - indptr[rows]

    def edge_features(self, etype: EdgeTypeLike, name: str, eids: Any) -> Rows:
        """Rows ``eids`` of edge feature ``name`` (a copy: an array, Ragged or SparseRows
        as the column is)."""
        et = self.to_canonical_etype(etype)
        ids = as_ids(eids, "eids")
        check_id_range(ids, self.num_edges(et), f"eids of {et}")
        return _take(self._g.edge_frame(et)[name], ids)

    def node_features(self, ntype: str, name: str, ids: Any) -> Rows:
        """Rows ``ids`` of node feature ``name`` of ``ntype`` (a copy: an array, Ragged or
        SparseRows as the column is).

        Example:
            >>> import scipy.sparse as sp, graphshard as gs
            >>> g = gs.graph(([0, 1], [1, 2]))
            >>> g.ndata["bow"] = sp.csr_matrix(np.eye(3, 4))
            >>> as_store(g).node_features("_N", "bow", [2, 0]).to_dense().tolist()
            [[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]]
        """
        nid = as_ids(ids, "ids")
        check_id_range(nid, self.num_nodes(ntype), f"ids of node type {ntype!r}")
        return _take(self._g.node_frame(ntype)[name], nid)

    def find_edges(self, eids: Any, etype: EdgeTypeLike) -> tuple[IdArray, IdArray]:
        """Endpoints ``(src, dst)`` of per-type edge IDs."""
        return self._g.find_edges(eids, etype)

    def _rows(self, ids: Any, et: EdgeType, edge_dir: str) -> IdArray:
        check_edge_dir(edge_dir)
        ntype = et[2] if edge_dir == "in" else et[0]
        rows = as_ids(ids, "ids")
        check_id_range(rows, self.num_nodes(ntype), f"{ntype!r} node IDs")
        return rows

    def __repr__(self) -> str:
        return f"CSRStore({self._g!r})"


def _take(col: Any, ids: IdArray) -> Rows:
    """Rows ``ids`` of a feature column (an array, or anything with ``take``: a Ragged
    or a SparseRows)."""
    return col.take(ids) if hasattr(col, "take") and not isinstance(col, np.ndarray) \
        else np.asarray(col)[ids]


def check_edge_dir(edge_dir: str) -> None:
    """Raise ValidationError unless ``edge_dir`` is ``"in"`` or ``"out"``."""
    check_choice(edge_dir, EDGE_DIRS, "edge_dir")


def edge_weights(frame: Mapping[str, Any], etype: EdgeType, name: str) -> np.ndarray:
    """Feature ``name`` of ``etype``, checked for sampling, in edge-ID order: the column
    itself when it is (or views as) a contiguous 1-D float32/float64 array, else a float64
    copy.  Treat it as read-only.

    Raises:
        ValidationError: the feature is missing, not one value per edge, negative or not finite.
    """
    if name not in frame:
        raise ValidationError(f"edge type {etype}: no edge feature {name!r} to use as prob; "
                              f"features are {sorted(frame)}", field="prob", value=name)
    col = np.asarray(frame[name])
    if col.ndim == 2 and col.shape[1] == 1:
        col = col[:, 0]
    ids = np.arange(len(col), dtype=np.int64) if col.ndim else np.zeros(0, dtype=np.int64)
    if col.ndim == 1 and col.dtype in (np.float32, np.float64) and col.flags.c_contiguous:
        if len(col) and not (np.isfinite(col).all() and col.min() >= 0):
            check_weights(col, ids, etype, name)  # raises, naming the first bad edge
        return col
    return check_weights(col, ids, etype, name)


def check_weights(w: Any, eids: np.ndarray, etype: EdgeType, name: str) -> np.ndarray:
    """``w`` (one weight per edge of ``eids``) as contiguous float64, or a ValidationError
    naming the first edge whose weight is negative or not finite."""
    w = np.asarray(w)
    if w.ndim == 2 and w.shape[1] == 1:
        w = w[:, 0]
    if w.ndim != 1 or w.dtype.kind not in "fiub":
        raise ValidationError(f"edge type {etype}: prob feature {name!r} must hold one number "
                              f"per edge, got shape {w.shape} dtype {w.dtype}", field="prob")
    w = np.ascontiguousarray(w, dtype=np.float64)
    bad = np.flatnonzero(~(w >= 0) | ~np.isfinite(w))
    if bad.size:
        raise ValidationError(f"edge type {etype}: prob feature {name!r} must be finite and "
                              f">= 0, but edge {int(eids[bad[0]])} has weight {w[bad[0]]}",
                              field="prob", value=float(w[bad[0]]))
    return w


_STORES: weakref.WeakKeyDictionary[Graph, CSRStore] = weakref.WeakKeyDictionary()
_STORES_LOCK = threading.Lock()


def as_store(g: Any) -> GraphStore:
    """The store of ``g``: the cached :class:`CSRStore` of a Graph, or ``g`` if it is a store.

    Raises:
        ValidationError: ``g`` is neither a Graph nor implements :class:`GraphStore`.

    Example:
        >>> import graphshard as gs
        >>> g = gs.graph(([0], [1]))
        >>> as_store(g) is as_store(g)
        True
    """
    if isinstance(g, Graph):
        with _STORES_LOCK:
            store = _STORES.get(g)
            if store is None:
                store = _STORES[g] = CSRStore(g)
            return store
    if isinstance(g, GraphStore):
        return g
    raise ValidationError(f"expected a graphshard Graph or a GraphStore, got {type(g).__name__}",
                          field="g")
