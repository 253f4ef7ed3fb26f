"""Executors of the label-propagation pipeline: threads in-process and the Ray actor pool.

The Ray tests share one actor pool (module fixture on the session ``ray_cluster``), so
actors start once for the module, not per test.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import graphshard as gs
from graphshard.io.chunked import load_chunked_meta
from graphshard.partition.adjacency import symmetric_adjacency
from graphshard.partition.lp import lp_assign, warm_up
from graphshard.partition.methods import MethodOptions, run_method
from graphshard.partition.metis_lib import metis_kway
from graphshard.runtime import actors as lp_actors
from graphshard.runtime import executor as lp_exec
from graphshard.runtime.actors import FileRef, ShardWorker, _same, _save_shared


def _write_into(x: int, *, arr: np.ndarray) -> int:
    arr[0] = x  # tasks must not write into shared arrays: Ray's are read-only
    return x


def _scaled(x: int, *, factor: np.ndarray, offset: int) -> int:
    return int(factor[x]) + offset


def _slow_first(i: int, delay: float) -> tuple[int, float]:
    time.sleep(delay)
    return i, time.perf_counter()


def _mark(i: int, folder: str) -> int:
    time.sleep(0.05)
    Path(folder, f"done{i}").touch()
    return i


def _fail(i: int) -> int:
    if i == 2:
        raise ValueError(f"bad call {i}")
    return i


def test_in_process_hands_read_only_arrays_like_ray():
    ex = lp_exec.InProcessExecutor(2)
    shared = np.zeros(3, dtype=np.int64)
    with pytest.raises(ValueError, match="read-only"):
        ex.map(_write_into, [(1,), (2,)], shared={"arr": shared})
    with pytest.raises(ValueError, match="read-only"):
        lp_exec.InProcessExecutor(1).map(_write_into, [(1,)], shared={"arr": shared})
    assert shared.flags.writeable and shared.tolist() == [0, 0, 0]
    ex.close()


def test_in_process_results_in_order():
    ex = lp_exec.InProcessExecutor(2)
    factor = np.arange(10) * 3
    assert ex.map(_scaled, [(i,) for i in range(10)],
                  shared={"factor": factor, "offset": 1}) == [3 * i + 1 for i in range(10)]
    ex.close()


def test_shard_worker_resolves_shared_once_per_map(monkeypatch):
    resolved: list[list[str]] = []

    def fake_get(refs):
        resolved.append(list(refs))
        return [np.arange(5) * int(r[-1]) for r in refs]

    monkeypatch.setattr(lp_actors, "_get", fake_get)
    w = ShardWorker()
    out = [w.run(_scaled, (i,), 7, {"offset": 1}, ["factor"], ["ref2"]) for i in range(3)]
    assert out == [1, 3, 5] and resolved == [["ref2"]]
    assert w.run(_scaled, (4,), 8, {"offset": 0}, ["factor"], ["ref3"]) == 12
    assert resolved == [["ref2"], ["ref3"]]


def test_same_compares_blocks_dtype_and_shape():
    x = np.arange(1000)
    y = x.copy()
    assert _same(x, y, block=64)
    y[999] = -1
    assert not _same(x, y, block=64)
    assert not _same(x, x.astype(np.int32), block=64)
    assert not _same(x, x[:-1], block=64)


def test_shard_worker_maps_shared_files_read_only(tmp_path):
    ref = _save_shared(tmp_path / "factor.npy", np.arange(6) * 5)
    w = ShardWorker()
    assert w.run(_scaled, (2,), 1, {"offset": 1}, ["factor"], [ref]) == 11
    with pytest.raises(ValueError, match="read-only"):
        w.run(_write_into, (3,), 2, {}, ["arr"], [FileRef(ref.path)])
    assert np.load(ref.path).tolist() == [0, 5, 10, 15, 20, 25]


def test_warm_up_runs_the_pipeline():
    assert warm_up() > 0


class _Bars:
    """Records the bars an executor opens: ``[desc, total, updates]`` each."""

    def __init__(self) -> None:
        self.bars: list[list] = []

    def __call__(self, *, desc, total, unit, delay):
        import contextlib

        bars = self.bars

        class Bar:
            def update(self, n=1):
                bars[-1][2] += n

        @contextlib.contextmanager
        def bar():
            bars.append([desc, total, 0])
            yield Bar()

        return bar()


@pytest.mark.parametrize("workers", [1, 2])
def test_in_process_map_advances_a_bar_per_task(monkeypatch, workers):
    bars = _Bars()
    monkeypatch.setattr(lp_exec, "progress_bar", bars)
    ex = lp_exec.InProcessExecutor(workers)
    ex.map(_scaled, [(i,) for i in range(7)], shared={"factor": np.arange(7), "offset": 0})
    ex.map(_scaled, ((i,) for i in range(3)), shared={"factor": np.arange(7), "offset": 0})
    ex.close()
    assert bars.bars == [["lp: _scaled", 7, 7], ["lp: _scaled", None, 3]]


@pytest.fixture(scope="module")
def pool(ray_cluster):
    # the task functions above live in a test module that Ray workers cannot import
    ray_cluster.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with lp_exec.ray_actors(2, warm=warm_up) as ex:
        yield ex
    deadline = time.time() + 30  # killed actors give their CPUs back
    while ray_cluster.available_resources().get("CPU", 0) < 2 and time.time() < deadline:
        time.sleep(0.1)


def test_ray_pool_uses_every_actor_and_keeps_order(pool):
    ready = pool._pool.wait_ready()
    assert len({pid for pid, _ in ready}) == 2
    assert all(secs > 0 for _, secs in ready)  # warmed up
    # the first call is slow: the other actor finishes later calls before it
    res = pool.map(_slow_first, [(i, 0.6 if i == 0 else 0.01) for i in range(6)])
    assert [i for i, _ in res] == list(range(6))
    assert res[0][1] > res[5][1]


def test_ray_pool_consumes_calls_lazily(pool, tmp_path):
    ahead = []

    def calls():
        for i in range(12):
            done = len(list(tmp_path.glob("done*")))
            ahead.append(i - done)
            yield i, str(tmp_path)

    assert pool.map(_mark, calls()) == list(range(12))
    # queued on the actors plus prepared, never the whole stream
    assert max(ahead) <= (pool._pool.depth + 1) * pool.num_workers < 11


def test_ray_pool_reuses_unchanged_shared_arrays(pool):
    factor = np.arange(100_000)
    assert pool.map(_scaled, [(i,) for i in range(4)],
                    shared={"factor": factor, "offset": 1}) == [1, 2, 3, 4]
    ref = pool._pool._last["factor"][0]
    assert pool.map(_scaled, [(5,)], shared={"factor": factor.copy(), "offset": 0}) == [5]
    assert pool._pool._last["factor"][0] is ref  # same contents: no new put
    changed = factor * 2
    assert pool.map(_scaled, [(i,) for i in range(3)],
                    shared={"factor": changed, "offset": 0}) == [0, 2, 4]
    assert pool._pool._last["factor"][0] is not ref


def test_ray_pool_shares_files_and_deletes_replaced_ones(pool, tmp_path):
    folder = tmp_path / "shared"
    pool.share_files(folder)
    try:
        factor = np.arange(50_000)
        assert pool.map(_scaled, [(i,) for i in range(4)],
                        shared={"factor": factor, "offset": 1}) == [1, 2, 3, 4]
        first = sorted(folder.glob("factor-*.npy"))
        assert len(first) == 1 and isinstance(pool._pool._last["factor"][0], FileRef)
        assert pool.map(_scaled, [(7,)], shared={"factor": factor.copy(), "offset": 0}) == [7]
        assert sorted(folder.glob("factor-*.npy")) == first  # same contents: not saved again
        assert pool.map(_scaled, [(i,) for i in range(3)],
                        shared={"factor": factor * 3, "offset": 0}) == [0, 3, 6]
        now = sorted(folder.glob("factor-*.npy"))
        assert len(now) == 1 and now != first  # the replaced file is gone
    finally:
        pool.share_files(None)
    assert list(folder.glob("*.npy")) == []
    assert pool.map(_scaled, [(2,)], shared={"factor": np.arange(3), "offset": 0}) == [2]


def test_ray_pool_advances_a_bar_per_task(pool, monkeypatch):
    from graphshard.partition.lp.shards import sweep_task

    bars = _Bars()
    monkeypatch.setattr(lp_exec, "progress_bar", bars)
    pool.map(_scaled, [(i,) for i in range(5)], shared={"factor": np.arange(5), "offset": 0})
    assert bars.bars == [["lp: _scaled", 5, 5]]
    assert lp_exec.describe(sweep_task) == "lp: label propagation"


def test_ray_pool_raises_the_task_error(pool):
    with pytest.raises(ValueError, match="bad call 2"):
        pool.map(_fail, [(i,) for i in range(4)])
    assert pool.map(_fail, [(0,), (1,)]) == [0, 1]  # the pool still works


def test_make_executor_borrows_the_kept_pool(pool):
    ex = lp_exec.make_executor(use_ray=True, actors=True)
    assert ex.num_workers == 2 and ex.map(_scaled, [(1,)], shared={
        "factor": np.arange(3), "offset": 0}) == [1]
    ex.close()  # a borrowed pool stays up
    assert pool.map(_scaled, [(2,)], shared={"factor": np.arange(3), "offset": 0}) == [2]


@pytest.mark.parametrize("k", [2, 4])
def test_lp_on_ray_actors_equals_in_process(pool, tmp_path, k):
    g = gs.datasets.sbm(2000, 10000, num_blocks=4, seed=3, num_features=0)
    gs.io.write_chunked(g, tmp_path / "chunked", 3)
    meta = load_chunked_meta(tmp_path / "chunked")
    opts = {"coarse_nodes": 200, "max_task_entries": 12000, "lp_rounds": 2,
            "refine_rounds": 2, "seed": 4}
    local = lp_assign(meta, k, num_workers=2, **opts)["_N"]
    remote = lp_assign(meta, k, use_ray=True, **opts)["_N"]
    np.testing.assert_array_equal(local, remote)
    assert np.bincount(local, minlength=k).min() > 0


def test_run_alone_shields_metis_from_other_rand_callers(ray_cluster):
    """METIS draws from libc's global rand(); a thread calling rand() (as Ray's do) changes
    its parts.  With Ray up, run_alone runs it in a helper process: the same parts with or
    without such a thread (here a direct call gives different parts on every call)."""
    rng = np.random.default_rng(1)
    n = 20_000
    src = rng.integers(0, n, 100_000)
    adj = symmetric_adjacency(src, (src + rng.integers(1, 40, src.size)) % n, n)
    opts = {"imbalance": 0.03, "objtype": "cut", "seed": 0, "recursive": True}
    quiet = lp_exec.run_alone(metis_kway, adj, 8, **opts)
    stop = threading.Event()
    libc = ctypes.CDLL(None)

    def draw() -> None:
        while not stop.is_set():
            libc.rand()

    thread = threading.Thread(target=draw, daemon=True)
    thread.start()
    try:
        alone = [lp_exec.run_alone(metis_kway, adj, 8, **opts) for _ in range(2)]
        # every in-memory METIS call goes through it (partition_graph, lp's coarsest graph)
        via_method = [run_method(adj, 8, "metis", MethodOptions(imbalance=0.03, seed=0))
                      for _ in range(2)]
    finally:
        stop.set()
        thread.join()
    for parts in alone:
        np.testing.assert_array_equal(parts, quiet)
    np.testing.assert_array_equal(via_method[0], via_method[1])


def test_alone_helper_survives_errors_and_a_dead_helper():
    """A failing call never leaves a stale reply behind: errors come back as raised, a
    helper that dies mid-call is replaced, and the next call gets its own answer."""
    import os

    from graphshard.runtime import alone as _alone

    _alone.start_alone_process()
    helper = _alone._alone[0]
    with pytest.raises(ZeroDivisionError):
        helper.call(eval, ("1 // 0",), {})
    assert helper.call(pow, (2, 5), {}) == 32
    with pytest.raises(RuntimeError, match="closed its pipe"):
        helper.call(os._exit, (3,), {})
    _alone.start_alone_process()
    assert _alone._alone[0] is not helper
    assert _alone._alone[0].call(pow, (3, 3), {}) == 27


def test_alone_helper_keeps_c_level_prints_out_of_its_replies():
    """C code in the helper (METIS prints on some inputs) writes to fd 1: that must not
    reach the reply pipe."""
    import os

    from graphshard.runtime import alone as _alone

    _alone.start_alone_process()
    helper = _alone._alone[0]
    assert helper.call(os.write, (1, b"METIS says hello\n" * 100), {}) == 1700
    assert helper.call(pow, (2, 10), {}) == 1024
