"""Random heterogeneous graphs with dense and Ragged features, and exact comparison."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck

import graphshard as gs
from graphshard import Ragged

NTYPES = ["user", "item", "tag"]
#: hypothesis settings shared by the io tests (tmp_path is reused across examples)
FAST = {"deadline": None, "suppress_health_check": [HealthCheck.function_scoped_fixture]}


def random_graph(seed: int, *, euler_safe: bool = False) -> gs.Graph:
    """A small random heterograph; ``euler_safe`` keeps features Euler can hold."""
    rng = np.random.default_rng(seed)
    ntypes = NTYPES[: rng.integers(1, 4)]
    num = {t: int(rng.integers(0, 6)) for t in ntypes}
    data = {}
    for k in range(int(rng.integers(1, 4))):
        s, d = ntypes[rng.integers(len(ntypes))], ntypes[rng.integers(len(ntypes))]
        m = int(rng.integers(0, 9)) if num[s] and num[d] else 0
        data[(s, f"r{k}", d)] = (rng.integers(0, max(num[s], 1), m),
                                 rng.integers(0, max(num[d], 1), m))
    g = gs.heterograph(data, num_nodes_dict=num)
    for t in ntypes:
        _features(g.nodes[t].data, num[t], rng, euler_safe)
    for et in g.canonical_etypes:
        _features(g.edges[et].data, g.num_edges(et), rng, euler_safe)
    return g


def _ragged(rng: np.random.Generator, n: int, dtype: str) -> Ragged:
    lengths = rng.integers(0, 4, n)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    hi = 123 if dtype == "uint8" else 1000
    lo = 97 if dtype == "uint8" else 0
    vals = rng.integers(lo, hi, int(offsets[-1])).astype(dtype)
    if dtype == "float32":
        vals = rng.standard_normal(int(offsets[-1])).astype(np.float32)
    return Ragged(vals, offsets)


def _features(frame, n: int, rng: np.random.Generator, euler_safe: bool) -> None:
    if rng.random() < 0.7:
        frame["x"] = rng.standard_normal((n, 2)).astype(np.float32)
    if rng.random() < 0.5:
        frame["label"] = rng.integers(0, 50, n).astype(np.int64)
    if rng.random() < 0.5:
        frame["tags"] = _ragged(rng, n, "int64")
    if rng.random() < 0.5:
        frame["text"] = _ragged(rng, n, "uint8")
    if rng.random() < 0.3:
        frame["vals"] = _ragged(rng, n, "float32")
    if rng.random() < 0.3:
        frame["weight"] = rng.random(n).astype(np.float32 if euler_safe else np.float64)


def assert_columns_equal(a, b, what: str) -> None:
    if isinstance(a, Ragged):
        assert isinstance(b, Ragged), f"{what}: expected Ragged, got {type(b)}"
        assert a.equals(b), f"{what}: {a} != {b}"
    else:
        assert not isinstance(b, Ragged), f"{what}: got Ragged"
        assert a.dtype == b.dtype and a.shape == b.shape, \
            f"{what}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
        np.testing.assert_array_equal(a, b, err_msg=what)


def assert_graphs_equal(a: gs.Graph, b: gs.Graph, *, src_sorted: bool = False,
                        ignore: tuple[str, ...] = ()) -> None:
    """Exact equality; with ``src_sorted`` edges of ``a`` are compared after a stable sort
    by source (the order Euler gives back)."""
    assert a.ntypes == b.ntypes
    assert a.canonical_etypes == b.canonical_etypes
    for t in a.ntypes:
        assert a.num_nodes(t) == b.num_nodes(t), t
        fa, fb = a.nodes[t].data, b.nodes[t].data
        assert set(fa) - set(ignore) == set(fb) - set(ignore), (t, list(fa), list(fb))
        for name in set(fa) - set(ignore):
            assert_columns_equal(fa[name], fb[name], f"{t}/{name}")
    for et in a.canonical_etypes:
        s, d = a.edges(etype=et)
        order = np.argsort(s, kind="stable") if src_sorted else np.arange(len(s))
        s2, d2 = b.edges(etype=et)
        np.testing.assert_array_equal(s[order], s2, err_msg=str(et))
        np.testing.assert_array_equal(d[order], d2, err_msg=str(et))
        fa, fb = a.edges[et].data, b.edges[et].data
        assert set(fa) == set(fb), (et, list(fa), list(fb))
        for name in fa:
            col = fa[name].take(order) if isinstance(fa[name], Ragged) else fa[name][order]
            assert_columns_equal(col, fb[name], f"{et}/{name}")
