"""METIS / Walshaw ``.graph`` files: read into a Graph, write from an adjacency.

The format: a header ``n m [fmt [ncon]]``, then one line per vertex listing its
(1-based) neighbours, optionally preceded by vertex weights and interleaved with edge
weights; ``%`` lines are comments.  Both directions of every edge are listed.
"""

from __future__ import annotations

import bz2
import gzip
import os
from pathlib import Path

import numpy as np

from ..errors import FormatError
from ..graph import Graph, graph

__all__ = ["read_metis"]


def _open_text(path: Path):
    if path.suffix == ".bz2":
        return bz2.open(path, "rt")
    if path.suffix == ".gz":
        return gzip.open(path, "rt")
    return open(path, encoding="utf-8")


def read_metis(path: str | os.PathLike[str]) -> Graph:
    """Read a METIS ``.graph`` file (plain, ``.gz`` or ``.bz2``) as a directed Graph.

    Every adjacency entry ``u -> v`` becomes the edge ``u -> v``, so an undirected graph
    with ``m`` edges gives ``2m`` directed edges.  Vertex weights become node feature
    ``"weight"`` (int64, ``(n, ncon)``) and edge weights edge feature ``"weight"``.

    Raises:
        FormatError: bad header, a neighbour outside ``1..n``, a wrong vertex or edge count
            (the message names the file and line).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "tri.graph"
        >>> _ = p.write_text("% triangle\\n3 3\\n2 3\\n1 3\\n1 2\\n")
        >>> g = read_metis(p)
        >>> g.num_nodes(), g.num_edges()
        (3, 6)
    """
    path = Path(path)
    if not path.exists():
        raise FormatError(f"{path}: no such file", path=str(path))
    with _open_text(path) as handle:
        lines = handle.read().splitlines()
    body = [(i + 1, ln) for i, ln in enumerate(lines) if not ln.lstrip().startswith("%")]
    if not body:
        raise FormatError(f"{path}: empty file, expected a header 'n m [fmt [ncon]]'",
                          path=str(path))
    header_line, header = body[0]
    try:
        head = [int(x) for x in header.split()]
    except ValueError as exc:
        raise FormatError(f"{path}:{header_line}: header {header!r} is not integers",
                          path=str(path), line=header_line) from exc
    if len(head) < 2:
        raise FormatError(f"{path}:{header_line}: header needs 'n m', got {header!r}",
                          path=str(path), line=header_line)
    n, m = head[0], head[1]
    fmt = f"{head[2]:03d}" if len(head) > 2 else "000"
    ncon = head[3] if len(head) > 3 else (1 if fmt[1] == "1" else 0)
    has_vsize, has_vw, has_ew = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
    rows = body[1:]
    # trailing blank lines are not vertices; blank lines inside are isolated vertices
    while len(rows) > n and not rows[-1][1].strip():
        rows.pop()
    if len(rows) != n:
        raise FormatError(f"{path}: header says {n} vertices but the file has {len(rows)} "
                          "vertex lines", path=str(path), field="n")
    srcs, dsts, ews, vws = [], [], [], []
    for v, (lineno, text) in enumerate(rows):
        try:
            nums = np.array(text.split(), dtype=np.int64)
        except ValueError as exc:
            raise FormatError(f"{path}:{lineno}: non-integer entry in {text[:60]!r}",
                              path=str(path), line=lineno) from exc
        skip = int(has_vsize) + (ncon if has_vw else 0)
        if has_vw:
            vws.append(nums[int(has_vsize):skip])
        rest = nums[skip:]
        if has_ew:
            if len(rest) % 2:
                raise FormatError(f"{path}:{lineno}: odd number of neighbour/weight entries",
                                  path=str(path), line=lineno)
            nbrs, w = rest[0::2], rest[1::2]
            ews.append(w)
        else:
            nbrs = rest
        bad = np.flatnonzero((nbrs < 1) | (nbrs > n))
        if bad.size:
            raise FormatError(f"{path}:{lineno}: neighbour {nbrs[bad[0]]} of vertex {v + 1} is "
                              f"outside 1..{n}", path=str(path), line=lineno,
                              value=int(nbrs[bad[0]]))
        srcs.append(np.full(len(nbrs), v, dtype=np.int64))
        dsts.append(nbrs - 1)
    src = np.concatenate(srcs) if srcs else np.zeros(0, dtype=np.int64)
    dst = np.concatenate(dsts) if dsts else np.zeros(0, dtype=np.int64)
    if len(src) != 2 * m:
        raise FormatError(f"{path}: header says {m} edges (so {2 * m} adjacency entries) but the "
                          f"file lists {len(src)}", path=str(path), field="m")
    g = graph((src, dst), num_nodes=n)
    if has_vw:
        g.ndata["weight"] = np.stack(vws).astype(np.int64)
    if has_ew:
        g.edata["weight"] = np.concatenate(ews).astype(np.int64)
    return g
