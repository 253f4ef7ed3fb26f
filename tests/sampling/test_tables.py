"""Derived sampling tables: built on first use only, from the graph's own weight column."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs
from graphshard import sampling as S
from graphshard.errors import ValidationError
from graphshard.sampling.kernels.alias import row_alias, row_inv_weights
from graphshard.store import as_store


def _graph(dtype=np.float32) -> gs.Graph:
    rng = np.random.default_rng(0)
    g = gs.graph((rng.integers(0, 50, 600), rng.integers(0, 50, 600)), num_nodes=50)
    w = rng.random(600).astype(dtype)
    w[::7] = 0.0
    g.edata["w"] = w
    return g


def _table_keys(g: gs.Graph) -> list:
    return sorted(k for k in as_store(g)._extra if k[0] in ("weight-table", "inv-weights"))


def test_alias_tables_are_built_on_the_first_weighted_call_of_their_direction():
    g = _graph()
    et = g.canonical_etypes[0]
    S.sample_neighbors(g, np.arange(50), 3, seed=0)
    S.sample_blocks(g, np.arange(10), [3, 3], seed=0)
    S.random_walk(g, np.arange(50), 4, seed=0)
    assert _table_keys(g) == []  # uniform calls build no table
    S.sample_neighbors(g, np.arange(50), 3, prob="w", seed=0)
    assert _table_keys(g) == [("inv-weights", et, "in", "w"), ("weight-table", et, "in", "w")]
    S.random_walk(g, np.arange(50), 4, prob="w", seed=0)
    assert ("weight-table", et, "out", "w") in _table_keys(g)
    assert ("inv-weights", et, "out", "w") not in _table_keys(g)  # walks draw by alias only


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weights_are_the_graph_column_itself(dtype):
    g = _graph(dtype)
    w = as_store(g).edge_weights(g.canonical_etypes[0], "w")
    assert np.shares_memory(w, g.edata["w"]) and w.dtype == dtype


def test_integer_weights_are_read_as_float64_copies():
    g = _graph()
    g.edata["n"] = np.arange(600) % 3
    w = as_store(g).edge_weights(g.canonical_etypes[0], "n")
    assert w.dtype == np.float64 and not np.shares_memory(w, g.edata["n"])


def test_a_bad_weight_is_named_by_its_edge_id():
    g = _graph()
    g.edata["w"][123] = -1.0
    with pytest.raises(ValidationError, match=r"edge 123 has weight -1\.0"):
        S.sample_neighbors(g, [0], 2, prob="w", seed=0)


@pytest.mark.parametrize("edge_dir", ["in", "out"])
def test_alias_records_from_the_column_equal_those_from_csr_order(edge_dir):
    g = _graph()
    csr = g.in_csr() if edge_dir == "in" else g.out_csr()
    w = g.edata["w"]
    by_id = row_alias(csr.indptr, w, csr.eids, np.empty(600, np.int64))
    in_order = row_alias(csr.indptr, w[csr.eids].astype(np.float64),
                         np.empty(0, np.int64), np.empty(600, np.int64))
    assert all(np.array_equal(a, b) for a, b in zip(by_id, in_order, strict=True))
    assert np.array_equal(row_inv_weights(csr.indptr, by_id[0]),
                          row_inv_weights(csr.indptr, in_order[0]))
