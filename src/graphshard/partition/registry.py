"""The registry of partition methods: name -> :class:`Method`, one signature for all.

Registries in graphshard share one shape: a dict from name to an entry holding the name,
the function and a one-line description (``METHODS`` here, ``pipeline.ASSIGN_METHODS`` for
the out-of-core pipeline).  CLI choices and docs are read from them; :func:`lookup` turns
an unknown name into one :class:`~graphshard.errors.ValidationError` listing the choices.

This module holds only the shapes, so that method modules (``methods``, ``backends``,
``portfolio``) import it and never each other's registrations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import ValidationError
from ..typing import IdArray
from .adjacency import Adjacency

__all__ = ["METHODS", "Method", "MethodOptions", "PartitionFn", "lookup", "register_method"]


@dataclass(frozen=True)
class MethodOptions:
    """Options every method receives.

    Attributes:
        imbalance: Allowed imbalance: max part weight <= (1 + imbalance) * average.
        objtype: ``"cut"`` (edge cut) or ``"vol"`` (communication volume).
        seed: Random seed; the same seed gives the same assignment.
        threads: Threads a method may use (None: all cores).
        node_ids: The nodes' original IDs (homogeneous order; the graph's integer
            ``"node_id"`` feature, e.g. Euler's), or None; ``hash`` splits by them.
        time_budget: ``auto`` only: the CPU time its backend may take on a skewed graph, as
            a multiple of METIS k-way's (None: ``portfolio.AUTO_TIME_BUDGET``, 1.0).
        type_counts: Nodes of each node type in declared order (the homogeneous order is
            type by type), or None for one type; ``random`` balances each type.
    """

    imbalance: float = 0.03
    objtype: str = "cut"
    seed: int = 0
    threads: int | None = None
    node_ids: npt.NDArray[np.integer] | None = field(default=None, compare=False, repr=False)
    time_budget: float | None = None
    type_counts: tuple[int, ...] | None = None


PartitionFn = Callable[[Adjacency, int, MethodOptions], IdArray]


@dataclass(frozen=True)
class Method:
    """A registered method: its function, a one-line description and what it needs.

    Attributes:
        name: The registry key (the CLI's ``--method`` value).
        fn: The function; for :data:`METHODS` a :data:`PartitionFn`.
        description: One line for ``--help`` and the docs.
        uses_structure: The method reads the edges (``random`` and ``hash`` do not).
        multi_constraint: The method balances several vertex weights at once.
        requires: The optional package it needs, if any.
    """

    name: str
    fn: Callable[..., Any]
    description: str
    uses_structure: bool = True
    multi_constraint: bool = False
    requires: str | None = None


METHODS: dict[str, Method] = {}

_E = TypeVar("_E")


def lookup(registry: Mapping[str, _E], name: str, *, what: str, field: str) -> _E:
    """The entry of ``name``, or a ValidationError naming ``what`` and the valid choices.

    Example:
        >>> lookup({"a": 1}, "b", what="partition method", field="method")
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: unknown partition method 'b'; choose one of ['a']
    """
    if name not in registry:
        raise ValidationError(f"unknown {what} {name!r}; choose one of {sorted(registry)}",
                              field=field, value=name)
    return registry[name]


def register_method(name: str, description: str, *, uses_structure: bool = True,
                    multi_constraint: bool = False, requires: str | None = None
                    ) -> Callable[[PartitionFn], PartitionFn]:
    """Decorator adding a function to :data:`METHODS` under ``name``."""
    def wrap(fn: PartitionFn) -> PartitionFn:
        METHODS[name] = Method(name, fn, description, uses_structure, multi_constraint, requires)
        return fn
    return wrap
