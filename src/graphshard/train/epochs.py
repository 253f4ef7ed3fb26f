"""The epoch loop every trainer shares: train, evaluate, pick the best epoch, stop early,
checkpoint, resume.

A trainer hands :func:`run_epochs` a *team* (:class:`Team`): one in-process trainer or
several Ray actors behind the same methods.  ``evaluate()`` returns ``{metric: (val,
test)}``; the loop keeps per-epoch lists ``losses``, ``val_<metric>``, ``test_<metric>``,
``seconds``, ``eval_seconds`` and ``samples`` (the checkpoint's history keeps the same names,
so a resumed run continues them).  Epochs are counted from 0 everywhere: entry ``e`` of a
per-epoch list is epoch ``e``, the number :func:`best_epoch`, ``train_epoch(e)``, ``on_epoch``
and the log lines give it (a checkpoint's ``epoch`` is a count: the epochs done).

The best epoch is judged on one validation metric (``monitor``, higher is better): epoch
``e`` becomes the best when its value exceeds the best so far by more than ``min_delta``
(so with ``min_delta=0`` the first epoch of the maximum).  With ``patience`` the run stops
after an evaluation that finds ``patience`` or more epochs since the best one
(:func:`should_stop`); the test metrics reported are those of the best epoch.  With
``warmup`` the first epochs are not monitored: the best epoch is one of epochs ``warmup``
onwards (an early lucky value, e.g. a Macro-F1 at epoch 0 that training first lowers, cannot
hold the run), and the run never stops before epoch ``warmup + patience``.  Both rules
are functions of the validation history alone, so a run resumed from a checkpoint stops
where an uninterrupted one does.  The model a trainer returns is the last epoch's, not the
best epoch's.

Unstable API (issue 26).

Example:
    >>> best_epoch([0.5, 0.7, float("nan"), 0.7, 0.704], min_delta=0.005)
    1
    >>> should_stop([0.5, 0.7, 0.69, 0.7], patience=2), should_stop([0.5, 0.7, 0.69], patience=2)
    (True, False)
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .._util.progress import progress
from ..errors import ValidationError, check_choice

__all__ = ["EpochRun", "LocalTeam", "ScoredEpochs", "Team", "as_ints", "at_epoch", "best_epoch",
           "check_stopping", "finite", "run_epochs", "should_stop", "value_at"]

logger = logging.getLogger(__name__)

#: Per-epoch lists every run keeps besides ``val_<metric>`` / ``test_<metric>``.
BASE_KEYS = ("losses", "seconds", "eval_seconds", "samples")


class Team(Protocol):
    """What :func:`run_epochs` drives: one trainer, or several behind one object."""

    def train_epoch(self, epoch: int) -> tuple[float, int]:
        """One epoch: (sum of loss x examples, examples), over every trainer."""
        ...

    def evaluate(self) -> dict[str, tuple[float, float]]:
        """``{metric: (validation value, test value)}``, higher is better."""
        ...

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(model, optimizer) state dicts to checkpoint."""
        ...

    def load_state(self, model: dict[str, Any], optimizer: dict[str, Any]) -> None: ...
    def model(self) -> Any: ...
    def close(self) -> None: ...


