"""Readiness and liveness instead of deadlines (real Ray): a server that is slow but alive is
waited for, with progress; one that stops answering, or dies, is reported by name."""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys
import time

import numpy as np
import pytest

import graphshard as gs
from graphshard.distributed import _liveness
from graphshard.distributed._liveness import CONCURRENCY_GROUPS
from graphshard.distributed._server import GraphServer

serve_mod = importlib.import_module("graphshard.distributed.serve")  # not the function

#: Seconds the slow server holds the GIL: several times the heartbeat limit of the tests.
SLOW = 20.0
#: The tests' heartbeat limit (a live server answers well within it, even while busy).
LIMIT = 8.0


def _busy(seconds: float) -> None:
    """Hold the GIL in Python code for ``seconds``, as numba compiling on a busy machine
    does (the heartbeat thread still gets its turns)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sum(range(10_000))


class _SlowServer(GraphServer):
    """Partition 1's server compiles slowly: its kernel warm-up and its first ``sample``
    each take :data:`SLOW` seconds."""

    def _warm(self) -> float:
        if self.part_id == 1:
            _busy(SLOW)
        return super()._warm()

    def sample(self, *args, **kwargs):
        if self.part_id == 1 and not getattr(self, "_sampled", False):
            self._sampled = True
            _busy(SLOW)
        return super().sample(*args, **kwargs)


class _DyingServer(GraphServer):
    """Partition 0's server process exits while it warms its kernels up."""

    def _warm(self) -> float:
        if self.part_id == 0:
            os._exit(3)
        return super()._warm()


@pytest.fixture
def server_class(ray_cluster, monkeypatch):
    """``server_class(cls)``: serve() starts ``cls`` (pickled by value) for this test."""
    ray_cluster.cloudpickle.register_pickle_by_value(sys.modules[__name__])

    def use(cls: type) -> None:
        remote = ray_cluster.remote(concurrency_groups=CONCURRENCY_GROUPS)(cls)
        monkeypatch.setitem(serve_mod._REMOTE, "server", remote)

    return use


def test_slow_kernels_are_waited_for_with_progress(server_class, make_parts, tmp_path,
                                                   monkeypatch, caplog):
    server_class(_SlowServer)
    monkeypatch.setattr(_liveness, "_LOG_EVERY", 1.0)
    p = make_parts(3, "slow", 2, str(tmp_path / "parts"))
    with caplog.at_level(logging.INFO, logger="graphshard.distributed._liveness"):
        handle = gs.distributed.serve(p.config, heartbeat_timeout=LIMIT)
    try:
        # ready only once the slow server's kernels were warm, and the wait said so
        lines = [r.getMessage() for r in caplog.records]
        assert any("1 of 2 graph servers ready; waiting for partition 1 (compiling kernels"
                   in line for line in lines), lines
        assert any("partition 1 server ready after" in line for line in lines)
        statuses = ray_get(handle, "status")
        assert [s["phase"] for s in statuses] == ["ready", "ready"]
        # its first request outlasts the heartbeat limit and is answered all the same
        dg = gs.distributed.DistGraph(p.config, colocate=(), heartbeat_timeout=LIMIT)
        ids = np.arange(90)
        got = gs.sampling.sample_neighbors(dg, {"u": ids}, 3, seed=7)
        want = gs.sampling.sample_neighbors(p.whole, {"u": ids}, 3, seed=7)
        for et in want.src:
            for x, y in zip(got.edges(et), want.edges(et), strict=True):
                np.testing.assert_array_equal(x, y)
    finally:
        handle.shutdown()


def ray_get(handle, method: str) -> list:
    import ray

    return ray.get([getattr(a, method).remote() for a in handle.actors()])


def test_a_server_that_dies_while_starting_is_named_at_once(server_class, make_parts,
                                                            tmp_path):
    server_class(_DyingServer)
    p = make_parts(4, "dying", 2, str(tmp_path / "parts"))
    with pytest.raises(gs.distributed.ServerError,
                       match=r"graph server of partition 0 \(dying-\w+:part0\) died while "
                             r"starting") as err:
        # a heartbeat limit far beyond the test's length: the death is reported, not waited out
        gs.distributed.serve(p.config, max_restarts=0, heartbeat_timeout=3600)
    assert not isinstance(err.value, gs.distributed.ServerTimeoutError)
    assert (err.value.field, err.value.value) == ("part_id", 0)
    assert gs.distributed.find_servers(p.config) is None  # the other server is stopped too


def test_a_stopped_server_is_named_after_the_heartbeat_limit(ray_cluster, make_parts,
                                                             tmp_path):
    p = make_parts(5, "stopped", 2, str(tmp_path / "parts"))
    handle = gs.distributed.serve(p.config)
    try:
        dg = gs.distributed.DistGraph(p.config, colocate=(), heartbeat_timeout=LIMIT)
        ids = np.arange(90)
        want = dg.degrees(ids, "follows")
        os.kill(handle.pids[1], signal.SIGSTOP)  # alive, but answers nothing
        try:
            with pytest.raises(gs.distributed.ServerTimeoutError,
                               match=r"graph server of partition 1 \(stopped-\w+:part1\) "
                                     r"answered no heartbeat for 8 s while running "
                                     r"'degrees'") as err:
                dg.degrees(ids, "follows")
            assert (err.value.field, err.value.value) == ("part_id", 1)
        finally:
            os.kill(handle.pids[1], signal.SIGCONT)
        np.testing.assert_array_equal(dg.degrees(ids, "follows"), want)  # alive again
    finally:
        handle.shutdown()


def test_heartbeat_timeout_is_checked(ray_cluster, shop_parts, monkeypatch):
    with pytest.raises(gs.ValidationError, match="heartbeat_timeout must be a positive"):
        gs.distributed.serve(shop_parts[1].config, heartbeat_timeout=0)
    monkeypatch.setenv("GRAPHSHARD_HEARTBEAT_TIMEOUT", "soon")
    with pytest.raises(gs.ValidationError, match="GRAPHSHARD_HEARTBEAT_TIMEOUT must be"):
        gs.distributed.DistGraph(shop_parts[1].config)
    monkeypatch.setenv("GRAPHSHARD_HEARTBEAT_TIMEOUT", "42")
    assert _liveness.heartbeat_timeout() == 42.0
