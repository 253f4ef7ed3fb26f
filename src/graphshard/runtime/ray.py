"""Starting Ray: a local Ray listens on the loopback interface only; an address joins a cluster.

``serve``, ``DistGraph`` and the pipeline start Ray through :func:`init_ray`.  With no
address (and none that Ray finds by itself: ``RAY_ADDRESS``, or a cluster that ``ray start``
left on this machine) they start a Ray for this machine alone, whose servers (GCS, raylet,
workers, agents) listen on 127.0.0.1, so nothing of it is reachable from the network.  A Ray
started with its defaults listens on every interface instead.  With an address, Ray's own
rules apply: see the README's "Network" paragraph for what a cluster exposes.

A local Ray is started with start-up limits sized for a busy machine (:data:`STARTUP_ENV`: Ray's
own defaults give its raylet 30 s and its agents 30 s, which a machine at load 20-40 outlasts),
its workers at the driver's priority (Ray's default runs them at nice 15, where a busy
machine starves them) and freed objects deleted from its object store within 20 ms, not 1 s
(the fresh shared memory that replies take meanwhile stays in their readers' RSS), each
only where the environment does not set it already; the processes of
a failed start are stopped (a child subreaper while Ray starts keeps the orphans of a crashed
raylet in this process's tree) and it is tried once more. A Ray that started is watched by a
small process (:mod:`graphshard.runtime._reaper`) that stops what is left of it (Ray's agents
outlive a driver killed with ``kill -9``) once this process is gone.

Example:
    >>> class FakeRay:  # stands in for the ray module
    ...     def init(self, **kwargs): self.kwargs = kwargs
    >>> ray = FakeRay()
    >>> init_ray(ray, "ray://head:10001", log_to_driver=False)
    >>> ray.kwargs
    {'address': 'ray://head:10001', 'log_to_driver': False}
"""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["LOOPBACK", "STARTUP_ENV", "START_ATTEMPTS", "init_ray", "is_loopback", "quiet_ray"]

log = logging.getLogger(__name__)

#: The address a local Ray's servers listen on.
LOOPBACK = "127.0.0.1"

#: Ray settings (environment variables its daemons read) raised for a local Ray started here,
#: each only where the environment does not set it: Ray's defaults in brackets.
STARTUP_ENV = {
    # the raylet's own start-up [30 s]
    "RAY_raylet_start_wait_time_s": "120",
    # the raylet waits for its dashboard/metrics agents to register, then exits [30 s]
    "RAY_agent_register_timeout_ms": "120000",
    # a worker process (importing numpy, numba, graphshard) must register [60 s]
    "RAY_worker_register_timeout_seconds": "300",
    # the driver waits for the GCS to write its port [30 s]
    "RAY_gcs_server_port_wait_time_s": "120",
    # Python GCS clients: connecting [30 s], and each request [60 s]
    "RAY_py_gcs_connect_timeout_s": "120",
    "RAY_gcs_server_request_timeout_seconds": "120",
    # a process that cannot reach the GCS for this long exits [60 s]
    "RAY_gcs_rpc_server_reconnect_timeout_s": "120",
    # workers (graph servers, trainers, partitioning shards) run at the driver's priority
    # [15: below every other process, so on a busy machine they got ~1% of a core each]
    "RAY_worker_niceness": "0",
    # the raylet deletes the objects that went out of scope this often [1000 ms]: until
    # then new replies take fresh pages of the object store's shared memory, which stay in
    # the RSS of every process that read them (a DistGraph client: benchmarks/TUNING.md)
    "RAY_free_objects_period_milliseconds": "20",
}


#: Set by ``graphshard -q``: Ray's driver logs errors only (not its token-authentication
#: warning or "Started a local Ray instance").
_quiet = False


def quiet_ray(quiet: bool = True) -> None:
    """Make :func:`init_ray` start Ray with ``logging_level=ERROR`` (``-q``) or not."""
    global _quiet
    _quiet = quiet