class LocalTeam:
    """One in-process trainer behind :class:`Team`: ``trainer`` has ``train_epoch(epoch)``,
    ``evaluate()``, ``state()``, ``load_state(model, optimizer)`` and a ``model``."""

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer

    def train_epoch(self, epoch: int) -> tuple[float, int]:
        return self.trainer.train_epoch(epoch)

    def evaluate(self) -> dict[str, tuple[float, float]]:
        return self.trainer.evaluate()

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.trainer.state()

    def load_state(self, model: dict[str, Any], optimizer: dict[str, Any]) -> None:
        self.trainer.load_state(model, optimizer)

    def model(self) -> Any:
        return self.trainer.model

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class EpochRun:
    """What :func:`run_epochs` measured.

    Attributes:
        history: Per-epoch lists (resumed epochs included): ``losses``, ``val_<m>``,
            ``test_<m>`` for each metric ``m`` (NaN where not evaluated), ``seconds``,
            ``eval_seconds``, ``samples``.
        metrics: Metric names, in the order ``evaluate()`` returned them.
        monitor: The metric that picks the best epoch.
        best_epoch: The best epoch, from 0 (the last one when no validation value exists).
        stopped_early: Whether ``patience`` ended the run before ``epochs``.
        model: The team's model after the last epoch.
    """

    history: dict[str, list[float]]
    metrics: tuple[str, ...]
    monitor: str
    best_epoch: int
    stopped_early: bool
    model: Any

    def __repr__(self) -> str:
        return (f"EpochRun(epochs={len(self.history['losses'])}, best_epoch={self.best_epoch}, "
                f"stopped_early={self.stopped_early})")


def best_epoch(val: Sequence[float], *, min_delta: float = 0.0, warmup: int = 0) -> int:
    """Epoch (from 0) whose validation value first exceeded every earlier best by more than
    ``min_delta`` (NaN entries, i.e. epochs not evaluated, never count), among epochs
    ``warmup`` onwards when one of them has a value (else among all); the last epoch when
    no value is finite, -1 for an empty history.

    Example:
        >>> best_epoch([0.6, 0.8, 0.8]), best_epoch([float("nan")] * 2), best_epoch([])
        (1, 1, -1)
        >>> best_epoch([0.9, 0.5, 0.7], warmup=1), best_epoch([0.9, 0.5], warmup=2)
        (2, 0)
    """
    if warmup > 0 and any(v == v for v in val[warmup:]):
        return warmup + best_epoch(val[warmup:], min_delta=min_delta)
    best, best_val = -1, -math.inf
    for e, v in enumerate(val):
        if v == v and (best < 0 or v > best_val + min_delta):  # v == v: not NaN
            best, best_val = e, float(v)
    return best if best >= 0 else len(val) - 1


def should_stop(val: Sequence[float], *, patience: int | None, min_delta: float = 0.0,
                warmup: int = 0) -> bool:
    """Whether a run with validation history ``val`` stops now: the last epoch was evaluated
    and comes ``patience`` or more epochs after :func:`best_epoch` (of epochs ``warmup``
    onwards, so never before epoch ``warmup + patience``).  Never with ``patience=None`` or
    without a finite value.

    Example:
        >>> should_stop([0.5, 0.6, 0.6], patience=1), should_stop([0.5, 0.6], patience=1)
        (True, False)
        >>> should_stop([0.9, 0.5, 0.6], patience=2), should_stop([0.9, 0.5, 0.6], patience=2,
        ...                                                      warmup=1)
        (True, False)
    """
    if patience is None or not val or val[-1] != val[-1]:
        return False
    if not any(v == v for v in val[warmup:]):
        return False
    return len(val) - 1 - best_epoch(val, min_delta=min_delta, warmup=warmup) >= patience


def check_stopping(what: str, patience: int | None, min_delta: float, warmup: int = 0
                   ) -> None:
    """Raise a ValidationError naming ``what`` for a patience below 1, a negative or
    non-finite ``min_delta`` or a negative ``warmup``."""
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValidationError(f"{what}: warmup must be an int >= 0, got {warmup!r}",
                              field="warmup", value=warmup)
    if patience is not None and (isinstance(patience, bool) or int(patience) != patience
                                 or patience < 1):
        raise ValidationError(f"{what}: patience must be None or an int >= 1, got "
                              f"{patience!r}", field="patience", value=patience)
    if not (math.isfinite(float(min_delta)) and float(min_delta) >= 0):
        raise ValidationError(f"{what}: min_delta must be a finite number >= 0, got "
                              f"{min_delta!r}", field="min_delta", value=min_delta)


