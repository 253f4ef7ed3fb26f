"""Partition backends beyond METIS, on real Walshaw graphs (small ones: the file runs in ~30 s)."""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from graphshard.errors import ValidationError
from graphshard.io import read_metis
from graphshard.partition import backends, portfolio
from graphshard.partition.adjacency import Adjacency, symmetric_adjacency
from graphshard.partition.methods import METHODS, MethodOptions, run_method

HAS = {name: importlib.util.find_spec(name) is not None for name in ("kaminpar", "mtkahypar")}


def needs(*packages: str) -> pytest.MarkDecorator:
    missing = [p for p in packages if not HAS[p]]
    return pytest.mark.skipif(bool(missing), reason=f"optional package(s) {missing} not installed")


# method -> (packages it needs, allowed cut / archive best-known cut at k=2, eps=5%).
# Measured on 4elt (best 137), threads=1, seeds 0-3: kaminpar 1.11-1.25 x, mtkahypar
# DEFAULT 1.02-1.08 x (up to 1.29 x on later calls in one process), quality 1.00 x,
# auto = METIS on a mesh 1.06-1.38 x.
BACKENDS = {
    "kaminpar": (("kaminpar",), 1.5),
    "mtkahypar": (("mtkahypar",), 1.45),
    "quality": (("kaminpar", "mtkahypar"), 1.05),
    "auto": ((), 1.6),
}
BEST_4ELT = 137


def _adjacency(path: Path) -> Adjacency:
    g = read_metis(path)
    src, dst = g.edges()
    return symmetric_adjacency(src, dst, g.num_nodes())


@pytest.fixture(scope="module")
def elt4(shared_file) -> Adjacency:
    return _adjacency(shared_file("walshaw", "graphs", "4elt.graph"))


@pytest.fixture(scope="module")
def add20(shared_file) -> Adjacency:
    return _adjacency(shared_file("walshaw", "graphs", "add20.graph"))


def _check_valid_balanced(adj: Adjacency, parts: np.ndarray, k: int, eps: float) -> None:
    assert parts.dtype == np.int64 and parts.shape == (adj.num_nodes,)
    assert parts.min() >= 0 and parts.max() < k
    weights = backends._vertex_weights(adj)
    loads = np.zeros((k, weights.shape[1]), dtype=np.int64)
    np.add.at(loads, parts, weights)
    bound = [backends.max_part_weight(int(t), k, eps) for t in weights.sum(axis=0)]
    assert (loads <= np.array(bound)).all(), (loads.max(axis=0), bound)


