"""DistGraph: a partitioned graph served by Ray graph servers, behind the GraphStore protocol.

IDs are the shuffled IDs of the partition book: per-type node and edge IDs rank a node (edge)
among those of its type, part by part.  Every batched question is split by owning partition
(in-edges, features and endpoints live with their owner; out-edges are spread over the
partitions of their destinations, so out-questions go to every server), sent as one call per
server, answered concurrently and put back in the caller's order.  Partitions co-located with
the trainer are read in-process from the same memory-mapped files.

Example:
    >>> import graphshard as gs
    >>> dg = gs.distributed.DistGraph("parts/shop.json")  # doctest: +SKIP
    >>> dg.nodes["item"].data["feat"][[0, 5]].shape  # doctest: +SKIP
    (2, 100)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .._util.arrays import as_ids, check_id_range
from ..errors import ValidationError
from ..graph import CSR
from ..partition.config import ConfigLike, as_config, location
from ..partition_book import RangePartitionBook
from ..store import Hop, Rows, check_edge_dir
from ..types import GraphTypes, TypedGraph
from ..typing import EdgeType, EdgeTypeLike, IdArray
from ._index import scatter_ragged, scatter_sparse
from ._liveness import DEFAULT_SILENCE, wait_ready
from ._rpc import Router, group_by_owner
from ._server import GraphServer
from .cache import FeatureCache, build_feature_cache
from .policy import PartitionPolicy
from .serve import ServeHandle, ensure_ray, find_servers, serve, server_names

__all__ = ["DistGraph"]


class DistGraph(TypedGraph):
    """A partitioned graph served by one graph server per partition (a GraphStore).

    Args:
        config: Path of the partition config JSON, or the config already read.
        address: Ray cluster to join; None uses the running Ray or starts a local one.
        colocate: Partitions read in-process from their files instead of through their
            server: ``"auto"`` (those whose server runs on this machine), a list of part
            IDs, or ``()`` for none.  Each one read here gets its own index in this process,
            beside its server's: with several servers on one machine, name the few this
            trainer reads most (or ``()``) rather than ``"auto"``.
        timeout: Seconds a server may stay silent (no answer and no heartbeat) before a
            request to it, or the wait for it to be ready, fails naming it; a server that
            keeps answering its heartbeat is waited for however long its work takes (a
            busy machine, a first request, a restart within that time).
        start: Start the servers (owned by this object, stopped by :meth:`close`) when none
            are running for ``config``.
        part_config: DGL's spelling, ``DistGraph(graph_name, part_config=path)``: the
            config path, with ``config`` then the graph name (checked against the
            config's ``graph_name``).

    Raises:
        ValidationError: a config not read from a file, a graph name that is not the
            config's, no servers with ``start=False``.
    """

    def __init__(self, config: ConfigLike, address: str | None = None, *,
                 colocate: str | Sequence[int] = "auto", timeout: float = DEFAULT_SILENCE,
                 start: bool = True, part_config: ConfigLike | None = None) -> None:
        if part_config is not None:  # DGL: DistGraph(graph_name, part_config=...)
            cfg = as_config(part_config)
            if config != cfg.graph_name:
                raise ValidationError(f"{cfg.path}: the graph is {cfg.graph_name!r}, not "
                                      f"{config!r}", field="graph_name", value=str(config))
        else:
            cfg = as_config(config)  # parsed once: the servers of this process share it
        if cfg.path is None:
            raise ValidationError("DistGraph needs a config read from a file (its servers "
                                  "load the parts next to it)", field="config")
        self.config = location(cfg)
        self.graph_name = cfg.graph_name
        self._book = cfg.book()
        self._ntypes, self._etypes = cfg.ntypes, cfg.canonical_etypes()
        self._types = GraphTypes(self._ntypes, self._etypes)
        self._num_nodes = cfg.type_sizes("node")
        self._num_edges = dict(zip(self._etypes, cfg.type_sizes("edge").values(), strict=True))
        ray = ensure_ray(address)
        self.handle: ServeHandle | None = None
        actors = find_servers(cfg)
        if actors is None:
            if not start:
                raise ValidationError(f"{self.config}: no graph servers are running; start "
                                      "them with graphshard.distributed.serve", field="config")
            self.handle = serve(cfg, address=address)
            actors = self.handle.actors()
        infos = _server_infos(ray, actors, self.config, timeout)
        self._schema = infos[0]["schema"]
        for info in infos[1:]:
            for kind in ("node", "edge"):
                self._schema[kind].update(info["schema"][kind])
        here = ray.get_runtime_context().get_node_id()
        if isinstance(colocate, str):
            if colocate != "auto":
                raise ValidationError(f"colocate must be 'auto' or a list of part IDs, got "
                                      f"{colocate!r}", field="colocate", value=colocate)
            parts = [i["part_id"] for i in infos if i["node_id"] == here]
        else:
            parts = [int(p) for p in colocate]
        local = {p: GraphServer(cfg, p, infos[p]["tensor_dir"]) for p in parts}
        self.tensor_dir = infos[0]["tensor_dir"]
        self.router = Router(actors, local, timeout=timeout, names=server_names(cfg))
        self._cache: dict[Any, Any] = {}
        self._lock = threading.RLock()

    # ----- schema ---------------------------------------------------------------------------
    @property
    def colocated(self) -> list[int]:
        """Partitions answered in-process."""
        return sorted(self.router.local)

    def num_nodes(self, ntype: str | None = None) -> int:
        """Nodes of ``ntype`` (all types when None)."""
        return (sum(self._num_nodes.values()) if ntype is None
                else self._num_nodes[self._ntype(ntype)])

    def num_edges(self, etype: EdgeTypeLike | None = None) -> int:
        """Edges of ``etype`` (all types when None)."""
        return (sum(self._num_edges.values()) if etype is None
                else self._num_edges[self.to_canonical_etype(etype)])

    def number_of_nodes(self, ntype: str | None = None) -> int:
        """DGL's name of :meth:`num_nodes`."""
        return self.num_nodes(ntype)

    def number_of_edges(self, etype: EdgeTypeLike | None = None) -> int:
        """DGL's name of :meth:`num_edges`."""
        return self.num_edges(etype)

    def num_partitions(self) -> int:
        """Number of partitions (servers)."""
        return self.router.num_parts

    def get_partition_book(self) -> RangePartitionBook:
        """The partition book (shuffled ID ranges of every partition)."""
        return self._book

    def get_node_partition_policy(self, ntype: str | None = None) -> PartitionPolicy:
        """The partition policy of node type ``ntype`` (None: the only one), for a
        DistTensor or DistEmbedding whose rows are that type's nodes (DGL's name)."""
        return PartitionPolicy("node", self._ntype(ntype), self)

    def get_edge_partition_policy(self, etype: EdgeTypeLike | None = None) -> PartitionPolicy:
        """The partition policy of edge type ``etype`` (any form
        :meth:`to_canonical_etype` takes), for a DistTensor of per-edge rows."""
        return PartitionPolicy("edge", self.to_canonical_etype(etype), self)

    def _ntype(self, ntype: str | None) -> str:
        return self._types.to_ntype(ntype)

    def to_canonical_etype(self, etype: EdgeTypeLike | None) -> EdgeType:
        """Resolve a relation name, ``"src:rel:dst"`` or tuple to a canonical edge type
        (:meth:`graphshard.types.GraphTypes.to_canonical_etype`)."""
        return self._types.to_canonical_etype(etype)

    def get_ntype_id(self, ntype: str | None) -> int:
        """Index of ``ntype`` in :attr:`ntypes` (``None`` allowed with one node type)."""
        return self._types.ntype_id(ntype)

    def get_etype_id(self, etype: EdgeTypeLike | None) -> int:
        """Index of ``etype`` in :attr:`canonical_etypes`."""
        return self._types.etype_id(etype)

    # ----- GraphStore -----------------------------------------------------------------------
    def _node_groups(self, ids: Any, ntype: str) -> tuple[IdArray, list[IdArray]]:
        arr = as_ids(ids, "ids")
        check_id_range(arr, self._num_nodes[ntype], f"{ntype!r} node IDs")
        owner = self._book.nid2partid(arr, ntype) if len(arr) else arr
        return arr, group_by_owner(owner, self.num_partitions())

    def _edge_groups(self, eids: Any, et: EdgeType) -> tuple[IdArray, list[IdArray]]:
        arr = as_ids(eids, "eids")
        check_id_range(arr, self._num_edges[et], f"eids of {et}")
        owner = self._book.eid2partid(arr, et) if len(arr) else arr
        return arr, group_by_owner(owner, self.num_partitions())

    def _by_owner(self, method: str, ids: IdArray, groups: list[IdArray],
                  args: Callable[[IdArray], tuple]) -> list[tuple[IdArray, Any]]:
        """One call per owning server, ``args(ids of that server)``; (positions, result)."""
        todo = [(p, idx) for p, idx in enumerate(groups) if len(idx)]
        res = self.router.call([(p, method, args(ids[idx])) for p, idx in todo])
        return [(idx, r) for (_, idx), r in zip(todo, res, strict=True)]

    def neighbors(self, ids: Any, etype: EdgeTypeLike, *, edge_dir: str = "in") -> CSR:
        """Sub-CSR of ``ids``: row i lists the in- (out-) edges of ``ids[i]`` in edge-ID order
        (new arrays; per-type source/destination and edge IDs)."""
        check_edge_dir(edge_dir)
        et = self.to_canonical_etype(etype)
        if edge_dir == "out":
            return self._out_neighbors(ids, et)
        arr, groups = self._node_groups(ids, et[2])
        parts = self._by_owner("neighbors", arr, groups, lambda x: (x, et, "in"))
        lengths = np.zeros(len(arr), dtype=np.int64)
        for idx, (indptr, _, _) in parts:
            lengths[idx] = np.diff(indptr)
        out_ptr = np.zeros(len(arr) + 1, dtype=np.int64)
        np.cumsum(lengths, out=out_ptr[1:])
        indices = np.empty(out_ptr[-1], dtype=np.int64)
        eids = np.empty(out_ptr[-1], dtype=np.int64)
        for idx, (indptr, ind, e) in parts:
            pos = np.repeat(out_ptr[idx] - indptr[:-1], np.diff(indptr)) + np.arange(
                len(ind), dtype=np.int64)
            indices[pos], eids[pos] = ind, e
        return CSR(out_ptr, indices, eids)

    def _out_neighbors(self, ids: Any, et: EdgeType) -> CSR:
        arr = as_ids(ids, "ids")
        check_id_range(arr, self._num_nodes[et[0]], f"{et[0]!r} node IDs")
        ref = self.router.put(arr)
        parts = self.router.call([(p, "neighbors", (ref, et, "out"))
                                  for p in range(self.num_partitions())])
        lengths = sum(np.diff(indptr) for indptr, _, _ in parts)
        out_ptr = np.zeros(len(arr) + 1, dtype=np.int64)
        np.cumsum(lengths, out=out_ptr[1:])
        cursor = out_ptr[:-1].copy()
        indices = np.empty(out_ptr[-1], dtype=np.int64)
        eids = np.empty(out_ptr[-1], dtype=np.int64)
        for indptr, ind, e in parts:  # parts in ID order: rows stay in edge-ID order
            n = np.diff(indptr)
            pos = np.repeat(cursor - indptr[:-1], n) + np.arange(len(ind), dtype=np.int64)
            indices[pos], eids[pos] = ind, e
            cursor += n
        return CSR(out_ptr, indices, eids)

    def sample_hop(self, hop: Hop, *, replace: bool, prob: str | None,
                   exclude: Mapping[EdgeType, IdArray], seed: int, backend: str = "cpu"
                   ) -> dict[EdgeType, tuple[IdArray, IdArray, IdArray]]:
        """Sample one in-edge hop on the servers (:class:`~graphshard.store.HopSampler`)."""
        from .sampling import sample_hop

        return sample_hop(self, hop, replace=replace, prob=prob, exclude=exclude, seed=seed,
                          backend=backend)

    def degrees(self, ids: Any, etype: EdgeTypeLike, *, edge_dir: str = "in") -> IdArray:
        """In- (or out-) degrees of ``ids`` for one edge type (int64)."""
        check_edge_dir(edge_dir)
        et = self.to_canonical_etype(etype)
        if edge_dir == "out":
            arr = as_ids(ids, "ids")
            check_id_range(arr, self._num_nodes[et[0]], f"{et[0]!r} node IDs")
            ref = self.router.put(arr)
            res = self.router.call([(p, "degrees", (ref, et, "out"))
                                    for p in range(self.num_partitions())])
            if not res:
                return np.zeros(len(arr), np.int64)
            return np.asarray(np.sum(res, axis=0), dtype=np.int64)
        arr, groups = self._node_groups(ids, et[2])
        out = np.zeros(len(arr), dtype=np.int64)
        for idx, deg in self._by_owner("degrees", arr, groups, lambda x: (x, et, "in")):
            out[idx] = deg
        return out

    def _rows(self, kind: str, key: str, method: str, type_arg: Any, arr: IdArray,
              groups: list[IdArray], name: str) -> Rows:
        shape, dtype, layout = self._feature_info(kind, key)
        pieces = self._by_owner(method, arr, groups, lambda x: (type_arg, name, x))
        if layout == "ragged":
            return scatter_ragged(len(arr), pieces, dtype)
        if layout == "sparse":
            return scatter_sparse(len(arr), pieces, dtype, shape[0])
        out = np.empty((len(arr), *shape), dtype=dtype)
        for idx, rows in pieces:
            out[idx] = rows
        return out

    def _feature_info(self, kind: str, key: str) -> tuple[Any, str, str]:
        """``(row shape, dtype, layout)`` of a stored feature, as the servers describe it:
        the shape is None for a Ragged one, ``(num_cols,)`` for a sparse one; the layout
        ``"dense"``, ``"ragged"`` or ``"sparse"``."""
        if key not in self._schema[kind]:
            raise ValidationError(f"no {kind} feature {key!r}; {kind} features are "
                                  f"{sorted(self._schema[kind])}", field="name", value=key)
        shape, dtype, layout = self._schema[kind][key]
        return (None if shape is None else tuple(shape)), dtype, layout

    def feature_schema(self, kind: str) -> dict[str, tuple[tuple[int, ...] | None, str]]:
        """Every stored node (``kind="node"``) or edge feature: ``{"<type>/<name>": (row
        shape, dtype)}``, the row shape None for a variable-length one and ``(num_cols,)``
        for a sparse one (the :class:`~graphshard.store.FeatureSchema` protocol)."""
        if kind not in ("node", "edge"):
            raise ValidationError(f"kind must be 'node' or 'edge', got {kind!r}", field="kind",
                                  value=kind)
        return {key: self._feature_info(kind, key)[:2] for key in self._schema[kind]}

    def node_features(self, ntype: str, name: str, ids: Any) -> Rows:
        """Rows ``ids`` (per-type IDs) of node feature ``name`` of ``ntype`` (a new array, or
        a new :class:`~graphshard.ragged.Ragged` for a variable-length feature, a new
        :class:`~graphshard.sparse.SparseRows` for a sparse one), in the order of ``ids``;
        rows in the feature cache (:meth:`cache_node_features`) are not fetched.

        Example:
            >>> dg.node_features("item", "bow", [7, 0]).to_dense().shape  # doctest: +SKIP
            (2, 6805)
        """
        nt = self._ntype(ntype)
        cache = self.feature_cache(nt, name)
        if cache is None:
            arr, groups = self._node_groups(ids, nt)
            return self._rows("node", f"{nt}/{name}", "node_features", nt, arr, groups, name)
        arr = as_ids(ids, "ids")
        check_id_range(arr, self._num_nodes[nt], f"{nt!r} node IDs")
        hit, rows = cache.split(arr)
        miss = np.ones(len(arr), dtype=bool)
        miss[hit] = False
        miss_pos = np.flatnonzero(miss)
        out = np.empty((len(arr), *cache.rows.shape[1:]), dtype=cache.rows.dtype)
        out[hit] = cache.rows[rows]
        if len(miss_pos):
            rest = arr[miss_pos]
            groups = group_by_owner(self.owners(rest, nt), self.num_partitions())
            out[miss_pos] = self._rows("node", f"{nt}/{name}", "node_features", nt, rest,
                                       groups, name)
        return out

    def edge_features(self, etype: EdgeTypeLike, name: str, eids: Any) -> Rows:
        """Rows ``eids`` (per-type IDs) of edge feature ``name`` of ``etype`` (an array, a
        Ragged or a SparseRows, as :meth:`node_features`)."""
        et = self.to_canonical_etype(etype)
        arr, groups = self._edge_groups(eids, et)
        return self._rows("edge", f"{':'.join(et)}/{name}", "edge_features", et, arr,
                          groups, name)

    def find_edges(self, eids: Any, etype: EdgeTypeLike) -> tuple[IdArray, IdArray]:
        """Endpoints ``(src, dst)`` (per-type IDs) of per-type edge IDs."""
        et = self.to_canonical_etype(etype)
        arr, groups = self._edge_groups(eids, et)
        src = np.empty(len(arr), dtype=np.int64)
        dst = np.empty(len(arr), dtype=np.int64)
        for idx, (s, d) in self._by_owner("find_edges", arr, groups, lambda x: (x, et)):
            src[idx], dst[idx] = s, d
        return src, dst

    def owners(self, ids: IdArray, ntype: str) -> IdArray:
        """Owning partition of per-type node IDs known to be in range (no checks: for IDs
        that came from the servers or were checked already)."""
        def build() -> IdArray:
            sizes = [len(self._book.partid2nids(p, ntype)) for p in range(self.num_partitions())]
            return np.cumsum(sizes)[:-1].astype(np.int64)

        bounds = self.cached(("node-bounds", ntype), build)
        return np.searchsorted(bounds, ids, side="right")

    def cache_node_features(self, name: str, ntype: str | None = None, *,
                            fraction: float = 0.1) -> FeatureCache | None:
        """Keep the rows of feature ``name`` of the ``fraction`` of ``ntype`` nodes with the
        highest out-degree (owned by remote servers) in this process, for
        :func:`graphshard.distributed.sample_blocks` and the loader (see
        :mod:`graphshard.distributed.cache`); ``fraction=0`` drops the cache.

        Returns:
            The :class:`~graphshard.distributed.cache.FeatureCache` (None after a drop).
        """
        nt = self._ntype(ntype)
        key = ("feature-cache", nt, name)
        with self._lock:
            self._cache.pop(key, None)
            if fraction == 0:
                return None
            cache = build_feature_cache(self, nt, name, fraction=fraction)
            self._cache[key] = cache
            return cache

    def feature_cache(self, ntype: str, name: str) -> FeatureCache | None:
        """The cache of :meth:`cache_node_features` for ``(ntype, name)``, or None."""
        return self._cache.get(("feature-cache", ntype, name))

    def cached(self, key: Any, build: Callable[[], Any]) -> Any:
        """A derived structure (e.g. a degree table) built once per DistGraph."""
        with self._lock:
            if key not in self._cache:
                self._cache[key] = build()
            return self._cache[key]

    # ----- data views -----------------------------------------------------------------------
    @property
    def nodes(self) -> _TypeViews:
        """``g.nodes[ntype].data[name][ids]``: feature rows by per-type IDs."""
        return _TypeViews(self, "node")

    @property
    def edges(self) -> _TypeViews:
        """``g.edges[etype].data[name][eids]``."""
        return _TypeViews(self, "edge")

    @property
    def ndata(self) -> _DataView:
        """Node data of the graph's only node type."""
        return _DataView(self, "node", self._ntype(None))

    @property
    def edata(self) -> _DataView:
        """Edge data of the graph's only edge type."""
        return _DataView(self, "edge", self.to_canonical_etype(None))

    # ----- lifetime -------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the servers if this DistGraph started them."""
        if self.handle is not None:
            self.handle.shutdown()
            self.handle = None

    def __enter__(self) -> DistGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"DistGraph({self.graph_name!r}, num_parts={self.num_partitions()}, "
                f"num_nodes={self._num_nodes}, colocated={self.colocated})")


