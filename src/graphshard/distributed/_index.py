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
import numpy.typing as npt

from .._util.arrays import as_ids
from ..errors import FormatError, ValidationError
from ..graph import CSR
from ..partition.files import Partition
from ..ragged import Ragged
from ..sparse import SparseRows
from ..storage.tensorfile import release_pages
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
        part: A partition from :func:`~graphshard.partition.load_partition_data`, whose
            checks the index relies on (inner edges first, in consecutive edge IDs).
    """

    def __init__(self, part: Partition) -> None:
        self.part_id = part.part_id
        self.book = part.book
        self.ntypes = list(part.ntypes)
        self.canonical_etypes = list(part.canonical_etypes)
        self.node_feats = part.node_feats
        self.edge_feats = part.edge_feats
        g = self._graph = part.graph
        ndata, edata = g.ndata, g.edata
        self.release_pages()  # what the load checks read: the build reads the edges again
        # the part's local arrays stay memory-mapped; what is built here is kept small (a
        # per-type in-CSR per edge type, 8 bytes an edge where IDs fit in int32) and built
        # without sort scratch
        self._local_src, self._local_dst = g.edges()
        # the load checks (check_part_arrays) guarantee that the inner edges come first and
        # that their IDs are consecutive: edge-ID order is file order, per type too
        self.num_inner_edges = num_inner = int(np.count_nonzero(np.asarray(edata["inner_edge"])))
        # global per-type ID of every local node
        _, self._node_pt = self.book.map_to_per_ntype(np.asarray(ndata["_ID"]))
        etype_of = np.asarray(edata["_TYPE"])
        self._node_lo: dict[str, int] = {}
        self._node_n: dict[str, int] = {}
        self._num_nodes = sum(m["num_nodes"] for m in self.book.metadata())  # bounds the IDs
        for t in self.ntypes:
            lo, n = _range(self.book.partid2nids(self.part_id, t))
            self._node_lo[t], self._node_n[t] = lo, n
        self._edge_lo: dict[EdgeType, int] = {}
        self._esel: dict[EdgeType, IdArray | slice] = {}
        self._in: dict[EdgeType, CSR] = {}
        self._out: dict[EdgeType, tuple[IdArray, CSR]] = {}
        for k, et in enumerate(self.canonical_etypes):
            lo, n = _range(self.book.partid2eids(self.part_id, et))
            self._esel[et], self._edge_lo[et] = _inner_of_type(etype_of, k, num_inner), lo
            self._in[et] = self._in_csr(et, lo)
        self.release_pages()

    def release_pages(self) -> None:
        """Give back the pages of the part's memory maps that this process holds: the load
        checks and the index build read all of them once, queries touch few (so a server's
        resident set is what it uses, not its whole part: issue 42)."""
        maps = [*self._graph.edges(), *self._graph.ndata.values(), *self._graph.edata.values()]
        release_pages([*maps, *self.node_feats.values(), *self.edge_feats.values()])

    def _in_csr(self, et: EdgeType, lo: int) -> CSR:
        """In-edges of ``et``'s owned destinations grouped by row (a counting sort straight
        from the part's local IDs), their source per-type IDs and per-type edge IDs (``lo``
        + position in edge-ID order).

        Raises:
            FormatError: an inner edge's destination is not an owned node of ``et[2]``.
        """
        from .._util.grouping import count_mapped_rows

        sel = self._esel[et]
        dst, src = self._local_dst[sel], self._local_src[sel]  # slices: views of the maps
        row_of_local = self._node_pt - self._node_lo[et[2]]  # owned: 0 .. n - 1
        indptr = np.zeros(self._node_n[et[2]] + 1, dtype=np.int64)
        bad = count_mapped_rows(dst, row_of_local, indptr[1:])
        if bad >= 0:
            raise FormatError(f"partition {self.part_id}: inner edge {bad} of {et} ends at "
                              f"local node {dst[bad]}, not an owned {et[2]!r} node",
                              field="dst")
        np.cumsum(indptr, out=indptr)
        return _grouped(dst, src, row_of_local, self._node_pt, indptr, lo, self._num_nodes)

    def num_owned_edges(self, et: EdgeType) -> int:
        """Number of inner edges of ``et`` (per-type IDs ``lo .. lo + n``)."""
        sel = self._esel[et]
        return len(sel) if isinstance(sel, np.ndarray) else int(sel.stop - sel.start)

    def _src_of(self, et: EdgeType, rows: IdArray) -> IdArray:
        """Source per-type IDs of owned edges at positions ``rows`` (in edge-ID order)."""
        return self._node_pt[self._local_src[_at(self._esel[et], rows)]]

    def _dst_of(self, et: EdgeType, rows: IdArray) -> IdArray:
        return self._node_pt[self._local_dst[_at(self._esel[et], rows)]]

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
        bad = np.flatnonzero((rows < 0) | (rows >= self.num_owned_edges(et)))
        if bad.size:
            raise ValidationError(f"partition {self.part_id}: edge {ids[bad[0]]} of {et} at "
                                  f"position {bad[0]} is not owned here", field="eids")
        return rows

    def out_csr(self, et: EdgeType) -> tuple[IdArray, CSR]:
        """``(row keys, CSR)``: inner edges of ``et`` grouped by source per-type ID; row
        ``i`` holds the out-edges of node ``keys[i]`` (sorted keys), in edge-ID order."""
        if et not in self._out:  # built on the first out-edge question: a counting sort
            sel = self._esel[et]
            src, dst = self._local_src[sel], self._local_dst[sel]
            counts = np.bincount(src, minlength=len(self._node_pt))
            present = np.flatnonzero(counts)  # local sources, then sorted by per-type ID
            present = present[np.argsort(self._node_pt[present], kind="stable")]
            row_of_local = np.full(len(self._node_pt), -1, dtype=np.int64)
            row_of_local[present] = np.arange(len(present))
            indptr = np.zeros(len(present) + 1, dtype=np.int64)
            np.cumsum(counts[present], out=indptr[1:])
            keys = self._node_pt[present]
            self._out[et] = (keys, _grouped(src, dst, row_of_local, self._node_pt, indptr,
                                            self._edge_lo[et], self._num_nodes))
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
        return CSR(sub, csr.indices[pos].astype(np.int64, copy=False),
                   csr.eids[pos].astype(np.int64, copy=False))

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
        return self._src_of(et, rows), self._dst_of(et, rows)

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


def _grouped(rows: np.ndarray, cols: np.ndarray, row_of_local: IdArray, col_of_local: IdArray,
             indptr: IdArray, lo: int, num_cols: int) -> CSR:
    """The CSR of edges ``rows -> cols`` (local IDs) in rows ``row_of_local[rows]`` with
    columns ``col_of_local[cols]`` (all below ``num_cols``) and edge IDs ``lo`` + position:
    a counting sort with no edge-sized scratch (the rows were counted into ``indptr``),
    into int32 ``indices`` and ``eids`` where their values fit (a cached index: the
    answers are int64)."""
    from .._util.grouping import group_by_mapped_row

    small = np.iinfo(np.int32).max
    indices: npt.NDArray[np.integer] = np.empty(
        len(rows), np.int32 if num_cols <= small + 1 else np.int64)
    eids: npt.NDArray[np.integer] = np.empty(
        len(rows), np.int32 if lo + len(rows) <= small + 1 else np.int64)
    group_by_mapped_row(rows, cols, row_of_local, col_of_local, indptr, indices, eids)
    np.add(eids, lo, out=eids, casting="unsafe")  # lo + position fits: checked above
    return CSR(indptr, indices, eids)


def _inner_of_type(etype_of: np.ndarray, k: int, num_inner: int) -> IdArray | slice:
    """Local positions of the inner edges of type ``k`` (the first ``num_inner`` edges):
    a slice when they are one block (always, with one edge type), else an array."""
    types = etype_of[:num_inner]
    if not num_inner or types.min() == types.max():  # one type among them: all or none
        return slice(0, num_inner if num_inner and int(types[0]) == k else 0)
    at = np.flatnonzero(types == k)
    if not len(at) or at[-1] - at[0] + 1 == len(at):
        lo = int(at[0]) if len(at) else 0
        return slice(lo, lo + len(at))
    return at


def _at(sel: IdArray | slice, rows: IdArray) -> IdArray:
    """Local edge positions of the owned edges at ``rows`` of ``sel``."""
    return sel[rows] if isinstance(sel, np.ndarray) else rows + sel.start


def _range(ids: IdArray) -> tuple[int, int]:
    return (int(ids[0]) if len(ids) else 0), len(ids)
