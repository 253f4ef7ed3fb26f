"""What every reader's edges may need after reading: reverse edges, self loops, duplicates.

Edge lists come in several conventions: MUSAE and SNAP's undirected graphs list each pair
once, some lists carry self loops, some repeat edges.  :func:`apply_edge_policy` states the
policy and applies it to any :class:`~graphshard.graph.Graph`, per edge type, in three
steps: self loops (kept or dropped), reverse edges (added or not), duplicates (kept or
dropped; counted after the reverse edges, so a pair listed in both directions counts).
What it finds is logged: a warning for what is kept (counts, and the option that drops it),
INFO for what it changed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ValidationError, check_choice
from ..graph import Graph
from ..typing import EdgeType, IdArray

__all__ = ["EDGE_POLICIES", "EdgeCounts", "apply_edge_policy", "check_edge_policy"]

log = logging.getLogger(__name__)

#: The choices of ``self_loops`` and ``duplicates``.
EDGE_POLICIES = ("keep", "drop")


@dataclass(frozen=True)
class EdgeCounts:
    """What :func:`apply_edge_policy` found and did, summed over the edge types.

    Attributes:
        self_loops: Self loops found in the input.
        duplicates: Edges equal to an earlier edge of the same type (after reversing).
        added_reverse: Reverse edges added.
        dropped: Edges removed (self loops and/or duplicates, as asked).
    """

    self_loops: int
    duplicates: int
    added_reverse: int
    dropped: int


def check_edge_policy(self_loops: str, duplicates: str) -> None:
    """ValidationError naming the option when a policy is not one of :data:`EDGE_POLICIES`."""
    for name, value in (("self_loops", self_loops), ("duplicates", duplicates)):
        check_choice(value, EDGE_POLICIES, name)


def _take(col: Any, rows: IdArray) -> Any:
    """Rows of a feature column (NumPy, Ragged or SparseRows)."""
    if isinstance(col, np.ndarray):
        return col[rows]
    return col.take(rows)


def _concat(a: Any, b: Any) -> Any:
    if isinstance(a, np.ndarray):
        return np.concatenate([a, b])
    return type(a).concat([a, b])


def _duplicates(src: IdArray, dst: IdArray, num_dst: int, mask: bool
                ) -> tuple[int, np.ndarray | None]:
    """How many edges equal an earlier one (same src and dst), and with ``mask`` a boolean
    mask of them (the first copy of each pair is not marked).

    One int64 key per edge where ``src * num_dst + dst`` fits (a plain sort to count, a
    stable argsort to mark), else a two-key lexsort (several times slower).
    """
    if len(src) < 2:
        return 0, np.zeros(len(src), dtype=bool) if mask else None
    fits = int(max(src.max(), 0)) < (1 << 62) // max(num_dst, 1)
    if fits and not mask:
        key = np.sort(src * np.int64(num_dst) + dst)
        return int(np.count_nonzero(key[1:] == key[:-1])), None
    if fits:
        key = src * np.int64(num_dst) + dst
        order = np.argsort(key, kind="stable")  # stable: equal pairs keep the input order
        key = key[order]
        same = key[1:] == key[:-1]
    else:
        order = np.lexsort((dst, src))
        s, d = src[order], dst[order]
        same = (s[1:] == s[:-1]) & (d[1:] == d[:-1])
    dup = np.zeros(len(src), dtype=bool)
    dup[order[1:][same]] = True
    return int(np.count_nonzero(same)), dup if mask else None


def apply_edge_policy(g: Graph, *, add_reverse: bool = False, self_loops: str = "keep",
                      duplicates: str = "keep", where: str = "input"
                      ) -> tuple[Graph, EdgeCounts]:
    """Apply the self-loop, reverse-edge and duplicate policy to ``g``.

    Per edge type: self loops (``src == dst``, only where both ends have one node type)
    are kept or dropped; with ``add_reverse`` each other edge gets its reverse (an edge type
    between two node types gets a reverse type ``(dst, "rev_" + rel, src)``, as DGL's
    ``AddReverse`` names it), its features copied; then edges equal to an earlier one of the
    same type are kept or dropped (the first copy stays).  Node data is kept as it is.

    Args:
        g: The graph as read.
        add_reverse: Add every edge reversed (for files listing each undirected edge once).
        self_loops: ``"keep"`` (counted; a warning names the count) or ``"drop"``.
        duplicates: ``"keep"`` (counted; a warning names the count) or ``"drop"``.
        where: The input, for the log lines.

    Returns:
        ``(graph, counts)``: ``g`` itself when nothing changes, else a new graph.

    Raises:
        ValidationError: a policy that is not ``"keep"`` or ``"drop"``, or a reverse type
            that already exists.

    Example:
        >>> import graphshard as gs
        >>> g = gs.graph(([0, 1, 1, 2], [1, 1, 2, 1]))
        >>> h, counts = apply_edge_policy(g, add_reverse=True, self_loops="drop",
        ...                               duplicates="drop")
        >>> h.edges()[0].tolist(), h.edges()[1].tolist()
        ([0, 1, 2, 1], [1, 2, 1, 0])
        >>> counts
        EdgeCounts(self_loops=1, duplicates=2, added_reverse=3, dropped=3)
    """
    check_edge_policy(self_loops, duplicates)
    edges: dict[EdgeType, tuple[IdArray, IdArray]] = {}
    frames: dict[EdgeType, dict[str, Any]] = {}
    loops = dups = added = dropped = 0
    for et in g.canonical_etypes:
        src, dst = g.edges(etype=et)
        feats = dict(g.edge_frame(et).items())
        rows = np.arange(len(src), dtype=np.int64)
        if et[0] == et[2]:
            is_loop = src == dst
            loops += int(is_loop.sum())
            if self_loops == "drop":
                rows = np.flatnonzero(~is_loop)
        if add_reverse:
            rev = rows[src[rows] != dst[rows]] if et[0] == et[2] else rows
            added += len(rev)
            if et[0] == et[2]:
                rows = np.concatenate([rows, rev])
                s, d = src[rows].copy(), dst[rows].copy()
                s[len(rows) - len(rev):], d[len(rows) - len(rev):] = dst[rev], src[rev]
            else:
                rt = (et[2], f"rev_{et[1]}", et[0])
                if rt in g.canonical_etypes:
                    raise ValidationError(f"{where}: cannot add the reverse of {et}: edge type "
                                          f"{rt} exists", field="add_reverse", value=str(rt))
                edges[rt] = (dst[rev], src[rev])
                frames[rt] = {k: _take(v, rev) for k, v in feats.items()}
                s, d = src[rows], dst[rows]
        else:
            s, d = src[rows], dst[rows]
        found, dup = _duplicates(s, d, g.num_nodes(et[2]), duplicates == "drop")
        dups += found
        keep = None if dup is None else np.flatnonzero(~dup)
        edges[et] = (s, d) if keep is None else (s[keep], d[keep])
        picked = rows if keep is None else rows[keep]
        frames[et] = {k: _take(v, picked) for k, v in feats.items()}
        dropped += g.num_edges(et) + (len(rev) if add_reverse and et[0] == et[2] else 0) \
            - len(edges[et][0])
    counts = EdgeCounts(loops, dups, added, dropped)
    _log_counts(where, counts, self_loops, duplicates)
    if not add_reverse and dropped == 0:
        return g, counts
    order = [*g.canonical_etypes, *(e for e in edges if e not in g.canonical_etypes)]
    out = Graph({et: edges[et] for et in order}, {t: g.num_nodes(t) for t in g.ntypes})
    for t in g.ntypes:
        for k, v in g.node_frame(t).items():
            out.node_frame(t)[k] = v
    for et, cols in frames.items():
        for k, v in cols.items():
            out.edge_frame(et)[k] = v
    return out, counts


def _log_counts(where: str, counts: EdgeCounts, self_loops: str, duplicates: str) -> None:
    if counts.added_reverse:
        log.info("%s: added %d reverse edges", where, counts.added_reverse)
    if counts.self_loops:
        if self_loops == "keep":
            log.warning("%s: kept %d self loop(s) (drop them with self_loops='drop'; CLI: "
                        "--self-loops drop)", where, counts.self_loops)
        else:
            log.info("%s: dropped %d self loop(s)", where, counts.self_loops)
    if counts.duplicates:
        if duplicates == "keep":
            log.warning("%s: kept %d duplicate edge(s), equal to an earlier edge%s (drop them "
                        "with duplicates='drop'; CLI: --duplicates drop)", where,
                        counts.duplicates, " or its added reverse" if counts.added_reverse
                        else "")
        else:
            log.info("%s: dropped %d duplicate edge(s)", where, counts.duplicates)
