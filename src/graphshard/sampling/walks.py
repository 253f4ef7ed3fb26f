"""Random walks: uniform, weighted, metapath (PGL strings or edge-type lists), node2vec.

Walks follow out-edges.  ``walk_len`` counts the nodes of a trace including the start
(PGL's ``walk_len``; DGL's ``length`` is ``walk_len - 1``).  Traces are per-type node IDs,
``-1`` after a dead end or a stop.

Example:
    >>> import graphshard as gs
    >>> g = gs.heterograph({("u", "u2click2i", "i"): ([0, 1], [1, 0]),
    ...                     ("i", "i2click2u", "u"): ([0, 1], [1, 0])})
    >>> w = random_walk(g, [0], 5, metapath="u2click2i-i2click2u", seed=0)
    >>> w.traces.tolist(), w.node_types()
    ([[0, 1, 0, 1, 0]], ['u', 'i', 'u', 'i', 'u'])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .._util.arrays import as_ids, check_id_range
from ..errors import ValidationError
from ..store import GraphStore, LocalAdjacency, as_store, check_weights
from ..typing import EdgeType, IdArray
from .backend import get_backend
from .tables import weight_table
from .validate import checked_csr, resolve_seed

__all__ = ["WalkResult", "node2vec_walk", "parse_metapath", "random_walk"]

_SALT_WALK = 1_000_003
_SALT_N2V = 1_000_033


@dataclass(frozen=True)
class WalkResult:
    """Walk traces and the node type of every column.

    Attributes:
        traces: ``(num_walks, walk_len)`` int64 per-type node IDs, -1 padded.  Walk
            ``t * len(starts) + i`` is repetition ``t`` from ``starts[i]``.
        types: ``(walk_len,)`` int64 index into ``ntypes`` of every column.
        ntypes: Node type names of the graph.
    """

    traces: IdArray
    types: npt.NDArray[np.int64]
    ntypes: list[str]

    def node_types(self) -> list[str]:
        """Node type name of every column."""
        return [self.ntypes[i] for i in self.types]

    def num_steps(self) -> int:
        """Steps taken over all walks (valid entries after the start column)."""
        return int((self.traces[:, 1:] >= 0).sum())

    def __repr__(self) -> str:
        return f"WalkResult(num_walks={len(self.traces)}, walk_len={self.traces.shape[1]})"


def parse_metapath(store: GraphStore, metapath: Any, walk_len: int) -> list[EdgeType]:
    """Edge types of a metapath: ``"u2click2i-i2click2u"`` (relation names joined by "-"),
    a list of edge types, or None (the graph's single edge type).

    Raises:
        ValidationError: unknown edge type, or consecutive types that do not chain (also from
            the last back to the first when the walk is longer than the metapath).

    Example:
        >>> import graphshard as gs
        >>> g = gs.heterograph({("u", "buy", "i"): ([0], [0]), ("i", "rev", "u"): ([0], [0])})
        >>> parse_metapath(as_store(g), "buy-rev", 5)
        [('u', 'buy', 'i'), ('i', 'rev', 'u')]
    """
    if metapath is None:
        ets = store.canonical_etypes
        if len(ets) != 1:
            raise ValidationError(f"the graph has edge types {ets}: pass a metapath",
                                  field="metapath")
        path = list(ets)
    else:
        names = metapath.split("-") if isinstance(metapath, str) else list(metapath)
        if not names:
            raise ValidationError("metapath is empty", field="metapath")
        path = [_pgl_etype(store, n) for n in names]
    wraps = walk_len - 1 > len(path)
    for i in range(len(path) if wraps else len(path) - 1):
        a, b = path[i], path[(i + 1) % len(path)]
        if a[2] != b[0]:
            raise ValidationError(f"metapath {metapath!r} does not chain: {a} ends at node type "
                                  f"{a[2]!r} but the next edge type {b} starts at {b[0]!r}",
                                  field="metapath", value=metapath)
    return path


def _pgl_etype(store: GraphStore, name: Any) -> EdgeType:
    """An edge type of a metapath: any form ``to_canonical_etype`` takes, else PGL's
    ``<src>2<dst>`` / ``<src>2<rel>2<dst>`` resolved against the graph: ``src`` and ``dst``
    name node types exactly or by a unique prefix (``"a2p"``: author to paper), ``rel`` a
    relation (exactly, or the middle of a PGL-style relation name).

    Raises:
        ValidationError: no edge type matches, or several do (naming them).

    Example:
        >>> import graphshard as gs
        >>> g = gs.heterograph({("user", "click", "item"): ([0], [0]),
        ...                     ("item", "clicked", "user"): ([0], [0])})
        >>> _pgl_etype(as_store(g), "u2click2i"), _pgl_etype(as_store(g), "i2u")[1]
        (('user', 'click', 'item'), 'clicked')
    """
    try:
        return store.to_canonical_etype(name)
    except ValidationError as exc:
        parts = name.split("2") if isinstance(name, str) else []
        if len(parts) not in (2, 3) or not all(parts):
            raise
        error = exc

    def types(abbr: str) -> list[str]:
        return [t for t in store.ntypes if t == abbr] or [
            t for t in store.ntypes if t.startswith(abbr)]

    src, dst, rel = types(parts[0]), types(parts[-1]), parts[1] if len(parts) == 3 else None
    found = [et for et in store.canonical_etypes if et[0] in src and et[2] in dst and (
        rel is None or et[1] == rel or (len(et[1].split("2")) == 3
                                        and et[1].split("2")[1] == rel))]
    if len(found) == 1:
        return found[0]
    if not found:
        raise ValidationError(f"unknown edge type {name!r}: read as PGL's {parts[0]!r} -> "
                              f"{parts[-1]!r}" + (f" by relation {rel!r}" if rel else "")
                              + f", it matches none; edge types are "
                              f"{list(store.canonical_etypes)}",
                              field="metapath", value=name) from error
    raise ValidationError(f"metapath step {name!r} is ambiguous: it matches {found}; name the "
                          "relation (src2rel2dst) or the node types in full",
                          field="metapath", value=name) from error


def _starts(store: GraphStore, starts: Any, ntype: str, walk_times: int) -> IdArray:
    if isinstance(starts, Mapping):
        if set(starts) != {ntype}:
            raise ValidationError(f"starts: the walk starts at node type {ntype!r}, got types "
                                  f"{sorted(starts)}", field="starts")
        starts = starts[ntype]
    ids = as_ids(starts, "starts")
    check_id_range(ids, store.num_nodes(ntype), f"starts of node type {ntype!r}")
    if isinstance(walk_times, bool) or not isinstance(walk_times, (int, np.integer)) \
            or walk_times < 1:
        raise ValidationError(f"walk_times must be an int >= 1, got {walk_times!r}",
                              field="walk_times", value=walk_times)
    return np.tile(ids, int(walk_times))


def _check_len(walk_len: Any) -> int:
    if isinstance(walk_len, bool) or not isinstance(walk_len, (int, np.integer)) or walk_len < 1:
        raise ValidationError(f"walk_len must be an int >= 1 (nodes per trace), got "
                              f"{walk_len!r}", field="walk_len", value=walk_len)
    return int(walk_len)


def _column_types(store: GraphStore, path: list[EdgeType], walk_len: int) -> np.ndarray:
    names = [path[0][0]] + [path[(t - 1) % len(path)][2] for t in range(1, walk_len)]
    return np.array([store.ntypes.index(n) for n in names], dtype=np.int64)


def _joined_csr(store: LocalAdjacency, path: list[EdgeType], prob: str | None) -> tuple:
    """One CSR (and alias records) over the distinct edge types of ``path`` and the row base
    of every step: ``(indptr, indices, rec, nnz, row_base)``."""
    uniq = list(dict.fromkeys(path))
    csrs = [store.adjacency(et, "out") for et in uniq]
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    tables = [weight_table(store, et, "out", prob) for et in uniq] if prob else []
    if len(uniq) == 1:
        return (csrs[0].indptr, csrs[0].indices, *(tables[0] if tables else empty),
                np.zeros(len(path), dtype=np.int64))
    row0 = np.cumsum([0] + [c.num_rows + 1 for c in csrs])
    nnz0 = np.cumsum([0] + [len(c.indices) for c in csrs])
    indptr = np.concatenate([c.indptr + nnz0[i] for i, c in enumerate(csrs)])
    indices = np.concatenate([c.indices for c in csrs])
    if tables:
        # nnz is empty for a table without zero weights; joined, every row needs its count
        nnz = ([] if all(len(t[1]) == 0 for t in tables) else
               [np.append(t[1] if len(t[1]) else np.diff(c.indptr), 0)
                for t, c in zip(tables, csrs, strict=True)])
        joined = (np.concatenate([t[0] for t in tables]),
                  np.concatenate(nnz) if nnz else np.zeros(0, np.int64))
    else:
        joined = empty
    return (indptr, indices, *joined, np.array([row0[uniq.index(et)] for et in path], np.int64))


def random_walk(g: Any, starts: Any, walk_len: int, metapath: Any = None, walk_times: int = 1,
                prob: str | None = None, restart_prob: float = 0.0, *,
                seed: int | None = None, backend: str = "cpu") -> WalkResult:
    """Random walks along out-edges, uniform or weighted, optionally along a metapath.

    Args:
        g: A Graph or any GraphStore.
        starts: Start node IDs (of the metapath's first source type), or ``{ntype: IDs}``.
        walk_len: Nodes per trace, the start included.
        metapath: ``"u2click2i-i2click2u"`` or a list of edge types, repeated cyclically;
            None for a graph with one edge type.
        walk_times: Walks per start (traces are ``starts`` tiled ``walk_times`` times).
        prob: Name of a non-negative edge feature: steps go proportionally to it.
        restart_prob: Chance to stop before each step (DGL's ``restart_prob``); the rest of
            the trace is -1.
        seed: Random seed; the same on any thread count.
        backend: Kernel backend name.

    Returns:
        WalkResult with ``len(starts) * walk_times`` traces.

    Raises:
        ValidationError: bad IDs, unknown types, a metapath that does not chain, or bad
            ``walk_len``, ``walk_times``, ``restart_prob`` or weights.

    Example:
        >>> import graphshard as gs
        >>> g = gs.graph(([0, 1], [1, 2]))
        >>> random_walk(g, [0, 2], 3, seed=0).traces.tolist()
        [[0, 1, 2], [2, -1, -1]]
    """
    store = as_store(g)
    walk_len = _check_len(walk_len)
    path = parse_metapath(store, metapath, walk_len)
    if not 0.0 <= float(restart_prob) < 1.0:
        raise ValidationError(f"restart_prob must be in [0, 1), got {restart_prob!r}",
                              field="restart_prob", value=restart_prob)
    first = _starts(store, starts, path[0][0], walk_times)
    keys = np.arange(len(first), dtype=np.int64)
    s = resolve_seed(seed)
    bk = get_backend(backend)
    out = np.empty((len(first), walk_len), dtype=np.int64)
    if isinstance(store, LocalAdjacency):
        key = ("walk-csr", tuple(path), prob)
        build = lambda: _joined_csr(store, path, prob)  # noqa: E731
        indptr, indices, rec, nnz, row_base = store.cached(key, build)
        bk.walk(indptr, indices, rec, nnz, prob is not None, row_base, first, keys,
                float(restart_prob), walk_len, s, _SALT_WALK, out)
    else:
        _walk_stepwise(store, bk, path, first, keys, prob, float(restart_prob), s, out)
    return WalkResult(out, _column_types(store, path, walk_len), store.ntypes)


def _walk_stepwise(store: GraphStore, bk: Any, path: list[EdgeType], first: IdArray,
                   keys: IdArray, prob: str | None, restart_prob: float, s: int,
                   out: IdArray) -> None:
    """Walks on a store without a local adjacency: one batched neighbours call per step."""
    out[:, 0] = first
    for t in range(1, out.shape[1]):
        et = path[(t - 1) % len(path)]
        alive = np.flatnonzero(out[:, t - 1] >= 0)
        sub = checked_csr(store.neighbors(out[alive, t - 1], et, edge_dir="out"), len(alive),
                          f"neighbors of {et}")
        rows = np.full(len(out), -1, dtype=np.int64)
        rows[alive] = np.arange(len(alive))
        table = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        if prob is not None:
            w = check_weights(store.edge_features(et, prob, sub.eids), sub.eids, et, prob)
            table = bk.row_alias(sub.indptr, w, np.empty(0, dtype=np.int64),
                                  np.empty(len(w), dtype=np.int64))
        col = np.empty(len(out), dtype=np.int64)
        bk.walk_step(sub.indptr, sub.indices, *table, prob is not None, rows, keys,
                     restart_prob, t, s, _SALT_WALK, col)
        out[:, t] = col


def node2vec_walk(g: Any, starts: Any, walk_len: int, *, p: float = 1.0, q: float = 1.0,
                  walk_times: int = 1, etype: Any = None, seed: int | None = None,
                  backend: str = "cpu") -> WalkResult:
    """Second-order node2vec walks (return parameter ``p``, in-out parameter ``q``).

    Args:
        g: A Graph or any GraphStore (a DistGraph: one batched neighbours call per step,
            the same traces as on the local graph for the same seed) whose ``etype`` joins
            a node type to itself.
        starts: Start node IDs.
        walk_len: Nodes per trace, the start included.
        p: Larger ``p``: less likely to step back to the previous node.
        q: Larger ``q``: stay near the previous node (BFS-like); smaller: move away.
        walk_times: Walks per start.
        etype: The edge type to walk (None: the graph's only one).
        seed: Random seed.
        backend: Kernel backend name.

    Raises:
        ValidationError: ``p`` or ``q`` not positive, bad IDs or types.

    Example:
        >>> import graphshard as gs
        >>> g = gs.graph(([0, 1, 1, 2], [1, 0, 2, 1]))
        >>> node2vec_walk(g, [0], 3, p=1e9, q=1.0, seed=0).traces.tolist()
        [[0, 1, 2]]
    """
    store = as_store(g)
    walk_len = _check_len(walk_len)
    for name, v in (("p", p), ("q", q)):
        if not float(v) > 0:
            raise ValidationError(f"node2vec {name} must be > 0, got {v!r}", field=name, value=v)
    path = parse_metapath(store, None if etype is None else [etype], walk_len)
    et = path[0]
    first = _starts(store, starts, et[0], walk_times)
    keys = np.arange(len(first), dtype=np.int64)
    bk = get_backend(backend)
    out = np.empty((len(first), walk_len), dtype=np.int64)
    if isinstance(store, LocalAdjacency):
        csr = store.adjacency(et, "out")
        build = lambda: bk.sort_rows(csr.indptr, csr.indices)  # noqa: E731
        sorted_idx = store.cached(("sorted-out", et), build)
        bk.node2vec_walk(csr.indptr, sorted_idx, first, keys, float(p), float(q), walk_len,
                         resolve_seed(seed), _SALT_N2V, out)
    else:
        _node2vec_stepwise(store, bk, et, first, keys, float(p), float(q), resolve_seed(seed),
                           out)
    return WalkResult(out, _column_types(store, path, walk_len), store.ntypes)


def _node2vec_stepwise(store: GraphStore, bk: Any, et: EdgeType, first: IdArray,
                       keys: IdArray, p: float, q: float, s: int, out: IdArray) -> None:
    """node2vec walks on a store without a local adjacency: one batched neighbours call per
    step; the previous node's rows are those fetched one step earlier."""
    out[:, 0] = first
    prev_csr = (np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64))
    prows = np.zeros(len(out), dtype=np.int64)  # read from t = 2 only
    for t in range(1, out.shape[1]):
        alive = np.flatnonzero(out[:, t - 1] >= 0)
        sub = checked_csr(store.neighbors(out[alive, t - 1], et, edge_dir="out"), len(alive),
                          f"neighbors of {et}")
        rows = np.full(len(out), -1, dtype=np.int64)
        rows[alive] = np.arange(len(alive))
        srt = bk.sort_rows(sub.indptr, sub.indices)
        prevs = (np.ascontiguousarray(out[:, t - 2]) if t >= 2
                 else np.full(len(out), -1, dtype=np.int64))
        col = np.empty(len(out), dtype=np.int64)
        bk.node2vec_step(sub.indptr, srt, rows, *prev_csr, prows, prevs, keys, p, q, t, s,
                         _SALT_N2V, col)
        out[:, t] = col
        prev_csr, prows = (sub.indptr, srt), rows
