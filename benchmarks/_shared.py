"""Where the benchmarks find ``../shared``: the real graphs (``data/``) and the peer
harness's graph generator (``bench/gen_graph.py``).

``$GRAPHSHARD_SHARED_DATA`` overrides the data folder, as it does for the tests
(``tests/conftest.py``), so a benchmark run from another checkout or a worktree finds the
same files.  A file that is absent ends the benchmark with a message naming it, not a
traceback from deep inside a reader.

Example (from the repository root, ``python -c`` with ``benchmarks`` on the path)::

    >>> from _shared import shared_file
    >>> shared_file("hgb", "DBLP.zip").name          # doctest: +SKIP
    'DBLP.zip'
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DATA", "GEN_GRAPH", "memory_mb", "shared_file"]

_SHARED = Path(__file__).resolve().parents[2] / "shared"
#: the real graphs: ``$GRAPHSHARD_SHARED_DATA`` or ``../shared/data``
DATA = Path(os.environ.get("GRAPHSHARD_SHARED_DATA", _SHARED / "data"))
#: the peer harness's reproducible graph generator
GEN_GRAPH = _SHARED / "bench" / "gen_graph.py"


def shared_file(*parts: str) -> Path:
    """``DATA / parts...``; exits naming the path when it is absent."""
    path = DATA.joinpath(*parts)
    if not path.exists():
        raise SystemExit(f"{path}: shared data file not found (the real graphs are read "
                         f"from $GRAPHSHARD_SHARED_DATA, else {_SHARED / 'data'})")
    return path


def memory_mb() -> dict[str, float]:
    """This process's resident set now (``rss``) and its peak (``peak``), MB, from
    ``/proc/self/status`` (VmRSS, VmHWM: per address space, so unlike ``ru_maxrss`` the peak
    does not carry a forking parent's over ``exec``)."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
    return {"rss": out["VmRSS"], "peak": out["VmHWM"]}