def _server_infos(ray: Any, actors: Sequence[Any], config: str, timeout: float
                  ) -> list[dict[str, Any]]:
    """Every server's :meth:`GraphServer.info` once it is ready, waiting while the servers
    answer their heartbeat (``timeout``: the silence allowed); our errors name the
    partition whose server is gone or silent."""
    return wait_ready(ray, actors, config, silence=timeout)


class _TypeViews:
    def __init__(self, g: DistGraph, kind: str) -> None:
        self._g, self._kind = g, kind

    def __getitem__(self, type_: Any) -> _TypeData:
        g = self._g
        t = g._ntype(type_) if self._kind == "node" else g.to_canonical_etype(type_)
        return _TypeData(_DataView(g, self._kind, t))


class _TypeData:
    def __init__(self, data: _DataView) -> None:
        self.data = data


class _DataView:
    """Feature columns of one node or edge type: ``view[name][ids]`` reads rows."""

    def __init__(self, g: DistGraph, kind: str, type_: Any) -> None:
        self._g, self._kind, self._type = g, kind, type_
        self._prefix = (type_ if kind == "node" else ":".join(type_)) + "/"

    def __iter__(self) -> Iterator[str]:
        names = [k[len(self._prefix):] for k in self._g._schema[self._kind]
                 if k.startswith(self._prefix)]
        names += [k[2] for k in self._g._cache.get("tensors", {})
                  if k[:2] == (self._kind, self._type)]
        return iter(sorted(names))

    def __contains__(self, name: object) -> bool:
        return name in list(self)

    def __getitem__(self, name: str) -> Any:
        tensors = self._g._cache.get("tensors", {})
        if (self._kind, self._type, name) in tensors:
            return tensors[(self._kind, self._type, name)]
        self._g._feature_info(self._kind, self._prefix + name)
        return _FeatureColumn(self._g, self._kind, self._type, name)

    def __setitem__(self, name: str, tensor: Any) -> None:
        """Attach a DistTensor (of this type's partition policy) under ``name``."""
        self._g.cached("tensors", dict)[(self._kind, self._type, name)] = tensor


class _FeatureColumn:
    """Read-only view of one stored feature: ``col[ids]`` fetches rows."""

    def __init__(self, g: DistGraph, kind: str, type_: Any, name: str) -> None:
        self._g, self._kind, self._type, self.name = g, kind, type_, name
        key = (type_ if kind == "node" else ":".join(type_)) + "/" + name
        row_shape, self.dtype, self.layout = g._feature_info(kind, key)
        n = g.num_nodes(type_) if kind == "node" else g.num_edges(type_)
        self.ragged = self.layout == "ragged"
        self.shape = (n, *(row_shape or ()))

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, ids: Any) -> Rows:
        if isinstance(ids, slice):
            ids = np.arange(len(self))[ids]
        if self._kind == "node":
            return self._g.node_features(self._type, self.name, ids)
        return self._g.edge_features(self._type, self.name, ids)

    def __repr__(self) -> str:
        return f"FeatureColumn({self.name!r}, shape={self.shape}, dtype={self.dtype})"