def init_ray(ray: Any, address: str | None = None, **kwargs: Any) -> None:
    """``ray.init``: join ``address`` (or the cluster Ray finds without one), else start a
    local Ray listening on :data:`LOOPBACK` only.

    Args:
        ray: The ``ray`` module.
        address: Ray cluster to join (``"auto"``, ``"ray://head:10001"``, ``"host:port"``);
            None: ``RAY_ADDRESS`` or a cluster ``ray start`` left on this machine if there
            is one, else a new local Ray.
        **kwargs: More ``ray.init`` options (``num_cpus``, ``include_dashboard``, ...);
            after :func:`quiet_ray`, ``logging_level`` defaults to ``logging.ERROR``.
    """
    if _quiet:
        kwargs.setdefault("logging_level", logging.ERROR)
    env = os.environ.get("RAY_ADDRESS", "").strip()
    if address is None and env and _is_loopback_address(env):
        address = env  # joined as a loopback --address is (below), not as Ray alone would
    if address is not None and _is_loopback_address(address):
        # a local Ray on this machine (another process's `graphshard serve`): join it as a
        # node of 127.0.0.1, which Ray on Linux would otherwise replace by the outward IP
        # and then look for the GCS there; and with the token a Ray that ray.init() started
        # uses by default, as Ray itself does for a local cluster it finds (not for one it
        # is given the address of)
        _use_local_token()
        with _local_node_address():
            ray.init(address=address, _node_ip_address=LOOPBACK, **kwargs)
        return
    if address is not None or cluster_found():
        ray.init(address=address, **kwargs)
        return
    _start_local(ray, kwargs)
    util = getattr(ray, "util", None)
    ip = (util.get_node_ip_address()
          if util is not None and hasattr(util, "get_node_ip_address") else None)
    if ip is not None and not is_loopback(ip):
        log.warning("the local Ray runs on %s, not on %s: its servers may be reachable from "
                    "the network (Ray %s)", ip, LOOPBACK, getattr(ray, "__version__", "?"))


#: Times a local Ray is started before giving up (a busy machine can outlast Ray's own
#: fixed start-up waits: 30 s for the raylet to register, 15 s for its agents).
START_ATTEMPTS = 2


def _start_local(ray: Any, kwargs: dict[str, Any]) -> None:
    """Start a local Ray on :data:`LOOPBACK`; after a failed start, stop every process it
    left (the new descendants of this process: GCS, raylet, agents, workers; found by
    process tree, never by name) and try again, :data:`START_ATTEMPTS` times in all.

    Raises:
        RuntimeError: naming the attempts and Ray's last error.
    """
    for attempt in range(1, START_ATTEMPTS + 1):
        before = _descendants()
        try:
            with _startup_env(), _local_node_address(), _subreaper():
                ray.init(address=None, _node_ip_address=LOOPBACK, **kwargs)
            _watch_new(before)
            return
        except Exception as exc:  # Ray raises Exception/TimeoutError/RuntimeError here
            with contextlib.suppress(Exception):
                ray.shutdown()
            stopped = _stop_new(before)
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            if attempt == START_ATTEMPTS:
                raise RuntimeError(
                    f"a local Ray did not start in {START_ATTEMPTS} attempts (the machine "
                    f"may be too busy for Ray's fixed start-up waits): {first}; the "
                    f"processes the attempts left were stopped ({stopped} the last "
                    "time)") from exc
            log.warning("a local Ray did not start (%s); stopped the %d processes it left, "
                        "trying once more", first, stopped)


#: The watchers of the local Rays this process started (kept so that they are not collected).
_watchers: list[Any] = []


def _watch_new(before: set[int]) -> None:
    """Have a watcher stop the processes this start added (GCS, raylet, and what they start)
    if this process dies without stopping them (``kill -9``; :mod:`._reaper`)."""
    from ._reaper import watch

    try:
        watcher = watch(_descendants() - before)
    except OSError as exc:  # a machine out of processes: Ray runs, unwatched
        log.warning("no watcher for the local Ray (%s): if this process is killed, Ray's "
                    "agents may outlive it", exc)
        return
    if watcher is not None:
        _watchers[:] = [w for w in _watchers if w.poll() is None] + [watcher]


def _descendants() -> set[int]:
    """Process IDs of this process's descendants (empty without psutil)."""
    try:
        import psutil
    except ImportError:  # Ray installs psutil; without it nothing can be found
        return set()
    return {c.pid for c in psutil.Process().children(recursive=True)}


