"""What every trainer class shares: its model spec, training share, and state dicts.

:class:`~graphshard.examples.sage_trainer.SageTrainer`,
:class:`~graphshard.examples.link_trainer.LinkTrainer` and
:class:`~graphshard.examples.hetero_trainer.HeteroTrainer` subclass :class:`TrainerBase`; the
multi-trainer team (:mod:`~graphshard.examples.ddp`) relies on exactly these methods.

Unstable API (issue 26).

Example:
    >>> import numpy as np, torch
    >>> to_torch_state(torch, {"w": np.ones(2), "steps": [np.zeros(1)]})["w"].tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

__all__ = ["TrainerBase", "to_torch_state"]


class TrainerBase:
    """A trainer's shared part.  A subclass sets ``torch``, ``model``, ``opt``, ``train``
    (its training examples) and ``spec`` (plain data, the model's constructor arguments) and
    defines a static ``build_model(spec)``; ``ddp_options`` are passed to DDP."""

    ddp_options: ClassVar[dict[str, Any]] = {}
    torch: Any
    model: Any
    opt: Any
    train: Any
    spec: dict[str, Any]

    def model_spec(self) -> dict[str, Any]:
        """The model's constructor arguments (plain data: sent between processes)."""
        return dict(self.spec)

    def num_train(self) -> int:
        """Training examples (nodes or edges) of this trainer."""
        return len(self.train)

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(model, optimizer) state dicts."""
        return self.model.state_dict(), self.opt.state_dict()

    def load_state(self, model: dict[str, Any], optimizer: dict[str, Any]) -> None:
        """Load state dicts whose tensors may be NumPy arrays (from a checkpoint)."""
        self.model.load_state_dict(to_torch_state(self.torch, model))
        self.opt.load_state_dict(to_torch_state(self.torch, optimizer))


def to_torch_state(torch: Any, obj: Any) -> Any:
    """``obj`` (nested dicts and lists) with every NumPy array as a new torch tensor."""
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.array(obj))
    if isinstance(obj, dict):
        return {k: to_torch_state(torch, v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [to_torch_state(torch, v) for v in obj]
    return obj
