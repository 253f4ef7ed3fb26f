"""Readiness and liveness instead of fixed deadlines (issue 40): a graph server reports
ready only once loaded and warm, answers a heartbeat while it works, and a request waits
as long as that heartbeat answers; only a silent server fails it, by name."""

from __future__ import annotations

import logging
import threading
import time

import numpy as np
import pytest

import graphshard as gs
from graphshard.distributed import _server
from graphshard.distributed._liveness import describe_stages, wait_ready
from graphshard.distributed._rpc import Router
from graphshard.distributed._served import _BackgroundServer


def test_a_server_is_ready_only_after_loading_and_warming(tmp_path, monkeypatch):
    """In-process: health answers while the kernels compile; info waits for them."""
    gs.partition_graph(gs.graph(([0, 1, 2], [1, 2, 0])), "tri", 1, tmp_path / "p")
    release = threading.Event()
    warmed = []

    def slow_warm(self):
        release.wait(30)
        warmed.append(self.part_id)

    monkeypatch.setattr(_server.GraphServer, "warm", slow_warm)
    srv = _BackgroundServer(str(tmp_path / "p" / "tri.json"), 0, str(tmp_path / "t"))
    deadline = time.monotonic() + 30
    while srv.health()["stage"] != "compiling kernels" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert srv.health()["stage"] == "compiling kernels" and not warmed
    got = []
    asker = threading.Thread(target=lambda: got.append(srv.info()))
    asker.start()
    asker.join(0.3)
    assert asker.is_alive() and not got  # info waits for the warm-up
    release.set()
    asker.join(30)
    assert got and got[0]["part_id"] == 0 and warmed == [0]
    assert srv.health() == {"stage": "ready", "pid": got[0]["pid"], "part_id": 0,
                            "error": None}


def test_a_server_that_fails_to_load_says_why(tmp_path):
    srv = _BackgroundServer(str(tmp_path / "missing.json"), 0, str(tmp_path / "t"))
    with pytest.raises(gs.distributed.ServerError, match="partition 0 failed to load: "
                       "PartitionNotFoundError"):
        srv.info()
    assert srv.health()["stage"] == "failed"
    assert srv.health()["error"].startswith("PartitionNotFoundError")


def test_warm_runs_the_served_kernels(tmp_path):
    g = gs.datasets.sbm(60, 300, num_blocks=2, num_features=2, seed=0)
    g.edata["w"] = np.random.default_rng(0).random(g.num_edges()).astype(np.float32) + 0.1
    gs.partition_graph(g, "s", 2, tmp_path / "p")
    srv = _server.GraphServer(str(tmp_path / "p" / "s.json"), 1, str(tmp_path / "t"))
    srv.warm()  # no error; and the sampling after it equals the one without warming
    et = ("_N", "_E", "_N")
    keys = srv.index.owned_nodes("_N")[:5]
    a = srv.sample([(et, keys, 3, 1)], False, "w", {}, 7)
    b = _server.GraphServer(str(tmp_path / "p" / "s.json"), 1, str(tmp_path / "t2")).sample(
        [(et, keys, 3, 1)], False, "w", {}, 7)
    for x, y in zip(a[0], b[0], strict=True):
        np.testing.assert_array_equal(x, y)


def _actors(ray):
    @ray.remote(concurrency_groups={"health": 1})
    class Slow:
        """Answers ``work`` after ``seconds``; health answers (or hangs) meanwhile."""

        def __init__(self, heartbeat: bool) -> None:
            self.heartbeat = heartbeat

        def work(self, seconds: float) -> str:
            time.sleep(seconds)
            return "done"

        def info(self) -> dict:
            return {"part_id": 0}

        @ray.method(concurrency_group="health")
        def health(self) -> dict:
            if not self.heartbeat:
                time.sleep(3600)
            return {"stage": "ready", "pid": 0, "part_id": 0, "error": None}

    return Slow


def test_a_long_request_of_a_live_server_is_waited_for(ray_cluster):
    """The call takes three times the router's silence limit; the heartbeat answers.
    (The actor is up first: its start-up is the readiness wait's business, tested above.)"""
    actor = _actors(ray_cluster).remote(True)
    ray_cluster.get(actor.info.remote())
    router = Router([actor], {}, timeout=4.0)
    clock = time.monotonic()
    assert router.call([(0, "work", (12.0,))]) == ["done"]
    assert time.monotonic() - clock >= 12.0
    ray_cluster.kill(actor)


def test_a_silent_server_fails_the_request_by_name(ray_cluster):
    actor = _actors(ray_cluster).remote(False)
    ray_cluster.get(actor.info.remote())
    router = Router([actor], {}, timeout=3.0, names=["silent:part0"])
    clock = time.monotonic()
    with pytest.raises(gs.distributed.ServerTimeoutError,
                       match=r"graph server of partition 0 \(silent:part0\) stopped answering: "
                             r"no answer to 'work' and no heartbeat for \d+ s") as err:
        router.call([(0, "work", (60.0,))])
    assert time.monotonic() - clock < 30 and err.value.value == 0
    ray_cluster.kill(actor)


def test_wait_ready_reports_progress(ray_cluster, caplog):
    actor = _actors(ray_cluster).remote(True)
    with caplog.at_level(logging.INFO, logger="graphshard.distributed._liveness"):
        infos = wait_ready(ray_cluster, [actor], "here", silence=30)
    assert infos == [{"part_id": 0}]
    assert describe_stages({0: "loading", 1: "ready"}) == (
        "1 of 2 servers ready; partition 0: loading")
    ray_cluster.kill(actor)
