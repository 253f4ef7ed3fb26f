"""Graph4Rec's contrastive losses for the walk trainer's torch model
(:class:`~graphshard.train._g4r_model.G4RModel`): SimGCL (``gcl_loss: simgcl_loss``) and
hierarchical contrastive learning (``hcl``).

Both are InfoNCE losses (softmax cross-entropy of a positive score among itself and
``neg_num`` negative scores, mean over rows) whose negatives are the positives of other
rows, picked by keyed shuffles of the batch (Graph4Rec's ``shuffle_batch``): every draw
comes from the step's seed, so a run is reproducible.  Each returns a torch scalar that
:meth:`G4RModel.step` adds to the pair loss before the backward pass.

- **SimGCL** (Yu et al., SIGIR 2022): two views of every node of the batch's pairs,
  ``h + eps * normalize(sign(h) * U(0, 1))`` (noise of norm :data:`SIMGCL_EPS` in the
  orthant of ``h``), scored by cosine similarity / :data:`SIMGCL_TAU`; the positive of a
  node's first view is its second view; the loss is weighted by :data:`SIMGCL_WEIGHT`.
  ``h`` is the encoder's output (the representation the pairs are scored with), as
  Graph4Rec perturbs its final features.
- **HCL** (Graph4Rec's ``hcl``, ``sage_mode`` only): for every sampled neighbour edge, the
  neighbour's input embedding (id row plus slots, before the GNN layers) scores the node
  it was sampled for against ``neg_num`` shuffled such nodes, by dot product times
  :data:`HCL_SCALE` (Graph4Rec's ``tao``); weight 1, as Graph4Rec adds it.

Example:
    >>> _shuffles(4, 2, seed=0).shape
    (4, 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..typing import IdArray
from ._common import subseed

__all__ = ["HCL_SCALE", "SIMGCL_EPS", "SIMGCL_TAU", "SIMGCL_WEIGHT", "hcl_loss",
           "simgcl_loss"]

#: Norm of SimGCL's noise (the paper's eps).
SIMGCL_EPS = 0.1
#: Temperature of SimGCL's InfoNCE on cosine similarities (the paper's tau).
SIMGCL_TAU = 0.2
#: Weight of SimGCL's loss added to the pair loss (the paper's lambda, within its range).
SIMGCL_WEIGHT = 0.2
#: Graph4Rec's HCL logits are dot products times 5 (its ``tao``).
HCL_SCALE = 5.0


def _shuffles(n: int, k: int, seed: int) -> np.ndarray:
    """``(n, k)`` int64: column ``j`` a permutation of ``0..n-1`` keyed by ``(seed, j)``."""
    cols = [np.random.default_rng(subseed(seed, j)).permutation(n) for j in range(k)]
    return np.stack(cols, axis=1).astype(np.int64) if cols else np.zeros((n, 0), np.int64)


def _info_nce(torch: Any, anchor: Any, positive: Any, neg: np.ndarray, scale: float) -> Any:
    """Mean softmax cross-entropy of ``anchor . positive`` among it and ``anchor .
    positive[neg[:, j]]`` (``j < k``), all times ``scale``; one ``(n, d)`` temporary per
    negative column, never an ``(n, k, d)`` tensor."""
    scores = [(anchor * positive).sum(-1)]
    for j in range(neg.shape[1]):
        scores.append((anchor * positive[torch.from_numpy(neg[:, j])]).sum(-1))
    logits = torch.stack(scores, dim=1) * scale
    target = torch.zeros(len(logits), dtype=torch.long)
    return torch.nn.functional.cross_entropy(logits, target)


def simgcl_loss(torch: Any, h: Any, rows: IdArray, neg_num: int, seed: int) -> Any:
    """SimGCL's weighted loss on rows ``rows`` (unique) of ``h`` (``(N, d)`` float32, with
    gradients); the noise and the negatives are keyed by ``seed``."""
    x = h[torch.from_numpy(np.ascontiguousarray(rows, np.int64))]
    rng = np.random.default_rng(subseed(seed, 0))
    normalize = torch.nn.functional.normalize
    views = []
    for _ in range(2):
        u = torch.from_numpy(rng.random(tuple(x.shape), dtype=np.float32))
        noise = normalize(u * torch.sign(x.detach()), dim=-1) * SIMGCL_EPS
        views.append(normalize(x + noise, dim=-1))
    neg = _shuffles(len(rows), neg_num, subseed(seed, 1))
    return SIMGCL_WEIGHT * _info_nce(torch, views[0], views[1], neg, 1.0 / SIMGCL_TAU)


def hcl_loss(torch: Any, h0: Any, src: IdArray, dst: IdArray, neg_num: int, seed: int
             ) -> Any:
    """Graph4Rec's HCL loss over the sampled edges ``src -> dst`` (rows of ``h0``, the
    input embeddings); None without edges."""
    if not len(src):
        return None
    anchor = h0[torch.from_numpy(np.ascontiguousarray(src, np.int64))]
    positive = h0[torch.from_numpy(np.ascontiguousarray(dst, np.int64))]
    neg = _shuffles(len(src), neg_num, subseed(seed, 2))
    return _info_nce(torch, anchor, positive, neg, HCL_SCALE)
