"""Read-side index of one partition in global (shuffled) per-type IDs.

A :class:`PartIndex` answers the store questions for the nodes and edges its partition owns:
in-neighbourhoods of inner nodes (complete, since an edge lives with its destination),
the partition's share of out-neighbourhoods (its inner edges only, so that the shares of all
partitions add up to the whole row without double counting), degrees, feature rows and edge
endpoints.  Rows of a per-type CSR keep edge-ID order, the order of the whole reshuffled
graph's CSR, so the keyed sampling kernels draw exactly the same edges here as on the whole
graph.  Graph servers wrap one PartIndex each; a trainer co-located with a partition builds
its own over the same memory-mapped files.

Example:
    >>> import tempfile, numpy as np, graphshard as gs
    >>> out = tempfile.mkdtemp()
    >>> gs.partition_graph(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), "ring", 2, out,
    ...                    part_method="hash")
    >>> idx = PartIndex(gs.partition.load_partition_data(f"{out}/ring.json", 0))
    >>> nb = idx.neighbors(idx.owned_nodes("_N"), ("_N", "_E", "_N"), "in")
    >>> len(nb.indices) == idx.num_inner_edges
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._util.arrays import as_ids
from ..errors import ValidationError
from ..graph import CSR, build_csr
from ..partition.files import Partition
from ..ragged import Ragged
from ..sparse import SparseRows
from ..store import Rows, check_edge_dir
from ..typing import EdgeType, IdArray

__all__ = ["LAYOUTS", "PartIndex", "gather_rows", "scatter_ragged", "scatter_sparse"]

#: How a stored feature holds its rows, in :meth:`PartIndex.schema`: a fixed-shape array,
#: a Ragged, or a SparseRows.
LAYOUTS = ("dense", "ragged", "sparse")


def scatter_ragged(n: int, pieces: list[tuple[IdArray, Ragged]], dtype: Any) -> Ragged:
    """One Ragged of ``n`` rows from pieces ``(positions, rows)``: row ``positions[i]`` of the
    result is row ``i`` of the piece (every position in exactly one piece).

    Example:
        >>> r = scatter_ragged(3, [(np.array([2, 0]), Ragged.from_rows([[1, 2], [3]])),
        ...                        (np.array([1]), Ragged.from_rows([[]]))], "int64")
        >>> [r[i].tolist() for i in range(3)]
        [[3], [], [1, 2]]
    """
    lengths = np.zeros(n, dtype=np.int64)
    for pos, rag in pieces:
        lengths[pos] = np.diff(rag.offsets)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    tail = pieces[0][1].values.shape[1:] if pieces else ()
    values = np.empty((offsets[-1], *tail), dtype=dtype)
    for pos, rag in pieces:
        off = rag.offsets
        at = np.repeat(offsets[pos] - off[:-1], np.diff(off)) + np.arange(off[-1],
                                                                           dtype=np.int64)
        values[at] = rag.values
    return Ragged(values, offsets)


def scatter_sparse(n: int, pieces: list[tuple[IdArray, SparseRows]], dtype: Any,
                   num_cols: int) -> SparseRows:
    """One SparseRows of ``n`` rows from pieces ``(positions, rows)``: row ``positions[i]``
    of the result is row ``i`` of the piece (every position in exactly one piece).

    Example:
        >>> a = SparseRows([0, 2, 3], [0, 3, 1], [1.0, 2.0, 3.0], 4)
        >>> b = SparseRows([0, 0], [], np.zeros(0), 4)
        >>> scatter_sparse(3, [(np.array([2, 0]), a), (np.array([1]), b)], "float64",
        ...                4).to_dense().tolist()
        [[0.0, 3.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 2.0]]
    """
    lengths = np.zeros(n, dtype=np.int64)
    for pos, rows in pieces:
        lengths[pos] = np.diff(rows.indptr)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    wide = any(rows.indices.dtype != np.int32 for _, rows in pieces)
    indices = np.empty(indptr[-1], dtype=np.int64 if wide or not pieces else np.int32)
    values = np.empty(indptr[-1], dtype=dtype)
    for pos, rows in pieces:
        ptr = rows.indptr
        at = np.repeat(indptr[pos] - ptr[:-1], np.diff(ptr)) + np.arange(ptr[-1],
                                                                         dtype=np.int64)
        indices[at] = rows.indices
        values[at] = rows.values
    return SparseRows(indptr, indices, values, num_cols)


def gather_rows(indptr: IdArray, rows: IdArray) -> tuple[IdArray, IdArray]:
    """``(sub_indptr, positions)``: the CSR positions of ``rows``, concatenated in order."""
    starts = indptr[rows]
    lengths = indptr[rows + 1] - starts
    sub = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=sub[1:])
    pos = np.repeat(starts - sub[:-1], lengths) + np.arange(sub[-1], dtype=np.int64)
    return sub, pos


class PartIndex:
    """Per-type CSR views and feature rows of one loaded partition (global per-type IDs).

    Args:
        part: A partition from :func:`~graphshard.partition.load_partition_data`.
    """

    def __init__(self, part: Partition) -> None:
        self.part_id = part.part_id
        self.book = part.book
        self.ntypes = list(part.ntypes)
        self.canonical_etypes = list(part.canonical_etypes)
        self.node_feats = part.node_feats
        self.edge_feats = part.edge_feats
        g = part.graph
        src, dst = g.edges()
        inner = np.asarray(g.edata["inner_edge"], dtype=bool)
        self.num_inner_edges = int(inner.sum())
        # per-type node IDs are below the graph's node count: int32 where it fits
        total = sum(m["num_nodes"] for m in self.book.metadata())
        # global per-type ID of every local node
        node_pt = _narrow(self.book.map_to_per_ntype(np.asarray(g.ndata["_ID"]))[1], total)
        etype_of = np.asarray(g.edata["_TYPE"])
        eid = np.asarray(g.edata["_ID"])
        self._node_lo: dict[str, int] = {}
        self._node_n: dict[str, int] = {}
        for t in self.ntypes:
            lo, n = _range(self.book.partid2nids(self.part_id, t))
            self._node_lo[t], self._node_n[t] = lo, n
        self._edge_lo: dict[EdgeType, int] = {}
        self._edge_n: dict[EdgeType, int] = {}
        self._src_pt: dict[EdgeType, IdArray] = {}
        self._dst_pt: dict[EdgeType, IdArray] = {}
        self._in: dict[EdgeType, CSR] = {}
        self._out: dict[EdgeType, tuple[IdArray, CSR]] = {}
        for k, et in enumerate(self.canonical_etypes):
            # the inner edges of et in edge-ID order (homogeneous order is per-type order
            # within one part and type); a slice when they are one run, as with one type
            take = _run_or_positions(inner & (etype_of == k))
            ids = eid[take]
            if len(ids) > 1 and (ids[1:] < ids[:-1]).any():
                take = _positions(take, len(eid))[np.argsort(ids, kind="stable")]
            del ids
            self._edge_lo[et] = _range(self.book.partid2eids(self.part_id, et))[0]
            self._src_pt[et] = node_pt[src[take]]
            self._dst_pt[et] = node_pt[dst[take]]
            self._edge_n[et] = len(self._src_pt[et])
            del take
            rows = self._dst_pt[et] - self._dst_pt[et].dtype.type(self._node_lo[et[2]])
            csr = build_csr(rows, self._src_pt[et], self._node_n[et[2]], compact=True,
                            num_cols=total)
            del rows
            eids, lo = csr.eids, self._edge_lo[et]
            if len(eids) and lo + len(eids) > np.iinfo(eids.dtype).max:
                eids = eids.astype(np.int64)
            eids += lo
            self._in[et] = CSR(csr.indptr, csr.indices, eids)
        # nothing above keeps a view of the part's graph file: its memory-mapped pages,
        # read once to build these arrays, leave this process with the mapping; the arrays
        # built are int32 where the IDs fit and few temporaries are made (their freed heap
        # stays in the process's RSS)

    # ----- helpers --------------------------------------------------------------------------
    def owned_nodes(self, ntype: str) -> IdArray:
        """Per-type IDs of the nodes of ``ntype`` this partition owns."""
        lo = self._node_lo[ntype]
        return np.arange(lo, lo + self._node_n[ntype], dtype=np.int64)

    def owned_rows(self, ids: Any, ntype: str) -> IdArray:
        """CSR rows of owned per-type node IDs; raises ValidationError for others."""
        ids = as_ids(ids, "ids")
        rows = ids - self._node_lo[ntype]
        bad = np.flatnonzero((rows < 0) | (rows >= self._node_n[ntype]))
        if bad.size:
            raise ValidationError(f"partition {self.part_id}: {ntype!r} node {ids[bad[0]]} at "
                                  f"position {bad[0]} is not owned here", field="ids")
        return rows

    def _owned_edges(self, eids: Any, et: EdgeType) -> IdArray:
        ids = as_ids(eids, "eids")
        rows = ids - self._edge_lo[et]
        bad = np.flatnonzero((rows < 0) | (rows >= self._edge_n[et]))
        if bad.size:
            raise ValidationError(f"partition {self.part_id}: edge {ids[bad[0]]} of {et} at "
                                  f"position {bad[0]} is not owned here", field="eids")
        return rows

    def out_csr(self, et: EdgeType) -> tuple[IdArray, CSR]:
        """``(row keys, CSR)``: inner edges of ``et`` grouped by source per-type ID; row
        ``i`` holds the out-edges of node ``keys[i]`` (sorted keys), in edge-ID order."""
        if et not in self._out:
            keys, inv = np.unique(self._src_pt[et], return_inverse=True)
            csr = build_csr(inv.astype(np.int64), self._dst_pt[et], len(keys))
            self._out[et] = (keys, CSR(csr.indptr, csr.indices, csr.eids + self._edge_lo[et]))
        return self._out[et]

    def in_csr(self, et: EdgeType) -> CSR:
        """In-edges of ``et`` of the owned ``et[2]`` nodes; row ``i`` is owned node
        ``lo + i``; indices are source per-type IDs, eids per-type edge IDs."""
        return self._in[et]

    def node_lo(self, ntype: str) -> int:
        """First per-type ID of ``ntype`` owned here."""
        return self._node_lo[ntype]

    def _out_rows(self, ids: Any, et: EdgeType) -> tuple[CSR, IdArray]:
        keys, csr = self.out_csr(et)
        ids = as_ids(ids, "ids")
        pos = np.minimum(np.searchsorted(keys, ids), max(len(keys) - 1, 0))
        found = (keys[pos] == ids) if len(keys) else np.zeros(len(ids), dtype=bool)
        # an absent node gets an empty row: point it at an empty slice
        indptr = np.concatenate([csr.indptr, [csr.indptr[-1]]])
        rows = np.where(found, pos, len(keys))
        return CSR(indptr, csr.indices, csr.eids), rows

    # ----- store questions ------------------------------------------------------------------
    def neighbors(self, ids: Any, et: EdgeType, edge_dir: str = "in") -> CSR:
        """Sub-CSR of ``ids``: in-edges of owned nodes, or this part's out-edges of any node."""
        check_edge_dir(edge_dir)
        if edge_dir == "in":
            csr, rows = self._in[et], self.owned_rows(ids, et[2])
        else:
            csr, rows = self._out_rows(ids, et)
        sub, pos = gather_rows(csr.indptr, rows)
        return CSR(sub, csr.indices[pos], csr.eids[pos])

    def degrees(self, ids: Any, et: EdgeType, edge_dir: str = "in") -> IdArray:
        """In-degrees of owned nodes, or this part's share of out-degrees of any nodes."""
        check_edge_dir(edge_dir)
        if edge_dir == "in":
            csr, rows = self._in[et], self.owned_rows(ids, et[2])
        else:
            csr, rows = self._out_rows(ids, et)
        return csr.indptr[rows + 1] - csr.indptr[rows]

    def node_features(self, ntype: str, name: str, ids: Any) -> Rows:
        """Rows of owned nodes of feature ``name`` (a copy; a Ragged or SparseRows for a
        column of that kind)."""
        col = self._column(self.node_feats, f"{ntype}/{name}", "node")
        return _take(col, self.owned_rows(ids, ntype))

    def node_feature_rows(self, ntype: str, name: str, ids: Any) -> tuple[Any, IdArray]:
        """``(column, rows)``: the stored column (memory-mapped; not a copy) and the rows of
        owned nodes ``ids`` in it, for a co-located reader that copies them itself."""
        col = self._column(self.node_feats, f"{ntype}/{name}", "node")
        return col, self.owned_rows(ids, ntype)

    def edge_features(self, et: EdgeType, name: str, eids: Any) -> Rows:
        """Rows of owned edges of feature ``name`` (a copy; a Ragged or SparseRows for a
        column of that kind)."""
        col = self._column(self.edge_feats, f"{':'.join(et)}/{name}", "edge")
        return _take(col, self._owned_edges(eids, et))

    def find_edges(self, eids: Any, et: EdgeType) -> tuple[IdArray, IdArray]:
        """Endpoints (per-type IDs) of owned edges."""
        rows = self._owned_edges(eids, et)
        return (self._src_pt[et][rows].astype(np.int64),
                self._dst_pt[et][rows].astype(np.int64))

    def schema(self) -> dict[str, Any]:
        """Feature names with their ``(row shape, dtype, layout)`` (a :data:`LAYOUTS` name),
        for the client's data views: the row shape is None for a Ragged column (rows of any
        length) and ``(num_cols,)`` for a SparseRows one."""
        def describe(v: Any) -> tuple[Any, str, str]:
            if isinstance(v, Ragged):
                return None, str(v.values.dtype), "ragged"
            if isinstance(v, SparseRows):
                return (v.num_cols,), str(v.values.dtype), "sparse"
            return tuple(np.shape(v)[1:]), str(np.asarray(v[:0]).dtype), "dense"
        return {kind: {k: describe(v) for k, v in feats.items() if hasattr(v, "shape")}
                for kind, feats in (("node", self.node_feats), ("edge", self.edge_feats))}

    def _column(self, feats: dict[str, Any], key: str, kind: str) -> Any:
        if key not in feats:
            raise ValidationError(f"partition {self.part_id}: no {kind} feature {key!r}; "
                                  f"features are {sorted(feats)}", field="name", value=key)
        return feats[key]

    def __repr__(self) -> str:
        return f"PartIndex(part_id={self.part_id}, inner_edges={self.num_inner_edges})"


