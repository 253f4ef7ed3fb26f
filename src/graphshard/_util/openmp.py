"""OpenMP's idle threads spin only briefly in graphshard's processes, unless the user says
otherwise.

torch (its own libgomp) and numba's ``omp`` threading layer each keep a pool of OpenMP
threads.  By default an idle libgomp thread spins about 300,000 times (some milliseconds)
before it sleeps; on a shared or oversubscribed machine the spinning threads take the cores
that the working threads (of the other pool, or of other processes) need: an R-GCN epoch on
a loaded machine took 2-3x as long as with short spins, and sampling on 2 threads ran slower
than on 1 (``benchmarks/TUNING.md``).  Sleeping at once (``OMP_WAIT_POLICY=PASSIVE``) costs
a wake-up per parallel region instead: 20-40% slower epochs on an idle machine.  So
graphshard sets ``GOMP_SPINCOUNT=1000`` (about 10 microseconds of spinning, libgomp's own
choice when it has more threads than cores) when neither that nor ``OMP_WAIT_POLICY`` is
set: within 10% of the default idle and within about 1.2x of passive waiting loaded.

libgomp reads these variables once, when it is loaded, so they must be set before torch
or numba's parallel layer loads: ``import graphshard`` does it, and child processes (Ray's
workers among them) inherit it.  :func:`peer_environ` gives the environment without
graphshard's choice, for running another system as its users would.

Example:
    >>> import os
    >>> prefer_short_spin()  # done when this module loaded: changes nothing now
    False
    >>> "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ
    True
"""

from __future__ import annotations

import os

__all__ = ["SPIN_COUNT", "peer_environ", "prefer_short_spin"]

#: spins of an idle libgomp thread before it sleeps (libgomp's default is 300,000)
SPIN_COUNT = "1000"
_USER_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
_set_here = False


def prefer_short_spin() -> bool:
    """Set ``GOMP_SPINCOUNT`` to :data:`SPIN_COUNT` unless the environment sets it or
    ``OMP_WAIT_POLICY``; return whether this call set it."""
    global _set_here
    if any(name in os.environ for name in _USER_SETTINGS):
        return False
    os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT
    _set_here = True
    return True


def peer_environ() -> dict[str, str]:
    """A copy of ``os.environ`` without what :func:`prefer_short_spin` set.

    Example:
        >>> env = peer_environ()
        >>> env.get("GOMP_SPINCOUNT") == (None if _set_here else os.environ.get("GOMP_SPINCOUNT"))
        True
    """
    env = dict(os.environ)
    if _set_here and env.get("GOMP_SPINCOUNT") == SPIN_COUNT:
        del env["GOMP_SPINCOUNT"]
    return env


prefer_short_spin()  # on import: graphshard/__init__.py imports this module first
