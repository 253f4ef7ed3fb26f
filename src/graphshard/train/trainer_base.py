"""What every trainer class shares: its model spec, training share, and state dicts.

:class:`~graphshard.train.sage_trainer.SageTrainer`,
:class:`~graphshard.train.link_trainer.LinkTrainer` and
:class:`~graphshard.train.hetero_trainer.HeteroTrainer` subclass :class:`TrainerBase`; the
multi-trainer team (:mod:`~graphshard.train.ddp`) relies on exactly these methods.

Unstable API (issue 26).

Example:
    >>> import numpy as np, torch
    >>> to_torch_state(torch, {"w": np.ones(2), "steps": [np.zeros(1)]})["w"].tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ._common import subseed

__all__ = ["TrainerBase", "to_torch_state"]


class TrainerBase:
    """A trainer's shared part.  A subclass sets ``torch``, ``model``, ``opt``, ``train``
    (its training examples) and ``spec`` (plain data, the model's constructor arguments) and
    defines a static ``build_model(spec)``; ``ddp_options`` are passed to DDP."""

    ddp_options: ClassVar[dict[str, Any]] = {}
    torch: Any
    model: Any
    net: Any
    opt: Any
    train: Any
    spec: dict[str, Any]
    seed: int
    batch_size: int

    def init_model(self, spec: dict[str, Any], *, seed: int, lr: float,
                   weight_decay: float) -> None:
        """Build the model of ``spec`` (the same initial parameters on every rank for one
        ``seed``) and its Adam optimizer; ``net`` (what the steps call) starts as the model."""
        self.spec = spec
        self.torch.manual_seed(int(seed))
        self.model = self.build_model(spec)
        self.net = self.model
        self.opt = self.torch.optim.Adam(self.model.parameters(), lr=lr,
                                         weight_decay=weight_decay)

    @staticmethod
    def build_model(spec: dict[str, Any]) -> Any:
        """A new model of ``spec``; each trainer class defines it."""
        raise NotImplementedError

    def model_spec(self) -> dict[str, Any]:
        """The model's constructor arguments (plain data: sent between processes)."""
        return dict(self.spec)

    def step(self, loss: Any) -> float:
        """One optimiser step on ``loss`` (gradients cleared first); the loss as a float."""
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return float(loss.detach())

    def epoch_batches(self, epoch: int, steps: int | None, items: Any = None) -> list[Any]:
        """``items`` (default ``self.train``; an int ``n``: positions ``0 .. n - 1``) in the
        seeded order of ``epoch``, cut into batches of ``batch_size``, or into exactly
        ``steps`` batches (repeating items when there are fewer): every rank of a team then
        takes the same number of steps, so none skips an all-reduce."""
        perm = np.random.default_rng(subseed(self.seed, 0, epoch)).permutation(
            self.train if items is None else items)
        if steps is None:
            return [perm[i:i + self.batch_size] for i in range(0, len(perm), self.batch_size)]
        if len(perm) < steps:
            perm = np.resize(perm, steps)
        return np.array_split(perm, steps)

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
