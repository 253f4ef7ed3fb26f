"""Fanouts: how many neighbours each layer samples, normalised once into one frozen,
validated object (PyG's ``NumNeighbors`` is the model: a list, or per edge type).

Every sampler (local, distributed, PyG's) takes what users write, a list ``[10, 25]``, a
list of per-edge-type dicts, or a dict ``{etype: [k per layer]}``, or a :class:`Fanouts`,
and reads it through :meth:`Fanouts.of` then :meth:`Fanouts.resolve` against its graph.

Example:
    >>> f = Fanouts.of([10, {"buys": 5}])
    >>> f.num_layers, f
    (2, Fanouts([10, {'buys': 5}]))
    >>> Fanouts.of({"buys": [3, 2], "rev": [1, 1]})
    Fanouts([{'buys': 3, 'rev': 1}, {'buys': 2, 'rev': 1}])
    >>> Fanouts.of([10, -2])
    Traceback (most recent call last):
    ...
    graphshard.errors.ValidationError: fanouts[1]: a fanout must be an int >= -1 (-1 = all neighbours), got -2
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from ..errors import ValidationError
from ..store import GraphStore
from ..typing import EdgeType

__all__ = ["Fanouts", "fanout_int"]

#: one layer: one fanout for every edge type, or a fanout per edge type (as the user named it)
Layer = int | Mapping[Any, int]


def fanout_int(v: Any, where: str) -> int:
    """``v`` as a fanout: an int >= -1 (-1: all neighbours), else a ValidationError."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < -1:
        raise ValidationError(f"{where}: a fanout must be an int >= -1 (-1 = all neighbours), "
                              f"got {v!r}", field="fanout", value=v)
    return int(v)


def _layer(value: Any, where: str) -> Layer:
    if isinstance(value, Mapping):
        return MappingProxyType({k: fanout_int(v, f"{where}[{k!r}]") for k, v in value.items()})
    return fanout_int(value, where)


@dataclass(frozen=True)
class Fanouts:
    """Per-layer fanouts, input layer first (layer 0 samples around the seeds).

    Attributes:
        layers: One entry per layer: an int for every edge type, or a read-only mapping
            from an edge type (as the user named it: a relation, ``"src:rel:dst"`` or a
            canonical tuple) to its fanout; types a mapping leaves out sample 0.
    """

    layers: tuple[Layer, ...]

    @classmethod
    def of(cls, value: Fanouts | Mapping[Any, Sequence[int]] | Sequence[Layer]) -> Fanouts:
        """``value`` checked and normalised: a list (of ints or per-type dicts) with one
        entry per layer, or ``{etype: [k per layer]}`` whose lists have one length."""
        if isinstance(value, Fanouts):
            return value
        if isinstance(value, Mapping):
            lengths = {k: len(v) if isinstance(v, Sequence) and not isinstance(v, str) else -1
                       for k, v in value.items()}
            if any(n < 1 for n in lengths.values()) or len(set(lengths.values())) != 1:
                raise ValidationError("fanouts: every edge type needs a list with one fanout "
                                      "per layer, all of the same length; got lengths "
                                      f"{lengths}", field="fanouts")
            num_layers = next(iter(lengths.values()))
            return cls(tuple(_layer({k: v[i] for k, v in value.items()}, f"fanouts layer {i}")
                             for i in range(num_layers)))
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
            raise ValidationError(f"fanouts: expected a non-empty list with one fanout per "
                                  f"layer, got {value!r}", field="fanouts")
        return cls(tuple(_layer(f, f"fanouts[{i}]") for i, f in enumerate(value)))

    @property
    def num_layers(self) -> int:
        """Number of layers (hops)."""
        return len(self.layers)

    def resolve(self, store: GraphStore) -> list[dict[EdgeType, int]]:
        """``{canonical etype: k}`` per layer for ``store``'s edge types (an unknown or
        ambiguous edge type is a ValidationError naming it)."""
        return [resolve_layer(store, layer) for layer in self.layers]

    def __hash__(self) -> int:  # the per-type layers are read-only mappings
        return hash(repr(self))

    def __repr__(self) -> str:
        shown = [dict(x) if isinstance(x, Mapping) else x for x in self.layers]
        return f"Fanouts({shown})"


def resolve_layer(store: GraphStore, layer: Layer) -> dict[EdgeType, int]:
    """One layer as ``{canonical etype: k}`` for every edge type of ``store``."""
    if isinstance(layer, Mapping):
        out = dict.fromkeys(store.canonical_etypes, 0)
        for key, v in layer.items():
            out[store.to_canonical_etype(key)] = v
        return out
    return dict.fromkeys(store.canonical_etypes, layer)
