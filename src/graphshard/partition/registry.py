"""The one registry of partition methods: name -> :class:`Method`, for memory and disk.

A method says what it works on: ``fn`` partitions an undirected adjacency held in memory
(:data:`PartitionFn`: METIS, KaMinPar, ...), ``stream`` assigns the nodes of a chunked graph
reading its files in bounded memory (:data:`StreamFn`: ``lp``); ``random`` and ``hash``
have both.  ``partition_graph`` and the out-of-core ``assign`` both take every method
(:mod:`~graphshard.partition.source` runs each where it does not fit natively), so the
same method and seed give the same parts on either path.  Registries in graphshard share
one shape: a dict from name to an entry holding the name, the function(s) and a one-line
description; CLI choices and docs are read from them; :func:`lookup` turns an unknown name
into one :class:`~graphshard.errors.ValidationError` listing the choices.

This module holds only the shapes, so that method modules (``methods``, ``backends``,
``portfolio``) import it and never each other's registrations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import ValidationError
from ..typing import IdArray
from .adjacency import Adjacency

__all__ = ["METHODS", "Method", "MethodOptions", "PartitionFn", "StreamFn", "lookup",
           "register_method", "register_stream"]


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
#: ``stream(meta, num_parts, options, **run) -> {ntype: parts}``: ``meta`` a
#: :class:`~graphshard.io.chunked.ChunkedMeta`; ``run`` says where and how (``use_ray``,
#: ``num_workers``, ``work_dir``, ...; a method ignores what it does not use)
StreamFn = Callable[..., dict[str, IdArray]]


@dataclass(frozen=True)
class Method:
    """A registered method: its function(s), a one-line description and what it needs.

    Attributes:
        name: The registry key (the CLI's ``--method`` value).
        fn: The function over an adjacency in memory (:data:`PartitionFn`), or None for a
            method that only streams.
        description: One line for ``--help`` and the docs.
        uses_structure: The method reads the edges (``random`` and ``hash`` do not).
        multi_constraint: The method balances several vertex weights at once.
        requires: The optional package it needs, if any.
        stream: The function over a chunked graph's files (:data:`StreamFn`), or None for
            a method that needs the adjacency in memory.
        objectives: The ``objtype`` values it minimises (``()``: none, as ``random``); any
            other is refused (:meth:`check_objective`), never silently ignored.
    """

    name: str
    fn: Callable[..., Any] | None
    description: str
    uses_structure: bool = True
    multi_constraint: bool = False
    requires: str | None = None
    stream: StreamFn | None = None
    objectives: tuple[str, ...] = ("cut",)

    def check_objective(self, objtype: str) -> None:
        """A ValidationError for an ``objtype`` this method does not minimise (``"cut"``,
        the default, passes for a method without an objective)."""
        if objtype not in ("cut", "vol"):
            raise ValidationError(f"objtype must be 'cut' or 'vol', got {objtype!r}",
                                  field="objtype", value=objtype)
        if objtype != "cut" and objtype not in self.objectives:
            has = (f"it minimises {' and '.join(self.objectives)} only" if self.objectives
                   else "it has no objective")
            raise ValidationError(f"objtype={objtype!r}: partition method {self.name!r} does "
                                  f"not minimise it ({has}; metis, mtkahypar and auto "
                                  "take 'vol')", field="objtype", value=objtype)

    def partition(self, adj: Adjacency, num_parts: int, options: MethodOptions) -> IdArray:
        """``fn(adj, num_parts, options)``; a ValidationError for a method that only
        streams (``partition_graph`` runs those over a chunked copy of the graph)."""
        if self.fn is None:
            raise ValidationError(f"partition method {self.name!r} streams a chunked graph's "
                                  "files and has no in-memory form: run it with "
                                  "partition_graph or the pipeline", field="part_method",
                                  value=self.name)
        return np.asarray(self.fn(adj, num_parts, options), dtype=np.int64)


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
                    multi_constraint: bool = False, requires: str | None = None,
                    objectives: tuple[str, ...] = ("cut",)
                    ) -> Callable[[PartitionFn], PartitionFn]:
    """Decorator adding a function to :data:`METHODS` under ``name``."""
    def wrap(fn: PartitionFn) -> PartitionFn:
        old = METHODS.get(name)
        METHODS[name] = Method(name, fn, description, uses_structure, multi_constraint, requires,
                               stream=old.stream if old is not None else None,
                               objectives=objectives)
        return fn
    return wrap


def register_stream(name: str, description: str | None = None, *, uses_structure: bool = True
                    ) -> Callable[[StreamFn], StreamFn]:
    """Decorator adding the streaming function of method ``name`` to :data:`METHODS`: beside
    its in-memory function when it has one (``description`` then optional), else alone."""
    def wrap(fn: StreamFn) -> StreamFn:
        old = METHODS.get(name)
        if old is not None:
            METHODS[name] = replace(old, stream=fn)
        elif description is None:
            raise ValueError(f"register_stream({name!r}): a new method needs a description")
        else:
            METHODS[name] = Method(name, None, description, uses_structure, stream=fn)
        return fn
    return wrap