def _take(col: Any, rows: IdArray) -> Rows:
    """Rows ``rows`` of a column, as a new array (or Ragged / SparseRows).

    ``np.take`` on a plain view of the (memory-mapped) column: half the CPU of fancy
    indexing the ``np.memmap`` itself, the servers' largest cost (benchmarks/TUNING.md).
    """
    if isinstance(col, (Ragged, SparseRows)):
        return col.take(rows)
    return np.take(np.asarray(col), rows, axis=0)


def _run_or_positions(mask: np.ndarray) -> IdArray | slice:
    """The positions of ``mask``'s True entries: a slice when they are one run."""
    count = int(np.count_nonzero(mask))
    first = int(np.argmax(mask)) if count else 0
    if mask[first:first + count].all():
        return slice(first, first + count)
    return np.flatnonzero(mask)


def _positions(take: IdArray | slice, n: int) -> IdArray:
    """``take`` as an array of positions (of an array of length ``n``)."""
    return np.arange(n)[take] if isinstance(take, slice) else take


def _narrow(ids: IdArray, bound: int) -> IdArray:
    """``ids`` (all below ``bound``) as int32 when ``bound`` fits, else as they are."""
    return ids.astype(np.int32) if bound <= np.iinfo(np.int32).max else ids


def _range(ids: IdArray) -> tuple[int, int]:
    return (int(ids[0]) if len(ids) else 0), len(ids)
