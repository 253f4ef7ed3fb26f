"""OpenMP's idle threads wait passively in graphshard's processes, unless the user says otherwise.

torch (its own libgomp) and numba's ``omp`` threading layer each keep a pool of OpenMP
threads.  By default an idle OpenMP thread spins for a while before it sleeps; on a shared
or oversubscribed machine the spinning threads of one pool take the cores that the other
pool's working threads (or another process's) need, so 2 threads ran slower than 1
(``benchmarks/TUNING.md``).  libgomp reads ``OMP_WAIT_POLICY`` once, when the library is
loaded, so it must be set before torch or numba's parallel layer loads: ``import
graphshard`` does it (an explicit setting in the environment wins), and child processes
(Ray's workers among them) inherit it.  :func:`peer_environ` gives the environment without
graphshard's choice, for running another system as its users would.

Example:
    >>> import os
    >>> prefer_passive_wait()  # done when this module loaded: changes nothing now
    False
    >>> "OMP_WAIT_POLICY" in os.environ
    True
"""

from __future__ import annotations

import os

__all__ = ["peer_environ", "prefer_passive_wait"]

_VARIABLE = "OMP_WAIT_POLICY"
_set_here = False


def prefer_passive_wait() -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless it is set; return whether this call set it."""
    global _set_here
    if _VARIABLE in os.environ:
        return False
    os.environ[_VARIABLE] = "PASSIVE"
    _set_here = True
    return True


def peer_environ() -> dict[str, str]:
    """A copy of ``os.environ`` without what :func:`prefer_passive_wait` set.

    Example:
        >>> env = peer_environ()
        >>> env.get("OMP_WAIT_POLICY") == (None if _set_here else os.environ["OMP_WAIT_POLICY"])
        True
    """
    env = dict(os.environ)
    if _set_here and env.get(_VARIABLE) == "PASSIVE":
        del env[_VARIABLE]
    return env


prefer_passive_wait()  # on import: graphshard/__init__.py imports this module first
