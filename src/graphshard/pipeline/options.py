"""The options of the pipeline's two steps, each one frozen, validated dataclass, made once
at the front door (:func:`~graphshard.pipeline.run_pipeline`, the CLI) from a dict or given
as is.

Example:
    >>> AssignOptions.of({"seed": 3, "balance_edges": False})
    AssignOptions(seed=3, balance_edges=False)
    >>> DispatchOptions.of(None).num_hops
    1
    >>> AssignOptions.of({"sed": 3})
    Traceback (most recent call last):
    ...
    graphshard.errors.ValidationError: assign_options: unknown option 'sed'; the options are balance_edges, coarse_entries, imbalance, max_task_entries, num_workers, seed, work_dir
"""  # noqa: E501

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any, TypeVar

from ..errors import ValidationError

__all__ = ["AssignOptions", "DispatchOptions"]

_O = TypeVar("_O", bound="_Options")


def _int(value: object, name: str, minimum: int, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValidationError(f"{name} must be an integer >= {minimum}"
                              f"{' or None' if optional else ''}, got {value!r}",
                              field=name, value=value)


class _Options:
    """What both dataclasses share: building from a dict, a short repr, keyword arguments."""

    _what = "options"

    @classmethod
    def of(cls: type[_O], value: _O | Mapping[str, Any] | None) -> _O:
        """``value`` as this dataclass: None gives the defaults, a dict is checked (an
        unknown key lists the valid ones), an instance is returned as it is."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise ValidationError(f"{cls._what}: expected a dict or {cls.__name__}, got "
                                  f"{type(value).__name__}", field=cls._what)
        names = sorted(f.name for f in fields(cls))  # type: ignore[arg-type]
        for key in value:
            if key not in names:
                raise ValidationError(f"{cls._what}: unknown option {key!r}; the options are "
                                      f"{', '.join(names)}", field=cls._what, value=key)
        return cls(**value)

    def changed(self) -> dict[str, Any]:
        """The fields that differ from their defaults."""
        out = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.default is MISSING or value != f.default:
                out[f.name] = value
        return out

    def kwargs(self) -> dict[str, Any]:
        """Every field, as keyword arguments of the step's function."""
        return asdict(self)  # type: ignore[call-overload]

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.changed().items())
        return f"{type(self).__name__}({shown})"


@dataclass(frozen=True, repr=False)
class AssignOptions(_Options):
    """Options of step 1, :func:`~graphshard.pipeline.assign` (besides the method and the
    number of parts).

    Attributes:
        seed: Seed of every random choice.
        imbalance: Allowed imbalance, in ``[0, 1)``.
        balance_edges: ``lp``: balance in-edges per part too (None: lp's default, on).
        num_workers: ``lp``: concurrent tasks (None: all cores / all Ray CPUs).
        max_task_entries: ``lp``: edge entries per shard task (None: lp's default).
        coarse_entries: ``lp``: largest coarsest graph partitioned on one worker.
        work_dir: ``lp``: parent folder (or URI) of its temporary shard files.
    """

    _what = "assign_options"
    #: fields that say where and how a run goes, not what it computes
    RUN_ONLY = ("num_workers", "work_dir")

    seed: int = 0
    imbalance: float = 0.03
    balance_edges: bool | None = None
    num_workers: int | None = None
    max_task_entries: int | None = None
    coarse_entries: int | None = None
    work_dir: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValidationError(f"seed must be an integer, got {self.seed!r}", field="seed",
                                  value=self.seed)
        if isinstance(self.imbalance, bool) or not isinstance(self.imbalance, (int, float)) \
                or not 0 <= self.imbalance < 1:
            raise ValidationError(f"imbalance must be a number in [0, 1), got "
                                  f"{self.imbalance!r}", field="imbalance", value=self.imbalance)
        if self.balance_edges is not None and not isinstance(self.balance_edges, bool):
            raise ValidationError(f"balance_edges must be True, False or None, got "
                                  f"{self.balance_edges!r}", field="balance_edges")
        for name in ("num_workers", "max_task_entries", "coarse_entries"):
            _int(getattr(self, name), name, 1, optional=True)
        if self.work_dir is not None:
            if not isinstance(self.work_dir, (str, os.PathLike)):
                raise ValidationError(f"work_dir must be a path or a URI, got "
                                      f"{self.work_dir!r}", field="work_dir")
            object.__setattr__(self, "work_dir", os.fspath(self.work_dir))

    def result_key(self) -> dict[str, Any]:
        """What the assignment depends on: the changed fields but :attr:`RUN_ONLY`."""
        return {k: v for k, v in sorted(self.changed().items()) if k not in self.RUN_ONLY}


@dataclass(frozen=True, repr=False)
class DispatchOptions(_Options):
    """Options of step 2, :func:`~graphshard.pipeline.dispatch` (besides the folders).

    Attributes:
        graph_name: Name in the config (None: the chunked metadata's).
        num_hops: HALO hops (>= 1).
        save_orig_ids: Also write the original per-type IDs of each part.
        memory_budget: Bytes one task may use (None: no check).
        node_block: Nodes per node-ID task.
        keep_work: Keep the work folder after success.
        num_trainers_per_machine: Trainers per machine (DGL's key).
    """

    _what = "dispatch_options"

    graph_name: str | None = None
    num_hops: int = 1
    save_orig_ids: bool = False
    memory_budget: int | None = None
    node_block: int = 1 << 20
    keep_work: bool = False
    num_trainers_per_machine: int = 1

    def __post_init__(self) -> None:
        if self.graph_name is not None and not isinstance(self.graph_name, str):
            raise ValidationError(f"graph_name must be a string, got {self.graph_name!r}",
                                  field="graph_name")
        _int(self.num_hops, "num_hops", 1)
        _int(self.memory_budget, "memory_budget", 1, optional=True)
        _int(self.node_block, "node_block", 1)
        _int(self.num_trainers_per_machine, "num_trainers_per_machine", 1)
        for name in ("save_orig_ids", "keep_work"):
            if not isinstance(getattr(self, name), bool):
                raise ValidationError(f"{name} must be True or False, got "
                                      f"{getattr(self, name)!r}", field=name)
