"""PyG ``BaseSampler`` on graphshard's kernels: node- and edge-seeded neighbour sampling.

:class:`NeighborSampler` plugs into PyG's ``NodeLoader`` and ``LinkLoader`` (``node_sampler=``
/ ``link_sampler=``) with ``data=(feature_store, graph_store)`` from
:func:`~graphshard.pyg.remote_backend`.  Each batch runs
:func:`~graphshard.sampling.sample_subgraph` (on the graph servers of a DistGraph, one
request per server per hop) and returns PyG's ``SamplerOutput`` (one node type) or
``HeteroSamplerOutput``.  Negative links (PyG's ``NegativeSampling``, binary or triplet) are
drawn with graphshard's keyed draws.  ``exclude="self"`` keeps a batch's seed links out of
its own message passing (``"reverse"``: their reverse edges too), as
:func:`~graphshard.sampling.sample_link_batch` does; PyG's sampler has no such option, so the
default (None) samples every edge, as PyG does.

Reproducible: with ``seed`` set, the random stream of a batch is derived from ``(seed,
epoch, the batch's seed IDs)``, so a batch is the same on a local graph and on a
DistGraph over any number of servers (with the same IDs: a local graph assembled from the
partitions, ``gs.distributed.assemble_graph``), and the same in every loader worker.  Call
:meth:`NeighborSampler.set_epoch` to draw new samples for the same batches in a new epoch.

Example:
    >>> import torch, graphshard as gs
    >>> from torch_geometric.sampler import NodeSamplerInput
    >>> g = gs.graph(([1, 2, 3, 4], [0, 0, 1, 1]))
    >>> out = NeighborSampler(g, [-1, -1], seed=0).sample_from_nodes(
    ...     NodeSamplerInput(None, torch.tensor([0])))
    >>> out.node.tolist(), out.num_sampled_nodes
    ([0, 1, 2, 3, 4], [1, 2, 2])
"""

from __future__ import annotations

import math
import os
from collections.abc import Generator, Sequence
from typing import Any

import numpy as np
import torch
from torch_geometric.sampler import (
    BaseSampler,
    EdgeSamplerInput,
    HeteroSamplerOutput,
    NegativeSampling,
    NodeSamplerInput,
    NumNeighbors,
    SamplerOutput,
)

from .._util.arrays import check_id_range
from .._util.keyed import GOLDEN as _GOLDEN
from .._util.keyed import M1 as _M1
from ..errors import ValidationError, check_choice
from ..sampling.neighbors import sample_neighbors
from ..sampling.pairs import negative_sample
from ..sampling.subgraph import SampledSubgraph, check_unique_seeds, sample_subgraph
from ..sampling.validate import layer_fanouts, resolve_seed
from ..store import LocalAdjacency, as_store
from ..typing import EdgeType
from .naming import is_homogeneous

__all__ = ["NeighborSampler"]