def run_epochs(team: Team, *, epochs: int, eval_every: int, metrics: Sequence[str],
               monitor: str | None = None, patience: int | None = None,
               min_delta: float = 0.0, warmup: int = 0, checkpoint_dir: Any = None,
               checkpoint: Any = None,
               on_epoch: Callable[[int, dict[str, float]], None] | None = None,
               params: dict[str, Any] | None = None, what: str = "train") -> EpochRun:
    """The epoch loop: (resume,) train, evaluate, report, checkpoint, stop early.

    Args:
        team: The trainer(s) (:class:`Team`).
        epochs: Epochs in all, resumed ones included.
        eval_every: Evaluate every this many epochs, and after the last one (also the
            epoch that would be the last without early stopping); NaN metrics otherwise.
        metrics: Names ``evaluate()`` returns (fixes the history keys before the first
            evaluation).
        monitor: Metric that picks the best epoch (default: the first of ``metrics``).
        patience: Stop once an evaluation finds this many epochs since the best one
            (None: never).
        min_delta: An improvement must exceed this to make a new best epoch.
        warmup: Epochs not monitored: the best epoch is one of the later ones, and the run
            stops no earlier than epoch ``warmup + patience``.
        checkpoint_dir: Write a checkpoint here after every epoch.
        checkpoint: A :class:`~graphshard.train.checkpoint.Checkpoint` to resume from.
        on_epoch: Called after each epoch with ``(epoch, {"loss", "val_<m>", "test_<m>",
            ..., "seconds", "eval_seconds", "samples"})``.
        params: Run parameters stored in checkpoints.
        what: Name used in log lines.

    Returns:
        EpochRun with the history, the best epoch and whether the run stopped early.
    """
    names = tuple(metrics)
    monitor = names[0] if monitor is None else monitor
    check_choice(monitor, names, "monitor", where=what)
    check_stopping(what, patience, min_delta, warmup)
    keys = ["losses", *(f"{s}_{m}" for m in names for s in ("val", "test")),
            "seconds", "eval_seconds", "samples"]
    hist: dict[str, list[float]] = {k: [] for k in keys}
    val = hist[f"val_{monitor}"]
    start = 0
    if checkpoint is not None:
        team.load_state(checkpoint.model, checkpoint.optimizer)
        start = checkpoint.epoch
        for name in keys:
            hist[name].extend(checkpoint.history.get(name, [])[:start])
        logger.info("%s: resumed from %s: epochs 0-%d done", what, checkpoint_dir, start - 1)
    def stop_now() -> bool:
        return should_stop(val, patience=patience, min_delta=min_delta, warmup=warmup)

    stopped = stop_now()
    nan = float("nan")
    for epoch in progress(range(start, epochs), desc="epochs", total=epochs - start,
                          unit="epoch"):
        if stopped:
            break
        t0 = time.perf_counter()
        total, count = team.train_epoch(epoch)
        if not math.isfinite(total):  # refused, not returned as a model of NaN weights
            raise ValidationError(f"{what}: the training loss became {total / max(count, 1)} "
                                  f"in epoch {epoch}: training diverged (lr too large, or "
                                  "features that are not finite); lower lr", field="lr")
        hist["seconds"].append(time.perf_counter() - t0)
        hist["losses"].append(total / max(count, 1))
        hist["samples"].append(count)
        t1 = time.perf_counter()
        due = (epoch + 1) % eval_every == 0 or epoch + 1 == epochs
        scores = team.evaluate() if due else {}
        for m in names:
            v, t = scores.get(m, (nan, nan))
            hist[f"val_{m}"].append(float(v))
            hist[f"test_{m}"].append(float(t))
        hist["eval_seconds"].append(time.perf_counter() - t1)
        stopped = stop_now() and epoch + 1 < epochs
        logger.info("%s epoch %d: loss %.4f, %s, %.1f s train, %.1f s eval%s", what, epoch,
                    hist["losses"][-1], ", ".join(f"val {m} {hist[f'val_{m}'][-1]:.4f}, test "
                                                  f"{m} {hist[f'test_{m}'][-1]:.4f}"
                                                  for m in names),
                    hist["seconds"][-1], hist["eval_seconds"][-1],
                    "; stopping early" if stopped else "")
        if checkpoint_dir is not None:
            from .checkpoint import save_checkpoint

            model_state, opt_state = team.state()
            save_checkpoint(checkpoint_dir, model_state, opt_state, epoch=epoch + 1,
                            history=hist, params=params or {})
        if on_epoch is not None:
            row = {"loss": hist["losses"][-1]}
            row.update({k: hist[k][-1] for k in keys[1:]})
            on_epoch(epoch, row)
    return EpochRun(hist, names, monitor, best_epoch(val, min_delta=min_delta, warmup=warmup),
                    stopped and len(hist["losses"]) < epochs, team.model())


