"""graphshard's trainers, on top of the store protocol: GraphSAGE, R-GCN/HGT, link
prediction and walk embeddings, and the epoch loop they share (best validation epoch, early
stopping, checkpoints); ``graphshard train`` runs them from a YAML config.  (This package
was ``graphshard.examples``; that name stays as a deprecated alias for a release.)

Everything here needs torch (``pip install 'graphshard[train]'``; R-GCN/HGT also
torch_geometric, ``[pyg]``); the YAML config reader
also needs pyyaml, several trainers need ray (``[ray]``) and the curve PNG matplotlib
(``[plot]``).  Names load lazily, so importing this package imports none of them.
Unstable API: the trainers are a first pass and may change between releases.

Example:
    >>> import graphshard.train as tr
    >>> sorted(tr.__all__)[:3]
    ['CONFIG_KEYS', 'Checkpoint', 'EdgeSplit']
"""

from __future__ import annotations

from .._util.lazy import lazy_exports

_LAZY = {
    "EpochRun": ".epochs",
    "EdgeSplit": ".link_split",
    "LinkResult": ".link",
    "train_link": ".link",
    "LinkTrainer": ".link_trainer",
    "split_edges": ".link_split",
    "partition_for_link": ".link_files",
    "load_link_split": ".link_files",
    "run_epochs": ".epochs",
    "TrainResult": ".sage",
    "train_sage": ".sage",
    "WalkEmbeddingResult": ".walk_embed",
    "train_walk_embedding": ".walk_embed",
    "WalkOptions": ".walk_options",
    "save_embeddings": ".walk_embed",
    "load_embeddings": ".walk_embed",
    "train_from_config": ".config",
    "validate_config": ".config",
    "Checkpoint": ".checkpoint",
    "load_checkpoint": ".checkpoint",
    "save_checkpoint": ".checkpoint",
    "SageTrainer": ".sage_trainer",
    "plot_curves": ".curves",
    "trainer_share": ".sage_trainer",
    "read_config": ".config",
    "CONFIG_KEYS": ".config",
    "HeteroResult": ".hetero",
    "train_hetero": ".hetero",
    "HeteroTrainer": ".hetero_trainer",
    "PRESETS": ".presets",
    "preset": ".presets",
    "F1Scores": ".metrics",
    "f1_scores": ".metrics",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
