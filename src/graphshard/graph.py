"""The in-memory graph: node types, canonical edge types, COO edges per type, features.

IDs are int64.  Node types keep the order in which they were declared (``num_nodes_dict``
first, then first appearance in the edge dict); canonical edge types keep the order of the
edge dict.  A homogeneous graph has node type ``"_N"`` and edge type ``("_N", "_E", "_N")``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._util.arrays import as_ids, check_id_range
from .errors import ValidationError
from .frames import FeatureDict, MultiTypeData
from .types import GraphTypes, TypedGraph
from .typing import EdgeType, EdgeTypeLike, IdArray

__all__ = ["CSR", "Graph", "graph", "heterograph"]

DEFAULT_NTYPE = "_N"
DEFAULT_ETYPE: EdgeType = ("_N", "_E", "_N")


@dataclass(frozen=True)
class CSR:
    """Compressed adjacency of one edge type.

    For ``Graph.in_csr`` row ``v`` lists the in-edges of destination ``v``: their sources are
    ``indices[indptr[v]:indptr[v+1]]`` and their per-type edge IDs ``eids[...]``, in edge-ID
    order.  ``Graph.out_csr`` is the same with sources as rows.  ``indptr`` is int64;
    ``indices`` and ``eids`` are int64, or int32 in a graph's own CSRs and in a graph
    server's index (:class:`~graphshard.distributed._index.PartIndex`) where the node count
    of the column type (for ``indices``) or the edge count (for ``eids``) is below 2**31
    (half the memory: :func:`build_csr` with ``compact=True``).  Convert with
    ``astype(np.int64)`` where int64 is needed.
    """

    indptr: IdArray
    indices: npt.NDArray[np.integer]
    eids: npt.NDArray[np.integer]

    @property
    def num_rows(self) -> int:
        """Number of rows (destination nodes for ``in_csr``)."""
        return len(self.indptr) - 1

    def degrees(self) -> IdArray:
        """Row lengths (in-degrees for ``in_csr``)."""
        return np.diff(self.indptr)


class Graph(TypedGraph):
    """A directed (hetero)graph with per-type COO edges and features.

    Build one with :func:`graph` or :func:`heterograph`.

    Example:
        >>> import numpy as np, graphshard as gs
        >>> g = gs.heterograph({("user", "buys", "item"): ([0, 1], [1, 0])},
        ...                    num_nodes_dict={"user": 2, "item": 3})
        >>> g.ntypes, g.num_nodes("item"), g.num_edges()
        (['user', 'item'], 3, 2)
        >>> g.nodes["item"].data["feat"] = np.zeros((3, 4), dtype=np.float32)
        >>> g.edges(etype="buys")[1].tolist()
        [1, 0]
    """

    def __init__(self, edges: Mapping[EdgeType, tuple[IdArray, IdArray]],
                 num_nodes: Mapping[str, int]) -> None:
        self._num_nodes = {t: int(n) for t, n in num_nodes.items()}
        self._edges = dict(edges)
        self._types = GraphTypes(list(self._num_nodes), list(self._edges))
        self._ntype_frames = {t: FeatureDict(n, f"node type {t!r}")
                              for t, n in self._num_nodes.items()}
        self._etype_frames = {et: FeatureDict(len(s), f"edge type {et!r}")
                              for et, (s, _) in self._edges.items()}
        self._csr_cache: dict[tuple[EdgeType, str], CSR] = {}

    # ----- types ---------------------------------------------------------------------------
    @property
    def is_homogeneous(self) -> bool:
        """True with one node type and one edge type."""
        return len(self._num_nodes) == 1 and len(self._edges) <= 1

    def get_ntype_id(self, ntype: str | None) -> int:
        """Index of ``ntype`` in :attr:`ntypes` (``None`` allowed with one node type)."""
        return self._types.ntype_id(ntype)

    def get_etype_id(self, etype: EdgeTypeLike | None) -> int:
        """Index of ``etype`` in :attr:`canonical_etypes`."""
        return self._types.etype_id(etype)

    def _ntype(self, ntype: str | None) -> str:
        return self._types.to_ntype(ntype)

    def to_canonical_etype(self, etype: EdgeTypeLike | None) -> EdgeType:
        """Resolve a relation name, ``"src:rel:dst"`` string or tuple to a canonical type.

        Raises:
            ValidationError: an unknown type (listing the edge types), a relation that names
                several canonical types, or None with several edge types.

        Example:
            >>> g = heterograph({("u", "r", "i"): ([0], [0])})
            >>> g.to_canonical_etype("r"), g.to_canonical_etype("u:r:i")
            (('u', 'r', 'i'), ('u', 'r', 'i'))
        """
        return self._types.to_canonical_etype(etype)

    # ----- sizes and structure ---------------------------------------------------------------
    def num_nodes(self, ntype: str | None = None) -> int:
        """Nodes of ``ntype``, or of all types when ``ntype`` is None."""
        if ntype is None:
            return sum(self._num_nodes.values())
        return self._num_nodes[self._ntype(ntype)]

    def num_edges(self, etype: EdgeTypeLike | None = None) -> int:
        """Edges of ``etype``, or of all types when ``etype`` is None."""
        if etype is None:
            return sum(len(s) for s, _ in self._edges.values())
        return len(self._edges[self.to_canonical_etype(etype)][0])

    @property
    def nodes(self) -> _NodeView:
        """``g.nodes(ntype)`` -> node IDs; ``g.nodes[ntype].data`` -> its features."""
        return _NodeView(self)

    @property
    def edges(self) -> _EdgeView:
        """``g.edges(etype=...)`` -> ``(src, dst)``; ``g.edges[etype].data`` -> features."""
        return _EdgeView(self)

    @property
    def ndata(self) -> FeatureDict | MultiTypeData:
        """Node features: a dict for one node type, ``name -> {ntype: col}`` for several."""
        if len(self._num_nodes) == 1:
            return next(iter(self._ntype_frames.values()))
        return MultiTypeData(self._ntype_frames)

    @property
    def edata(self) -> FeatureDict | MultiTypeData:
        """Edge features: a dict for one edge type, ``name -> {etype: col}`` for several."""
        if len(self._edges) == 1:
            return next(iter(self._etype_frames.values()))
        return MultiTypeData(self._etype_frames)

    def node_frame(self, ntype: str | None = None) -> FeatureDict:
        """Feature columns of one node type."""
        return self._ntype_frames[self._ntype(ntype)]

    def edge_frame(self, etype: EdgeTypeLike | None = None) -> FeatureDict:
        """Feature columns of one edge type."""
        return self._etype_frames[self.to_canonical_etype(etype)]

    def find_edges(self, eids: npt.ArrayLike, etype: EdgeTypeLike | None = None
                   ) -> tuple[IdArray, IdArray]:
        """Endpoints ``(src, dst)`` of per-type edge IDs ``eids`` (new arrays)."""
        et = self.to_canonical_etype(etype)
        ids = as_ids(eids, "eids")
        check_id_range(ids, self.num_edges(et), f"eids of {et}")
        src, dst = self._edges[et]
        return src[ids], dst[ids]

    def in_degrees(self, etype: EdgeTypeLike | None = None) -> IdArray:
        """In-degree of every destination node of ``etype``."""
        return self.in_csr(etype).degrees()

    def out_degrees(self, etype: EdgeTypeLike | None = None) -> IdArray:
        """Out-degree of every source node of ``etype``."""
        return self.out_csr(etype).degrees()

    def in_csr(self, etype: EdgeTypeLike | None = None) -> CSR:
        """In-edges of ``etype`` grouped by destination (built once, then cached; compact
        dtypes, see :class:`CSR`)."""
        return self._csr(self.to_canonical_etype(etype), "in")

    def out_csr(self, etype: EdgeTypeLike | None = None) -> CSR:
        """Out-edges of ``etype`` grouped by source (built once, then cached; compact
        dtypes, see :class:`CSR`)."""
        return self._csr(self.to_canonical_etype(etype), "out")

    def _csr(self, et: EdgeType, direction: str) -> CSR:
        key = (et, direction)
        if key not in self._csr_cache:
            src, dst = self._edges[et]
            rows, cols = (dst, src) if direction == "in" else (src, dst)
            num_rows = self._num_nodes[et[2] if direction == "in" else et[0]]
            num_cols = self._num_nodes[et[0] if direction == "in" else et[2]]
            self._csr_cache[key] = build_csr(rows, cols, num_rows, compact=True,
                                             num_cols=num_cols)
        return self._csr_cache[key]

    # ----- conversion ---------------------------------------------------------------------
    def node_type_offsets(self) -> IdArray:
        """Start of each node type in homogeneous ID space, plus the total (len ntypes + 1)."""
        return np.concatenate([[0], np.cumsum(list(self._num_nodes.values()))]).astype(np.int64)

    def edge_type_offsets(self) -> IdArray:
        """Start of each edge type in homogeneous edge-ID space, plus the total."""
        counts = [len(s) for s, _ in self._edges.values()]
        return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def homogeneous_edges(self) -> tuple[IdArray, IdArray, npt.NDArray[np.int32]]:
        """``(src, dst, etype_id)`` of all edges in homogeneous IDs, in homogeneous edge order.

        With one edge type whose endpoint types come first, ``src``/``dst`` are the graph's
        own arrays, not copies: treat them as read-only.
        """
        offsets = self.node_type_offsets()
        index = {t: i for i, t in enumerate(self._num_nodes)}
        if not self._edges:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty.copy(), np.zeros(0, dtype=np.int32)
        srcs, dsts, types = [], [], []
        for i, ((st, _, dt), (s, d)) in enumerate(self._edges.items()):
            srcs.append(s + offsets[index[st]] if offsets[index[st]] else s)
            dsts.append(d + offsets[index[dt]] if offsets[index[dt]] else d)
            types.append(np.full(len(s), i, dtype=np.int32))
        if len(srcs) == 1:  # no copy: the graph's own arrays (callers must not modify them)
            return srcs[0], dsts[0], types[0]
        return np.concatenate(srcs), np.concatenate(dsts), np.concatenate(types)

    def to_homogeneous(self, *, ndata: Sequence[str] = (), edata: Sequence[str] = ()) -> Graph:
        """One node type ``_N`` and one edge type ``_E``; type offsets as in :mod:`ids`.

        The result has node data ``_TYPE`` (int32 type index) and ``_ID`` (per-type ID), edge
        data ``_TYPE`` and ``_ID``, and the features named in ``ndata``/``edata``
        concatenated over the types (every type must have them with the same row shape).

        Example:
            >>> g = heterograph({("u", "r", "i"): ([0, 1], [0, 0])},
            ...                 num_nodes_dict={"u": 2, "i": 1})
            >>> h = g.to_homogeneous()
            >>> h.edges()[1].tolist(), h.ndata["_TYPE"].tolist()
            ([2, 2], [0, 0, 1])
        """
        src, dst, etype_ids = self.homogeneous_edges()
        out = graph((src, dst), num_nodes=self.num_nodes())
        sizes = list(self._num_nodes.values())
        out.ndata["_TYPE"] = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
        out.ndata["_ID"] = np.concatenate([np.arange(n, dtype=np.int64) for n in sizes])
        out.edata["_TYPE"] = etype_ids
        out.edata["_ID"] = np.concatenate(
            [np.arange(len(s), dtype=np.int64) for s, _ in self._edges.values()]
        ) if self._edges else np.zeros(0, dtype=np.int64)
        for name in ndata:
            out.ndata[name] = np.concatenate([f[name] for f in self._ntype_frames.values()])
        for name in edata:
            out.edata[name] = np.concatenate([f[name] for f in self._etype_frames.values()])
        return out

    def __repr__(self) -> str:
        if self.is_homogeneous:
            return (f"Graph(num_nodes={self.num_nodes()}, num_edges={self.num_edges()}, "
                    f"ndata={self.node_frame()!r}, edata="
                    f"{next(iter(self._etype_frames.values()), {})!r})")
        nodes = {t: n for t, n in self._num_nodes.items()}
        edges = {":".join(et): len(s) for et, (s, _) in self._edges.items()}
        return f"Graph(num_nodes={nodes}, num_edges={edges})"


class _NodeView:
    def __init__(self, g: Graph) -> None:
        self._g = g

    def __call__(self, ntype: str | None = None) -> IdArray:
        return np.arange(self._g.num_nodes(ntype), dtype=np.int64)

    def __getitem__(self, ntype: str) -> _TypeData:
        return _TypeData(self._g.node_frame(ntype))


class _EdgeView:
    def __init__(self, g: Graph) -> None:
        self._g = g

    def __call__(self, etype: EdgeTypeLike | None = None) -> tuple[IdArray, IdArray]:
        return self._g._edges[self._g.to_canonical_etype(etype)]

    def __getitem__(self, etype: EdgeTypeLike) -> _TypeData:
        return _TypeData(self._g.edge_frame(etype))


@dataclass(frozen=True)
class _TypeData:
    data: FeatureDict


def build_csr(rows: IdArray, cols: IdArray, num_rows: int, *, compact: bool = False,
              num_cols: int | None = None) -> CSR:
    """Group edge positions by ``rows`` (stable, so edge-ID order within a row).

    Args:
        rows: Row of every edge (int32 or int64, each in ``[0, num_rows)``).
        cols: Column of every edge.
        num_rows: Number of rows.
        compact: int32 ``indices`` when every column is below 2**31 (``num_cols``, or the
            largest column + 1, at most 2**31) and int32 ``eids`` when there are fewer than
            2**31 edges; otherwise, and without ``compact``, int64.  One counting-sort pass,
            with no int64 order array beside the result.
        num_cols: Bound of ``cols`` for ``compact`` (default: computed from ``cols``).

    Example:
        >>> c = build_csr(np.array([1, 0, 1]), np.array([5, 6, 7]), 2)
        >>> c.indptr.tolist(), c.indices.tolist(), c.eids.tolist()
        ([0, 1, 3], [6, 5, 7], [1, 0, 2])
        >>> build_csr(np.array([1, 0, 1]), np.array([5, 6, 7]), 2, compact=True).eids.dtype
        dtype('int32')
    """
    indptr = np.zeros(num_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=num_rows), out=indptr[1:])
    if not compact:
        order = np.argsort(rows, kind="stable").astype(np.int64, copy=False)
        return CSR(indptr, np.ascontiguousarray(cols[order]), order)
    from ._util.grouping import group_by_row

    small = np.iinfo(np.int32).max
    if num_cols is None:
        num_cols = int(cols.max()) + 1 if len(cols) else 0
    indices: npt.NDArray[np.integer] = np.empty(
        len(cols), dtype=np.int32 if num_cols <= small + 1 else np.int64)
    eids: npt.NDArray[np.integer] = np.empty(
        len(rows), dtype=np.int32 if len(rows) <= small else np.int64)
    group_by_row(np.ascontiguousarray(rows), np.ascontiguousarray(cols), indptr, indices,
                 eids)
    return CSR(indptr, indices, eids)


def graph(data: tuple[Any, Any], *, num_nodes: int | None = None) -> Graph:
    """A homogeneous graph from ``(src, dst)`` arrays (NumPy, lists or torch tensors).

    Args:
        data: Source and destination node IDs, equal lengths.
        num_nodes: Number of nodes; defaults to ``max(src, dst) + 1``.

    Raises:
        ValidationError: lengths differ, or an ID is negative or ``>= num_nodes``.

    Example:
        >>> g = graph(([0, 1, 2], [1, 2, 0]))
        >>> g.num_nodes(), g.num_edges(), g.canonical_etypes
        (3, 3, [('_N', '_E', '_N')])
    """
    return heterograph({DEFAULT_ETYPE: data},
                       num_nodes_dict=None if num_nodes is None else {DEFAULT_NTYPE: num_nodes})


def heterograph(data_dict: Mapping[Any, tuple[Any, Any]],
                num_nodes_dict: Mapping[str, int] | None = None) -> Graph:
    """A heterogeneous graph from ``{(src_type, rel, dst_type): (src, dst)}``.

    Args:
        data_dict: Per canonical edge type (tuple or ``"src:rel:dst"``), the endpoint IDs
            in per-type ID space.
        num_nodes_dict: Nodes per type; types missing here get ``max ID + 1``.

    Raises:
        ValidationError: a bad edge type, lengths differ, an ID is out of range, or a
            relation name is repeated for the same source and destination types.

    Example:
        >>> g = heterograph({"user:follows:user": ([0], [1]), "user:buys:item": ([1], [0])})
        >>> g.canonical_etypes
        [('user', 'follows', 'user'), ('user', 'buys', 'item')]
    """
    edges: dict[EdgeType, tuple[IdArray, IdArray]] = {}
    for key, pair in data_dict.items():
        et = _parse_etype(key)
        if et in edges:
            raise ValidationError(f"edge type {et} is given twice", field="data_dict", value=et)
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValidationError(f"edge type {et}: expected a (src, dst) pair", field=str(et))
        src = as_ids(pair[0], f"src of {et}")
        dst = as_ids(pair[1], f"dst of {et}")
        if len(src) != len(dst):
            raise ValidationError(f"edge type {et}: src has {len(src)} IDs but dst has "
                                  f"{len(dst)}", field=str(et))
        edges[et] = (src, dst)
    num_nodes: dict[str, int] = {}
    for t, n in (num_nodes_dict or {}).items():
        if int(n) < 0:
            raise ValidationError(f"num_nodes of {t!r} is negative: {n}", field=t, value=n)
        num_nodes[str(t)] = int(n)
    inferred: dict[str, int] = {}
    for (st, _, dt), (src, dst) in edges.items():
        for t, ids in ((st, src), (dt, dst)):
            top = int(ids.max()) + 1 if ids.size else 0
            inferred[t] = max(inferred.get(t, 0), top)
    for t, n in inferred.items():
        num_nodes.setdefault(t, n)
    for (st, rel, dt), (src, dst) in edges.items():
        check_id_range(src, num_nodes[st], f"src of {(st, rel, dt)}")
        check_id_range(dst, num_nodes[dt], f"dst of {(st, rel, dt)}")
    return Graph(edges, num_nodes)


def _parse_etype(key: EdgeTypeLike) -> EdgeType:
    if isinstance(key, str) and key.count(":") == 2:
        key = tuple(key.split(":"))  # type: ignore[assignment]
    if (not isinstance(key, tuple) or len(key) != 3
            or not all(isinstance(p, str) and p for p in key)):
        raise ValidationError(f"edge type {key!r} must be a (src_type, relation, dst_type) "
                              "tuple or a 'src:rel:dst' string", field="etype", value=key)
    return key