def at_epoch(history: dict[str, list[float]], metrics: Sequence[str], epoch: int, split: str
             ) -> dict[str, float]:
    """``{metric: value}`` of ``split`` (``"val"`` / ``"test"``) at ``epoch`` (NaN when out of
    range or not evaluated)."""
    out = {}
    for m in metrics:
        col = history.get(f"{split}_{m}", [])
        out[m] = float(col[epoch]) if 0 <= epoch < len(col) else float("nan")
    return out


class ScoredEpochs:
    """Table and summary of a result with per-metric ``val`` / ``test`` lists (mixed into
    :class:`~graphshard.train.link.LinkResult` and
    :class:`~graphshard.train.hetero.HeteroResult`): it reads ``losses``, ``val``,
    ``test``, ``samples``, ``seconds``, ``eval_seconds``, ``best_epoch``, ``monitor`` and
    ``stopped_early``.

    Epochs are counted from 0: entry ``e`` of every per-epoch list is epoch ``e``, the
    number ``best_epoch``, the ``on_epoch`` callback and ``graphshard train`` (its table,
    stderr lines and ``--json``) give it."""

    losses: list[float]
    samples: list[int]
    seconds: list[float]
    eval_seconds: list[float]
    best_epoch: int
    monitor: str
    stopped_early: bool
    val: Any
    test: Any

    @property
    def val_at_best(self) -> dict[str, float]:
        """Validation metrics at ``best_epoch`` (NaN where not evaluated)."""
        return {m: value_at(v, self.best_epoch) for m, v in self.val.items()}

    @property
    def test_at_best_val(self) -> dict[str, float]:
        """Test metrics at ``best_epoch``."""
        return {m: value_at(v, self.best_epoch) for m, v in self.test.items()}

    def columns(self) -> dict[str, list[Any]]:
        """Per-epoch columns for a table: loss, each validation and test metric, examples,
        seconds."""
        out: dict[str, list[Any]] = {"losses": self.losses}
        for m in self.val:
            out[f"val_{m}"] = self.val[m]
            out[f"test_{m}"] = self.test[m]
        out.update(samples=self.samples, seconds=self.seconds, eval_seconds=self.eval_seconds)
        return out

    def summary(self) -> dict[str, Any]:
        """JSON-able summary: epochs run, best epoch (from 0), validation and test metrics
        there (None when not measured), the monitor, whether the run stopped early."""
        return {"epochs": len(self.losses), "best_epoch": self.best_epoch,
                "monitor": self.monitor,
                "val": {m: finite(v) for m, v in self.val_at_best.items()},
                "test": {m: finite(v) for m, v in self.test_at_best_val.items()},
                "stopped_early": self.stopped_early}


def value_at(xs: Sequence[float], i: int) -> float:
    """``xs[i]`` as a float, NaN when ``i`` is out of range."""
    return float(xs[i]) if 0 <= i < len(xs) else float("nan")


def finite(x: float) -> float | None:
    """``x``, or None for NaN (JSON has no NaN)."""
    return None if x != x else float(x)


def as_ints(xs: Sequence[float]) -> list[int]:
    """Counts from a history list (stored as floats in checkpoints)."""
    return [int(v) for v in np.asarray(xs, dtype=np.float64)]