@pytest.mark.parametrize("method", list(BACKENDS))
def test_walshaw_k2_valid_balanced_deterministic_close_to_archive(elt4, method):
    packages, factor = BACKENDS[method]
    if any(not HAS[p] for p in packages):
        pytest.skip(f"{method} needs {packages}")
    opts = MethodOptions(imbalance=0.05, seed=3, threads=1)
    parts = run_method(elt4, 2, method, opts)
    _check_valid_balanced(elt4, parts, 2, 0.05)
    # the archive's own rule is looser than ours: max block <= (1 + eps) * ceil(n / k)
    assert np.bincount(parts).max() <= 1.05 * -(-elt4.num_nodes // 2)
    cut = backends.adjacency_cut(elt4, parts) // 2  # both directions are input edges
    assert cut <= factor * BEST_4ELT, cut
    if method == "mtkahypar":
        # DEFAULT keeps hidden state between calls in one process (not reproducible even on
        # one thread, measured); its DETERMINISTIC preset is reproducible on any thread count
        def run(o):
            return backends.mtkahypar_partition(elt4, 2, o, preset="deterministic")

        first = run(opts)
        np.testing.assert_array_equal(first, run(opts))
        np.testing.assert_array_equal(first, run(MethodOptions(imbalance=0.05, seed=3,
                                                                threads=2)))
        return
    np.testing.assert_array_equal(parts, run_method(elt4, 2, method, opts))


@needs("kaminpar")
@pytest.mark.parametrize("k", [4, 16])
def test_kaminpar_k_way_on_add20(add20, k):
    parts = backends.kaminpar_partition(add20, k, MethodOptions(seed=1, threads=1))
    _check_valid_balanced(add20, parts, k, 0.03)
    assert np.unique(parts).size == k


@needs("kaminpar")
@pytest.mark.parametrize("preset", backends.KAMINPAR_PRESETS)
def test_every_listed_kaminpar_preset_partitions_and_a_crashing_one_is_refused(add20, preset):
    """Every listed preset runs in this process (one that crashed would end the test run);
    "terapart", which ends the process with a segmentation fault, is refused first."""
    parts = backends.kaminpar_partition(add20, 2, MethodOptions(seed=0, threads=1),
                                        preset=preset)
    _check_valid_balanced(add20, parts, 2, 0.03)
    with pytest.raises(ValidationError, match=r"terapart.*crashes") as err:
        backends.kaminpar_partition(add20, 2, MethodOptions(seed=0, threads=1),
                                    preset="terapart")
    assert err.value.field == "preset"


@needs("mtkahypar")
def test_mtkahypar_volume_objective_uses_hypergraph(add20):
    cut_opts = MethodOptions(imbalance=0.03, seed=0, threads=1)
    vol_opts = MethodOptions(imbalance=0.03, objtype="vol", seed=0, threads=1)
    by_cut = backends.mtkahypar_partition(add20, 4, cut_opts)
    by_vol = backends.mtkahypar_partition(add20, 4, vol_opts)
    _check_valid_balanced(add20, by_vol, 4, 0.03)

    def volume(parts: np.ndarray) -> int:  # METIS's total communication volume
        rows = np.repeat(np.arange(add20.num_nodes), np.diff(add20.indptr))
        foreign = parts[add20.indices] != parts[rows]
        pairs = np.unique(rows[foreign] * 4 + parts[add20.indices][foreign])
        return pairs.size

    assert volume(by_vol) <= 1.05 * volume(by_cut)


@needs("kaminpar", "mtkahypar")
@pytest.mark.parametrize("method", ["kaminpar", "mtkahypar", "quality", "auto"])
def test_single_vertex_weight_is_balanced(add20, method):
    weights = (np.arange(add20.num_nodes) % 5 + 1).reshape(-1, 1)
    adj = add20.with_vertex_weights(weights)
    parts = run_method(adj, 4, method, MethodOptions(seed=0, threads=1))
    _check_valid_balanced(adj, parts, 4, 0.03)


@pytest.mark.parametrize("method", ["kaminpar", "mtkahypar", "quality", "auto"])
def test_multi_constraint_falls_back_to_metis_and_logs(add20, method, caplog):
    weights = np.stack([np.ones(add20.num_nodes), np.diff(add20.indptr)], axis=1)
    adj = add20.with_vertex_weights(weights.astype(np.int64))
    opts = MethodOptions(seed=0, threads=1)
    with caplog.at_level(logging.INFO, logger="graphshard.partition.backends"):
        parts = run_method(adj, 4, method, opts)
    np.testing.assert_array_equal(parts, run_method(adj, 4, "metis", opts))
    if method != "auto":
        assert any("using METIS" in r.getMessage() for r in caplog.records)


@needs("kaminpar")
def test_isolated_nodes_fill_the_parts():
    # a 40-node path plus 60 isolated nodes: the path may split unevenly, the rest levels it
    adj = symmetric_adjacency(np.arange(39), np.arange(1, 40), 100)
    parts = backends.kaminpar_partition(adj, 4, MethodOptions(seed=0, threads=1))
    _check_valid_balanced(adj, parts, 4, 0.03)
    assert backends.adjacency_cut(adj, parts) <= 3


def test_pack_isolated_respects_the_bound():
    keep = np.array([True, True, False, False, False, False])
    parts = backends._pack_isolated(np.array([0, 0]), keep, None, 2, 3)
    assert parts.tolist() == [0, 0, 0, 1, 1, 1]


def test_int_lines_writes_decimal_text():
    tokens = np.array([0, 7, 10, 99, 100, 123456789012])
    ends = np.array([False, True, False, False, True, True])
    assert bytes(backends._int_lines(tokens, ends)) == b"0 7\n10 99 100\n123456789012\n"


@needs("kaminpar")
def test_parhip_file_round_trips_through_kaminpar(add20, tmp_path):
    import kaminpar

    weights = np.arange(add20.num_nodes, dtype=np.int64) % 3 + 1
    doubled = Adjacency(add20.indptr, add20.indices, add20.edge_weights * np.where(
        np.arange(add20.num_entries) % 2 == 0, 1, 1))
    path = tmp_path / "g.parhip"
    backends._write_parhip(path, doubled, weights)
    graph = kaminpar.load_graph(str(path), kaminpar.GraphFileFormat.PARHIP)
    assert (graph.n(), graph.m()) == (add20.num_nodes, add20.num_entries)
    v = 17
    row = slice(add20.indptr[v], add20.indptr[v + 1])
    assert [u for u, _ in graph.neighbors(v)] == add20.indices[row].tolist()
    assert graph.node_weight(v) == weights[v]


@needs("kaminpar", "mtkahypar")
def test_unknown_preset_lists_the_choices(add20):
    with pytest.raises(ValidationError, match="choose one of"):
        backends.kaminpar_partition(add20, 2, MethodOptions(), preset="nope")
    with pytest.raises(ValidationError, match="choose one of"):
        backends.mtkahypar_partition(add20, 2, MethodOptions(), preset="nope")


def test_auto_choice_rule(add20, elt4):
    opts = MethodOptions()
    multi = add20.with_vertex_weights(np.ones((add20.num_nodes, 2), dtype=np.int64))
    assert portfolio.auto_choice(multi, 4, opts) == ("metis", "recursive")
    assert portfolio.auto_choice(multi, 16, opts) == ("metis", "kway")
    assert portfolio.auto_choice(elt4, 4, opts)[0] == "metis"  # a mesh: degree skew 0.1
    assert portfolio.auto_choice(elt4, 4, MethodOptions(time_budget=100.0))[0] == "metis"
    # add20 (degree skew 2.1) at the default budget 1.0: KaMinPar default (0.41x k-way)
    fast = ("kaminpar", "default") if HAS["kaminpar"] else ("metis", "kway")
    assert portfolio.auto_choice(add20, 8, opts) == fast
    assert portfolio.auto_choice(add20, 4, opts) == fast
    isolated = symmetric_adjacency(np.arange(9), np.arange(1, 10), 100)  # 90% isolated
    assert portfolio.auto_choice(isolated, 8, opts) == fast


@needs("kaminpar", "mtkahypar")
@pytest.mark.parametrize(("budget", "k", "choice"), [
    (0.3, 8, ("metis", "kway")),           # below every estimate but k-way's own 1.0
    (1.0, 8, ("kaminpar", "default")),
    (3.5, 8, ("metis", "recursive")),      # recursive bisection: k <= 8 only
    (3.5, 16, ("kaminpar", "default")),
    (4.4, 8, ("mtkahypar", "deterministic")),
    (100.0, 64, ("mtkahypar", "deterministic")),
])
def test_auto_choice_honours_the_time_budget(add20, budget, k, choice):
    opts = MethodOptions(time_budget=budget)
    assert portfolio.auto_choice(add20, k, opts) == choice
    # objtype "vol": METIS k-way, the one backend here that minimises it (KaMinPar, picked
    # before, minimised the cut and ignored it: issue 41 item 10)
    assert portfolio.auto_choice(add20, k, replace(opts, objtype="vol")) == ("metis", "kway")


@pytest.mark.skipif(not HAS["kaminpar"], reason="KaMinPar not installed")
def test_auto_runs_kaminpar_on_one_thread_unless_told(add20, monkeypatch):
    """auto is the default method: the same seed must give the same parts, and KaMinPar's
    parallel refinement is racy, so its pick runs on one thread unless threads is set."""
    seen = []
    real = portfolio.kaminpar_partition
    monkeypatch.setattr(portfolio, "kaminpar_partition",
                        lambda adj, k, opts, **kw: seen.append(opts.threads) or real(
                            adj, k, opts, **kw))
    first = run_method(add20, 8, "auto", MethodOptions(seed=3))
    again = run_method(add20, 8, "auto", MethodOptions(seed=3))
    run_method(add20, 8, "auto", MethodOptions(seed=3, threads=2))
    assert seen == [1, 1, 2]
    np.testing.assert_array_equal(first, again)


def test_auto_choice_skips_missing_backends(add20, monkeypatch):
    monkeypatch.setattr(portfolio, "is_installed", lambda name: False)
    assert portfolio.auto_choice(add20, 8, MethodOptions()) == ("metis", "kway")
    assert portfolio.auto_choice(add20, 8, MethodOptions(time_budget=10.0)) == \
        ("metis", "recursive")
    assert portfolio.auto_choice(add20, 16, MethodOptions(time_budget=10.0)) == \
        ("metis", "kway")


def test_auto_time_budget_is_checked(add20):
    for bad in (0, -1.0, "1"):
        with pytest.raises(ValidationError, match="time_budget must be a number > 0"):
            run_method(add20, 2, "auto", MethodOptions(time_budget=bad))  # type: ignore[arg-type]


def test_methods_are_registered():
    assert {"kaminpar", "mtkahypar", "quality", "auto"} <= set(METHODS)
    assert METHODS["auto"].multi_constraint


@pytest.mark.parametrize(("result", "message"), [
    (lambda n: np.zeros(n - 1), r"'bad' returned parts of shape \(3,\); expected \(4,\)"),
    (lambda n: np.array([0, 1, 2, 0]), r"'bad' put node 2 in part 2; expected parts in \[0, 2\)"),
])
def test_a_method_returning_a_bad_assignment_is_a_validation_error(result, message):
    adj = symmetric_adjacency(np.array([0, 1, 2]), np.array([1, 2, 3]), 4)
    METHODS["bad"] = replace(METHODS["hash"], name="bad", fn=lambda a, k, o: result(4))
    try:
        with pytest.raises(ValidationError, match=message):
            run_method(adj, 2, "bad", MethodOptions())
    finally:
        del METHODS["bad"]


def test_one_weight_backends_refuse_several_weights_with_our_error():
    adj = symmetric_adjacency(np.array([0]), np.array([1]), 2)
    adj = replace(adj, vertex_weights=np.ones((2, 2), dtype=np.int64))
    with pytest.raises(ValidationError, match="kaminpar balances one vertex weight per node; "
                                              "the adjacency has 2 per node"):
        backends._single_weights(adj, "kaminpar")


def test_one_method_registry_for_memory_and_disk():
    """Issue 39: the pipeline's methods are the partition methods (one registry); each
    entry works on an adjacency in memory, streams a chunked graph, or both."""
    from graphshard.partition.registry import Method
    from graphshard.pipeline import ASSIGN_METHODS

    assert ASSIGN_METHODS is METHODS
    for name, entry in METHODS.items():
        assert isinstance(entry, Method) and entry.name == name and entry.description
        assert entry.fn is not None or entry.stream is not None, name
    assert sorted(n for n, m in METHODS.items() if m.stream is not None) == \
        ["hash", "lp", "random"]
    assert METHODS["lp"].fn is None and METHODS["metis"].stream is None


@pytest.mark.parametrize("graph", ["data", "4elt"])
def test_metis_at_k2_uses_the_allowed_imbalance(shared_file, graph):
    """Issue 43: METIS's recursive bisection (what ``metis`` and ``auto`` run on a mesh at
    k=2) split near-exactly whatever ``imbalance`` allowed: the same cut at 3% and 10%.
    Now a looser limit is used, never exceeded, and cuts no more than the tighter one."""
    adj = _adjacency(shared_file("walshaw", "graphs", f"{graph}.graph"))
    assert portfolio.auto_choice(adj, 2, MethodOptions()) == ("metis", "recursive")
    cut, balance = {}, {}
    for eps in (0.03, 0.10):
        parts = run_method(adj, 2, "metis", MethodOptions(imbalance=eps, seed=0))
        _check_valid_balanced(adj, parts, 2, eps)
        cut[eps] = backends.adjacency_cut(adj, parts) // 2
        balance[eps] = np.bincount(parts).max() / (adj.num_nodes / 2)
        np.testing.assert_array_equal(parts, run_method(adj, 2, "auto", MethodOptions(
            imbalance=eps, seed=0)))
    assert balance[0.10] > 1.03, balance  # the allowance reached METIS (was 1.000 for both)
    assert cut[0.10] <= cut[0.03], cut
