"""Start graph servers on Ray (one actor per partition) and find or stop them by name.

Servers are named actors in the ``"graphshard"`` namespace, named after the graph and the
config path, so that trainers started later (``DistGraph(config, address=...)``) find them:
:attr:`ServeHandle.address` is the address to pass (``graphshard serve`` prints the line), a
loopback one for a Ray started here (another process on this machine joins it), the cluster's
for ``serve(config, address=...)`` (any machine of the cluster, with the config at the same
path, since the servers' names come from it).
They are placed by a rule (``placement``: ``"spread"``, one per machine while machines last,
the default; ``"pack"``, all on this process's node; or pinned, ``{part_id: node}``: see
:mod:`graphshard.distributed.placement`), ask for almost no CPU by default (they mostly wait
on I/O and leave the cores to trainers), and are restarted by Ray when they die (``max_restarts``),
reloading their partition; a server whose node is lost comes back on another node, which
must see the partition folder at the same path.

Tuning: a server's answer above Ray's ``max_direct_call_object_size`` (100 KiB by default)
goes through the object store, which costs extra process hops per call; a trainer that starts
Ray itself can raise it (``ray.init(_system_config={"max_direct_call_object_size": 32 << 20})``)
so that sampled edges and feature rows come back in the reply.  ``benchmarks/bench_dist.py``
does (``--inline-mb``).  A local Ray that graphshard starts deletes freed objects every
20 ms (:data:`graphshard.runtime.ray.STARTUP_ENV`); on a cluster started by ``ray start``,
Ray's 1 s lets every trainer's RSS take up to a second's worth of replies in the object
store's shared memory, unless ``RAY_free_objects_period_milliseconds=20`` is in the
environment of ``ray start``.

Example:
    >>> handle = serve("parts/shop.json")  # doctest: +SKIP
    >>> handle.shutdown()  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._util.optional import import_optional
from .._util.process import process_running
from ..errors import ConfigError, ServerError
from ..partition.config import ConfigLike, as_config, location
from ..runtime.ray import cluster_found, init_ray
from ._liveness import DEFAULT_SILENCE, wait_ready
from ._served import served_class
from .placement import MIN_CPUS, Placement, scheduling_strategies

__all__ = ["NAMESPACE", "ServeHandle", "ServerPlace", "cluster_address", "ensure_ray",
           "find_servers", "serve", "server_names", "shutdown"]

log = logging.getLogger(__name__)

#: Ray namespace of the graph servers.
NAMESPACE = "graphshard"


def ensure_ray(address: str | None = None) -> Any:
    """The ``ray`` module, initialised: joins ``address`` or starts a local Ray that listens
    on 127.0.0.1 only (:func:`graphshard.runtime.ray.init_ray`)."""
    ray = import_optional("ray", "graph servers")
    if not ray.is_initialized():
        init_ray(ray, address, include_dashboard=False, log_to_driver=False)
    return ray


def _key(config: ConfigLike) -> tuple[str, str, int]:
    cfg = as_config(config)
    path = location(cfg)  # its URI (every node copies its part from there), or local path
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    return path, f"{cfg.graph_name}-{digest}", cfg.num_parts


def server_names(config: ConfigLike) -> list[str]:
    """Actor names of the servers of ``config`` (a path, or a config already read), one per
    partition.

    Example:
        >>> import tempfile, graphshard as gs
        >>> out = tempfile.mkdtemp()
        >>> gs.partition_graph(gs.graph(([0, 1], [1, 0])), "pair", 2, out, part_method="hash")
        >>> [n.split(":")[-1] for n in server_names(f"{out}/pair.json")]
        ['part0', 'part1']
    """
    _, base, num_parts = _key(config)
    return [f"{base}:part{p}" for p in range(num_parts)]


@dataclass(frozen=True)
class ServerPlace:
    """Where one partition's server runs.

    Attributes:
        part_id: The partition.
        node_id: Ray node ID (hex).
        node_ip: IP address of that node.
        pid: The server's process ID.
    """

    part_id: int
    node_id: str
    node_ip: str
    pid: int


@dataclass(frozen=True)
class ServeHandle:
    """Where the servers of one partitioned graph run.

    Attributes:
        config: Absolute path of the partition config.
        names: Ray actor name of each partition's server (namespace :data:`NAMESPACE`).
        node_ids: Ray node ID each server ran on at start (:meth:`locate`: now).
        pids: Process ID of each server (at start).
        tensor_dir: Folder of the distributed tensors' files.
        address: The Ray cluster's address (its GCS, ``"host:port"``), which another
            process passes to ``DistGraph(config, address=...)`` to use these servers;
            for a local Ray a loopback address, reachable from this machine only.
        node_ips: IP address of each server's node (at start).

    Servers that are not detached live as long as this handle (Ray stops an actor when its
    last handle goes away): keep it until training ends.
    """

    config: str
    names: tuple[str, ...]
    node_ids: tuple[str, ...]
    pids: tuple[int, ...]
    tensor_dir: str
    address: str = ""
    node_ips: tuple[str, ...] = ()
    handles: tuple[Any, ...] = field(default=(), repr=False, compare=False)

    def connect_code(self) -> str:
        """The Python line that connects a trainer to these servers.

        Example:
            >>> ServeHandle("/p/g.json", (), (), (), "/t", "127.0.0.1:6379").connect_code()
            "dg = graphshard.distributed.DistGraph('/p/g.json', address='127.0.0.1:6379')"
        """
        return f"dg = graphshard.distributed.DistGraph({self.config!r}, address={self.address!r})"

    def actors(self) -> list[Any]:
        """The servers' actor handles."""
        if self.handles:
            return list(self.handles)
        ray = ensure_ray()
        return [ray.get_actor(n, namespace=NAMESPACE) for n in self.names]

    @property
    def places(self) -> list[ServerPlace]:
        """Where each server ran at start (one per partition, in partition order)."""
        ips = self.node_ips or ("",) * len(self.names)
        return [ServerPlace(p, n, ip, pid) for p, (n, ip, pid)
                in enumerate(zip(self.node_ids, ips, self.pids, strict=True))]

    def locate(self, *, timeout: float = DEFAULT_SILENCE) -> list[ServerPlace]:
        """Where each server runs now (a restarted server may have moved to another node).

        Raises:
            ServerTimeoutError: a server went ``timeout`` seconds without answering its
                heartbeat.
            ServerError: a server is gone (the cause is chained).
        """
        return _places(ensure_ray(), self.actors(), self.config, timeout)

    def shutdown(self) -> None:
        """Stop every server (no restart); waits until their processes are gone.  Empty
        tensor folders are removed; persistent tensors' files stay."""
        _kill(self.names, list(zip(self.pids, self.node_ids, strict=True)))
        root = Path(self.tensor_dir)
        for folder in [*root.glob("part*"), root]:
            with contextlib.suppress(OSError):
                folder.rmdir()

    def __repr__(self) -> str:
        return f"ServeHandle(config={self.config!r}, num_servers={len(self.names)})"


