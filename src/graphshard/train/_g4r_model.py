"""The torch model of the walk-embedding trainer for Graph4Rec's options: slot features
embedded and sum-pooled into each node's input, ``softsign``, the GNN encoder of
``sage_mode`` (LightGCN or GraphSAGE layers over sampled neighbours, one layer set per
edge type, summed, with the ``sage_alpha`` residual) and the ``hinge`` / ``sigmoid`` /
``nce`` losses.

Sparse tables stay outside torch: a step reads the rows of its batch (id rows per node
type, slot rows per slot) into leaf tensors, backpropagates, and hands each leaf's gradient
to its table's sparse optimizer (:class:`~graphshard.train._walk_tables.TorchTable` or a
DistEmbedding's), as the fast path does; only GraphSAGE's dense layers live in torch, under
Adam at ``dense_lr``.

Example:
    >>> import numpy as np
    >>> _slot_index(np.array([[5, 7], [7, 9]]))[0].tolist()  # row offsets
    [0, 2, 4]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import ValidationError
from ..ragged import Ragged
from ..sampling import sample_neighbors
from ..store import GraphStore
from ..typing import IdArray
from ._common import subseed
from ._g4r_contrast import hcl_loss, simgcl_loss
from ._walk_tables import TorchTable
from .kernels import pair_loss_grads
from .walk_options import WalkOptions

__all__ = ["G4RModel", "weighted_etypes"]

_LOSSES = {"sigmoid": 0, "hinge": 1, "nce": 2}  # loss_type -> pair_loss_grads' kind


def _slot_index(col: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, values)`` (int64) of a slot column: a 2-D integer array (fixed width),
    a 1-D one (one value per node) or a Ragged column."""
    if isinstance(col, Ragged):
        return np.asarray(col.offsets, np.int64), np.asarray(col.values).astype(np.int64)
    arr = np.asarray(col)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.integer):
        raise ValidationError(f"a slot feature holds integer IDs per node, got {arr.dtype} of "
                              f"shape {arr.shape}", field="slots")
    return (np.arange(len(arr) + 1, dtype=np.int64) * arr.shape[1],
            arr.reshape(-1).astype(np.int64))


class _Slot:
    """One slot over all node types: per node (global ID) the row range of its values,
    values as rows of the slot's own table (its distinct values, sorted)."""

    def __init__(self, torch: Any, store: GraphStore, names: dict[str, str],
                 offsets: np.ndarray, o: WalkOptions, seed: int) -> None:
        counts = np.zeros(int(offsets[-1]), np.int64)
        parts = []
        for i, t in enumerate(store.ntypes):
            if t not in names:
                continue
            n = store.num_nodes(t)
            off, vals = _slot_index(store.node_features(t, names[t], np.arange(n)))
            counts[offsets[i]:offsets[i + 1]] = np.diff(off)
            parts.append(vals)
        flat = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        self.vocab, codes = np.unique(flat, return_inverse=True)
        self.indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.codes = codes.astype(np.int64).ravel()
        rng = np.random.default_rng(subseed(seed, 11))
        scale = o.init_range if o.init_range is not None else 1.0 / o.emb_size ** 0.5
        init = ((rng.random((max(len(self.vocab), 1), o.emb_size), dtype=np.float32) - 0.5)
                * np.float32(2 * scale))
        self.table = TorchTable(torch, init, o.optimizer, o.slot_feature_lr)

    def gather(self, nodes: IdArray) -> tuple[np.ndarray, np.ndarray]:
        """``(segment, code)``: for every value of ``nodes`` (global IDs) its node's row
        in ``nodes`` and its row in the slot table."""
        lo, hi = self.indptr[nodes], self.indptr[nodes + 1]
        seg = np.repeat(np.arange(len(nodes)), hi - lo)
        idx = np.arange(int((hi - lo).sum())) - np.repeat(np.cumsum(hi - lo) - (hi - lo),
                                                          hi - lo) + np.repeat(lo, hi - lo)
        return seg, self.codes[idx]


def _resolve_slots(store: GraphStore, slots: Sequence[str]) -> dict[str, dict[str, str]]:
    """``{slot: {ntype: feature name}}``: a slot names a node feature exactly, or PGL's
    slot key inside a feature read from a slot file (``"1"`` -> ``"s_1"``)."""
    schema = store.feature_schema("node") if hasattr(store, "feature_schema") else {}
    found: dict[str, dict[str, str]] = {}
    for slot in slots:
        names: dict[str, str] = {}
        for key in schema:
            t, _, name = key.partition("/")
            if name == slot or name.endswith(f"_{slot}"):
                names.setdefault(t, name)
        if not names:
            feats = sorted({k.partition("/")[2] for k in schema})
            raise ValidationError(f"slot {slot!r} is no node feature; node features are "
                                  f"{feats}", field="slots", value=slot)
        found[slot] = names
    return found


