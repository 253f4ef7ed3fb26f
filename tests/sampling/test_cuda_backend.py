"""The cuda backend under numba-cuda's simulator: every sampler it runs gives the CPU
backend's output for the same seed, and ``backend="cuda"`` without numba-cuda or a GPU is a
clear error.

The simulator is chosen when numba.cuda is first imported, from numba's config: this module
sets ``NUMBA_ENABLE_CUDASIM=1`` and reloads that config at import (only where numba-cuda is
installed and numba.cuda is not imported yet; nothing else in the suite imports it).
Without numba-cuda the identity tests skip; the error and lazy-import tests run everywhere.
Graphs are small: the simulator runs every GPU thread as a Python thread.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.sampling import get_backend
from waiting import run_while_busy

HAS_NUMBA_CUDA = importlib.util.find_spec("numba_cuda") is not None
if HAS_NUMBA_CUDA and "numba.cuda" not in sys.modules:
    # numba.cuda reads numba's config, loaded with numba (by graphshard): reload it
    from numba.core import config

    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    config.reload_config()

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def cuda_bk():
    """The cuda backend on the simulator (skips naming what is missing)."""
    if not HAS_NUMBA_CUDA:
        pytest.skip("numba-cuda is not installed (pip install numba-cuda)")
    bk = get_backend("cuda")
    if not bk.simulator:
        pytest.skip("numba.cuda runs on a real GPU here: these tests target the simulator")
    return bk


def _graph(seed: int = 0) -> gs.Graph:
    """40 random nodes; node 40 a hub with 90 in- and out-edges, node 41 one with 300
    in-edges, node 42 with 20 in-edges whose first weight dwarfs the rest; weights with
    zeros."""
    rng = np.random.default_rng(seed)
    m = 240
    src = np.concatenate([rng.integers(0, 40, m), rng.integers(0, 40, 90), np.full(90, 40),
                          rng.integers(0, 40, 300), rng.integers(0, 40, 20)])
    dst = np.concatenate([rng.integers(0, 40, m), np.full(90, 40), rng.integers(0, 40, 90),
                          np.full(300, 41), np.full(20, 42)])
    g = gs.graph((src, dst), num_nodes=43)
    w = rng.random(len(src)) + 0.1
    w[::7] = 0.0
    w[-20:] = 1.0
    w[-20] = 1e6
    g.edata["w"] = w
    return g


def _hetero() -> gs.Graph:
    rng = np.random.default_rng(3)
    nu, ni, m = 20, 15, 90
    u, i = rng.integers(0, nu, m), rng.integers(0, ni, m)
    return gs.heterograph({("u", "click", "i"): (u, i), ("i", "clicked", "u"): (i, u)},
                          num_nodes_dict={"u": nu, "i": ni})


def _same(a, b) -> None:
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


SEEDS = np.array([40, 0, 3, 7, 11, 19, 23, 31, 39, 5], dtype=np.int64)


def test_backend_has_every_cpu_kernel(cuda_bk):
    cpu = set(vars(get_backend("cpu")))
    assert cpu <= set(vars(cuda_bk)), sorted(cpu - set(vars(cuda_bk)))


@pytest.mark.parametrize(("fanout", "replace", "edge_dir"), [
    (3, False, "in"), (3, True, "in"), (-1, False, "in"), (70, False, "in"),
    (70, True, "in"), (4, False, "out")])
def test_uniform_neighbors_equal_cpu(cuda_bk, fanout, replace, edge_dir):
    # fanout 70 < the hub's 90 edges: the partial shuffle path (past Floyd's 64 picks)
    g = _graph()
    cpu = gs.sampling.sample_neighbors(g, SEEDS, fanout, edge_dir, replace, seed=11)
    gpu = gs.sampling.sample_neighbors(g, SEEDS, fanout, edge_dir, replace, seed=11,
                                       backend="cuda")
    assert cpu.num_edges() > 0
    _same(cpu.edges(), gpu.edges())


# without replacement: node 40 rejects repeated alias draws (fanout 3) or takes keys
# (70 of 90: quickselect); node 41 takes keys over 300 edges (the ordered scan); node 42's
# rejections drag on and keys finish it; rows of degree <= 64 near their fanout take the
# float32 dense keys
WSEEDS = np.concatenate([SEEDS, [41, 42]])


@pytest.mark.parametrize(("fanout", "replace"), [(3, True), (70, True), (-1, False),
                                                 (3, False), (6, False), (70, False)])
def test_weighted_neighbors_equal_cpu(cuda_bk, fanout, replace):
    g = _graph()
    cpu = gs.sampling.sample_neighbors(g, WSEEDS, fanout, replace=replace, prob="w", seed=4)
    gpu = gs.sampling.sample_neighbors(g, WSEEDS, fanout, replace=replace, prob="w", seed=4,
                                       backend="cuda")
    assert cpu.num_edges() > 0
    _same(cpu.edges(), gpu.edges())


def test_excluded_edges_equal_cpu(cuda_bk):
    # exclusions sample by 0/1 weights on the sub-CSR: the weighted path without replacement
    g = _graph()
    excl = np.arange(0, g.num_edges(), 3)
    cpu = gs.sampling.sample_neighbors(g, WSEEDS, 4, exclude_edges=excl, seed=6)
    gpu = gs.sampling.sample_neighbors(g, WSEEDS, 4, exclude_edges=excl, seed=6,
                                       backend="cuda")
    assert not np.isin(cpu.edges()[2], excl).any()
    _same(cpu.edges(), gpu.edges())


def test_remote_store_path_equals_cpu(cuda_bk, reference_store):
    # a store without a local adjacency: kernels run on the sub-CSR it returns
    store = reference_store(_graph())
    cpu = gs.sampling.sample_neighbors(store, SEEDS, 5, seed=2)
    gpu = gs.sampling.sample_neighbors(store, SEEDS, 5, seed=2, backend="cuda")
    _same(cpu.edges(), gpu.edges())


def _blocks_equal(a, b) -> None:
    _same(list(a.input_nodes.values()), list(b.input_nodes.values()))
    for x, y in zip(a.blocks, b.blocks, strict=True):
        assert (list(x.src_nodes), list(x.dst_nodes)) == (list(y.src_nodes), list(y.dst_nodes))
        _same([*x.src_nodes.values(), *x.dst_nodes.values()],
              [*y.src_nodes.values(), *y.dst_nodes.values()])
        assert list(x.src) == list(y.src)
        for et in x.src:
            _same([x.src[et], x.dst[et], x.eids[et]], [y.src[et], y.dst[et], y.eids[et]])


def test_blocks_equal_cpu(cuda_bk):
    g = _graph()
    cpu = gs.sampling.sample_blocks(g, SEEDS, [4, 3], seed=9)
    gpu = gs.sampling.sample_blocks(g, SEEDS, [4, 3], seed=9, backend="cuda")
    _blocks_equal(cpu, gpu)
    het = _hetero()
    seeds = {"i": np.arange(6)}
    _blocks_equal(gs.sampling.sample_blocks(het, seeds, [3, 2], seed=1),
                  gs.sampling.sample_blocks(het, seeds, [3, 2], seed=1, backend="cuda"))


def test_relabel_equals_cpu_across_scan_tiles(cuda_bk):
    # 700 items: three tiles of the device scan; repeats, and destinations among the sources
    rng = np.random.default_rng(5)
    dst = rng.permutation(1000)[:50].astype(np.int64)
    src = np.concatenate([rng.integers(0, 400, 600), dst[:50]]).astype(np.int64)
    _same(get_backend("cpu").relabel(dst, src), cuda_bk.relabel(dst, src))


@pytest.mark.parametrize(("prob", "restart"), [(None, 0.0), (None, 0.3), ("w", 0.0)])
def test_walks_equal_cpu(cuda_bk, prob, restart):
    g = _graph()
    kw = dict(walk_times=2, prob=prob, restart_prob=restart, seed=8)
    cpu = gs.sampling.random_walk(g, SEEDS, 6, **kw)
    gpu = gs.sampling.random_walk(g, SEEDS, 6, backend="cuda", **kw)
    _same([cpu.traces], [gpu.traces])


def test_metapath_and_stepwise_walks_equal_cpu(cuda_bk, reference_store):
    het = _hetero()
    kw = dict(metapath="click-clicked", walk_times=2, seed=6)
    _same([gs.sampling.random_walk(het, np.arange(8), 7, **kw).traces],
          [gs.sampling.random_walk(het, np.arange(8), 7, backend="cuda", **kw).traces])
    store = reference_store(_graph())  # walk_step: one batched neighbours call per step
    _same([gs.sampling.random_walk(store, SEEDS, 5, seed=3).traces],
          [gs.sampling.random_walk(store, SEEDS, 5, seed=3, backend="cuda").traces])


def test_node2vec_equals_cpu(cuda_bk, reference_store):
    g = _graph()
    kw = dict(p=0.5, q=2.0, walk_times=2, seed=12)
    _same([gs.sampling.node2vec_walk(g, SEEDS, 6, **kw).traces],
          [gs.sampling.node2vec_walk(g, SEEDS, 6, backend="cuda", **kw).traces])
    store = reference_store(g)  # node2vec_step on fetched rows
    _same([gs.sampling.node2vec_walk(store, SEEDS[:4], 4, **kw).traces],
          [gs.sampling.node2vec_walk(store, SEEDS[:4], 4, backend="cuda", **kw).traces])


@pytest.mark.parametrize("random_window", [False, True])
def test_skip_gram_pairs_equal_cpu(cuda_bk, random_window):
    het = _hetero()
    walks = gs.sampling.random_walk(het, np.arange(10), 6, metapath="click-clicked", seed=2)
    kw = dict(random_window=random_window, exclude_pairs=["u2u"], seed=5)
    cpu = gs.sampling.skip_gram_pairs(walks, 2, **kw)
    gpu = gs.sampling.skip_gram_pairs(walks, 2, backend="cuda", **kw)
    assert len(cpu) > 0
    _same([cpu.src, cpu.dst, cpu.src_type, cpu.dst_type],
          [gpu.src, gpu.dst, gpu.src_type, gpu.dst_type])


@pytest.mark.parametrize("distribution", ["uniform", "degree"])
def test_negatives_equal_cpu(cuda_bk, distribution):
    g = _graph()
    cpu = gs.sampling.negative_sample(g, 300, distribution=distribution, seed=7)
    gpu = gs.sampling.negative_sample(g, 300, distribution=distribution, seed=7,
                                      backend="cuda")
    _same([cpu], [gpu])


def test_degrees_and_feature_gathers_equal_cpu(cuda_bk):
    g = _graph()
    ids = np.array([40, 2, 2, 17, 0], dtype=np.int64)
    for edge_dir in ("in", "out"):
        _same([gs.sampling.degrees(g, ids, edge_dir=edge_dir)],
              [gs.sampling.degrees(g, ids, edge_dir=edge_dir, backend="cuda")])
    table = np.arange(41 * 3, dtype=np.float32).reshape(41, 3)
    cpu, gpu = np.empty((5, 3), np.float32), np.empty((5, 3), np.float32)
    get_backend("cpu").gather_rows(table, ids, cpu)
    cuda_bk.gather_rows(table, ids, gpu)
    _same([cpu], [gpu])


def test_graph_arrays_go_to_the_device_once(cuda_bk):
    g = _graph(seed=1)
    gs.sampling.sample_neighbors(g, SEEDS, 3, seed=0, backend="cuda")
    copies = cuda_bk.device_cache.copies
    gs.sampling.sample_neighbors(g, SEEDS[::-1], 3, seed=1, backend="cuda")
    assert cuda_bk.device_cache.copies == copies


def test_cora_blocks_and_walks_equal_cpu(cuda_bk, cora):
    seeds = np.arange(0, 2708, 97, dtype=np.int64)
    _blocks_equal(gs.sampling.sample_blocks(cora, seeds, [5, 3], seed=21),
                  gs.sampling.sample_blocks(cora, seeds, [5, 3], seed=21, backend="cuda"))
    _same([gs.sampling.random_walk(cora, seeds, 8, seed=21).traces],
          [gs.sampling.random_walk(cora, seeds, 8, seed=21, backend="cuda").traces])


def test_missing_numba_cuda_is_a_clear_error(monkeypatch):
    from graphshard.sampling import cuda as cuda_backend

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "numba_cuda" else real(name, *a))
    with pytest.raises(ValidationError, match=r"needs the numba-cuda package.*"
                                              r"NUMBA_ENABLE_CUDASIM=1"):
        cuda_backend.make_backend()


def test_import_is_lazy_and_no_gpu_is_a_clear_error():
    """In a fresh process without the simulator: ``import graphshard`` leaves numba.cuda
    out, and ``get_backend("cuda")`` names what is missing (numba-cuda, or a device)."""
    code = ("import sys, graphshard, graphshard.sampling as s\n"
            "from graphshard.errors import ValidationError\n"
            "print('numba.cuda' in sys.modules)\n"
            "try:\n    s.get_backend('cuda'); print('OK')\n"
            "except ValidationError as e:\n    print(e)\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    out = run_while_busy([sys.executable, "-c", code], "the import check", env=env,
                         check=True).stdout.splitlines()
    assert out[0] == "False"
    if out[1] == "OK":
        pytest.skip("this machine has a CUDA device")
    expect = "finds no CUDA device" if HAS_NUMBA_CUDA else "needs the numba-cuda package"
    assert expect in out[1] and "NUMBA_ENABLE_CUDASIM=1" in out[1], out[1]