class NeighborSampler(BaseSampler):
    """Neighbour sampling for PyG's loaders over a Graph or GraphStore (a DistGraph).

    Args:
        store: A :class:`~graphshard.graph.Graph` or any GraphStore.
        num_neighbors: Fanouts per hop in PyG's order (hop 1 first): a list of ints, a list
            of per-edge-type dicts, ``{etype: [k per hop]}`` or PyG's ``NumNeighbors``;
            ``-1`` takes every in-edge, edge types missing from a dict take none.
        replace: Sample with replacement.
        weight_attr: Name of an edge feature to sample proportionally to (PyG's name for
            graphshard's ``prob``).
        seed: Base seed; None draws fresh samples on every call (PyG's default behaviour).
        disjoint: Must be False: graphshard samples one shared subgraph per batch.
        subgraph_type: Must be ``"directional"`` (PyG's default).
        backend: Kernel backend name.
        exclude: In :meth:`sample_from_edges`: None samples every edge (PyG's behaviour),
            ``"self"`` never the edges of the batch's positive seed links (every edge
            ``src -> dst`` of the link's type, parallel copies too), ``"reverse"`` nor
            their reverse edges ``dst -> src`` (of the same type, or of
            ``reverse_etypes[etype]``).
        reverse_etypes: ``{etype: the edge type holding its edges' reverses}`` (DGL's
            name), for ``exclude="reverse"`` on links between two node types.

    Raises:
        ValidationError: options graphshard does not implement (disjoint, bidirectional
            or induced subgraphs), bad fanouts or an unknown ``exclude``.
    """

    def __init__(self, store: Any, num_neighbors: Any, *, replace: bool = False,
                 weight_attr: str | None = None, seed: int | None = None,
                 disjoint: bool = False, subgraph_type: str = "directional",
                 backend: str = "cpu", exclude: str | None = None,
                 reverse_etypes: dict[Any, Any] | None = None) -> None:
        self.store = as_store(store)
        check_choice(exclude, (None, "self", "reverse"), "exclude", where="NeighborSampler")
        self.exclude = exclude
        self.reverse_etypes = {self.store.to_canonical_etype(k): self.store.to_canonical_etype(v)
                               for k, v in (reverse_etypes or {}).items()}
        if disjoint:
            raise ValidationError("disjoint=True (one subgraph per seed) is not supported by "
                                  "graphshard's sampler: use disjoint=False", field="disjoint")
        if str(getattr(subgraph_type, "value", subgraph_type)) != "directional":
            raise ValidationError(f"subgraph_type {subgraph_type!r} is not supported by "
                                  "graphshard's sampler: only 'directional'",
                                  field="subgraph_type", value=subgraph_type)
        values = (num_neighbors.values if isinstance(num_neighbors, NumNeighbors)
                  else num_neighbors)
        self.num_neighbors = layer_fanouts(self.store, values)
        self.replace = bool(replace)
        self.weight_attr = weight_attr
        self.seed = None if seed is None else resolve_seed(seed)
        self.backend = backend
        self.epoch = 0
        self._pid = os.getpid()  # a DistGraph's Ray handles work in this process only

    def set_epoch(self, epoch: int) -> None:
        """Draw the samples of epoch ``epoch`` (with ``seed`` set, a batch's draws depend on
        the seed, the epoch and its seed IDs only)."""
        self.epoch = int(epoch)

    # ----- helpers ----------------------------------------------------------------------------
    def _batch_seed(self, *keys: np.ndarray) -> int:
        """The seed of one batch: fresh without ``self.seed``, else a hash of (seed, epoch,
        the batch's IDs in order)."""
        if self.seed is None:
            return resolve_seed(None)
        words = [self.seed, self.epoch]
        with np.errstate(over="ignore"):
            for k in keys:
                x = np.asarray(k, dtype=np.int64).astype(np.uint64)
                pos = np.arange(len(x), dtype=np.uint64)
                h = (x * _GOLDEN) ^ ((pos + np.uint64(1)) * _M1)
                h ^= h >> np.uint64(29)
                h *= _M1
                total = int(h.sum(dtype=np.uint64))
                words += [total & 0xFFFFFFFF, total >> 32, len(x)]
        return int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0]) & (2**63 - 1)

    def _check_process(self) -> None:
        """A DistGraph is not usable from a forked loader worker (``num_workers > 0``): Ray's
        handles belong to the process that connected, and a call from a fork hangs."""
        if os.getpid() != self._pid and not isinstance(self.store, LocalAdjacency):
            raise ValidationError(
                "graphshard's sampler over a DistGraph runs in the process that made it, not "
                "in a DataLoader worker: use num_workers=0 and wrap the loader in "
                "graphshard.pyg.PrefetchLoader(loader, workers=N), which keeps N batches in "
                "flight on the graph servers", field="num_workers")

    def _sample(self, seeds: dict[str, np.ndarray], seed: int,
                exclude: dict[EdgeType, np.ndarray] | None = None) -> SampledSubgraph:
        self._check_process()
        return sample_subgraph(self.store, seeds, self.num_neighbors, replace=self.replace,
                               prob=self.weight_attr, exclude_edges=exclude, seed=seed,
                               backend=self.backend)

    def _output(self, sub: SampledSubgraph, metadata: Any) -> SamplerOutput | HeteroSamplerOutput:
        t = torch.from_numpy
        if is_homogeneous(self.store):  # Data; any named type gives HeteroData, as in PyG
            nt, et = self.store.ntypes[0], self.store.canonical_etypes[0]
            return SamplerOutput(node=t(sub.nodes[nt]), row=t(sub.row[et]), col=t(sub.col[et]),
                                 edge=t(sub.eids[et]), batch=None,
                                 num_sampled_nodes=sub.num_sampled_nodes[nt],
                                 num_sampled_edges=sub.num_sampled_edges[et], metadata=metadata)
        return HeteroSamplerOutput(
            node={k: t(v) for k, v in sub.nodes.items()},
            row={k: t(v) for k, v in sub.row.items()},
            col={k: t(v) for k, v in sub.col.items()},
            edge={k: t(v) for k, v in sub.eids.items()}, batch=None,
            num_sampled_nodes=dict(sub.num_sampled_nodes),
            num_sampled_edges=dict(sub.num_sampled_edges), metadata=metadata)

    def _ntype(self, input_type: Any) -> str:
        s = self.store
        if input_type is None:
            if not is_homogeneous(s):
                raise ValidationError(f"the graph has node types {s.ntypes}: give the loader "
                                      "input_nodes=(ntype, ids)", field="input_type")
            return s.ntypes[0]
        if input_type not in s.ntypes:
            raise ValidationError(f"unknown node type {input_type!r}; node types are {s.ntypes}",
                                  field="input_type", value=input_type)
        return str(input_type)

    @staticmethod
    def _no_time(time: Any) -> None:
        if time is not None:
            raise ValidationError("temporal sampling (seed times, time_attr) is not supported "
                                  "by graphshard's sampler", field="time")

    # ----- PyG's interface --------------------------------------------------------------------
    def sample_from_nodes(self, index: NodeSamplerInput, **kwargs: Any
                          ) -> SamplerOutput | HeteroSamplerOutput:
        """Sample around ``index.node`` (distinct IDs of ``index.input_type``); the output
        nodes of that type start with them, in order."""
        nt, seeds = self._node_seeds(index)
        sub = self._sample({nt: seeds}, self._batch_seed(seeds))
        return self._output(sub, (index.input_id, index.time))

    def node_steps(self, index: NodeSamplerInput, features: Sequence[str] = ()
                   ) -> Generator[list[Any], list[Any], tuple[Any, dict[str, dict[str, Any]]]]:
        """:meth:`sample_from_nodes` on a DistGraph as a generator of server calls, with the
        node features ``features`` (stored names) of every sampled node fetched in the same
        calls (see :func:`graphshard.distributed.sampling.subgraph_steps`); returns the same
        output and ``{feature: {ntype: rows}}``.  :class:`~graphshard.pyg.PrefetchLoader`
        drives these for several batches at once."""
        from ..distributed.graph import DistGraph
        from ..distributed.sampling import subgraph_steps

        if not isinstance(self.store, DistGraph):
            raise ValidationError(f"node_steps samples on graph servers: the store is a "
                                  f"{type(self.store).__name__}, not a DistGraph "
                                  "(call sample_from_nodes)", field="store")
        self._check_process()
        nt, seeds = self._node_seeds(index)
        sub, feats = yield from subgraph_steps(
            self.store, {nt: seeds}, self.num_neighbors, features=features,
            replace=self.replace, prob=self.weight_attr, seed=self._batch_seed(seeds),
            backend=self.backend)
        return self._output(sub, (index.input_id, index.time)), feats

    def _node_seeds(self, index: NodeSamplerInput) -> tuple[str, np.ndarray]:
        self._no_time(index.time)
        nt = self._ntype(index.input_type)
        seeds = index.node.numpy().astype(np.int64, copy=False)
        check_unique_seeds(seeds, "seed nodes")
        return nt, seeds

    def sample_from_edges(self, index: EdgeSamplerInput,
                          neg_sampling: NegativeSampling | None = None
                          ) -> SamplerOutput | HeteroSamplerOutput:
        """Sample around the endpoints of the seed links ``(index.row, index.col)`` and of
        their negatives; the metadata is what PyG's ``LinkLoader`` reads (``edge_label_index``
        and ``edge_label``, or the triplet indices)."""
        self._no_time(index.time)
        et = self._etype(index.input_type)
        src = index.row.numpy().astype(np.int64, copy=False)
        dst = index.col.numpy().astype(np.int64, copy=False)
        check_id_range(src, self.store.num_nodes(et[0]), f"seed link sources of {et}")
        check_id_range(dst, self.store.num_nodes(et[2]), f"seed link destinations of {et}")
        num_pos = len(src)
        seed = self._batch_seed(src, dst)
        excl = self._seed_edges(et, src, dst) if self.exclude else None
        label = index.label
        if neg_sampling is not None:
            neg = NegativeSampling.cast(neg_sampling)
            num_neg = math.ceil(num_pos * neg.amount)
            if neg.is_binary():
                src = np.concatenate([src, self._negatives(neg, "src", et[0], num_neg, seed)])
                dst = np.concatenate([dst, self._negatives(neg, "dst", et[2], num_neg, seed)])
                if label is None:
                    label = torch.ones(num_pos)
                label = torch.cat([label, label.new_zeros((num_neg, *label.shape[1:]))])
            else:
                if label is not None:
                    raise ValidationError("triplet negative sampling takes no edge labels",
                                          field="edge_label")
                dst = np.concatenate([dst, self._negatives(neg, "dst", et[2], num_neg, seed)])
        if et[0] != et[2]:
            src_u, inv_src = np.unique(src, return_inverse=True)
            dst_u, inv_dst = np.unique(dst, return_inverse=True)
            sub = self._sample({et[0]: src_u, et[2]: dst_u}, seed, excl)
        else:
            both_u, inv = np.unique(np.concatenate([src, dst]), return_inverse=True)
            inv_src, inv_dst = inv[:len(src)], inv[len(src):]
            sub = self._sample({et[0]: both_u}, seed, excl)
        t = torch.from_numpy
        if neg_sampling is None or NegativeSampling.cast(neg_sampling).is_binary():
            meta: tuple[Any, ...] = (index.input_id, t(np.stack([inv_src, inv_dst])), label,
                                     None)
        else:
            neg_index = t(inv_dst[num_pos:]).view(num_pos, -1).squeeze(-1)
            meta = (index.input_id, t(inv_src), t(inv_dst[:num_pos]), neg_index, None)
        return self._output(sub, meta)

    def _seed_edges(self, et: EdgeType, src: np.ndarray, dst: np.ndarray
                    ) -> dict[EdgeType, np.ndarray]:
        """What ``exclude`` keeps out of a batch with positive links ``src -> dst``."""
        found = {et: _edges_between(self.store, et, src, dst)}
        if self.exclude == "reverse":
            rev = self.reverse_etypes.get(et, et if et[0] == et[2] else None)
            if rev is None:
                raise ValidationError(f"exclude='reverse' on {et}, which joins {et[0]!r} to "
                                      f"{et[2]!r}, needs reverse_etypes={{etype: its reverse "
                                      "type}}", field="exclude", value=self.exclude)
            back = _edges_between(self.store, rev, dst, src)
            found[rev] = np.union1d(found[rev], back) if rev in found else back
        return found

    def _etype(self, input_type: Any) -> EdgeType:
        if input_type is None:
            ets = self.store.canonical_etypes
            if not is_homogeneous(self.store):
                raise ValidationError(f"the graph has edge types {ets}: give the loader "
                                      "edge_label_index=(etype, index)", field="input_type")
            return ets[0]
        return self.store.to_canonical_etype(tuple(input_type) if isinstance(input_type, list)
                                             else input_type)

    def _negatives(self, neg: NegativeSampling, end: str, ntype: str, num: int, seed: int
                   ) -> np.ndarray:
        """``num`` negative endpoints of node type ``ntype``: uniform (keyed draws) or
        proportional to PyG's ``src_weight`` / ``dst_weight``."""
        sub = int(np.random.SeedSequence([seed, 1 if end == "src" else 2]).generate_state(
            1, np.uint64)[0]) & (2**63 - 1)
        weight = neg.src_weight if end == "src" else neg.dst_weight
        if weight is None:
            return negative_sample(self.store, num, ntype=ntype, seed=sub, backend=self.backend)
        n = self.store.num_nodes(ntype)
        if weight.numel() != n:
            raise ValidationError(f"NegativeSampling.{end}_weight has {weight.numel()} entries "
                                  f"but node type {ntype!r} has {n} nodes",
                                  field=f"{end}_weight")
        gen = torch.Generator().manual_seed(sub)
        return torch.multinomial(weight.double(), num, replacement=True,
                                 generator=gen).numpy().astype(np.int64)

    def __repr__(self) -> str:
        return (f"NeighborSampler(hops={len(self.num_neighbors)}, replace={self.replace}, "
                f"weight_attr={self.weight_attr!r}, seed={self.seed}, "
                f"exclude={self.exclude!r})")


def _edges_between(store: Any, et: EdgeType, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """IDs of every edge of ``et`` from ``src[i]`` to ``dst[i]`` (parallel copies too): the
    in-edges of the destinations (one request per server on a DistGraph), matched.

    Example:
        >>> import graphshard as gs
        >>> g = gs.graph(([0, 0, 1, 0], [1, 2, 2, 1]))
        >>> et = g.canonical_etypes[0]
        >>> _edges_between(g, et, np.array([0, 1]), np.array([1, 2])).tolist()
        [0, 2, 3]
    """
    if not len(src):
        return np.zeros(0, dtype=np.int64)
    heads, at = np.unique(dst, return_inverse=True)
    in_src, in_dst, eids = sample_neighbors(store, {et[2]: heads}, {et: -1}, seed=0).edges(et)
    width = np.int64(len(heads))
    want = src.astype(np.int64) * width + at
    got = in_src.astype(np.int64) * width + np.searchsorted(heads, in_dst)
    return np.sort(eids[np.isin(got, want)]).astype(np.int64)