def _matrix(torch: Any, rows: IdArray, cols: IdArray, values: np.ndarray,
            shape: tuple[int, int]) -> Any:
    """A constant sparse matrix (SciPy CSR, duplicates summed) with ``values`` at ``(rows,
    cols)``, to multiply torch tensors with :func:`_spmm`."""
    return sp.csr_matrix((np.asarray(values, np.float32), (rows, cols)), shape=shape)


_FN: dict[str, Any] = {}


def _spmm(torch: Any, a: Any, h: Any) -> Any:
    """``a @ h`` for a constant SciPy matrix ``a`` and a float32 torch tensor ``h``, with
    the gradient ``a.T @ grad`` (SciPy's sparse products: torch's COO ``coalesce`` and
    ``index_add`` are much slower on CPU at these sizes)."""
    if "spmm" not in _FN:

        class SpMM(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any, mat: Any) -> Any:
                ctx.mat = mat
                return torch.from_numpy(np.asarray(mat @ x.detach().numpy(), np.float32))

            @staticmethod
            def backward(ctx: Any, grad: Any) -> tuple[Any, None]:
                g = ctx.mat.T @ grad.detach().numpy()
                return torch.from_numpy(np.asarray(g, np.float32)), None

        _FN["spmm"] = SpMM
    return _FN["spmm"].apply(h, a)


def weighted_etypes(store: GraphStore) -> dict[Any, bool]:
    """Whether each edge type has the edge feature ``weight``."""
    schema = store.feature_schema("edge") if hasattr(store, "feature_schema") else {}
    return {et: f"{':'.join(et)}/weight" in schema for et in store.canonical_etypes}