def _stop_new(before: set[int]) -> int:
    """Kill the descendants of this process not in ``before``; how many there were."""
    try:
        import psutil
    except ImportError:
        return 0
    new = [c for c in psutil.Process().children(recursive=True) if c.pid not in before]
    for child in new:
        with contextlib.suppress(psutil.Error):
            child.kill()
    psutil.wait_procs(new, timeout=10)
    return len(new)


@contextlib.contextmanager
def _startup_env() -> Iterator[None]:
    """:data:`STARTUP_ENV` in ``os.environ`` (where unset) while Ray starts: its daemons
    inherit it; this process's environment is restored afterwards."""
    added = [k for k in STARTUP_ENV if k not in os.environ]
    for key in added:
        os.environ[key] = STARTUP_ENV[key]
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def is_loopback(ip: str) -> bool:
    """Whether ``ip`` (IPv4, IPv6, or IPv4 mapped into IPv6) is a loopback address.

    Example:
        >>> [is_loopback(a) for a in ("127.0.0.1", "::1", "::ffff:127.0.0.1", "0.0.0.0", "::")]
        [True, True, True, False, False]
    """
    addr = ipaddress.ip_address(ip.split("%")[0])
    mapped = getattr(addr, "ipv4_mapped", None)
    return (mapped or addr).is_loopback


def _is_loopback_address(address: str) -> bool:
    """Whether ``address`` is a GCS ``"host:port"`` on a loopback host (a Ray client
    ``ray://`` address is not: Ray's client takes no node address).

    Example:
        >>> [_is_loopback_address(a) for a in ("127.0.0.1:6379", "localhost:1", "[::1]:2",
        ...                                    "ray://127.0.0.1:10001", "auto", "head:6379")]
        [True, True, True, False, False, False]
    """
    if "://" in address:
        return False
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return is_loopback(host)
    except ValueError:  # a host name or "auto"
        return False


def _use_local_token() -> None:
    """Token authentication on when ``RAY_AUTH_MODE`` is unset and this machine has a Ray
    token (``~/.ray/auth_token``, ``RAY_AUTH_TOKEN``, ...), as Ray decides for a local
    cluster it joins by itself."""
    try:
        from ray._private.authentication import authentication_token_setup as auth

        auth.maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    except Exception:  # a Ray without token auth (or laid out otherwise): nothing to do
        return


def cluster_found() -> bool:
    """Whether ``ray.init(address=None)`` would join a running cluster (as Ray decides)."""
    try:
        from ray._private.services import canonicalize_bootstrap_address

        # None: read RAY_ADDRESS, as ray.init does (Ray's docstring allows it, its hint says str)
        return canonicalize_bootstrap_address(None) is not None  # type: ignore[arg-type]
    except Exception:  # a Ray without this helper, or a bad RAY_ADDRESS: ray.init decides
        return bool(os.environ.get("RAY_ADDRESS"))


@contextlib.contextmanager
def _local_node_address() -> Iterator[None]:
    """Let ``ray.init(_node_ip_address="127.0.0.1")`` keep that address.

    On Linux, Ray (2.4x-2.6x) replaces a loopback node address by the machine's outward one
    unless its ``ENABLE_RAY_CLUSTER`` is off (as it is on macOS and Windows, where a local
    Ray is for this machine alone); it is off while ``ray.init`` runs.  Ray's servers then
    listen on 127.0.0.1; with any other node address they listen on every interface.
    """
    try:
        from ray._private import ray_constants
    except ImportError:  # pragma: no cover - a Ray laid out otherwise: init_ray warns
        yield
        return
    before = getattr(ray_constants, "ENABLE_RAY_CLUSTER", None)
    if before is None:  # pragma: no cover
        yield
        return
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before


@contextlib.contextmanager
def _subreaper() -> Iterator[None]:
    """Make this process a child subreaper (Linux) while Ray starts: a daemon whose parent
    dies (a raylet that crashes leaves its agents) is re-parented here instead of to init,
    so a failed start can find and stop it in this process's tree."""
    prctl = None
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            prctl = ctypes.CDLL(None, use_errno=True).prctl
    if prctl is None:
        yield
        return
    set_, get = 36, 37  # PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER
    was = ctypes.c_int(0)
    prctl(get, ctypes.byref(was), 0, 0, 0)
    prctl(set_, 1, 0, 0, 0)
    try:
        yield
    finally:
        prctl(set_, was.value, 0, 0, 0)
