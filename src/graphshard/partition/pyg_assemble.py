"""The graph a PyG partition folder describes, assembled from its checked parts.

:func:`assemble_graph` takes what :mod:`graphshard.partition.pyg_layout` read from each
``part_<i>/`` and the maps, and returns the whole graph in PyG's IDs (edges in edge ID
order) with its features, after checking that the parts fit together: every edge in exactly
one part, the one its map names and its destination's owner (ClusterData's CSC cut, and
our rule); every feature row given once, by its owner, with one dtype and row shape; PyG's
node time the same in every part.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..graph import Graph, heterograph
from ..typing import EdgeType, IdArray
from .pyg_layout import PyGMeta, PyGPart, Rows, fail, type_file_name

__all__ = ["assemble_graph", "fill_rows"]


def fill_rows(kind: str, name: str, n: int, pieces: list[tuple[int, Rows, Path]], col: str,
              owner: IdArray, *, root: Path | None = None) -> np.ndarray:
    """One feature column of a type from the parts' rows: every row given exactly once,
    by the part that owns it, with one dtype and row shape.

    ``pieces``: ``(part, rows, file)`` for each part that has rows of the type (``file``
    is named in errors); ``owner``: the part of every node or edge of the type; ``root``:
    the folder named when a row is given by no part (default: two levels above the first
    file, PyG's root).  Returns a new array of ``n`` rows.

    Raises:
        FormatError: rows of another dtype or shape, a row given by a part that does not
            own it, or a row given twice or never, naming the file and column.

    Example:
        >>> import numpy as np
        >>> rows = Rows(np.array([1, 0]), {"x": np.array([[1.0], [0.0]])})
        >>> fill_rows("node", "_N", 2, [(0, rows, Path("feats"))], "x", np.zeros(2, np.int64))
        array([[0.],
               [1.]])
    """
    first = next(rows.columns[col] for _, rows, _ in pieces if col in rows.columns)
    out = np.zeros((n, *first.shape[1:]), dtype=first.dtype)
    seen = np.zeros(n, np.int64)
    for p, rows, where in pieces:
        arr = rows.columns.get(col)
        if arr is None:
            continue
        if arr.dtype != first.dtype or arr.shape[1:] != first.shape[1:]:
            raise fail(where, col, f"is {arr.dtype} {arr.shape[1:]} rows, another part's "
                        f"{first.dtype} {first.shape[1:]}")
        bad = np.flatnonzero(owner[rows.ids] != p)
        if bad.size:
            raise fail(where, col, f"has a row for {kind} {rows.ids[bad[0]]} of {name!r}, "
                        f"which the map puts in part {owner[rows.ids[bad[0]]]}")
        out[rows.ids] = arr
        seen += np.bincount(rows.ids, minlength=n)
    missing = np.flatnonzero(seen != 1)
    if missing.size:
        raise fail(root if root is not None else pieces[0][2].parent.parent, col,
                   f"{kind} {missing[0]} of {name!r} has "
                    f"{seen[missing[0]]} rows in the parts' files; expected exactly 1")
    return out


def assemble_graph(meta: PyGMeta, node_maps: dict[str, IdArray],
                   edge_maps: dict[EdgeType, IdArray], parts: list[tuple[PyGPart, Path]]
                   ) -> Graph:
    """The graph the parts describe, in PyG's IDs (edges in edge ID order), with features.

    ``parts``: each part with its folder.  Checks that every edge is in exactly one part,
    the one its map names and its destination's owner, and that every feature row is given
    once, by the owner of its node or edge.

    Raises:
        FormatError: naming the part file and field (or the root folder for a row no part
            gives).
    """
    num_nodes = {t: len(node_maps[t]) for t in meta.ntypes}
    edges = {}
    for et in meta.etypes:
        m = len(edge_maps[et])
        src, dst, seen = np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros(m, np.int64)
        for p, (part, folder) in enumerate(parts):
            s, d, e = part.edges[et]
            where, pre = folder / "graph.pt", (f"{type_file_name(et)}." if meta.is_hetero
                                               else "")
            bad = np.flatnonzero((edge_maps[et][e] != p) | (node_maps[et[2]][d] != p))
            if bad.size:
                raise fail(where, pre + "edge_id", f"edge {e[bad[0]]} (to node {d[bad[0]]}) "
                            f"is here, but the maps put it in part {edge_maps[et][e[bad[0]]]} "
                            f"and its destination in {node_maps[et[2]][d[bad[0]]]}")
            src[e], dst[e] = s, d
            seen += np.bincount(e, minlength=m)
        missing = np.flatnonzero(seen != 1)
        if missing.size:
            raise fail(parts[0][1].parent, type_file_name(et), f"edge {missing[0]} is in "
                        f"{seen[missing[0]]} parts' graph.pt; expected exactly 1")
        edges[et] = (src, dst)
    g = heterograph(edges, num_nodes)
    for t in meta.ntypes:
        pieces = [(p, part.node_rows[t], folder / "node_feats.pt")
                  for p, (part, folder) in enumerate(parts) if t in part.node_rows]
        for col in sorted({c for _, rows, _ in pieces for c in rows.columns}):
            g.nodes[t].data[col] = fill_rows("node", t, num_nodes[t], pieces, col, node_maps[t])
        times = [(part.node_time[t], folder) for part, folder in parts if t in part.node_time]
        if times:
            if "time" in g.nodes[t].data:
                raise fail(times[0][1] / "node_feats.pt", "time", "is given twice (in feats "
                            "and as PyG's node time)")
            for time, folder in times[1:]:
                if not np.array_equal(time, times[0][0]):
                    raise fail(folder / "node_feats.pt", "time", "differs from another "
                                "part's; PyG repeats the same node times in every part")
            g.nodes[t].data["time"] = times[0][0]
    for et in meta.etypes:
        pieces = [(p, part.edge_rows[et], folder / "edge_feats.pt")
                  for p, (part, folder) in enumerate(parts) if et in part.edge_rows]
        for col in sorted({c for _, rows, _ in pieces for c in rows.columns}):
            g.edges[et].data[col] = fill_rows("edge", type_file_name(et), len(edge_maps[et]),
                                          pieces, col, edge_maps[et])
    return g