class G4RModel:
    """Node encoder and pair loss of a walk-embedding run with Graph4Rec's options.

    Args:
        torch: The torch module.
        store: The graph.
        options: The run's options (``loss_type``, ``sage_mode``, ``slots``, ...).
        tables: The id tables, one per node type (``rows`` / ``step``).
        offsets: Global ID offset of every node type (and the total at the end).
    """

    def __init__(self, torch: Any, store: GraphStore, options: WalkOptions,
                 tables: list[Any], offsets: np.ndarray) -> None:
        self.torch, self.store, self.o = torch, store, options
        self.tables, self.offsets = tables, np.asarray(offsets, np.int64)
        self.slots = [_Slot(torch, store, names, self.offsets, options, options.seed)
                      for names in _resolve_slots(store, options.slots).values()]
        self.etypes = list(store.canonical_etypes)
        self.has_weight = weighted_etypes(store)
        # PGL counts a missing weight as 1: without weights on every edge type, uniform
        self.prob = ("weight" if options.weighted_sample and all(self.has_weight.values())
                     else None)
        self.layers: Any = None
        self.dense_opt: Any = None
        if options.sage_mode and options.sage_layer_type == "GraphSAGE":
            nn = torch.nn
            torch.manual_seed(subseed(options.seed, 12) % (1 << 31))
            d = options.emb_size
            self.layers = nn.ModuleList(
                nn.ModuleList(nn.ModuleList([nn.Linear(d, d), nn.Linear(d, d)])
                              for _ in self.etypes) for _ in options.samples)
            self.dense_opt = torch.optim.Adam(self.layers.parameters(), lr=options.dense_lr)

    # -- inputs -----------------------------------------------------------------------
    def _inputs(self, nodes: IdArray, leaves: list[tuple[Any, IdArray, Any]] | None) -> Any:
        """Input embeddings of ``nodes`` (unique global IDs, sorted): id row plus the
        sum-pooled rows of every slot, softsign when set.  Appends ``(table, ids, leaf)``
        for every table read (with gradients when ``leaves`` is not None)."""
        torch = self.torch
        cuts = np.searchsorted(nodes, self.offsets)
        rows = []
        for i, tab in enumerate(self.tables):
            ids = nodes[cuts[i]:cuts[i + 1]] - self.offsets[i]
            leaf = torch.from_numpy(np.ascontiguousarray(tab.rows(ids), np.float32))
            if leaves is not None and len(ids):
                leaf.requires_grad_(True)
                leaves.append((tab, ids, leaf))
            rows.append(leaf)
        h = torch.cat(rows)
        for slot in self.slots:
            seg, code = slot.gather(nodes)
            uniq, inv = np.unique(code, return_inverse=True)
            leaf = torch.from_numpy(np.ascontiguousarray(slot.table.rows(uniq), np.float32))
            if leaves is not None and len(uniq):
                leaf.requires_grad_(True)
                leaves.append((slot.table, uniq, leaf))
            pool = _matrix(torch, seg, inv.ravel(), np.ones(len(seg), np.float32),
                           (len(nodes), len(uniq)))
            h = h + _spmm(torch, pool, leaf)  # sum pooling of the node's slot values
        if self.o.softsign:
            h = torch.nn.functional.softsign(h)
        return h

    # -- sage ---------------------------------------------------------------------------
    def _subgraph(self, nodes: IdArray, fanouts: Sequence[int], seed: int
                  ) -> tuple[IdArray, list[tuple[int, IdArray, IdArray, Any]]]:
        """Sample ``fanouts`` in-neighbours hop by hop from ``nodes`` (global IDs); returns
        every node reached (sorted global IDs) and per edge type the edges as rows of it,
        with their weights (``return_weight``) or None."""
        o, st = self.o, self.store
        seen, frontier = nodes, nodes
        found: list[tuple[int, IdArray, IdArray, Any]] = []
        for hop, fan in enumerate(fanouts):
            if not len(frontier):
                break
            cuts = np.searchsorted(frontier, self.offsets)
            seeds = {t: frontier[cuts[i]:cuts[i + 1]] - self.offsets[i]
                     for i, t in enumerate(st.ntypes) if cuts[i + 1] > cuts[i]}
            sampled = sample_neighbors(st, seeds, int(fan), prob=self.prob,
                                       seed=subseed(seed, hop))
            new = []
            for k, et in enumerate(self.etypes):
                if et not in sampled.src:
                    continue
                s = sampled.src[et] + self.offsets[st.ntypes.index(et[0])]
                d = sampled.dst[et] + self.offsets[st.ntypes.index(et[2])]
                w = (np.asarray(st.edge_features(et, "weight", sampled.eids[et]),
                                np.float32).reshape(-1)
                     if o.return_weight and self.has_weight[et] else None)
                found.append((k, s, d, w))
                new.append(s)
            frontier = np.setdiff1d(np.concatenate(new) if new else frontier[:0], seen)
            seen = np.union1d(seen, frontier)
        edges = [(k, np.searchsorted(seen, s), np.searchsorted(seen, d), w)
                 for k, s, d, w in found]
        return seen, edges

    def _encode(self, nodes: IdArray, fanouts: Sequence[int], seed: int,
                leaves: list[tuple[Any, IdArray, Any]] | None,
                parts: list[Any] | None = None) -> tuple[Any, IdArray]:
        """Representations of the nodes of ``nodes``' sampled subgraph and its node list;
        with ``sage_mode`` appends ``(inputs, edges)`` to ``parts`` (for ``hcl``)."""
        if not self.o.sage_mode:
            return self._inputs(nodes, leaves), nodes
        torch, o = self.torch, self.o
        allnodes, edges = self._subgraph(nodes, fanouts, seed)
        h0 = self._inputs(allnodes, leaves)
        if parts is not None:
            parts.append((h0, edges))
        h = h0
        n = len(allnodes)
        act = {"relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
               "leaky_relu": torch.nn.functional.leaky_relu,
               "none": lambda x: x}[o.sage_act]
        scaled = []  # per edge type: its index, destination and source rows, scale
        for k, s, d, w in edges:
            scale = np.ones(len(s), np.float32) if w is None else w
            if o.sage_layer_type == "LightGCN" and o.use_degree_norm:
                dout = np.bincount(s, minlength=n).astype(np.float32)
                din = np.bincount(d, minlength=n).astype(np.float32)
                scale = scale / np.sqrt(dout[s] * din[d])
            elif o.sage_layer_type == "GraphSAGE":  # mean of the neighbours
                scale = scale / np.maximum(np.bincount(d, minlength=n), 1)[d]
            scaled.append((k, d, s, scale))
        if o.sage_layer_type == "LightGCN":  # parameter-free: one matrix sums every type
            cat = [np.concatenate([e[i] for e in scaled]) if scaled else np.zeros(0, np.int64)
                   for i in (1, 2, 3)]
            light = _matrix(torch, cat[0], cat[1], cat[2], (n, n))
        else:
            mats = [(k, _matrix(torch, d, s, scale, (n, n))) for k, d, s, scale in scaled]
        for layer in range(len(fanouts)):
            if o.sage_layer_type == "LightGCN":
                out = _spmm(torch, light, h)
            else:
                out = torch.zeros_like(h0)
                for k, a in mats:
                    self_lin, neigh_lin = self.layers[layer][k]
                    out = out + act(self_lin(h) + neigh_lin(_spmm(torch, a, h)))
            h = o.sage_alpha * h0 + (1 - o.sage_alpha) * out
        return h, allnodes

    # -- training and inference ------------------------------------------------------------
    def step(self, src: IdArray, dst: IdArray, neg: IdArray, seed: int) -> float:
        """One step on pairs ``(src, dst)`` and negatives ``neg`` (global IDs, ``(B, K)``);
        returns the loss."""
        torch, o = self.torch, self.o
        nodes, inv = np.unique(np.concatenate([src, dst, neg.ravel()]), return_inverse=True)
        leaves: list[tuple[Any, IdArray, Any]] = []
        parts: list[Any] = []
        h, allnodes = self._encode(nodes, o.samples, seed, leaves, parts)
        # scores and their gradient on the unique rows (numba), then backward through the
        # encoder: no (pairs x negatives x width) tensor in torch
        rows = np.searchsorted(allnodes, nodes)[inv.ravel()].astype(np.int64)
        b = len(src)
        u = np.ascontiguousarray(h.detach().numpy(), dtype=np.float32)
        grad = np.zeros_like(u)
        loss = pair_loss_grads(u, rows[:b], rows[b:2 * b], rows[2 * b:].reshape(b, -1),
                               _LOSSES[o.loss_type], np.float32(o.margin), grad)
        extra = self._contrast(h, np.unique(rows[:2 * b]), parts, seed)
        if self.dense_opt is not None:
            self.dense_opt.zero_grad()
        if extra is None:
            h.backward(torch.from_numpy(grad))
        else:  # the pair loss's gradient on h plus the contrastive losses' own
            ((h * torch.from_numpy(grad)).sum() + extra).backward()
        if self.dense_opt is not None:
            self.dense_opt.step()
        for tab, ids, leaf in leaves:
            tab.step(ids, np.ascontiguousarray(leaf.grad.numpy()))
        return float(loss) + (0.0 if extra is None else float(extra.detach()))

    def _contrast(self, h: Any, batch_rows: IdArray, parts: list[Any], seed: int) -> Any:
        """The contrastive losses this run adds (``gcl_loss``, ``hcl``; a torch scalar),
        or None: SimGCL on the rows of the batch's pair nodes, HCL on the sampled edges."""
        o, total = self.o, None
        if o.gcl_loss == "simgcl_loss":
            total = simgcl_loss(self.torch, h, batch_rows, o.neg_num, subseed(seed, 14))
        if o.hcl and parts:
            h0, edges = parts[0]
            cat = [np.concatenate([e[i] for e in edges]) if edges else np.zeros(0, np.int64)
                   for i in (1, 2)]
            extra = hcl_loss(self.torch, h0, cat[0], cat[1], o.neg_num, subseed(seed, 15))
            if extra is not None:
                total = extra if total is None else total + extra
        return total

    def infer(self, ntypes: list[str]) -> dict[str, np.ndarray]:
        """``{ntype: (num_nodes, emb_size) float32}`` of the final encoder.

        With ``sage_mode``, layer-wise over the whole graph: every node's neighbours are
        drawn once (``infer_samples[0]`` per edge type, keyed by the seed and the node)
        and each layer runs on all nodes, so a node's embedding depends on the seed and
        the graph alone, never on ``infer_batch_size`` or on which nodes it was inferred
        with.  Without, the input maps in batches of ``infer_batch_size`` nodes (one
        node's row depends on that node alone)."""
        torch, o = self.torch, self.o
        out: dict[str, np.ndarray] = {}
        with torch.no_grad():
            if o.sage_mode:
                everything = np.arange(int(self.offsets[-1]), dtype=np.int64)
                h, allnodes = self._encode(everything, o.infer_samples, subseed(o.seed, 13),
                                           None)
                h = h.numpy()
                for t in ntypes:
                    i = self.store.ntypes.index(t)
                    n = self.store.num_nodes(t)
                    out[t] = np.ascontiguousarray(h[self.offsets[i]:self.offsets[i] + n],
                                                  dtype=np.float32)
                return out
            for t in ntypes:
                i = self.store.ntypes.index(t)
                n = self.store.num_nodes(t)
                res = np.empty((n, o.emb_size), np.float32)
                for lo in range(0, n, o.infer_batch_size):
                    nodes = np.arange(lo, min(lo + o.infer_batch_size, n)) + self.offsets[i]
                    h, allnodes = self._encode(nodes, o.infer_samples,
                                               subseed(o.seed, 13, i, lo), None)
                    res[lo:lo + len(nodes)] = h[torch.from_numpy(
                        np.searchsorted(allnodes, nodes))].numpy()
                out[t] = res
        return out

