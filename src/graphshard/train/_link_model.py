"""The GraphSAGE link predictor: SAGE encoder, dot-product or MLP decoder (torch lazily).

Unstable API (issue 26).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..store import GraphStore
from ._sage_model import inference, sage_class
from .link_metrics import link_metrics
from .link_split import EvalEdges

__all__ = ["DECODERS", "evaluate_link", "link_class", "score_edges"]

#: Decoder names: ``dot`` scores ``<h_u, h_v>``, ``mlp`` an MLP of ``h_u * h_v``.
DECODERS = ("dot", "mlp")
_SCORE_CHUNK = 2048


def link_class(torch: Any) -> type:
    """The ``LinkPredictor`` module class, built on ``torch`` (imported by the caller)."""
    nn = torch.nn
    sage = sage_class(torch)
    module: Any = nn.Module

    class LinkPredictor(module):
        """``encoder``: GraphSAGE-mean to ``hidden`` wide embeddings; ``score`` of a pair:
        the dot product of its embeddings, or an MLP of their elementwise product."""

        def __init__(self, in_dim: int, hidden: int, num_layers: int, dropout: float,
                     decoder: str) -> None:
            super().__init__()
            self.encoder = sage(in_dim, hidden, hidden, num_layers, dropout)
            self.decoder = None if decoder == "dot" else nn.Sequential(
                nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

        def score(self, hu: Any, hv: Any) -> Any:
            if self.decoder is None:
                return (hu * hv).sum(-1)
            return self.decoder(hu * hv).squeeze(-1)

        def forward(self, blocks: Any, x: Any, src: Any, dst: Any, neg: Any
                    ) -> tuple[Any, Any]:
            """(positive scores ``(b,)``, negative scores ``(b, k)``) of one batch."""
            h = self.encoder(blocks, x)
            hs = h[src]
            return self.score(hs, h[dst]), self.score(hs[:, None, :], h[neg])

    return LinkPredictor


def score_edges(torch: Any, model: Any, h: np.ndarray, edges: EvalEdges
                ) -> tuple[np.ndarray, np.ndarray]:
    """Scores of ``edges``' positives ``(n,)`` and negatives ``(n, k)`` from embeddings ``h``
    (in chunks of rows)."""
    pos, neg = [], []
    with torch.no_grad():
        for i in range(0, len(edges), _SCORE_CHUNK):
            s = torch.from_numpy(h[edges.src[i:i + _SCORE_CHUNK]])
            pos.append(model.score(s, torch.from_numpy(h[edges.dst[i:i + _SCORE_CHUNK]])).numpy())
            neg.append(model.score(s[:, None, :], torch.from_numpy(
                h[edges.neg_dst[i:i + _SCORE_CHUNK]])).numpy())
    k = edges.neg_dst.shape[1]
    return (np.concatenate(pos) if pos else np.zeros(0, np.float32),
            np.concatenate(neg) if neg else np.zeros((0, k), np.float32))


def evaluate_link(torch: Any, model: Any, store: GraphStore, nt: str, feat: str,
                  splits: dict[str, EvalEdges], hits: tuple[int, ...]
                  ) -> dict[str, dict[str, float]]:
    """``{split: {metric: value}}`` with embeddings from full-neighbour inference."""
    h = inference(torch, model.encoder, store, nt, feat)
    model.eval()
    try:
        return {name: link_metrics(*score_edges(torch, model, h, edges), hits=hits)
                for name, edges in splits.items()}
    finally:
        model.train()
