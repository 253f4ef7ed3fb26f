"""The graph server: a plain class that serves one partition (wrapped by ``ray.remote``).

Every method takes and returns plain arrays and tuples, so the same object answers a remote
call in a Ray actor and a direct call in a trainer co-located with the partition.  A server
restarted by Ray runs ``__init__`` again: it reloads its partition (memory-mapped) and finds
its distributed tensors in their files.

Example:
    >>> import tempfile, numpy as np, graphshard as gs
    >>> out = tempfile.mkdtemp()
    >>> gs.partition_graph(gs.graph(([0, 1, 2], [1, 2, 0])), "tri", 1, out)
    >>> srv = GraphServer(f"{out}/tri.json", 0, tempfile.mkdtemp())
    >>> srv.degrees(np.array([0, 1]), ("_N", "_E", "_N"), "in").tolist()
    [1, 1]
"""

from __future__ import annotations

import contextlib
import os
import sys
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
        verify: Check the part files' SHA-256 when loading (once per server start: a
            bit-flipped part is refused, not served).
    """

    def __init__(self, config: ConfigLike, part_id: int, tensor_dir: str, verify: bool = True
                 ) -> None:
        cfg = as_config(config)
        self.config = str(config if isinstance(config, (str, os.PathLike)) else location(cfg))
        self.part_id = int(part_id)
        self.index = PartIndex(load_partition_data(cfg, part_id, verify=verify))
        self.tensors = TensorShard(Path(tensor_dir) / f"part{part_id}")
        meta = self.index.book.metadata()
        self._fits32 = max(sum(m["num_nodes"] for m in meta),
                           sum(m["num_edges"] for m in meta)) < 2**31

    # ----- liveness ---------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """Part ID, process ID, Ray node ID and IP (if in Ray), the feature schema, and the
        bytes this process read and wrote through remote URIs (``file_bytes``: its copy of
        a part given as a URI; :func:`graphshard.storage.fsys.traffic`)."""
        node_id = node_ip = None
        try:
            import ray

            if ray.is_initialized():
                node_id = ray.get_runtime_context().get_node_id()
                node_ip = ray.util.get_node_ip_address()
        except ImportError:  # pragma: no cover - only without ray
            pass
        return {"part_id": self.part_id, "pid": os.getpid(), "node_id": node_id,
                "node_ip": node_ip, "schema": self.index.schema(),
                "tensor_dir": str(self.tensors.dir.parent),
                "file_bytes": [(t := fsys.traffic()).read, t.written]}

    def warm(self) -> None:
        """Run the kernels this server serves once on one owned node of each edge type
        (uniform sampling with and without replacement, sampling by each numeric edge
        feature, in-neighbours, in-degrees), so that they are compiled, or loaded
        from numba's on-disk cache, before the server reports ready: a first request then
        pays no compilation."""
        schema = self.index.schema()["edge"]
        for et in self.index.book.canonical_etypes:
            keys = self.index.owned_nodes(et[2])[:1]
            if not len(keys) or not len(self.index.in_csr(et).indices):
                continue
            for replace in (False, True):
                self._sample([(et, keys, 2, 0)], replace, None, {}, 0, "cpu")
            for name in schema.get(":".join(et), {}):
                with contextlib.suppress(ValidationError):  # not a usable probability
                    self._sample([(et, keys, 2, 0)], False, name, {}, 0, "cpu")
            # in-edges only: the out-edge index is built on the first out-edge question
            # (the same compiled kernels), so a server that gets none never holds it
            self.index.neighbors(keys, et, "in")
            self.index.degrees(keys, et, "in")

    # ----- structure and features ---------------------------------------------------------
    def neighbors(self, ids: IdArray, et: EdgeType, edge_dir: str
                  ) -> tuple[IdArray, IdArray, IdArray]:
        """``(indptr, indices, eids)`` of ``ids`` (see :meth:`PartIndex.neighbors`)."""
        csr = self.index.neighbors(ids, et, edge_dir)  # int64 (no copy): PartIndex CSRs
        return csr.indptr, np.asarray(csr.indices, np.int64), np.asarray(csr.eids, np.int64)

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
        out = self._sample(requests, replace, prob, exclude, seed, backend)
        if narrow and self._fits32:
            out = [tuple(a.astype(np.int32) for a in r) for r in out]  # type: ignore[misc]
        return out

    def _sample(self, requests: list[SampleRequest], replace: bool, prob: str | None,
                exclude: dict[EdgeType, IdArray], seed: int, backend: str
                ) -> list[tuple[IdArray, IdArray, IdArray]]:
        bk = get_backend(backend)
        out = []
        for et, keys, k, salt in requests:
            keys = as_ids(keys, "keys")
            if prob is not None or et in exclude:
                # the part's index answers every store call sample_etype makes of a store
                # without a local adjacency (neighbors, edge_features) for the edges it owns
                store = cast(GraphStore, self.index)
                out.append(sample_etype(store, et, "in", keys, k, replace=replace,
                                        prob=prob, exclude=exclude.get(et), seed=seed,
                                        salt=salt, backend=backend))
                continue
            csr = self.index.in_csr(et)
            rows = self.index.owned_rows(keys, et[2])
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


def _resolve_refs(args: tuple) -> tuple:
    """``args`` with Ray object references fetched (Ray resolves only top-level arguments
    of a call, not those nested in :meth:`GraphServer.multi`'s ops)."""
    ray = sys.modules.get("ray")
    if ray is None or not any(isinstance(a, ray.ObjectRef) for a in args):
        return args
    return tuple(ray.get(a) if isinstance(a, ray.ObjectRef) else a for a in args)
