"""Heterogeneous node classifiers on PyG layers: R-GCN (``RGCNConv``) and HGT (``HGTConv``).

Both start with one input map per node type to the hidden width: a per-type linear layer of
the type's stored feature (widths may differ per type), or a learnable embedding row per
node (``nn.Embedding(num_nodes, hidden)``, indexed by the sampled per-type IDs) for a type
without features.  Then ``num_layers`` message-passing layers of width ``hidden`` and a
linear head on the target type.

- ``"rgcn"``: R-GCN (Schlichtkrull et al.: a weight per relation, mean over each
  relation's in-neighbours, summed over relations, plus a root weight and a bias) with the
  parameters of PyG's ``RGCNConv`` (``weight``, ``root``, ``bias``; the same state dict),
  computed per layer on the batch's block (:func:`mean_blocks`): each relation's mean is
  one sparse product ``A_r @ h_src`` (``A_r``: a CSR matrix holding ``1 / in-degree``), and
  a node type's output one matrix product of ``[h_dst, A_r1 @ h_src1, ...]`` with the stacked
  ``[root; W_r1; ...]``.  ``RGCNConv``'s own forward gathers one message row per edge and
  scatters it, per relation, over every node of the batch; the outputs are the same up to
  float rounding (``tests/train/test_hetero_model.py``).  ReLU and dropout after each layer.
- ``"hgt"``: PyG's ``HGTConv`` (Hu et al.: type-specific attention with ``heads`` heads
  and a gated skip connection), then a per-type ``LayerNorm`` and dropout after each layer.
  The norm is the ``use_norm`` layer of the authors' implementation, which PyG's layer leaves
  out; without it HGT on HGB DBLP sits about a point lower and peaks a few epochs in
  (``benchmarks/bench_hetero.py``).

Layers are trimmed to the nodes they feed when the batch says which hop each sampled node
and edge came from (PyG's ``num_sampled_nodes`` / ``num_sampled_edges``, as in PyG's
``trim_to_layer``): with ``L`` layers, layer ``l`` (from 0) computes only the nodes at most
``L - 1 - l`` hops from the seeds, from the edges sampled in the first ``L - l`` hops, so
the last layer computes the seeds alone, as DGL's blocks do.

Unstable API (issue 26).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

__all__ = ["MODELS", "Block", "hetero_class", "hetero_link_class", "mean_adjacency",
           "mean_blocks"]

#: Model names :func:`~graphshard.train.hetero.train_hetero` takes.
MODELS = ("rgcn", "hgt")


def hetero_class(torch: Any) -> type:
    """The ``HeteroNodeClassifier`` module class, built on ``torch`` (imported lazily)."""
    from torch_geometric.nn import HGTConv, RGCNConv

    nn = torch.nn
    module: Any = nn.Module

    class HeteroNodeClassifier(module):
        """Per-type input maps, R-GCN or HGT layers, and a linear head on the target type.

        Args:
            spec: ``model`` ("rgcn" | "hgt"), ``ntypes`` and ``etypes`` (PyG metadata),
                ``in_dims`` (``{ntype: feature width}``, absent = an embedding),
                ``num_nodes`` (``{ntype: N}`` for the embeddings), ``hidden``,
                ``num_layers``, ``heads``, ``dropout``, ``num_classes``, ``target``.
        """

        def __init__(self, spec: dict[str, Any]) -> None:
            super().__init__()
            self.spec = spec
            hidden = int(spec["hidden"])
            self.ntypes = list(spec["ntypes"])
            self.etypes = [tuple(et) for et in spec["etypes"]]
            self.target = spec["target"]
            self.kind = spec["model"]
            dims = spec["in_dims"]
            self.lins = nn.ModuleDict({nt: nn.Linear(int(dims[nt]), hidden)
                                       for nt in self.ntypes if nt in dims})
            self.embs = nn.ModuleDict({nt: nn.Embedding(int(spec["num_nodes"][nt]), hidden)
                                       for nt in self.ntypes if nt not in dims})
            meta = (self.ntypes, self.etypes)
            layers = range(int(spec["num_layers"]))
            if self.kind == "rgcn":
                self.convs = nn.ModuleList(RGCNConv(hidden, hidden, len(self.etypes))
                                           for _ in layers)
            else:
                self.convs = nn.ModuleList(HGTConv(hidden, hidden, meta, int(spec["heads"]))
                                           for _ in layers)
                self.norms = nn.ModuleList(
                    nn.ModuleDict({nt: nn.LayerNorm(hidden) for nt in self.ntypes})
                    for _ in layers)
            self.dropout = nn.Dropout(float(spec["dropout"]))
            # num_classes 0: no head (the link predictor scores the hidden states)
            self.head = nn.Linear(hidden, int(spec["num_classes"])) \
                if int(spec["num_classes"]) else nn.Identity()

        def encode(self, x: dict[str, Any], n_id: dict[str, Any]) -> dict[str, Any]:
            """Hidden inputs per node type: the linear map of ``x`` or the embedding rows."""
            h = {}
            for nt in self.ntypes:
                if nt in self.lins:
                    h[nt] = self.lins[nt](x[nt].float())
                else:
                    h[nt] = self.embs[nt](n_id[nt])
            return {nt: self.dropout(v) for nt, v in h.items()}

        def embed(self, x: dict[str, Any], n_id: dict[str, Any],
                  edge_index: dict[Any, Any], hops: Any = None) -> dict[str, Any]:
            """Hidden states per node type after the last layer: of every sampled node, or
            (R-GCN with ``hops``, ``(num_sampled_nodes, num_sampled_edges)`` per type, PyG's
            per-hop counts) of the seeds only, each layer trimmed as the module says."""
            h = self.encode(x, n_id)
            last = len(self.convs) - 1 if self.spec.get("linear_output") else -1
            if self.kind == "rgcn":
                blocks = mean_blocks(torch, self.etypes, {nt: v.shape[0] for nt, v in h.items()},
                                     edge_index, len(self.convs), hops)
                for layer, conv in enumerate(self.convs):
                    h = self._rgcn(conv, h, blocks[layer], layer != last)
                return h
            for layer, conv in enumerate(self.convs):
                h = self._hgt(conv, self.norms[layer], h, edge_index)
            return h

        def forward(self, x: dict[str, Any], n_id: dict[str, Any],
                    edge_index: dict[Any, Any], num_seeds: int, hops: Any = None) -> Any:
            """Logits of the first ``num_seeds`` target nodes (the loader's seeds);
            ``hops`` as :meth:`embed`'s."""
            return self.head(self.embed(x, n_id, edge_index, hops)[self.target][:num_seeds])

        def _rgcn(self, conv: Any, h: dict[str, Any], block: Block,
                  activate: bool = True) -> dict[str, Any]:
            """One R-GCN layer with ``conv``'s parameters on ``block``: per node type
            ``[h_dst, A_r1 @ h_src1, ...] @ [root; W_r1; ...] + bias``."""
            out = {}
            for nt in self.ntypes:
                parts, weights = [h[nt][:block.num_dst[nt]]], [conv.root]
                for k, src, adj in block.into[nt]:
                    parts.append(torch.sparse.mm(adj, h[src]))
                    weights.append(conv.weight[k])
                y = torch.addmm(conv.bias, torch.cat(parts, 1) if len(parts) > 1 else parts[0],
                                torch.cat(weights) if len(weights) > 1 else weights[0])
                out[nt] = self.dropout(torch.relu(y)) if activate else y
            return out

        def _hgt(self, conv: Any, norms: Any, h: dict[str, Any],
                 edge_index: dict[Any, Any]) -> Any:
            present = {et: ei for et, ei in edge_index.items() if ei.numel() > 0}
            out = conv(h, present) if present else {}
            # a type that received no message keeps its input
            return {nt: self.dropout(norms[nt](out[nt])) if out.get(nt) is not None else h[nt]
                    for nt in self.ntypes}

    return HeteroNodeClassifier


def hetero_link_class(torch: Any) -> type:
    """The ``HeteroLinkPredictor`` module class: the R-GCN / HGT body of
    :func:`hetero_class` (no head) and a dot-product score of a link's two ends."""
    body_class = hetero_class(torch)
    module: Any = torch.nn.Module

    class HeteroLinkPredictor(module):
        """``spec`` as :func:`hetero_class`'s (``num_classes`` unused) plus ``etype``, the
        predicted edge type: a link's score is ``<h_src, h_dst>`` of its ends' embeddings."""

        def __init__(self, spec: dict[str, Any]) -> None:
            super().__init__()
            self.spec = spec
            self.etype = tuple(spec["etype"])
            # the last R-GCN layer linear (no ReLU): a dot product of non-negative vectors
            # cannot go below zero, so no pair could score as unlikely
            self.body = body_class({**spec, "num_classes": 0, "target": self.etype[2],
                                    "linear_output": True})

        def forward(self, x: dict[str, Any], n_id: dict[str, Any],
                    edge_index: dict[Any, Any], label_index: Any) -> Any:
            """Scores ``(n,)`` of the links ``label_index`` (``(2, n)``, batch positions of
            their source- and destination-type ends)."""
            h = self.body.embed(x, n_id, edge_index)  # every node: label_index may be any
            src, _, dst = self.etype
            return (h[src][label_index[0]] * h[dst][label_index[1]]).sum(-1)

    return HeteroLinkPredictor


@dataclass(frozen=True)
class Block:
    """One R-GCN layer's part of a batch.

    Attributes:
        num_dst: Per node type, the nodes the layer computes (the first ones of the type).
        into: Per destination type, ``(k, src_type, A)`` for each relation ``k`` (its index
            in the model's edge types) with edges in this layer: ``A`` a
            ``torch.sparse_csr`` matrix ``(num_dst[dst], nodes of src_type in the layer's
            input)`` of ``1 / in-degree`` (the relation's mean).
    """

    num_dst: dict[str, int]
    into: dict[str, list[tuple[int, str, Any]]]


def mean_blocks(torch: Any, etypes: list[Any], sizes: dict[str, int],
                edge_index: dict[Any, Any], num_layers: int, hops: Any = None) -> list[Block]:
    """The :class:`Block` of each layer (input layer first) of a sampled batch.

    Args:
        torch: The torch module.
        etypes: The model's canonical edge types (a relation's index is its position).
        sizes: Per node type, the batch's nodes.
        edge_index: Per edge type, ``(2, E)`` local (source, destination) positions.
        num_layers: Layers.
        hops: None (every layer computes every node from every edge) or
            ``(num_sampled_nodes, num_sampled_edges)``: per node type the seeds' count then
            the new nodes of each hop (``num_layers + 1`` entries), per edge type the edges
            of each hop (``num_layers``), the nodes and edges in that order (PyG's layout).

    Raises:
        ValueError: ``hops`` does not count ``num_layers`` hops of the batch's nodes.

    Example:
        >>> import torch
        >>> et = ("a", "r", "a")
        >>> ei = torch.tensor([[1, 2, 3, 3], [0, 0, 1, 2]])    # hop 1: 2 edges, hop 2: 2
        >>> blocks = mean_blocks(torch, [et], {"a": 4}, {et: ei}, 2, ({"a": [1, 2, 1]},
        ...                                                             {et: [2, 2]}))
        >>> [b.num_dst for b in blocks]
        [{'a': 3}, {'a': 1}]
        >>> blocks[1].into["a"][0][2].to_dense().tolist()      # the seed's mean of 1 and 2
        [[0.0, 0.5, 0.5]]
    """
    if hops is not None:
        bad = [nt for nt in sizes if len(hops[0][nt]) != num_layers + 1
               or sum(hops[0][nt]) != sizes[nt]]
        if bad:
            raise ValueError(f"mean_blocks: node type {bad[0]!r} has per-hop counts "
                             f"{list(hops[0][bad[0]])} for {sizes[bad[0]]} nodes; expected "
                             f"{num_layers + 1} counts (seeds, then one per layer) summing "
                             "to the nodes")
    dst_types = {et[2] for et in etypes} | set(sizes)
    out: list[Block] = []
    for layer in range(num_layers):
        if hops is None and out:
            out.append(out[0])  # untrimmed: every layer the same
            continue
        keep = num_layers - layer  # hops of edges this layer uses; nodes of keep + 1 hops
        if hops is None:
            n_dst = dict(sizes)
            n_src = dict(sizes)
        else:
            n_dst = {nt: int(sum(hops[0][nt][:keep])) for nt in sizes}
            n_src = {nt: int(sum(hops[0][nt][:keep + 1])) for nt in sizes}
        into: dict[str, list[tuple[int, str, Any]]] = {nt: [] for nt in dst_types}
        for k, et in enumerate(etypes):
            ei = edge_index.get(et)
            if ei is None:
                continue
            if hops is not None:
                ei = ei[:, :int(sum(hops[1][et][:keep]))]
            if ei.shape[1]:
                into[et[2]].append((k, et[0], mean_adjacency(torch, ei, n_dst[et[2]],
                                                             n_src[et[0]])))
        out.append(Block(n_dst, into))
    return out


def mean_adjacency(torch: Any, edge_index: Any, num_dst: int, num_src: int) -> Any:
    """The mean over in-neighbours as a sparse matrix: ``torch.sparse_csr`` of shape
    ``(num_dst, num_src)`` holding ``1 / in-degree(d)`` at ``(d, s)`` for each edge
    ``s -> d`` of ``edge_index`` (``(2, E)``: sources, destinations; parallel edges count
    each time), float32.  ``A @ h`` is each destination's mean of its sources' rows (zero for
    a destination without edges).

    Example:
        >>> import torch
        >>> mean_adjacency(torch, torch.tensor([[0, 1, 1], [1, 1, 0]]), 2, 2).to_dense()
        tensor([[0.0000, 1.0000],
                [0.5000, 0.5000]])
    """
    src, dst = edge_index[0], edge_index[1]
    if dst.numel() > 1 and bool((dst[1:] < dst[:-1]).any()):
        order = torch.argsort(dst, stable=True)
        src, dst = src[order], dst[order]
    deg = torch.bincount(dst, minlength=num_dst)
    crow = torch.zeros(num_dst + 1, dtype=torch.long, device=dst.device)
    torch.cumsum(deg, 0, out=crow[1:])
    val = deg.to(torch.float32).reciprocal()[dst]
    with warnings.catch_warnings():  # "sparse CSR support is in beta state", once a process
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_csr_tensor(crow, src.to(torch.long), val, (num_dst, num_src),
                                       check_invariants=False)
