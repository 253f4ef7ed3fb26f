"""Several trainers on Ray: one actor per trainer, gradients all-reduced by DDP.

Each trainer is a Ray actor holding a trainer of :data:`TRAINERS` (GraphSAGE node
classification, :class:`~graphshard.train.sage_trainer.SageTrainer`, link prediction,
:class:`~graphshard.train.link_trainer.LinkTrainer`, heterogeneous node classification,
:class:`~graphshard.train.hetero_trainer.HeteroTrainer`, or heterogeneous link prediction,
:class:`~graphshard.train.hetero_link_trainer.HeteroLinkTrainer`) over its own
:class:`~graphshard.distributed.DistGraph` connection (partitions on the trainer's machine are read
in-process), with the model wrapped in ``torch.nn.parallel.DistributedDataParallel`` on a
gloo process group.  Trainer ``r`` takes the training nodes (or edges) of its partitions
(:func:`~graphshard.train.sage_trainer.trainer_share`); all trainers take the same number
of steps per epoch (the largest share sets it, smaller shares make smaller batches) so that
every all-reduce has all ranks.  A trainer class has ``train_epoch(epoch, steps)``,
``evaluate()``, ``state()``, ``load_state()``, ``num_train()``, a ``model`` (and ``net``,
the module its steps call), ``model_spec()`` and a static ``build_model(spec)``
(:class:`~graphshard.train.trainer_base.TrainerBase`).  The driver
runs the epoch loop: it starts an epoch on every actor, asks rank 0 to evaluate and for the
state to checkpoint, and loads a checkpoint into all.

Unstable API (issue 7).

Example:
    >>> from graphshard.train import train_sage
    >>> res = train_sage("parts/sbm.json", num_trainers=2, epochs=3)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import socket
from typing import Any

from .._util.optional import import_optional
from ..errors import ServerError, ValidationError, check_choice
from .trainer_base import to_torch_state

__all__ = ["TRAINERS", "RayTeam", "trainer_class"]

#: Trainer kinds: name -> ``module:class`` (in this package).
TRAINERS = {"sage": "sage_trainer:SageTrainer", "link": "link_trainer:LinkTrainer",
            "hetero": "hetero_trainer:HeteroTrainer",
            "hetero_link": "hetero_link_trainer:HeteroLinkTrainer"}


def trainer_class(kind: str) -> Any:
    """The trainer class of ``kind`` (a key of :data:`TRAINERS`)."""
    check_choice(kind, TRAINERS, "trainer")
    module, name = TRAINERS[kind].split(":")
    return getattr(importlib.import_module(f".{module}", __package__), name)


class _TrainerActor:
    """The body of one trainer actor (plain class, wrapped by ``ray.remote`` at start)."""

    def address(self) -> tuple[str, int]:
        """This node's IP and a free TCP port for the process group's rendezvous."""
        ray = import_optional("ray", "multi-trainer training")
        ip = ray.util.get_node_ip_address()
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((ip, 0))
            return ip, int(s.getsockname()[1])

    def setup(self, config: str, master: tuple[str, int], rank: int, world: int,
              kw: dict[str, Any], kind: str = "sage") -> int:
        """Join the process group, open the graph, build the trainer; its training
        examples."""
        torch = import_optional("torch", "training")
        tdist = torch.distributed

        from ..distributed import DistGraph

        tdist.init_process_group("gloo", init_method=f"tcp://{master[0]}:{master[1]}",
                                 rank=rank, world_size=world)
        self.dg = DistGraph(config, start=False)
        cls = trainer_class(kind)
        self.trainer = cls(self.dg, rank=rank, world=world, **kw)
        self.trainer.net = torch.nn.parallel.DistributedDataParallel(
            self.trainer.model, **getattr(cls, "ddp_options", {}))
        return self.trainer.num_train()

    def model_spec(self) -> dict[str, Any]:
        return self.trainer.model_spec()

    def train_epoch(self, epoch: int, steps: int) -> tuple[float, int]:
        return self.trainer.train_epoch(epoch, steps)

    def evaluate(self) -> dict[str, tuple[float, float]]:
        return self.trainer.evaluate()

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        model, opt = self.trainer.state()
        return ({k: v.detach().numpy().copy() for k, v in model.items()}, _numpy(opt))

    def load_state(self, model: dict[str, Any], optimizer: dict[str, Any]) -> None:
        self.trainer.load_state(model, optimizer)

    def close(self) -> None:
        import torch.distributed as tdist

        if tdist.is_initialized():
            tdist.destroy_process_group()


def _numpy(obj: Any) -> Any:
    """A state dict with torch tensors turned into NumPy copies (cheap to send back)."""
    if hasattr(obj, "detach") and hasattr(obj, "numpy"):
        return obj.detach().numpy().copy()
    if isinstance(obj, dict):
        return {k: _numpy(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_numpy(v) for v in obj)
    return obj


class RayTeam:
    """``num_trainers`` trainer actors over the servers of ``config`` (started if none run).

    Args:
        config: Path of the partition config JSON.
        num_trainers: Trainer actors (DDP world size).
        kw: Keyword arguments of the trainer class (``batch_size`` among them).
        trainer_cpus: CPUs each actor reserves (Ray also sets its thread count to this).
        trainer: Trainer kind, a key of :data:`TRAINERS`.  A trainer class has ``model``
            (wrapped for DDP with its ``ddp_options``), ``net``, ``train_epoch(epoch,
            steps)``, ``evaluate()``, ``num_train()``, ``state()``, ``load_state()``,
            ``model_spec()`` and a static ``build_model(spec)``.

    A context manager: leaving it stops the actors, and the servers if it started them.
    """

    def __init__(self, config: str | os.PathLike[str], num_trainers: int, kw: dict[str, Any],
                 *, trainer_cpus: float = 1.0, trainer: str = "sage") -> None:
        from ..distributed import find_servers, serve

        ray = import_optional("ray", "multi-trainer training")
        self.ray = ray
        self.kind = trainer
        trainer_class(trainer)  # an unknown kind fails before anything starts
        self.handle = None if find_servers(config) is not None else serve(config)
        total = float(ray.cluster_resources().get("CPU", 0.0))
        if num_trainers * trainer_cpus > total + 1e-9:
            # Ray would queue the actors for ever: DDP's rendezvous waits on the missing ones
            if self.handle is not None:
                self.handle.shutdown()
            raise ValidationError(
                f"{num_trainers} trainers of {trainer_cpus:g} CPU need "
                f"{num_trainers * trainer_cpus:g} CPUs; the Ray cluster has {total:g}: use "
                "fewer trainers or a smaller trainer_cpus", field="num_trainers",
                value=num_trainers)
        remote = ray.remote(_TrainerActor)
        self.actors = [remote.options(num_cpus=trainer_cpus).remote()
                       for _ in range(num_trainers)]
        try:
            master = ray.get(self.actors[0].address.remote())
            kw_ref = ray.put(kw)  # held-out edges and the like: sent once
            counts = ray.get([a.setup.remote(str(config), master, r, num_trainers, kw_ref,
                                             trainer) for r, a in enumerate(self.actors)])
        except ray.exceptions.RayError as exc:
            self.close()
            cause = getattr(exc, "cause", None)
            if isinstance(cause, Exception) and not isinstance(cause, ray.exceptions.RayError):
                raise cause from exc  # e.g. a ValidationError of a trainer
            raise ServerError(f"{config}: starting {num_trainers} trainers failed: {exc}",
                              path=str(config)) from exc
        self.counts = [int(c) for c in counts]
        if min(self.counts) == 0:
            self.close()
            raise ValidationError(f"{config}: trainer {self.counts.index(0)} of {num_trainers} "
                                  "owns no training nodes (or edges); partition with "
                                  "balance_ntypes=<train mask>, or use fewer trainers",
                                  field="num_trainers", value=num_trainers)
        self.num_train = sum(self.counts)
        self.steps = max(1, max(math.ceil(c / kw["batch_size"]) for c in self.counts))
        self.kw = kw

    def train_epoch(self, epoch: int) -> tuple[float, int]:
        """One epoch on every trainer: (sum of loss x examples, examples) over all of them."""
        out = self.ray.get([a.train_epoch.remote(epoch, self.steps) for a in self.actors])
        return float(sum(t for t, _ in out)), int(sum(c for _, c in out))

    def evaluate(self) -> dict[str, tuple[float, float]]:
        """Full-neighbour inference on rank 0 (all ranks hold the same parameters):
        ``{metric: (val, test)}``."""
        return self.ray.get(self.actors[0].evaluate.remote())

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Rank 0's (model, optimizer) state dicts, tensors as NumPy arrays."""
        return self.ray.get(self.actors[0].state.remote())

    def states(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Every rank's state (to check that they agree)."""
        return self.ray.get([a.state.remote() for a in self.actors])

    def load_state(self, model: dict[str, Any], optimizer: dict[str, Any]) -> None:
        """Load the same state into every trainer."""
        self.ray.get([a.load_state.remote(model, optimizer) for a in self.actors])

    def model(self) -> Any:
        """A local copy of the trained model (rank 0's parameters)."""
        torch = import_optional("torch", "training")
        state, _ = self.state()
        cls = trainer_class(self.kind)
        model = cls.build_model(self.ray.get(self.actors[0].model_spec.remote()))
        model.load_state_dict(to_torch_state(torch, state))
        return model

    def close(self) -> None:
        """Stop the actors (and the servers this team started)."""
        for a in self.actors:
            with contextlib.suppress(Exception):  # a dead actor needs no close
                self.ray.get(a.close.remote(), timeout=10)
            self.ray.kill(a)
        self.actors = []
        if self.handle is not None:
            self.handle.shutdown()
            self.handle = None

    def __enter__(self) -> RayTeam:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

