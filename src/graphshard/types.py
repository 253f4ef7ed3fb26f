"""One type-lookup object: node types, canonical edge types and the lookups by name.

:class:`Graph`, :class:`~graphshard.partition_book.RangePartitionBook` and
:class:`~graphshard.distributed.DistGraph` each hold a :class:`GraphTypes`, so a name resolves the
same way, with the same messages, in memory, in the partition book and on a cluster.

An edge type may be written as DGL accepts it: a canonical ``(src, rel, dst)`` tuple, a
relation name when it names one canonical type, or None when the graph has one edge
type; we also take the ``"src:rel:dst"`` string of our files and configs, and a list of
three names (JSON has no tuples).  Like DGL, an unknown canonical tuple is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import ValidationError
from .typing import EdgeType

__all__ = ["GraphTypes", "TypedGraph"]


class GraphTypes:
    """Node types and canonical edge types in ID order, with lookups by name.

    Args:
        ntypes: Node type names in ID order.
        canonical_etypes: Canonical edge types in ID order (tuples, lists of three names or
            ``"src:rel:dst"`` strings).

    Raises:
        ValidationError: a type listed twice, or an edge type that is not three names.

    Example:
        >>> types = GraphTypes(["u", "i"], [("u", "buys", "i"), ("i", "rev", "u")])
        >>> types.ntype_id("i"), types.etype_id("rev"), types.etype_id("u:buys:i")
        (1, 1, 0)
        >>> types.to_canonical_etype("buys")
        ('u', 'buys', 'i')
        >>> types.to_canonical_etype(("u", "x", "i"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: unknown edge type ('u', 'x', 'i'); edge types are [...]
    """

    __slots__ = ("_etype_ids", "_etypes", "_ntype_ids", "_ntypes", "_relations")

    def __init__(self, ntypes: Sequence[str], canonical_etypes: Sequence[Any]) -> None:
        self._ntypes = tuple(str(t) for t in ntypes)
        self._etypes = tuple(_as_canonical(et, i) for i, et in enumerate(canonical_etypes))
        self._ntype_ids = _index(self._ntypes, "node type", "ntypes")
        self._etype_ids = _index(self._etypes, "edge type", "canonical_etypes")
        self._relations: dict[str, list[EdgeType]] = {}
        for et in self._etypes:
            self._relations.setdefault(et[1], []).append(et)

    # ----- the types --------------------------------------------------------------------
    @property
    def ntypes(self) -> list[str]:
        """Node type names in ID order (a new list)."""
        return list(self._ntypes)

    @property
    def canonical_etypes(self) -> list[EdgeType]:
        """Canonical edge types ``(src, rel, dst)`` in ID order (a new list)."""
        return list(self._etypes)

    @property
    def etypes(self) -> list[str]:
        """Relation names, one per canonical edge type, in ID order."""
        return [et[1] for et in self._etypes]

    # ----- lookups ----------------------------------------------------------------------
    def to_ntype(self, ntype: str | None) -> str:
        """``ntype`` checked, or the only node type when ``ntype`` is None."""
        if ntype is None:
            if len(self._ntypes) != 1:
                raise ValidationError(f"the graph has node types {list(self._ntypes)}: name "
                                      "one", field="ntype")
            return self._ntypes[0]
        if ntype not in self._ntypes:
            raise ValidationError(f"unknown node type {ntype!r}; node types are "
                                  f"{list(self._ntypes)}", field="ntype", value=ntype)
        return self._ntypes[self._ntype_ids[ntype]]

    def ntype_id(self, ntype: str | None) -> int:
        """Index of ``ntype`` in :attr:`ntypes` (None: the only node type)."""
        return self._ntype_ids[self.to_ntype(ntype)]

    def to_canonical_etype(self, etype: Any) -> EdgeType:
        """Resolve a relation name, ``"src:rel:dst"``, tuple or None to a canonical type.

        Raises:
            ValidationError: None with several edge types, an unknown type (listing the
                valid ones), or a relation that names several canonical types.
        """
        if etype is None:
            if len(self._etypes) != 1:
                raise ValidationError(f"the graph has edge types {list(self._etypes)}: name "
                                      "one", field="etype")
            return self._etypes[0]
        if isinstance(etype, str) and etype.count(":") == 2:
            key: Any = tuple(etype.split(":"))
        elif isinstance(etype, (tuple, list)) and len(etype) == 3:
            key = tuple(etype)
        else:
            key = None
        if key is not None:
            if key in self._etype_ids:
                return key
        elif isinstance(etype, str) and etype in self._relations:
            matches = self._relations[etype]
            if len(matches) == 1:
                return matches[0]
            raise ValidationError(f"relation {etype!r} is ambiguous: it names {matches}; use "
                                  "the canonical (src, rel, dst) form", field="etype",
                                  value=etype)
        raise ValidationError(f"unknown edge type {etype!r}; edge types are "
                              f"{list(self._etypes)}", field="etype", value=etype)

    def etype_id(self, etype: Any) -> int:
        """Index of ``etype`` (any form :meth:`to_canonical_etype` takes) in
        :attr:`canonical_etypes`."""
        return self._etype_ids[self.to_canonical_etype(etype)]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphTypes):
            return NotImplemented
        return (self._ntypes, self._etypes) == (other._ntypes, other._etypes)

    def __hash__(self) -> int:
        return hash((self._ntypes, self._etypes))

    def __repr__(self) -> str:
        return (f"GraphTypes(ntypes={list(self._ntypes)}, "
                f"etypes={[':'.join(et) for et in self._etypes]})")


def _as_canonical(et: Any, i: int) -> EdgeType:
    parts = et.split(":") if isinstance(et, str) else et
    if not isinstance(parts, (tuple, list)) or len(parts) != 3 \
            or not all(isinstance(p, str) for p in parts):
        raise ValidationError(f"canonical_etypes[{i}]: expected (src, rel, dst) names or "
                              f"'src:rel:dst', found {et!r}", field="canonical_etypes",
                              value=et)
    return (parts[0], parts[1], parts[2])


def _index(names: tuple, what: str, field: str) -> dict:
    ids: dict = {}
    for i, name in enumerate(names):
        if name in ids:
            raise ValidationError(f"{field}: {what} {name!r} is listed twice (positions "
                                  f"{ids[name]} and {i})", field=field, value=name)
        ids[name] = i
    return ids


class TypedGraph:
    """The type properties of :class:`~graphshard.Graph`,
    :class:`~graphshard.partition_book.RangePartitionBook` and
    :class:`~graphshard.distributed.DistGraph`
    (one definition for the three): each holds its :class:`GraphTypes` in ``_types``.

    Example:
        >>> class Two(TypedGraph):
        ...     def __init__(self) -> None:
        ...         self._types = GraphTypes(["u", "i"], [("u", "buys", "i")])
        >>> g = Two()
        >>> g.ntypes, g.etypes, g.canonical_etypes
        (['u', 'i'], ['buys'], [('u', 'buys', 'i')])
    """

    __slots__ = ()
    _types: GraphTypes

    @property
    def types(self) -> GraphTypes:
        """The node and edge types with their lookups (shared by a graph, its partition
        book and a DistGraph of it)."""
        return self._types

    @property
    def ntypes(self) -> list[str]:
        """Node type names in ID order."""
        return self._types.ntypes

    @property
    def canonical_etypes(self) -> list[EdgeType]:
        """Canonical edge types ``(src, rel, dst)`` in ID order."""
        return self._types.canonical_etypes

    @property
    def etypes(self) -> list[str]:
        """Relation names, one per canonical edge type, in ID order."""
        return self._types.etypes
