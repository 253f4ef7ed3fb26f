"""GraphTypes: one lookup, one set of messages, for Graph, the partition book and DistGraph."""

from __future__ import annotations

import pytest

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.partition_book import RangePartitionBook
from graphshard.types import GraphTypes

ETYPES = [("u", "r", "i"), ("i", "r", "u"), ("u", "f", "u")]


def _graph():
    return gs.heterograph({et: ([0], [0]) for et in ETYPES})


def _book():
    return RangePartitionBook(0, {"u": [[0, 1]], "i": [[1, 2]]},
                              {":".join(et): [[k, k + 1]] for k, et in enumerate(ETYPES)})


@pytest.mark.parametrize("owner", [_graph, _book, lambda: GraphTypes(["u", "i"], ETYPES)])
def test_every_owner_resolves_and_refuses_alike(owner):
    made = owner()
    types = made if isinstance(made, GraphTypes) else made.types
    assert types == GraphTypes(["u", "i"], ETYPES)
    assert types.to_canonical_etype("f") == ("u", "f", "u")
    assert types.to_canonical_etype("i:r:u") == ("i", "r", "u")
    assert types.to_canonical_etype(["u", "r", "i"]) == ("u", "r", "i")  # a JSON list
    assert types.etype_id(("u", "f", "u")) == 2 and types.ntype_id("i") == 1
    with pytest.raises(ValidationError, match=r"unknown edge type \('u', 'x', 'i'\); edge "
                                              r"types are \[\('u', 'r', 'i'\)"):
        types.to_canonical_etype(("u", "x", "i"))
    with pytest.raises(ValidationError, match=r"unknown edge type 'x'; edge types are"):
        types.etype_id("x")
    with pytest.raises(ValidationError, match=r"relation 'r' is ambiguous: it names "
                                              r"\[\('u', 'r', 'i'\), \('i', 'r', 'u'\)\]"):
        types.to_canonical_etype("r")
    with pytest.raises(ValidationError, match=r"unknown node type 'x'; node types are "
                                              r"\['u', 'i'\]"):
        types.ntype_id("x")
    with pytest.raises(ValidationError, match=r"the graph has edge types .*: name one"):
        types.to_canonical_etype(None)


def test_the_book_and_the_graph_refuse_an_unknown_tuple_with_one_message():
    g, book = _graph(), _book()
    for call in (lambda: g.num_edges(("u", "x", "i")),
                 lambda: book.map_to_homo_eid([0], ("u", "x", "i"))):
        with pytest.raises(ValidationError, match=r"unknown edge type \('u', 'x', 'i'\)"):
            call()
    with pytest.raises(ValidationError, match=r"unknown node type 'x'"):
        book.partid2nids(0, "x")
    assert book.partid2eids(0, "f").tolist() == [0]
    assert g.get_etype_id("u:f:u") == book.types.etype_id("u:f:u") == 2


@pytest.mark.parametrize(("ntypes", "etypes", "message"), [
    (["u", "u"], [], r"ntypes: node type 'u' is listed twice \(positions 0 and 1\)"),
    (["u"], [("u", "r", "u"), "u:r:u"], r"canonical_etypes: edge type \('u', 'r', 'u'\) is "
                                        r"listed twice"),
    (["u"], [("u", "r")], r"canonical_etypes\[0\]: expected \(src, rel, dst\) names or "
                          r"'src:rel:dst', found \('u', 'r'\)"),
])
def test_bad_types_are_refused(ntypes, etypes, message):
    with pytest.raises(ValidationError, match=message):
        GraphTypes(ntypes, etypes)


def test_one_type_needs_no_name():
    types = gs.graph(([0], [1])).types
    assert types.to_ntype(None) == "_N" and types.to_canonical_etype(None) == ("_N", "_E", "_N")
    assert repr(types) == "GraphTypes(ntypes=['_N'], etypes=['_N:_E:_N'])"