def serve(config: ConfigLike, *, address: str | None = None, placement: Placement = "spread",
          max_restarts: int = 3, num_cpus: float = 0.0, tensor_dir: str | None = None,
          detached: bool = False, verify: bool = True, timeout: float = DEFAULT_SILENCE
          ) -> ServeHandle:
    """Start one graph server per partition of ``config`` and wait until all are ready.

    Args:
        config: Path of the partition config JSON, or the config already read (parsed
            once here; each server parses it once in its own process).
        address: Ray cluster to join (``"auto"``, ``"ray://head:10001"``); None reuses the
            running Ray or starts a local one, listening on 127.0.0.1 only.
        placement: Where the servers run: ``"spread"`` (round robin over the nodes with
            CPUs: one per node while nodes last),
            ``"pack"`` (all on this process's node), or ``{part_id: node}`` with a Ray node
            ID, a unique prefix of one (8+ hex digits) or a node's IP (partitions not named
            are spread).  "pack" and pinned servers move to a surviving node when theirs
            is lost (:mod:`graphshard.distributed.placement`).
        max_restarts: Times Ray restarts a dead server (-1: forever).
        num_cpus: CPUs each server reserves (on a Ray of several nodes at least
            :data:`~graphshard.distributed.placement.MIN_CPUS`, 0.001, without which Ray ignores
            the placement).
        tensor_dir: Folder of distributed tensors (default: a folder under the temp dir,
            one per graph); must be visible to a server after a restart.
        detached: Keep the servers alive after this driver exits (stop them with
            :func:`shutdown`).
        verify: Check the part files' SHA-256 while loading (default: a server loads
            its part once, so a bit-flipped file is refused at start rather than served;
            hashing runs at about the disk's read speed, see README).
        timeout: Seconds a server may go without answering its heartbeat while it loads
            and compiles its kernels (:mod:`graphshard.distributed._liveness`); there is no
            limit on the load itself while the servers keep answering.

    Returns:
        A :class:`ServeHandle`.

    Raises:
        ConfigError: servers for this config are already running.
        ValidationError: an unknown placement rule, partition or node.
        ServerError: a server failed to load its partition (the cause is chained).
    """
    ray = ensure_ray(address)
    cfg = as_config(config)
    path, base, num_parts = _key(cfg)
    names = server_names(cfg)
    if find_servers(cfg) is not None:
        raise ConfigError(f"{path}: graph servers are already running ({names[0]}, ...); "
                          "connect with DistGraph or stop them with "
                          "graphshard.distributed.shutdown",
                          path=str(path))
    tdir = tensor_dir or os.path.join(tempfile.gettempdir(), f"graphshard-tensors-{base}")
    strategies = scheduling_strategies(ray, placement, num_parts)
    remote = served_class(ray)
    # a pinned server must reserve some CPU for Ray to honour its node (MIN_CPUS); on a
    # one-node Ray there is nothing to pin, and a server that reserves nothing leaves whole
    # CPUs to trainers (2 trainers of 1 CPU on a 2-CPU Ray would otherwise never start)
    alive = sum(1 for n in ray.nodes() if n.get("Alive"))
    cpus = max(num_cpus, MIN_CPUS) if alive > 1 else num_cpus
    options: dict[str, Any] = {"namespace": NAMESPACE, "num_cpus": cpus,
                               "max_restarts": max_restarts, "max_task_retries": 0}
    if detached:
        options["lifetime"] = "detached"
    t0 = time.perf_counter()
    actors = [remote.options(name=n, scheduling_strategy=s, **options)
              .remote(str(path), p, tdir, verify)
              for p, (n, s) in enumerate(zip(names, strategies, strict=True))]
    try:
        places = _places(ray, actors, str(path), timeout, starting=True)
    except ServerError:
        _kill(names, ())
        raise
    for pl in places:
        log.info("partition %d server: node %s (%s), pid %d", pl.part_id, pl.node_id,
                 pl.node_ip, pl.pid)
    log.info("serving %s: %d servers ready in %.2f s", path, num_parts, time.perf_counter() - t0)
    return ServeHandle(str(path), tuple(names), tuple(pl.node_id for pl in places),
                       tuple(pl.pid for pl in places), tdir, cluster_address(ray),
                       tuple(pl.node_ip for pl in places), tuple(actors))


