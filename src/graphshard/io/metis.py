"""METIS / Walshaw ``.graph`` files: read into a Graph, write from an adjacency.

The format: a header ``n m [fmt [ncon]]``, then one line per vertex listing its
(1-based) neighbours, optionally preceded by vertex weights and interleaved with edge
weights; ``%`` lines are comments.  Both directions of every edge are listed.
"""

from __future__ import annotations

import bz2
import gzip
import os
import zlib
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
    if not path.is_file():
        what = "is a directory, not a METIS file" if path.is_dir() else "no such file"
        raise FormatError(f"{path}: {what}", path=str(path))
    try:
        with _open_text(path) as handle:
            lines = handle.read().splitlines()
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:  # bad .gz/.bz2, not UTF-8
        raise FormatError(f"{path}: unreadable METIS file ({type(exc).__name__}: {exc})",
                          path=str(path)) from exc
    body = [(i + 1, ln) for i, ln in enumerate(lines) if not ln.lstrip().startswith("%")]
    if not body:
        raise FormatError(f"{path}: empty file, expected a header 'n m [fmt [ncon]]'",
                          path=str(path))
    header_line, header = body[0]
    n, m, has_vsize, has_vw, has_ew, ncon = _header(path, header_line, header)
    rows = body[1:]
    # trailing blank lines are not vertices; blank lines inside are isolated vertices
    while len(rows) > n and not rows[-1][1].strip():
        rows.pop()
    if len(rows) != n:
        raise FormatError(f"{path}: header says {n} vertices but the file has {len(rows)} "
                          "vertex lines", path=str(path), field="n", value=n)
    skip = int(has_vsize) + (ncon if has_vw else 0)
    srcs, dsts, ews, vws = [], [], [], []
    for v, (lineno, text) in enumerate(rows):
        where = f"{path}:{lineno}: vertex {v + 1}"
        try:
            nums = np.array(text.split(), dtype=np.int64)
        except (ValueError, OverflowError) as exc:
            raise FormatError(f"{where}: non-integer or out-of-range entry in {text[:60]!r}",
                              path=str(path), line=lineno) from exc
        if len(nums) < skip:
            raise FormatError(f"{where}: {len(nums)} entries, but the header's format asks "
                              f"for {skip} leading vertex size/weights", path=str(path),
                              line=lineno, field="ncon")
        if has_vw:
            vws.append(nums[int(has_vsize):skip])
        rest = nums[skip:]
        if has_ew:
            if len(rest) % 2:
                raise FormatError(f"{where}: odd number of neighbour/weight entries",
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
        if (has_vsize and nums[0] < 0) or (has_vw and (nums[int(has_vsize):skip] < 0).any()) \
                or (has_ew and (w < 0).any()):
            raise FormatError(f"{where}: negative vertex size or weight in {text[:60]!r}",
                              path=str(path), line=lineno, field="weight")
        srcs.append(np.full(len(nbrs), v, dtype=np.int64))
        dsts.append(nbrs - 1)
    src = np.concatenate(srcs) if srcs else np.zeros(0, dtype=np.int64)
    dst = np.concatenate(dsts) if dsts else np.zeros(0, dtype=np.int64)
    if len(src) != 2 * m:
        raise FormatError(f"{path}: header says {m} edges (so {2 * m} adjacency entries) but the "
                          f"file lists {len(src)}", path=str(path), field="m", value=m)
    g = graph((src, dst), num_nodes=n)
    if has_vw:
        g.ndata["weight"] = np.stack(vws) if vws else np.zeros((0, ncon), np.int64)
    if has_ew:
        g.edata["weight"] = np.concatenate(ews).astype(np.int64)
    return g


def _header(path: Path, lineno: int, header: str) -> tuple[int, int, bool, bool, bool, int]:
    """``n, m, has_vsize, has_vw, has_ew, ncon`` of a header line, checked."""
    def bad(message: str, field: str | None = None) -> FormatError:
        return FormatError(f"{path}:{lineno}: header {header[:60]!r}: {message}",
                           path=str(path), line=lineno, field=field)

    try:
        head = [int(x) for x in header.split()]
    except ValueError as exc:
        raise bad("expected integers 'n m [fmt [ncon]]'") from exc
    if not 2 <= len(head) <= 4:
        raise bad(f"expected 'n m [fmt [ncon]]', got {len(head)} numbers")
    n, m = head[0], head[1]
    if n < 0 or m < 0:
        raise bad("n and m must be >= 0", "n" if n < 0 else "m")
    fmt = header.split()[2] if len(head) > 2 else "0"
    if len(fmt) > 3 or set(fmt) - {"0", "1"}:
        raise bad(f"fmt {fmt!r} is not up to 3 digits of 0/1 (vertex sizes, vertex "
                  "weights, edge weights)", "fmt")
    fmt = fmt.zfill(3)
    has_vsize, has_vw, has_ew = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
    ncon = head[3] if len(head) > 3 else (1 if has_vw else 0)
    if (has_vw and ncon < 1) or (not has_vw and ncon != 0):
        raise bad(f"ncon {ncon}: expected >= 1 with vertex weights in fmt, else 0", "ncon")
    return n, m, has_vsize, has_vw, has_ew, ncon
