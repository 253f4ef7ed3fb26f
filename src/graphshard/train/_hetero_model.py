"""Heterogeneous node classifiers on PyG layers: R-GCN (``RGCNConv``) and HGT (``HGTConv``).

Both start with one input map per node type to the hidden width: a per-type linear layer of
the type's stored feature (widths may differ per type), or a learnable embedding row per
node (``nn.Embedding(num_nodes, hidden)``, indexed by the sampled per-type IDs) for a type
without features.  Then ``num_layers`` message-passing layers of width ``hidden`` and a
linear head on the target type.

- ``"rgcn"``: PyG's ``RGCNConv`` (Schlichtkrull et al.: a weight per relation, mean over
  each relation's in-neighbours, summed over relations, plus a root weight), run on the
  batch as one homogeneous graph with an edge-type vector; ReLU and dropout after each
  layer.
- ``"hgt"``: PyG's ``HGTConv`` (Hu et al.: type-specific attention with ``heads`` heads
  and a gated skip connection), then a per-type ``LayerNorm`` and dropout after each layer.
  The norm is the ``use_norm`` layer of the authors' implementation, which PyG's layer leaves
  out; without it HGT on HGB DBLP sits about a point lower and peaks a few epochs in
  (``benchmarks/bench_hetero.py``).

Unstable API (issue 26).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MODELS", "hetero_class", "hetero_link_class", "one_edge_index"]

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
                  edge_index: dict[Any, Any]) -> dict[str, Any]:
            """Hidden states of every sampled node, per node type, after the last layer."""
            h = self.encode(x, n_id)
            last = len(self.convs) - 1 if self.spec.get("linear_output") else -1
            for layer, conv in enumerate(self.convs):
                h = self._rgcn(conv, h, edge_index, layer != last) if self.kind == "rgcn" \
                    else self._hgt(conv, self.norms[layer], h, edge_index)
            return h

        def forward(self, x: dict[str, Any], n_id: dict[str, Any],
                    edge_index: dict[Any, Any], num_seeds: int) -> Any:
            """Logits of the first ``num_seeds`` target nodes (the loader's seeds)."""
            return self.head(self.embed(x, n_id, edge_index)[self.target][:num_seeds])

        def _rgcn(self, conv: Any, h: dict[str, Any], edge_index: dict[Any, Any],
                  activate: bool = True) -> Any:
            sizes = [h[nt].shape[0] for nt in self.ntypes]
            ei, kind = one_edge_index(torch, self.ntypes, self.etypes, sizes, edge_index)
            out = conv(torch.cat([h[nt] for nt in self.ntypes]), ei, kind)
            if activate:
                out = self.dropout(torch.relu(out))
            return dict(zip(self.ntypes, out.split(sizes), strict=True))

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
            h = self.body.embed(x, n_id, edge_index)
            src, _, dst = self.etype
            return (h[src][label_index[0]] * h[dst][label_index[1]]).sum(-1)

    return HeteroLinkPredictor


def one_edge_index(torch: Any, ntypes: list[str], etypes: list[Any], sizes: list[int],
                   edge_index: dict[Any, Any]) -> tuple[Any, Any]:
    """The typed ``edge_index`` of a batch as one homogeneous graph (what ``RGCNConv``
    takes): node type ``t``'s nodes shifted by the sizes of the types before it, and each
    edge's type index in ``etypes``.  Types without edges are left out.

    Example:
        >>> import torch
        >>> ei, kind = one_edge_index(torch, ["a", "b"], [("a", "r", "b")], [2, 3],
        ...                           {("a", "r", "b"): torch.tensor([[0, 1], [2, 0]])})
        >>> ei.tolist(), kind.tolist()
        ([[0, 1], [4, 2]], [0, 0])
    """
    offset = dict(zip(ntypes, [0, *torch.tensor(sizes).cumsum(0).tolist()[:-1]], strict=True))
    eis, kinds = [], []
    for k, et in enumerate(etypes):
        ei = edge_index.get(et)
        if ei is None or ei.numel() == 0:
            continue
        shift = torch.tensor([[offset[et[0]]], [offset[et[2]]]], dtype=ei.dtype)
        eis.append(ei + shift)
        kinds.append(torch.full((ei.shape[1],), k, dtype=torch.long))
    ei = torch.cat(eis, 1) if eis else torch.zeros((2, 0), dtype=torch.long)
    kind = torch.cat(kinds) if kinds else torch.zeros(0, dtype=torch.long)
    return ei, kind