def _places(ray: Any, actors: list[Any], path: str, timeout: float, *,
            starting: bool = False) -> list[ServerPlace]:
    """Where each of ``actors`` runs, once each is ready (waiting while their heartbeats
    answer; ``timeout``: the silence allowed, see :func:`~._liveness.wait_ready`)."""
    infos = wait_ready(ray, actors, path, silence=timeout, starting=starting)
    return [ServerPlace(int(i["part_id"]), str(i["node_id"]), str(i.get("node_ip") or ""),
                        int(i["pid"])) for i in infos]


def cluster_address(ray: Any) -> str:
    """``"host:port"`` of the running Ray's GCS: what ``DistGraph(..., address=...)`` and
    ``ray.init(address=...)`` join from another process ("" if Ray does not say)."""
    try:
        return str(ray.get_runtime_context().gcs_address or "")
    except Exception:  # a Ray without the field: the caller prints no address
        return ""


def find_servers(config: ConfigLike) -> list[Any] | None:
    """Actor handles of running servers of ``config`` (all partitions), or None."""
    ray = ensure_ray()
    actors = []
    for name in server_names(config):
        try:
            actors.append(ray.get_actor(name, namespace=NAMESPACE))
        except ValueError:
            return None
    return actors


def shutdown(config: ConfigLike, *, address: str | None = None) -> int:
    """Stop the servers of ``config`` started by any driver (e.g. detached ones); returns
    how many were running.  Without ``address``, no Ray running in this process and no
    cluster on this machine (:func:`~graphshard.runtime.ray.cluster_found`), no server can
    be running: 0, and no Ray is started just to look."""
    ray = sys.modules.get("ray")
    if address is None and not (ray is not None and ray.is_initialized()) \
            and not cluster_found():
        return 0
    ensure_ray(address)
    return _kill(server_names(config), ())


def _kill(names: Any, pids: Any, wait: float = 10.0) -> int:
    """Kill the servers ``names`` (no restart) and wait up to ``wait`` seconds for the
    processes of those on this node to end (``pids``: ``(pid, node ID)`` pairs known
    already; a process ID names a process of its own node only)."""
    ray = ensure_ray()
    actors = []
    for name in names:
        with contextlib.suppress(ValueError):
            actors.append(ray.get_actor(name, namespace=NAMESPACE))
    known = set(pids)
    with contextlib.suppress(Exception):  # current pids (a restarted server has a new one)
        known.update((i["pid"], i["node_id"])
                     for i in ray.get([a.info.remote() for a in actors], timeout=2.0))
    for actor in actors:
        ray.kill(actor, no_restart=True)
    here = ray.get_runtime_context().get_node_id()
    end = time.monotonic() + wait
    for pid in {pid for pid, node in known if node == here}:
        while time.monotonic() < end and process_running(pid):
            time.sleep(0.05)
    return len(actors)
