"""The graph server: a plain class that serves one partition (wrapped by ``ray.remote``).

Every method takes and returns plain arrays and tuples, so the same object answers a remote
call in a Ray actor and a direct call in a trainer co-located with the partition.  A server
restarted by Ray runs ``__init__`` again: it reloads its partition (memory-mapped) and finds
its distributed tensors in their files.

Readiness: a server started by :func:`~graphshard.distributed.serve` (``background=True,
warm=True``) loads its part and then compiles (or loads from numba's on-disk cache) the
sampling kernels it serves (:meth:`GraphServer.warm_up`) in a thread of its own, so that
:meth:`GraphServer.status` (run by Ray in the actor's ``"health"`` concurrency group) answers
while it works: the caller sees progress and liveness, not silence.  Every other method waits
until the start-up is complete; :meth:`GraphServer.info` answering means the server is ready.

Example:
    >>> import tempfile, numpy as np, graphshard as gs
    >>> out = tempfile.mkdtemp()
    >>> gs.partition_graph(gs.graph(([0, 1, 2], [1, 2, 0])), "tri", 1, out)
    >>> srv = GraphServer(f"{out}/tri.json", 0, tempfile.mkdtemp())
    >>> srv.degrees(np.array([0, 1]), ("_N", "_E", "_N"), "in").tolist()
    [1, 1]
    >>> srv.status()["phase"], srv.warm_up() >= 0
    ('ready', True)
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

import numpy as np

from .._util.arrays import as_ids
from ..errors import ValidationError
from ..partition.config import ConfigLike, as_config, location
from ..partition.files import load_partition_data
from ..sampling.backend import get_backend
from ..sampling.neighbors import sample_etype
from ..storage import fsys
from ..store import GraphStore, Rows
from ..typing import EdgeType, IdArray
from ._index import PartIndex
from ._tensors import TensorShard

__all__ = ["MULTI_METHODS", "GraphServer", "SampleRequest"]

log = logging.getLogger(__name__)

#: Methods :meth:`GraphServer.multi` may run (reads only: no writes in a batched call).
MULTI_METHODS = frozenset({"degrees", "edge_features", "find_edges", "neighbors",
                           "node_features", "sample", "tensor_read"})

#: ``(etype, keys, fanout, salt)``: sample ``fanout`` in-edges of every node of ``keys``.
SampleRequest = tuple[EdgeType, IdArray, int, int]


class GraphServer:
    """Serves partition ``part_id`` of ``config``: structure, features, tensors, sampling.

    Args:
        config: Path of the partition config JSON (a Ray actor gets the path and parses it
            once), or the config a co-located trainer already read (not parsed again).
        part_id: The partition.
        tensor_dir: Folder of the distributed tensors (one sub-folder per partition).
        verify: Check the part files' SHA-256 when loading.
        warm: After loading, run the served kernels once on a few owned nodes
            (:meth:`warm_up`), so that the first request does not compile them.
        background: Load (and warm) in a thread and return at once; every method but
            :meth:`status` waits for it (a Ray actor: its heartbeat answers meanwhile).
            Without it, a failed load raises here.
    """

    def __init__(self, config: ConfigLike, part_id: int, tensor_dir: str, verify: bool = False,
                 *, warm: bool = False, background: bool = False) -> None:
        self.part_id = int(part_id)
        self.config = str(config if isinstance(config, (str, os.PathLike))
                          else location(as_config(config)))
        self._startup = _Startup()
        self._ready = False
        args = (config, tensor_dir, verify, warm)
        if background:
            threading.Thread(target=self._start, args=args, daemon=True,
                             name=f"graphshard-part{self.part_id}-start").start()
        else:
            self._start(*args)
            self._startup.wait()

    def _start(self, config: ConfigLike, tensor_dir: str, verify: bool, warm: bool) -> None:
        """Load the part, then warm the kernels up; records the phase, or the failure."""
        st = self._startup
        try:
            st.enter("loading its part")
            cfg = as_config(config)
            self._index = PartIndex(load_partition_data(cfg, self.part_id, verify=verify))
            self._tensors = TensorShard(Path(tensor_dir) / f"part{self.part_id}")
            meta = self._index.book.metadata()
            self._fits32 = max(sum(m["num_nodes"] for m in meta),
                               sum(m["num_edges"] for m in meta)) < 2**31
            if warm:
                st.enter("compiling kernels")
                try:
                    self._warm()
                except Exception as exc:  # an optimisation only: a real call reports it
                    st.warm_error = f"{type(exc).__name__}: {exc}"
                    log.warning("partition %d server: kernel warm-up failed (%s); kernels "
                                "compile on first use", self.part_id, st.warm_error)
            st.enter("ready")
            self._ready = True
        except BaseException as exc:  # kept for every later call (and status) to report
            st.fail(exc)
        finally:
            st.done.set()

    @property
    def index(self) -> PartIndex:
        """The partition's index (waits until the server has started)."""
        if not self._ready:
            self._startup.wait()
        return self._index

    @property
    def tensors(self) -> TensorShard:
        """This part's distributed tensors (waits until the server has started)."""
        if not self._ready:
            self._startup.wait()
        return self._tensors

    # ----- liveness ---------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Start-up phase, without waiting: ``{"part_id", "pid", "node_id", "phase",
        "seconds", "error", "warm_error"}``; ``phase`` is ``"loading its part"``, ``"compiling
        kernels"``, ``"ready"`` or ``"failed"`` (``error`` says why), ``seconds`` the time
        spent in it.  Servers started by :func:`~graphshard.distributed.serve` answer it
        from a thread of their own (the heartbeat), even while a request runs."""
        st = self._startup
        return {"part_id": self.part_id, "pid": os.getpid(), "node_id": _ray_node()[0],
                "phase": st.phase,
                "seconds": time.monotonic() - st.since, "error": st.error_text,
                "warm_error": st.warm_error}

    def info(self) -> dict[str, Any]:
        """Part ID, process ID, Ray node ID and IP (if in Ray), the feature schema, and the
        bytes this process read and wrote through remote URIs (``file_bytes``: its copy of
        a part given as a URI; :func:`graphshard.storage.fsys.traffic`).  Waits until the
        server has started: its answer is the readiness signal."""
        schema = self.index.schema()
        node_id, node_ip = _ray_node()
        return {"part_id": self.part_id, "pid": os.getpid(), "node_id": node_id,
                "node_ip": node_ip, "schema": schema,
                "tensor_dir": str(self.tensors.dir.parent),
                "file_bytes": [(t := fsys.traffic()).read, t.written]}

    def warm_up(self) -> float:
        """Run the sampling kernels this server serves once, on up to two owned nodes of
        every edge type (uniform with and without replacement, and the weighted kernels
        that excluded edges use), so that numba compiles them now, or loads them from its
        on-disk cache, instead of inside the first request; the seconds it took."""
        self.index  # noqa: B018 - waits for the part
        return self._warm()

    def _warm(self) -> float:
        t0 = time.perf_counter()
        index = self._index  # set by now: the start-up thread calls this before "ready"
        for et in index.canonical_etypes:
            keys = index.owned_nodes(et[2])[:2]
            for replace in (False, True):
                self._sample(index, [(et, keys, 2, 0)], replace, None, {}, 0, "cpu")
            self._sample(index, [(et, keys, 2, 0)], False, None, {et: keys[:0]}, 0, "cpu")
        return time.perf_counter() - t0

    # ----- structure and features ---------------------------------------------------------
    def neighbors(self, ids: IdArray, et: EdgeType, edge_dir: str
                  ) -> tuple[IdArray, IdArray, IdArray]:
        """``(indptr, indices, eids)`` of ``ids`` (see :meth:`PartIndex.neighbors`)."""
        csr = self.index.neighbors(ids, et, edge_dir)
        return csr.indptr, csr.indices, csr.eids

    def degrees(self, ids: IdArray, et: EdgeType, edge_dir: str) -> IdArray:
        """In-degrees of owned nodes, or this part's share of out-degrees."""
        return self.index.degrees(ids, et, edge_dir)

    def node_features(self, ntype: str, name: str, ids: IdArray) -> Rows:
        """Feature rows of owned nodes."""
        return self.index.node_features(ntype, name, ids)

    def edge_features(self, et: EdgeType, name: str, eids: IdArray) -> Rows:
        """Feature rows of owned edges."""
        return self.index.edge_features(et, name, eids)

    def find_edges(self, eids: IdArray, et: EdgeType) -> tuple[IdArray, IdArray]:
        """Endpoints of owned edges."""
        return self.index.find_edges(eids, et)

    # ----- sampling ----------------------------------------------------------------------------
    def sample(self, requests: list[SampleRequest], replace: bool, prob: str | None,
               exclude: dict[EdgeType, IdArray], seed: int, backend: str = "cpu",
               narrow: bool = False) -> list[tuple[IdArray, IdArray, IdArray]]:
        """Sample in-edges around owned nodes, one ``(nbrs, eids, counts)`` per request.

        Draws are keyed by (seed, salt, node ID) as in the local engine, so the result is
        the one the whole graph gives for these nodes.  ``narrow``: return int32 arrays
        when every ID of the graph fits (half the bytes on the wire), else int64.
        """
        out = self._sample(self.index, requests, replace, prob, exclude, seed, backend)
        if narrow and self._fits32:
            out = [tuple(a.astype(np.int32) for a in r) for r in out]  # type: ignore[misc]
        return out

    def _sample(self, index: PartIndex, requests: list[SampleRequest], replace: bool,
                prob: str | None, exclude: dict[EdgeType, IdArray], seed: int, backend: str
                ) -> list[tuple[IdArray, IdArray, IdArray]]:
        bk = get_backend(backend)
        out = []
        for et, keys, k, salt in requests:
            keys = as_ids(keys, "keys")
            if prob is not None or et in exclude:
                # the part's index answers every store call sample_etype makes of a store
                # without a local adjacency (neighbors, edge_features) for the edges it owns
                store = cast(GraphStore, index)
                out.append(sample_etype(store, et, "in", keys, k, replace=replace,
                                        prob=prob, exclude=exclude.get(et), seed=seed,
                                        salt=salt, backend=backend))
                continue
            csr = index.in_csr(et)
            rows = index.owned_rows(keys, et[2])
            counts = bk.sample_counts(csr.indptr, rows, k, replace)
            offsets = np.zeros(len(keys) + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            nbr = np.empty(offsets[-1], dtype=np.int64)
            eid = np.empty(offsets[-1], dtype=np.int64)
            bk.fill_uniform(csr.indptr, csr.indices, csr.eids, rows, keys, offsets, k,
                            replace, seed, salt, nbr, eid)
            out.append((nbr, eid, counts))
        return out

    # ----- batching ----------------------------------------------------------------------------
    def multi(self, ops: list[tuple[str, tuple]]) -> list[Any]:
        """Run several read operations in one call (one Ray round trip): ``[(method name,
        args), ...]`` -> their results in order.  Only the read methods are allowed.

        Raises:
            ValidationError: an op names another method.
        """
        out = []
        for method, args in ops:
            if method not in MULTI_METHODS:
                raise ValidationError(f"multi: {method!r} cannot be batched; choices are "
                                      f"{sorted(MULTI_METHODS)}", field="method", value=method)
            out.append(getattr(self, method)(*_resolve_refs(args)))
        return out

    # ----- distributed tensors --------------------------------------------------------------
    def tensor_create(self, name: str, shape: tuple[int, ...], dtype: str) -> None:
        """Create (or keep, if the same layout exists) this part's rows of a tensor."""
        self.tensors.create(name, shape, dtype)

    def tensor_exists(self, name: str) -> tuple[tuple[int, ...], str] | None:
        """``(local shape, dtype)`` or None."""
        return self.tensors.exists(name)

    def tensor_delete(self, name: str) -> None:
        """Delete this part's rows of a tensor."""
        self.tensors.delete(name)

    def tensor_read(self, name: str, rows: IdArray) -> np.ndarray:
        """Local rows of a tensor."""
        return self.tensors.read(name, rows)

    def tensor_write(self, name: str, rows: IdArray, values: np.ndarray) -> None:
        """Set local rows of a tensor."""
        self.tensors.write(name, rows, values)

    def tensor_update(self, name: str, rows: IdArray, grads: np.ndarray, optimizer: str,
                      lr: float, state: str | None, eps: float) -> None:
        """A sparse optimizer step on local rows (see :meth:`TensorShard.update`)."""
        self.tensors.update(name, rows, grads, optimizer, lr, state, eps)

    def __repr__(self) -> str:
        return f"GraphServer(config={self.config!r}, part_id={self.part_id})"


def _ray_node() -> tuple[str | None, str | None]:
    """``(Ray node ID, node IP)`` of this process, or Nones outside Ray."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None, None
    return ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address()


class _Startup:
    """A server's start-up: its phase, since when, and how it failed (if it did)."""

    def __init__(self) -> None:
        self.phase = "starting"
        self.since = time.monotonic()
        self.error: BaseException | None = None
        self.warm_error: str | None = None
        self.done = threading.Event()

    @property
    def error_text(self) -> str | None:
        """``"Type: message"`` of the failure, or None."""
        return None if self.error is None else f"{type(self.error).__name__}: {self.error}"

    def enter(self, phase: str) -> None:
        self.phase, self.since = phase, time.monotonic()

    def fail(self, exc: BaseException) -> None:
        self.error = exc
        self.enter("failed")

    def wait(self) -> None:
        """Block until the start-up ends; re-raise its failure."""
        self.done.wait()
        if self.error is not None:
            raise self.error


def _resolve_refs(args: tuple) -> tuple:
    """``args`` with Ray object references fetched (Ray resolves only top-level arguments
    of a call, not those nested in :meth:`GraphServer.multi`'s ops)."""
    ray = sys.modules.get("ray")
    if ray is None or not any(isinstance(a, ray.ObjectRef) for a in args):
        return args
    return tuple(ray.get(a) if isinstance(a, ray.ObjectRef) else a for a in args)
